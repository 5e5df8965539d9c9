"""Bounded storage of a run's traces between the sampler and the snapshots sent to the views.

The run (``engine.session``) ``push``es chunks of steps; each
snapshot ``drain``s what is new. Both happen in the run's worker, one after
the other. Memory is fixed however long the run lasts:

* **history** — the whole run, decimated: at most ``history_size`` points;
  when full, every other point is dropped and the stride doubles, so the
  trace always spans step 0 to now at uniform spacing;
* **recent** — the last ``recent_size`` steps at full resolution (a ring),
  used for diagnostics such as ESS;
* **states** — the latest states of all chains and a running mean of the
  states (sampled once per pushed chunk), for the lattice view.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: Columns of the per-step scalar traces.
SCALARS = ("step", "n_evals", "seconds")


@dataclass
class Chunk:
    """Consecutive steps of a run."""

    step: np.ndarray  # (k,)
    n_evals: np.ndarray  # (k,)
    seconds: np.ndarray  # (k,)
    log_prob: np.ndarray  # (k, n_chains)
    statistic: np.ndarray  # (k, n_chains)
    accepted: np.ndarray  # (k,) number of chains that accepted at that step


def trace_row(sampler, seconds: float, statistic) -> tuple:
    """One step's row: step, evaluations, compute seconds, log p̃ and statistic per chain, acceptances (copies: a
    statistic may return the sampler's own array, log p̃, which the next step overwrites)."""
    return (sampler.n_steps, sampler.n_evals, seconds, sampler.log_p.copy(),
            np.array(statistic(sampler.states, sampler.log_p), dtype=np.float64), int(sampler.last_accepted.sum()))


def chunk_of(rows: list[tuple]) -> Chunk:
    """The ``Chunk`` of consecutive ``trace_row``s."""
    step, n_evals, seconds, log_prob, statistic, accepted = zip(*rows)
    return Chunk(np.array(step), np.array(n_evals), np.array(seconds), np.array(log_prob),
                 np.array(statistic, dtype=np.float64), np.array(accepted))


@dataclass
class Drained:
    """What is new since the previous ``drain``."""

    new_history: dict | None  # columns of history points added since the last drain
    full_history: dict | None  # all history columns, when decimation rewrote them
    fresh_states: bool  # whether states were pushed since the last drain
    n_steps: int
    n_evals: int
    seconds: float
    acceptance: float  # over the recent window


class TraceBuffer:
    """History, recent window and latest states of one run."""

    def __init__(self, n_chains: int, history_size: int = 1000, recent_size: int = 1024):
        if history_size < 2 or history_size % 2:
            raise ValueError("history_size must be an even number >= 2")
        self.n_chains = n_chains
        self.history_size = history_size
        self.recent_size = recent_size
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

    @staticmethod
    def estimated_bytes(n_chains: int, dim: int, history_size: int = 1000, recent_size: int = 1024) -> int:
        """Bytes a buffer holds for ``n_chains`` chains of ``dim`` bits (history, recent window, states, mean)."""
        return 8 * n_chains * (2 * history_size + recent_size) + n_chains * dim * (1 + 8)

    # -- writer ---------------------------------------------------------------------------
    def push(self, chunk: Chunk, states: np.ndarray) -> None:
        """Append ``chunk`` and store ``states`` (copied) as the latest states."""
        self._push_recent(chunk)
        self._push_history(chunk)
        if self._states is None:
            self._states = states.copy()
            self._state_sum = np.zeros(states.shape)
        else:
            np.copyto(self._states, states)
        self._fresh_states = True
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

    # -- reader ---------------------------------------------------------------------------
    def _columns(self, start: int, stop: int) -> dict:
        return {key: column[start:stop].copy() for key, column in self._history.items()}

    def drain(self) -> Drained:
        """What is new since the last drain (copies)."""
        if self._rewritten:
            full, new = self._columns(0, self._n_history), None
        else:
            full, new = None, self._columns(self._drained_upto, self._n_history)
        self._rewritten = False
        self._drained_upto = self._n_history
        fresh, self._fresh_states = self._fresh_states, False
        n_steps, n_evals, seconds = self._last
        return Drained(new, full, fresh, n_steps, n_evals, seconds, self.recent_acceptance())

    def recent_acceptance(self) -> float:
        """Fraction of chain moves accepted over the recent window (NaN before any move). The row of step 0 (the
        starting states) is no move: counted as one, it kept a sampler that accepts every move under 1."""
        n_recent = min(self._n_recent_total, self.recent_size)
        moves = self._recent["step"][:n_recent] > 0
        if not moves.any():
            return float("nan")
        return float(self._recent["accepted"][:n_recent][moves].sum() / (moves.sum() * self.n_chains))

    def recent(self) -> dict:
        """The recent window in step order: step, n_evals, seconds, accepted, statistic (k, n_chains)."""
        n = min(self._n_recent_total, self.recent_size)
        order = (self._n_recent_total - n + np.arange(n)) % self.recent_size
        return {key: column[order].copy() for key, column in self._recent.items()}

    def latest_states(self) -> np.ndarray:
        """The newest states of all chains (a view: copy before keeping it)."""
        return self._states

    def mean_state(self, chain: int) -> np.ndarray:
        """The running mean of ``chain``'s states over the pushed chunks (its marginals)."""
        return self._state_sum[chain] / self._n_snapshots

    def history(self) -> dict:
        """The decimated history of the whole run (copies)."""
        return self._columns(0, self._n_history)

    @property
    def stride(self) -> int:
        return self._stride
