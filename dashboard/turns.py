"""Heavy page work: one piece per turn of the server's event loop, and none while a click awaits its answer.

A served page's heavy pieces — a page's document built for its first request,
the rest of its sidebar sent after the first screen, each view built for a
new run, a full garbage collection (``collector``) — each run in a callback of the server's one event loop. asyncio runs
every callback that is due in one turn of its loop before it reads its
sockets again, so two pieces that fall due together (two pages' views, or
one page's draft and its first view) hold every other session's click for
both; and a click takes a few turns (its message, the worker's answer, the
page's patch), so pieces that follow each other hold it once per turn: the
worst clicks of the hostile phase were such runs of pieces.

``TURNS.claim`` lets a piece run only when no other ran in this turn (a turn
ends when the loop next runs what was queued with ``call_soon``), none ended
less than ``PAUSE_MS`` ago (time for a click's message to be read and
handled) and no session's click awaits its answer (``answering`` until
``answered``, for ``ANSWER_HOLD_MS`` at most); a piece that may not run is
asked of its document again when it may (``gap_ms`` later at least). A
click then waits for at most the one piece running when it came. Outside a
running event loop (a notebook, a test driving a page's callbacks by hand)
there are no turns to share and every piece runs at once.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable


#: After a piece, no other starts for this long (ms): a click that came meanwhile is read and handled first.
PAUSE_MS = 50
#: Longest a session's click holds every page's work back while it awaits its answer (ms).
ANSWER_HOLD_MS = 1000


class OnePerTurn:
    """Which heavy piece of page work has this turn of the event loop (at most one), and when the next may run."""

    def __init__(self):
        self._taken_in: asyncio.AbstractEventLoop | None = None  # the loop whose current turn is taken
        self._free_at = 0.0  # the loop's time when the next piece may start, clicks aside
        self._answering: dict[int, float] = {}  # a session awaiting its click's answer (id) -> until when it holds

    def take(self) -> None:
        """Hold this turn for work already running (a page's document being built)."""
        loop = _running_loop()
        if loop is not None and self._taken_in is not loop:
            self._taken_in = loop
            loop.call_soon(self._release, loop)

    def answering(self, session) -> None:
        """``session``'s click awaits its answer: no piece starts until ``answered`` (``ANSWER_HOLD_MS`` at most)."""
        loop = _running_loop()
        if loop is not None:
            self._answering[id(session)] = loop.time() + ANSWER_HOLD_MS / 1000

    def answered(self, session) -> None:
        self._answering.pop(id(session), None)

    def claim(self, document, piece: Callable[[], None], gap_ms: int = PAUSE_MS) -> bool:
        """Whether ``piece`` may run now (it then holds the turn); if not, ``piece`` is asked of ``document`` again
        when it may (``gap_ms`` later at least) and the caller must not run it now. ``document`` is a page's Bokeh
        document, or ``LOOP`` for work of no page (run by the loop itself, outside any document's lock)."""
        loop = _running_loop()
        if loop is None:
            return True
        now = loop.time()
        self._answering = {session: until for session, until in self._answering.items() if until > now}
        free_at = max([self._free_at, *self._answering.values()])
        if self._taken_in is loop or now < free_at:
            document.add_timeout_callback(piece, max(gap_ms, math.ceil((free_at - now) * 1000)))
            return False
        self.take()
        return True

    def _release(self, loop: asyncio.AbstractEventLoop) -> None:
        self._free_at = loop.time() + PAUSE_MS / 1000
        self._taken_in = None


class _Loop:
    """Asks the running event loop itself for a piece later (``claim`` for work of no page)."""

    @staticmethod
    def add_timeout_callback(piece: Callable[[], None], delay_ms: int) -> None:
        asyncio.get_running_loop().call_later(delay_ms / 1000, piece)


LOOP = _Loop()


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


#: The server process's turns, shared by all its sessions.
TURNS = OnePerTurn()
