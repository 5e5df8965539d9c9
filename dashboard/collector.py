"""Garbage collection on a server of many sessions: no full-collection pause of the whole class.

CPython's cyclic collector stops the whole process for a full (generation-2)
collection, and its time grows with every object alive: about 0.2 s for the
imports and 35 ms for each open session of this dashboard. With 30 sessions
running, full collections took 0.9–1.7 s, a few times a minute: a pause in
every session's clicks, the slowest clicks of a class.

A session's widgets and figures live as long as the session or its run, so
once its views are fitted to a new run (``views_built``) everything alive is
moved out of the collector's reach (``gc.freeze``); the collector then scans
only what was made since, and its pauses stay short however many sessions
are open. Reference counting still frees what is in no cycle, but what a
session replaced (the figures of its previous run) or left (a closed
session) is cyclic garbage in that frozen set: after ``FREEZES_BEFORE_COLLECT``
freezes or ``CLOSED_BEFORE_COLLECT`` closed sessions (or the last one), it is
collected in one full collection and what lives is frozen again, in a turn
of the event loop of its own that no click awaits (``turns.TURNS``). Only
served sessions use it: a notebook's collector is left as it is.
"""

from __future__ import annotations

import gc

from .turns import LOOP, TURNS

#: Freezes (runs whose views were built) before the frozen garbage is collected (one full collection).
FREEZES_BEFORE_COLLECT = 10
#: Sessions closed before the frozen garbage is collected.
CLOSED_BEFORE_COLLECT = 8


class SessionCollector:
    """Freezes what lives when a session's views are built; collects the frozen garbage now and then."""

    def __init__(self, freezes_before_collect: int = FREEZES_BEFORE_COLLECT,
                 closed_before_collect: int = CLOSED_BEFORE_COLLECT):
        self.freezes_before_collect = freezes_before_collect
        self.closed_before_collect = closed_before_collect
        self.freezes = 0  # since the last full collection
        self.closed = 0  # sessions closed since the last full collection
        self.collections = 0  # full collections of frozen garbage so far
        self._due = False  # a collection waits for its turn of the event loop

    def views_built(self) -> None:
        """A session's views were fitted to a new run: freeze, or collect and freeze once enough were frozen."""
        self.freezes += 1
        gc.freeze()
        if self.freezes >= self.freezes_before_collect:
            self._collect_in_turn()

    def session_closed(self, open_sessions: int) -> None:
        """Count a closed session; collect once enough closed, or none is open."""
        self.closed += 1
        if self.closed >= self.closed_before_collect or open_sessions == 0:
            self._collect_in_turn()

    def _collect_in_turn(self) -> None:
        """``collect`` in a turn of the event loop that no other heavy piece has (at once outside a server)."""
        if not self._due:  # else one already waits for its turn, and collects this garbage too
            self._due = True
            self._collect_when_free()

    def _collect_when_free(self) -> None:
        if self._due and TURNS.claim(LOOP, self._collect_when_free):
            self.collect()

    def collect(self) -> None:
        """One full collection of everything, frozen or not; then freeze what lives."""
        gc.unfreeze()
        gc.collect()
        gc.freeze()
        self.freezes = self.closed = 0
        self.collections += 1
        self._due = False


#: This server process's collector, shared by its sessions.
COLLECTOR = SessionCollector()
