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

A page's document is built in the request that asks for the page, so a
class opening the link in the same second sent thirty requests whose
documents were all built in one turn of the loop, and every page waited for
all of them. ``TURNS.admit_page`` makes each page's request wait for its
turn instead (``serving.LongLinkGuard`` awaits it before the request reaches
the app): first come, first served, one document at a time, by the same rule
as every other piece; between two documents the loop sends the pages built
so far what they ask for (their websocket, their document). While pages wait
to be admitted, the pieces of pages already open wait too (pages first, their
views after), so a class sees every Start button before the first lattices.

Pieces have ranks (``Rank``): a page's state, then its lead view, then the
rest of its sidebar, then everything else. A piece may not run while a piece
of a more urgent rank, or of the same rank asked for earlier, is still asking
(``claim`` keeps who asks, and since when): a class's pages each build their
first screen's views before any page builds what lies below it, in the order
they came. (A page draws its run only once all its views are built, so on its
own this did not bring the first lattice sooner: README, "Serving a class".)
"""

from __future__ import annotations

import asyncio
import math
from collections import deque
from collections.abc import Callable
from enum import IntEnum


#: After a piece, no other starts for this long (ms): a click that came meanwhile is read and handled first.
PAUSE_MS = 50
#: Longest a session's click holds every page's work back while it awaits its answer (ms).
ANSWER_HOLD_MS = 1000
#: Longest an admitted page's request holds the next pieces back until its document is being built (ms): a request
#: that builds none (an error answered early) frees the turns after this.
ADMITTED_HOLD_MS = 1000
#: Longest a page built holds the other pages' work back until it shows its document (ms): a browser gone before
#: it asked for the document frees them after this.
OPENING_HOLD_MS = 5000
#: How long a piece that was asked again later still counts as asking after the moment it was asked for (ms): a
#: piece whose page ended, or that no longer needs to run, asks no more and stops holding the others back.
ASKING_HOLD_MS = 500


class Rank(IntEnum):
    """How urgent a piece of page work is (lower first): what a page's first screen shows comes before the rest."""

    STATE = 1  # a run's state (the lattice), the first thing a page draws
    LEAD = 2  # the run's lead view, beside the state
    SIDEBAR = 3  # the rest of the sidebar (the run's draft), held back from a page's document
    REST = 4  # every other view, the cards below, the server's own chores


