"""A run as a link: its configuration packed into the page URL's query (``?run=…``), and read back safely.

``link_query(config)`` is the configuration's JSON, compressed (zlib) and
written in URL-safe base64; ``config_from_link(text)`` reads it back through
``RunConfig.from_json`` — so a link is checked as strictly as an uploaded
configuration file — after refusing a query longer than ``MAX_LINK_CHARS`` or
one that inflates past ``MAX_LINK_JSON_BYTES`` (a compression bomb is stopped
there, not after inflating). Opening a link replays the run step for step: a
configuration holds the seed, the parameters and any live β changes. A run
whose configuration is too large for a link (an uploaded coupling matrix) has
none (``None``): its configuration file is the way to share it. That is found
from the arrays' shapes first (``MIN_JSON_BYTES_PER_NUMBER``), so a run with a
25-million-element matrix learns it has no link at once, without turning the
matrix into a list (0.5–1.6 s on the server's event loop, at every new run).
Model code: no Panel import.
"""

from __future__ import annotations

import base64
import binascii
import zlib

from .config import RunConfig

#: Longest ``run`` query accepted or written (browsers and servers handle URLs of a few kB).
MAX_LINK_CHARS = 6000
#: Most bytes a link's query may inflate to.
MAX_LINK_JSON_BYTES = 200_000
#: Fewest bytes a number takes in a configuration's JSON: a digit and its separator.
MIN_JSON_BYTES_PER_NUMBER = 2


def link_query(config: RunConfig) -> str | None:
    """The ``run`` query value of ``config``, or None when it is longer than ``MAX_LINK_CHARS``.

    A configuration whose JSON is longer than a link may inflate to (``MAX_LINK_JSON_BYTES``: a coupling matrix
    of an upload) has none, found without writing it all out (seconds, for a configuration of 10 MB): from its
    arrays' shapes when they alone hold too many numbers, else by writing no more than a link holds.
    """
    if config.array_elements() * MIN_JSON_BYTES_PER_NUMBER > MAX_LINK_JSON_BYTES:
        return None
    pieces, size = [], 0
    for piece in config.json_pieces():
        size += len(piece)
        if size > MAX_LINK_JSON_BYTES:
            return None
        pieces.append(piece)
    packed = base64.urlsafe_b64encode(zlib.compress("".join(pieces).encode("utf-8"), 9)).decode("ascii")
    text = packed.rstrip("=")
    return text if len(text) <= MAX_LINK_CHARS else None


def config_from_link(text: str | bytes) -> RunConfig:
    """The configuration a link's ``run`` query carries; ``ValueError`` with a short reason if it cannot be read."""
    if isinstance(text, bytes):
        text = text.decode("ascii", errors="replace")
    if len(text) > MAX_LINK_CHARS:
        raise ValueError(f"the link's run is {len(text):,} characters long; at most {MAX_LINK_CHARS:,} are read")
    try:
        packed = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
        inflater = zlib.decompressobj()
        data = inflater.decompress(packed, MAX_LINK_JSON_BYTES)
        if inflater.unconsumed_tail:
            raise ValueError(f"the link's run inflates past {MAX_LINK_JSON_BYTES:,} bytes")
        if not inflater.eof:
            raise ValueError("the link's run is cut short")
    except (binascii.Error, zlib.error):
        raise ValueError("the link's run is not a packed configuration (was the link cut or altered?)") from None
    return RunConfig.from_json(data)
