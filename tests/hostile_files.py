"""Hostile files made for tests: zip archives with declared sizes, .npy headers, a real decompression bomb."""

from __future__ import annotations

import io
import struct
import zipfile
import zlib

import numpy as np


def handmade_zip(members: list[tuple[str, bytes, int, int, int]]) -> bytes:
    """A zip archive from (name, compressed bytes, method, crc32, uncompressed size) — sizes are declared as given."""
    out, directory = io.BytesIO(), io.BytesIO()
    for name, payload, method, crc, size in members:
        offset = out.tell()
        encoded = name.encode()
        out.write(struct.pack("<4s2B4HL2L2H", b"PK\x03\x04", 20, 0, 0, method, 0, 0x21, crc, len(payload), size,
                              len(encoded), 0))
        out.write(encoded)
        out.write(payload)
        directory.write(struct.pack("<4s4B4HL2L5H2L", b"PK\x01\x02", 20, 3, 20, 0, 0, method, 0, 0x21, crc,
                                    len(payload), size, len(encoded), 0, 0, 0, 0, 0, offset))
        directory.write(encoded)
    start = out.tell()
    out.write(directory.getvalue())
    n = len(members)
    out.write(struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, n, n, len(directory.getvalue()), start, 0))
    return out.getvalue()


def npy_header(shape: tuple[int, ...], descr: str = "<f8") -> bytes:
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": descr, "fortran_order": False, "shape": shape})
    return header.getvalue()


def decompression_bomb() -> bytes:
    """A real .npz decompression bomb: J = zeros(20000, 20000), 3.2 GB of float64, in about 3 MB.

    Built without ever holding the array: the deflate stream of 1 MB of zeros,
    cut by a full flush (which makes it independent of what came before), is
    repeated 3,200 times behind the .npy header; the CRC is computed chunk by
    chunk, so the archive is valid and ``np.load`` would really expand it.
    """
    header = npy_header((20_000, 20_000))
    chunk = bytes(1_000_000)
    first = zlib.compressobj(9, zlib.DEFLATED, -15)
    head = first.compress(header) + first.flush(zlib.Z_FULL_FLUSH)
    repeat = zlib.compressobj(9, zlib.DEFLATED, -15)
    zeros = repeat.compress(chunk) + repeat.flush(zlib.Z_FULL_FLUSH)
    end = zlib.compressobj(9, zlib.DEFLATED, -15).flush(zlib.Z_FINISH)
    copies = 20_000 * 20_000 * 8 // len(chunk)
    crc = zlib.crc32(header)
    for _ in range(copies):
        crc = zlib.crc32(chunk, crc)
    payload = head + zeros * copies + end
    return handmade_zip([("J.npy", payload, zipfile.ZIP_DEFLATED, crc, len(header) + copies * len(chunk))])
