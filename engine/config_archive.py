"""A configuration whose arrays are too large for JSON, as a ``.npz`` *configuration archive* (model code).

A run of an uploaded model holds its arrays (a coupling matrix of 3000 × 3000
is 9 million numbers: 117 MB as a JSON list, seconds to write and to read).
Its configuration travels as a zip archive, readable with ``numpy.load``:

* ``configuration.json`` (always the first entry): the configuration, and the
  frozen kernel of an export, with every archived array left out;
* ``<section>/<key>.npy`` for each array left out, e.g. ``target_params/J.npy``:
  the parameter ``key`` of ``section`` (``target_params``, ``sampler_params``
  or ``compare_params``), as ``numpy.save`` writes it.

``archived_arrays(config)`` names the arrays that go to ``.npy`` entries
(those of more than ``MAX_INLINE_ELEMENTS`` elements; a configuration with
none is written as plain JSON), ``configuration_archive`` writes an archive
and ``config_from_archive`` reads one back through the same checks as an
uploaded model file: the zip directory and every ``.npy`` header are read,
and the archive refused, before anything is decompressed
(``UploadLimits.decompressed_bytes`` for all its arrays together); then the
configuration with its arrays passes ``RunConfig.from_dict``, so the archive
replays the run it was written from, step for step.
"""

from __future__ import annotations

import io
import json
import math
import zipfile

import numpy as np

from .config import MAX_CONFIG_BYTES, RunConfig
from .uploads import (DEFAULT_LIMITS, MAX_NPZ_MEMBERS, ZIP_ERRORS, UploadLimits, _check_zip_directory, format_bytes,
                      npy_header)

#: Name of the archive's first entry, the configuration without its archived arrays.
CONFIGURATION_ENTRY = "configuration.json"
#: Largest array written into the configuration's JSON; a larger one goes to an ``.npy`` entry.
MAX_INLINE_ELEMENTS = 10_000
#: Sections of a configuration whose parameters may be archived arrays.
SECTIONS = ("target_params", "sampler_params", "compare_params")


def archived_arrays(config: RunConfig) -> list[tuple[str, str]]:
    """The (section, key) of every parameter of ``config`` that an export writes as an ``.npy`` entry, read from
    the arrays' shapes (nothing is converted)."""
    return [(section, key) for section in SECTIONS for key, value in getattr(config, section).items()
            if hasattr(value, "shape") and math.prod(value.shape) > MAX_INLINE_ELEMENTS]


def is_configuration_archive(data: bytes) -> bool:
    """Whether ``data`` is a zip archive whose first entry is ``CONFIGURATION_ENTRY`` (read from its local header)."""
    name = CONFIGURATION_ENTRY.encode()
    return (data[:4] == b"PK\x03\x04" and data[26:28] == len(name).to_bytes(2, "little")
            and data[30:30 + len(name)] == name)


def configuration_archive(record: dict, arrays: dict[tuple[str, str], np.ndarray]) -> bytes:
    """The archive of ``record`` (a configuration's dictionary, without ``arrays``) and of ``arrays``, each named
    by (section, key). Deflated: zlib lets go of the GIL, so a thread writes it while the server goes on."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(CONFIGURATION_ENTRY, json.dumps(record, indent=2))
        for (section, key), array in arrays.items():
            with archive.open(f"{section}/{key}.npy", "w", force_zip64=True) as entry:
                np.lib.format.write_array(entry, array, allow_pickle=False)
    return buffer.getvalue()


def _place(name: str) -> tuple[str, str]:
    """(section, key) of an array entry's name ``section/key.npy``; ``ValueError`` for any other name."""
    section, _, file = name.partition("/")
    key = file.removesuffix(".npy")
    if section not in SECTIONS or not key or file == key or "/" in key:
        raise ValueError(f"the configuration archive holds an entry {name[:60]!r}; expected "
                         f"{CONFIGURATION_ENTRY} and arrays named like target_params/J.npy")
    return section, key


def config_from_archive(data: bytes, limits: UploadLimits = DEFAULT_LIMITS) -> RunConfig:
    """The configuration a configuration archive holds, checked (module docstring); ``ValueError`` if unusable."""
    try:
        _check_zip_directory("the configuration archive", data)
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            members = archive.infolist()
            if len(members) > MAX_NPZ_MEMBERS:
                raise ValueError(f"the configuration archive holds {len(members):,} files; "
                                 f"the limit is {MAX_NPZ_MEMBERS}")
            if not members or members[0].filename != CONFIGURATION_ENTRY:
                raise ValueError(f"a configuration archive starts with its {CONFIGURATION_ENTRY}")
            text, *entries = members
            if text.file_size > MAX_CONFIG_BYTES:
                raise ValueError(f"the archive's {CONFIGURATION_ENTRY} is {format_bytes(text.file_size)}; "
                                 f"the limit is {format_bytes(MAX_CONFIG_BYTES)}")
            config = RunConfig.from_json(archive.read(text), limits)  # checked before any array is read
            headers = {_place(info.filename): (info, *npy_header(archive, info, info.filename)) for info in entries}
            size = sum(math.prod(shape) * max(dtype.itemsize, 8) for _, shape, dtype in headers.values())
            declared = sum(info.file_size for info in entries)
            if max(size, declared) > limits.decompressed_bytes:
                raise ValueError(f"the configuration archive's arrays would take {format_bytes(max(size, declared))}"
                                 f" decompressed; the limit is {format_bytes(limits.decompressed_bytes)}")
            record = config.to_dict()
            for (section, key), (info, _, _) in headers.items():
                with archive.open(info) as entry:
                    record[section][key] = np.lib.format.read_array(entry, allow_pickle=False)
    except ZIP_ERRORS as error:
        raise ValueError(f"this file is not a readable configuration archive ({type(error).__name__})") from None
    return RunConfig.from_dict(record, limits)