class OnePerTurn:
    """Which heavy piece of page work has this turn of the event loop (at most one), and when the next may run."""

    def __init__(self):
        self._taken_in: asyncio.AbstractEventLoop | None = None  # the loop whose current turn is taken
        self._free_at = 0.0  # the loop's time when the next piece may start, clicks aside
        self._answering: dict[int, float] = {}  # a session awaiting its click's answer (id) -> until when it holds
        self._pages: deque[object] = deque()  # the page requests waiting to be admitted, first come first
        self._admitted_until = 0.0  # the admitted page's hold on the next pieces (``ADMITTED_HOLD_MS``)
        self._opening: dict[int, float] = {}  # a page built, not yet shown (its document's id) -> until when it holds
        self._asking: dict[tuple, list] = {}  # a piece asked for and not yet run -> [rank, first asked, holds until]

    def take(self) -> None:
        """Hold this turn for work already running (a page's document being built)."""
        loop = _running_loop()
        self._admitted_until = 0.0  # the admitted page, if any, is being built
        if loop is not None and self._taken_in is not loop:
            self._taken_in = loop
            loop.call_soon(self._release, loop)

    def page_built(self, document) -> None:
        """A page's document is being built (this turn's piece); until the page shows it (``page_shown``), or
        ``OPENING_HOLD_MS`` at most, the page is still opening."""
        self.take()
        loop = _running_loop()
        if loop is not None:
            self._opening[id(document)] = loop.time() + OPENING_HOLD_MS / 1000

    def page_shown(self, document) -> None:
        """The page holds its document (or its session ended)."""
        self._opening.pop(id(document), None)

    def pages_waiting(self) -> bool:
        """Whether pages wait to be admitted (``admit_page``) or to show their document: every other page's work
        comes after theirs."""
        loop = _running_loop()
        if loop is not None and self._opening:
            now = loop.time()
            self._opening = {page: until for page, until in self._opening.items() if until > now}
        return bool(self._pages or self._opening)

    async def admit_page(self) -> None:
        """Return when a page's document may be built: first come, first served, one at a time, when a piece may
        run (``claim``'s rule). The admitted page holds the next pieces back until its document is being built
        (``take``; ``ADMITTED_HOLD_MS`` at most)."""
        loop = asyncio.get_running_loop()
        ticket = object()
        self._pages.append(ticket)
        try:
            while (wait := self._wait_seconds(loop, pause=False) if self._pages[0] is ticket else PAUSE_MS / 1000) > 0:
                await asyncio.sleep(min(wait, PAUSE_MS / 1000))  # looked at again: a build may end the hold sooner
        finally:
            self._pages.remove(ticket)
        self._admitted_until = loop.time() + ADMITTED_HOLD_MS / 1000

    def _wait_seconds(self, loop: asyncio.AbstractEventLoop, pause: bool = True) -> float:
        """Seconds until a piece may start (none while this turn is taken: until the next turn's check); a page's
        document waits for no pause after a piece (``pause=False``): the messages that came during the piece are
        read in the turn after it, before the document is built, and a class's pages wait for nothing else."""
        if self._taken_in is loop:
            return 0.001
        now = loop.time()
        self._answering = {session: until for session, until in self._answering.items() if until > now}
        return max([self._free_at if pause else 0.0, self._admitted_until, *self._answering.values()]) - now

    def answering(self, session) -> None:
        """``session``'s click awaits its answer: no piece starts until ``answered`` (``ANSWER_HOLD_MS`` at most)."""
        loop = _running_loop()
        if loop is not None:
            self._answering[id(session)] = loop.time() + ANSWER_HOLD_MS / 1000

    def answered(self, session) -> None:
        self._answering.pop(id(session), None)

    def claim(self, document, piece: Callable[[], None], gap_ms: int = PAUSE_MS, rank: Rank = Rank.REST) -> bool:
        """Whether ``piece`` may run now (it then holds the turn); if not, ``piece`` is asked of ``document`` again
        when it may (``gap_ms`` later at least) and the caller must not run it now. ``document`` is a page's Bokeh
        document, or ``LOOP`` for work of no page (run by the loop itself, outside any document's lock). A piece
        waits for every piece still asking that outranks it (``Rank``; in a rank, the one asked for first)."""
        loop = _running_loop()
        if loop is None:
            return True
        now = loop.time()
        key = (id(document), getattr(piece, "__func__", piece))  # a bound method is made anew at each access
        asked = self._asking.setdefault(key, [rank, now, now])
        asked[0] = rank  # a page's next view may rank otherwise than the one it asked for before
        wait = self._wait_seconds(loop)
        if wait > 0 or self.pages_waiting() or self._outranked(key, now):  # pages still opening come first
            delay_ms = max(gap_ms, math.ceil(wait * 1000))
            asked[2] = now + (delay_ms + ASKING_HOLD_MS) / 1000
            document.add_timeout_callback(piece, delay_ms)
            return False
        del self._asking[key]
        self.take()
        return True

    def _outranked(self, key: tuple, now: float) -> bool:
        """Whether a piece other than ``key``'s, still asking, comes before it (a lower rank, or the same asked
        for earlier); pieces that stopped asking are forgotten."""
        self._asking = {other: asked for other, asked in self._asking.items() if asked[2] > now or other == key}
        mine = self._asking[key][:2]
        return any(asked[:2] < mine for other, asked in self._asking.items() if other != key)

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
