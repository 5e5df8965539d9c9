"""Bounded, lock-protected storage between the sampler thread and the plots.

The sampler thread ``push``es chunks of steps; the view's periodic callback
``drain``s what is new. Memory is fixed however long the run lasts:

* **history** — the whole run, decimated: at most ``history_size`` points;
  when full, every other point is dropped and the stride doubles, so the
  trace always spans step 0 to now at uniform spacing;
* **recent** — the last ``recent_size`` steps at full resolution (a ring),
  used for diagnostics such as ESS;
* **snapshot** — the latest states of all chains and a running mean of the
  states (sampled once per pushed chunk), for the lattice view.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np

#: Columns of the per-step scalar traces.
SCALARS = ("step", "n_evals", "seconds")


@dataclass
class Chunk:
    """Consecutive steps recorded by the sampler thread."""

    step: np.ndarray  # (k,)
    n_evals: np.ndarray  # (k,)
    seconds: np.ndarray  # (k,)
    log_prob: np.ndarray  # (k, n_chains)
    statistic: np.ndarray  # (k, n_chains)
    accepted: np.ndarray  # (k,) number of chains that accepted at that step


@dataclass
class Drained:
    """What the views receive from one ``drain``."""

    new_history: dict | None  # columns of history points added since the last drain
    full_history: dict | None  # all history columns, when decimation rewrote them
    states: np.ndarray | None  # latest states (n_chains, d), None if nothing new
    mean_states: np.ndarray | None  # running mean of the states (n_chains, d)
    n_steps: int
    n_evals: int
    seconds: float
    acceptance: float  # over the recent window


class TraceBuffer:
    """History, recent window and latest snapshot of one run (thread-safe)."""

    def __init__(self, n_chains: int, history_size: int = 1000, recent_size: int = 1024):
        if history_size < 2 or history_size % 2:
            raise ValueError("history_size must be an even number >= 2")
        self.n_chains = n_chains
        self.history_size = history_size
        self.recent_size = recent_size
        self._lock = threading.Lock()
        self._history = {key: np.zeros(history_size) for key in SCALARS}
        self._history["log_prob"] = np.zeros((history_size, n_chains))
        self._history["statistic"] = np.zeros((history_size, n_chains))
        self._recent = {key: np.zeros(recent_size) for key in SCALARS + ("accepted",)}
        self._recent["statistic"] = np.zeros((recent_size, n_chains))
        self._stride = 1
        self._n_history = 0
        self._n_recent_total = 0
        self._drained_upto = 0
        self._rewritten = False
        self._states = None
        self._fresh_states = False
        self._state_sum = None
        self._n_snapshots = 0
        self._last = (0, 0, 0.0)

    # -- writer (sampler thread) ------------------------------------------------------
    def push(self, chunk: Chunk, states: np.ndarray) -> None:
        """Append ``chunk`` and store ``states`` (copied) as the latest snapshot."""
        with self._lock:
            self._push_recent(chunk)
            self._push_history(chunk)
            self._states = states.copy()
            self._fresh_states = True
            if self._state_sum is None:
                self._state_sum = np.zeros(states.shape)
            self._state_sum += states
            self._n_snapshots += 1
            self._last = (int(chunk.step[-1]), int(chunk.n_evals[-1]), float(chunk.seconds[-1]))

    def _push_recent(self, chunk: Chunk) -> None:
        k = len(chunk.step)
        slots = (self._n_recent_total + np.arange(k)) % self.recent_size
        for key in SCALARS + ("accepted", "statistic"):
            self._recent[key][slots] = getattr(chunk, key)
        self._n_recent_total += k

    def _push_history(self, chunk: Chunk) -> None:
        for i in np.flatnonzero(chunk.step % self._stride == 0):
            if self._n_history == self.history_size:
                self._decimate()
            if chunk.step[i] % self._stride:
                continue
            for key in SCALARS + ("log_prob", "statistic"):
                self._history[key][self._n_history] = getattr(chunk, key)[i]
            self._n_history += 1

    def _decimate(self) -> None:
        """Keep every other history point (those on the doubled stride)."""
        self._stride *= 2
        kept = np.flatnonzero(self._history["step"][: self._n_history] % self._stride == 0)
        for column in self._history.values():
            column[: len(kept)] = column[kept]
        self._n_history = len(kept)
        self._drained_upto = 0
        self._rewritten = True

    # -- reader (view's periodic callback) ------------------------------------------------
    def _columns(self, start: int, stop: int) -> dict:
        return {key: column[start:stop].copy() for key, column in self._history.items()}

    def drain(self) -> Drained:
        """What is new since the last drain (copies, safe to use without the lock)."""
        with self._lock:
            if self._rewritten:
                full, new = self._columns(0, self._n_history), None
            else:
                full, new = None, self._columns(self._drained_upto, self._n_history)
            self._rewritten = False
            self._drained_upto = self._n_history
            states = self._states if self._fresh_states else None
            self._fresh_states = False
            mean = self._state_sum / self._n_snapshots if self._n_snapshots else None
            n_recent = min(self._n_recent_total, self.recent_size)
            accepted = self._recent["accepted"][:n_recent].sum() / max(1, n_recent * self.n_chains)
            n_steps, n_evals, seconds = self._last
        return Drained(new, full, states, mean, n_steps, n_evals, seconds, float(accepted) if n_recent else float("nan"))

    def recent(self) -> dict:
        """The recent window in step order: step, n_evals, seconds, accepted, statistic (k, n_chains)."""
        with self._lock:
            n = min(self._n_recent_total, self.recent_size)
            order = (self._n_recent_total - n + np.arange(n)) % self.recent_size
            return {key: column[order].copy() for key, column in self._recent.items()}

    def latest_states(self) -> np.ndarray:
        """A copy of the newest states of all chains."""
        with self._lock:
            return self._states.copy()

    def history(self) -> dict:
        """The decimated history of the whole run (copies)."""
        with self._lock:
            return self._columns(0, self._n_history)

    @property
    def stride(self) -> int:
        return self._stride
