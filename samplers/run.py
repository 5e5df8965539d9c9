"""Headless runs: advance a sampler for n steps and keep a trace.

``run(sampler, n_steps, statistic=..., keep_states_every=...)`` returns a
``Trace`` holding, per step and chain, log p̃ and a summary statistic, the
acceptance flags, the cumulative target evaluations and wall time, and
(optionally, thinned) the states. Index 0 is the initial state, so a run of
n steps has n + 1 rows.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from samplers.base import Sampler
from samplers.diagnostics.ess import ess


@dataclass
class Trace:
    log_prob: np.ndarray  # (n_steps + 1, n_chains)
    statistic: np.ndarray  # (n_steps + 1, n_chains)
    accepted: np.ndarray  # (n_steps, n_chains)
    n_evals: np.ndarray  # (n_steps + 1,)
    wall_time: np.ndarray  # (n_steps + 1,) seconds since the start
    states: np.ndarray | None  # (n_kept, n_chains, d) or None
    state_steps: np.ndarray | None  # step index of each kept state

    @property
    def n_steps(self) -> int:
        return self.accepted.shape[0]

    def acceptance_rate(self) -> float:
        return float(self.accepted.mean()) if self.accepted.size else float("nan")

    def summary(self, burn_in: float = 0.5) -> dict:
        """ESS of the statistic after discarding a fraction ``burn_in``, per evaluation and per second."""
        start = int(round(burn_in * self.n_steps))
        kept = self.statistic[start + 1 :].T
        value = ess(kept)
        evals = float(self.n_evals[-1] - self.n_evals[start])
        seconds = float(self.wall_time[-1] - self.wall_time[start])
        return {
            "acceptance": self.acceptance_rate(),
            "ess": value,
            "ess_per_eval": value / evals if evals else float("nan"),
            "ess_per_second": value / seconds if seconds else float("nan"),
            "n_evals": int(self.n_evals[-1]),
            "seconds": float(self.wall_time[-1]),
        }


def run(
    sampler: Sampler,
    n_steps: int,
    statistic: Callable[[np.ndarray], np.ndarray] | None = None,
    keep_states_every: int = 0,
) -> Trace:
    """Advance ``sampler`` by ``n_steps`` and return the trace.

    ``statistic`` maps an ``(n_chains, d)`` batch to ``(n_chains,)`` (default:
    log p̃ itself); ``keep_states_every = k > 0`` keeps every k-th state.
    """
    if n_steps < 0:
        raise ValueError(f"n_steps must be >= 0; got {n_steps}")
    if keep_states_every < 0:
        raise ValueError(f"keep_states_every must be >= 0; got {keep_states_every}")
    stat = statistic or (lambda x: sampler.log_p)
    n = sampler.n_chains
    log_prob = np.empty((n_steps + 1, n))
    values = np.empty((n_steps + 1, n))
    accepted = np.empty((n_steps, n), dtype=bool)
    n_evals = np.empty(n_steps + 1, dtype=np.int64)
    wall = np.empty(n_steps + 1)
    kept, kept_steps = [], []
    start = time.perf_counter()
    log_prob[0], values[0], n_evals[0], wall[0] = sampler.log_p, stat(sampler.states), sampler.n_evals, 0.0
    if keep_states_every:
        kept.append(sampler.states.copy())
        kept_steps.append(0)
    for k in range(1, n_steps + 1):
        record = sampler.step()
        log_prob[k], accepted[k - 1], n_evals[k] = record.log_prob, record.accepted, record.n_evals
        values[k] = stat(record.states)
        wall[k] = time.perf_counter() - start
        if keep_states_every and k % keep_states_every == 0:
            kept.append(record.states)
            kept_steps.append(k)
    return Trace(
        log_prob=log_prob,
        statistic=values,
        accepted=accepted,
        n_evals=n_evals,
        wall_time=wall,
        states=np.stack(kept) if kept else None,
        state_steps=np.array(kept_steps) if kept else None,
    )
