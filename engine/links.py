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
A request whose link is longer than a link is read (``long_link_redirect``)
is answered before a page is built for it: the server sends the browser to
the app's address with only the link's length (``LONG_LINK_ARG``), and that
page shows the default run and why (``too_long``). A 2 MB link cost every
other session 1.2 s while its page was built around it (the query parsed,
held in the page's location and twice in its session token). Model code: no
Panel import.
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
#: The query argument of a page sent on from a link too long to read: the link's length in characters.
LONG_LINK_ARG = "run_chars"
#: Most characters of a query the server reads as it comes; a longer one is looked at only for its ``run``.
_SHORT_QUERY_CHARS = 2 * MAX_LINK_CHARS
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
        raise ValueError(too_long(str(len(text))))
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


def too_long(chars: str) -> str:
    """Why a link's run of ``chars`` characters (a decimal, as ``LONG_LINK_ARG`` carries it) is not read."""
    if chars.isdecimal() and len(chars) <= 12:
        return f"the link's run is {int(chars):,} characters long; at most {MAX_LINK_CHARS:,} are read"
    return f"the link's run is longer than the {MAX_LINK_CHARS:,} characters a link is read to"


def long_link_redirect(target: str) -> str | None:
    """Where to send a request for ``target`` (path and query) whose ``run`` is longer than a link is read: the
    same path with only ``LONG_LINK_ARG``, the run's length; ``None`` for every other request. Looks at a long
    query only as far as finding its ``run`` (neither parsed nor unquoted)."""
    path, _, query = target.partition("?")
    if len(query) <= _SHORT_QUERY_CHARS:
        return None
    run = next((part for part in query.split("&") if part.startswith("run=")), None)
    if run is None or len(run) - len("run=") <= MAX_LINK_CHARS:
        return None
    return f"{path}?{LONG_LINK_ARG}={len(run) - len('run=')}"
