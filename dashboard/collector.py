"""Garbage collection on a server of many sessions: no full-collection pause of the whole class.

CPython's cyclic collector stops the whole process for a full (generation-2)
collection, and its time grows with every object alive: about 0.2 s for the
imports and 35 ms for each open session of this dashboard. With 30 sessions
running, full collections took 0.9–1.7 s, a few times a minute: a pause in
every session's clicks, the slowest clicks of a class.

A session's page, figures and widgets live as long as the session, so once
its page is built (``session_built``) everything alive is moved out of the
collector's reach (``gc.freeze``); the collector then scans only what was made
since, and its pauses stay short however many sessions are open. Reference
counting still frees what is not in a cycle, but a closed session's models
are cyclic garbage in that frozen set: after ``CLOSED_BEFORE_COLLECT``
sessions closed (or the last one), ``session_closed`` collects them in one
full collection and freezes what lives again. Nothing of this runs outside a
served app: a notebook's collector is left as it is.
"""

from __future__ import annotations

import gc

#: Sessions closed before their frozen objects are collected (one full collection of what is left).
CLOSED_BEFORE_COLLECT = 8


class SessionCollector:
    """Freezes what lives when a session's page is built; collects the frozen garbage of closed sessions."""

    def __init__(self, closed_before_collect: int = CLOSED_BEFORE_COLLECT):
        self.closed_before_collect = closed_before_collect
        self.closed = 0  # sessions closed since the last full collection
        self.collections = 0  # full collections of frozen garbage so far

    def session_built(self) -> None:
        gc.freeze()

    def session_closed(self, open_sessions: int) -> None:
        """Count a closed session; collect once enough closed, or none is open."""
        self.closed += 1
        if self.closed >= self.closed_before_collect or open_sessions == 0:
            gc.unfreeze()
            gc.collect()
            gc.freeze()
            self.closed = 0
            self.collections += 1


#: This server process's collector, shared by its sessions.
COLLECTOR = SessionCollector()
