"""Heavy page work, one piece per turn of the server's event loop and at most half of its time.

A served page's heavy pieces — a page's document built for its first request,
the rest of its sidebar sent after the first screen, each view built for a
new run — each run in a callback of the server's one event loop. asyncio runs
every callback that is due in one turn of its loop before it reads its
sockets again, so two pieces that fall due together (two pages' views, or
one page's draft and its first view) hold every other session's click for
both; and a click takes a few turns (its message, the worker's answer, the
page's patch), so pieces a short pause apart hold it once per turn: the
worst clicks of the hostile phase were such runs of pieces.

``TURNS.claim`` lets a piece run only when no other ran in this turn (a turn
ends when the loop next runs what was queued with ``call_soon``) and the
loop has been free, since the last piece ended, for as long as that piece
took; a piece that may not run is asked of its document again when it may
(``gap_ms`` at least), and the clicks read meanwhile are answered first. A
click then waits for at most one piece. Outside a running event loop (a
notebook, a test driving a page's callbacks by hand) there are no turns to
share and every piece runs at once.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable


class OnePerTurn:
    """Which heavy piece of page work has this turn of the event loop (at most one), and when the next may run."""

    def __init__(self):
        self._taken_in: asyncio.AbstractEventLoop | None = None  # the loop whose current turn is taken
        self._started = 0.0  # when the piece of that turn started (the loop's clock)
        self._free_at = 0.0  # when the next piece may start: the last one's end plus as long as it took

    def take(self) -> None:
        """Hold this turn for work already running (a page's document being built)."""
        loop = _running_loop()
        if loop is not None and self._taken_in is not loop:
            self._taken_in, self._started = loop, loop.time()
            loop.call_soon(self._release, loop)

    def claim(self, document, piece: Callable[[], None], gap_ms: int) -> bool:
        """Whether ``piece`` may run now (it then holds the turn); if not, ``piece`` is asked of ``document`` again
        when it may (``gap_ms`` later at least) and the caller must not run it now."""
        loop = _running_loop()
        if loop is not None and (self._taken_in is loop or loop.time() < self._free_at):
            wait_ms = (self._free_at - loop.time()) * 1000 if self._taken_in is not loop else 0
            document.add_timeout_callback(piece, max(gap_ms, math.ceil(wait_ms)))
            return False
        self.take()
        return True

    def _release(self, loop: asyncio.AbstractEventLoop) -> None:
        ended = loop.time()
        self._free_at = ended + (ended - self._started)
        self._taken_in = None


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


#: The server process's turns, shared by all its sessions.
TURNS = OnePerTurn()
