"""How a run's worker paces its slower work: at most once every so often (``Every``), within a share of its CPU
time (``CpuShare``), and off its own thread (``InBackground``), so that the sampler's steps and the worker's
commands come first (``engine.session``: the snapshot's diagnostics, learning curves, OPAD parts).
"""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager

import numpy as np


class Every:
    """True at most once every ``seconds`` (and at once after ``reset``)."""

    def __init__(self, seconds: float):
        self.seconds = seconds
        self._last = -np.inf

    def reset(self) -> None:
        self._last = -np.inf

    def due(self) -> bool:
        now = time.perf_counter()
        if now - self._last < self.seconds:
            return False
        self._last = now
        return True


class CpuShare:
    """Keeps the CPU time of one kind of work within ``share`` of the calling thread's CPU time since it was made.

    ``spending()`` times the work (thread CPU, so the time it waits for a core
    does not count), ``spent_elsewhere`` adds work of the kind done in another
    thread; ``allows()`` says whether what was spent so far is within the share.
    """

    def __init__(self, share: float):
        self.share = share
        self._origin = time.thread_time()
        self._spent = 0.0
        self._elsewhere = 0.0  # CPU time of the work done in other threads (``spent_elsewhere``)

    def allows(self) -> bool:
        return self._spent <= self.share * (time.thread_time() - self._origin + self._elsewhere)

    def spent_elsewhere(self, seconds: float) -> None:
        """Count work of this kind that took ``seconds`` of another thread's CPU time."""
        self._spent += seconds
        self._elsewhere += seconds

    @contextmanager
    def spending(self):
        started = time.thread_time()
        try:
            yield
        finally:
            self._spent += time.thread_time() - started


class InBackground:
    """One slow computation at a time in a thread of its own, so that the worker hears commands meanwhile.

    ``start(function, *args)`` runs it (the arguments must be the
    computation's own copies); ``take()`` gives ``(result, CPU seconds)`` once
    it finished (raising what it raised), else None; ``drop()`` forgets a
    computation still running (its result is never taken).
    """

    def __init__(self):
        self._lock = threading.Lock()
        self._generation = 0
        self._thread: threading.Thread | None = None
        self._outcome = None

    @property
    def busy(self) -> bool:
        return self._thread is not None

    def start(self, function, *args) -> None:
        with self._lock:
            self._generation += 1
            generation, self._outcome = self._generation, None

        def run() -> None:
            started = time.thread_time()
            try:
                outcome = (function(*args), None)
            except Exception as error:  # noqa: BLE001 — raised again by ``take``, in the worker's thread
                outcome = (None, error)
            with self._lock:
                if generation == self._generation:
                    self._outcome = (*outcome, time.thread_time() - started)

        self._thread = threading.Thread(target=run, name="snapshot-part", daemon=True)
        self._thread.start()

    def take(self):
        with self._lock:
            outcome = self._outcome
            if outcome is None:
                return None
            self._thread, self._outcome = None, None
        result, error, seconds = outcome
        if error is not None:
            raise error
        return result, seconds

    def drop(self) -> None:
        with self._lock:
            self._generation += 1
            self._thread, self._outcome = None, None
