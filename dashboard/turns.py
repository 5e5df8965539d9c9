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
rest of its sidebar, then everything else. A piece refused is queued (``claim``
keeps who asks, and since when) and asked of its page again when its turn
comes: the most urgent, and in a rank the first asked for, as soon as a piece
may start — one wake-up of the loop, not every piece polling — so a class's
pages each draw their first screen before any page builds what lies below it,
in the order they came, and the loop is never idle while a piece waits.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
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
#: Longest a queued piece whose turn came holds the others back until it claims its turn (ms): one that no longer
#: needs to run (its page ended, its work was done otherwise) claims nothing and leaves the queue after this.
CALLED_HOLD_MS = 500


class Rank(IntEnum):
    """How urgent a piece of page work is (lower first): what a page's first screen shows comes before the rest."""

    STATE = 1  # a run's state (the lattice), the first thing a page draws
    LEAD = 2  # the run's lead view, beside the state
    SIDEBAR = 3  # the rest of the sidebar (the run's draft), held back from a page's document
    REST = 4  # every other view, the cards below, the server's own chores


@dataclass
class _Queued:
    """A piece refused its turn: asked of ``document`` again when its turn comes."""

    rank: Rank
    since: float  # the loop's time when it was first asked for: its place in its rank
    document: object
    piece: Callable[[], None]
    called: float | None = None  # when its turn came and its page was asked for it (None: not yet)


class OnePerTurn:
    """Which heavy piece of page work has this turn of the event loop (at most one), and when the next may run."""

    def __init__(self):
        self._taken_in: asyncio.AbstractEventLoop | None = None  # the loop whose current turn is taken
        self._free_at = 0.0  # the loop's time when the next piece may start, clicks aside
        self._answering: dict[int, float] = {}  # a session awaiting its click's answer (id) -> until when it holds
        self._pages: deque[object] = deque()  # the page requests waiting to be admitted, first come first
        self._admitted_until = 0.0  # the admitted page's hold on the next pieces (``ADMITTED_HOLD_MS``)
        self._opening: dict[int, float] = {}  # a page built, not yet shown (its document's id) -> until when it holds
        self._queue: dict[tuple, _Queued] = {}  # the pieces refused and not yet run (``claim``)
        self._wake: asyncio.TimerHandle | None = None  # when the queue's most urgent piece is looked at next
        self._wake_loop: asyncio.AbstractEventLoop | None = None  # the loop it is due in

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
        """The page holds its document: the queued pieces may go on."""
        self._opening.pop(id(document), None)
        self._wake_up_soon()

    def page_closed(self, document) -> None:
        """The page's session ended: it opens no more, and its queued pieces leave the queue."""
        self._queue = {key: queued for key, queued in self._queue.items() if queued.document is not document}
        self.page_shown(document)

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
        self._wake_up_soon()

    def claim(self, document, piece: Callable[[], None], rank: Rank = Rank.REST) -> bool:
        """Whether ``piece`` may run now (it then holds the turn); if not, it is queued and asked of ``document``
        again when its turn comes, and the caller must not run it now. ``document`` is a page's Bokeh document, or
        ``LOOP`` for work of no page (run by the loop itself, outside any document's lock). A piece may run when no
        other ran in this turn, none ended less than ``PAUSE_MS`` ago, no click awaits its answer, no page is still
        opening, and no queued piece comes before it (``Rank``; in a rank, the one asked for first)."""
        loop = _running_loop()
        if loop is None:
            return True
        key = (id(document), getattr(piece, "__func__", piece))  # a bound method is made anew at each access
        queued = self._queue.get(key)
        if queued is None:
            queued = self._queue[key] = _Queued(rank, loop.time(), document, piece)
        queued.rank, queued.document, queued.piece, queued.called = rank, document, piece, None
        if self._wait_seconds(loop) <= 0 and not self.pages_waiting() and self._first(loop) is queued:
            del self._queue[key]
            self.take()
            return True
        self._wake_up_soon()
        return False

    def _first(self, loop: asyncio.AbstractEventLoop) -> _Queued | None:
        """The queue's most urgent piece; a piece whose turn came ``CALLED_HOLD_MS`` ago without a claim leaves."""
        late = loop.time() - CALLED_HOLD_MS / 1000
        self._queue = {key: queued for key, queued in self._queue.items()
                       if queued.called is None or queued.called > late}
        return min(self._queue.values(), key=lambda queued: (queued.rank, queued.since), default=None)

    def _wake_up_soon(self) -> None:
        """Look at the queue as soon as a piece may start (when the loop is free, or a little later while a click
        awaits its answer or pages are opening)."""
        loop = _running_loop()
        if loop is None or not self._queue:
            return
        wait = self._wait_seconds(loop)
        self._look_again(loop, wait if wait > 0 else PAUSE_MS / 1000 if self.pages_waiting() else 0.0)

    def _look_again(self, loop: asyncio.AbstractEventLoop, delay: float) -> None:
        """Look at the queue ``delay`` seconds from now, unless a look comes sooner."""
        if self._wake is not None and self._wake_loop is loop:
            if self._wake.when() <= loop.time() + delay:
                return
            self._wake.cancel()
        self._wake, self._wake_loop = loop.call_later(delay, self._call_first, loop), loop

    def _call_first(self, loop: asyncio.AbstractEventLoop) -> None:
        """Ask the page of the queue's most urgent piece for it, if a piece may start now; else look again later."""
        self._wake = None
        first = self._first(loop)
        if first is None:
            return
        if first.called is not None:  # asked for already: its claim comes, or it leaves the queue at this time
            self._look_again(loop, first.called + CALLED_HOLD_MS / 1000 - loop.time())
            return
        if self._wait_seconds(loop) > 0 or self.pages_waiting():
            self._wake_up_soon()
            return
        first.called = loop.time()
        try:
            first.document.add_timeout_callback(first.piece, 0)
        except Exception:  # noqa: BLE001 — a page whose session is gone: its piece leaves the queue
            self._queue = {key: queued for key, queued in self._queue.items() if queued is not first}
        self._look_again(loop, CALLED_HOLD_MS / 1000)  # should its claim never come

    def _release(self, loop: asyncio.AbstractEventLoop) -> None:
        self._free_at = loop.time() + PAUSE_MS / 1000
        self._taken_in = None
        self._wake_up_soon()


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
