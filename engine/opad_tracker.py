"""OPAD bookkeeping for a live run: a particle store fed after every step, read as snapshots.

``OpadTracker`` owns a ``samplers.opad.store.ParticleStore`` that only the run
touches (``update`` and ``checkpoint`` after each step, ``publish`` when a
snapshot is to carry it). Checkpoints keep the
exact KL(P‖π) of MCMC, OPAD and OPAD+ for every chain and pooled at
log-spaced steps (each at least ``GROWTH`` times the previous one, so the
history stays below a few hundred rows however long the run is, and suits the
log axis of the OPAD paper's Fig. 1). Publishing replaces ``snapshot`` by a
new immutable ``OpadSnapshot`` — the checkpoints, the values now, and, at
most every ``MARGINALS_SECONDS``, the three estimates of every bit's marginal
next to the exact one (inclusion probabilities for ``bvs``, edge
probabilities for ``dag``) — which is sent to the views as it is.

The exact quantities need the target's enumeration (d ≤ 24); it is done once,
on the first checkpoint. A sampler of a restricted
space (``support``: a fixed-distance sampler's ``in_support``) is compared with
the target restricted to it. Model code: no Panel import.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from samplers.base import StepRecord
from samplers.opad.store import KINDS, ParticleStore
from targets.base import MAX_ENUMERATE_DIM, Target

#: Ratio between consecutive KL checkpoints (log-spaced in the step).
GROWTH = 1.05
#: Least time between two refreshes of the marginals (an O(particles · d) pass).
MARGINALS_SECONDS = 0.5
#: Particle cap of a live run's store (about 100 MB at 20 chains).
MAX_PARTICLES = 1_000_000


@dataclass(frozen=True)
class OpadSnapshot:
    """What the OPAD views draw: KL history, latest marginals, store status."""

    steps: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    #: kind → (checkpoints, n_chains + 1) exact KL; the last column is the pooled chains.
    kl: dict = field(default_factory=dict)
    #: kind (and "exact") → (d,) marginal probability of every bit; empty until computed.
    marginals: dict = field(default_factory=dict)
    n_particles: int = 0
    full: str = ""


def tracking_problem(target: Target) -> str:
    """Why OPAD's exact KL cannot be tracked for ``target`` ('' if it can)."""
    if target.dim > MAX_ENUMERATE_DIM:
        return (f"exact KL needs a target small enough to enumerate (d ≤ {MAX_ENUMERATE_DIM}); "
                f"this {target.registry_name} target has d = {target.dim}")
    return ""


class OpadTracker:
    """A particle store fed after every step, with log-spaced KL checkpoints and marginals."""

    def __init__(self, target: Target, scored_neighbours: bool = False, support=None,
                 max_particles: int = MAX_PARTICLES):
        problem = tracking_problem(target)
        if problem:
            raise ValueError(problem)
        self.target = target
        self.store = ParticleStore(target, max_particles=max_particles, scored_neighbours=scored_neighbours,
                                   support=support)
        self.snapshot = OpadSnapshot()
        self._rows: list[tuple[int, np.ndarray]] = []
        self._next_step = 0
        self._exact: np.ndarray | None = None
        self._marginals_at = -np.inf

    def update(self, record: StepRecord) -> None:
        """Queue one step's record."""
        self.store.update(record)

    def _enumerate(self) -> None:
        """Exact marginals, once (the store keeps log Z); a column at a time, so no float copy of all 2^d states."""
        states, probabilities = self.store.exact()
        self._exact = np.array([probabilities @ states[:, j] for j in range(states.shape[1])])

    def _kl(self) -> np.ndarray:
        """(kinds, n_chains + 1) exact KL now: every chain, then the pooled chains."""
        if self._exact is None:
            self._enumerate()
        return self.store.kl_table([*range(self.store.n_chains), None])

    def checkpoint(self, step: int) -> None:
        """Keep the KL at ``step`` if a log-spaced checkpoint is due (call after every step)."""
        if self.store.n_chains and step >= self._next_step:
            self._rows.append((step, self._kl()))
            self._next_step = max(step + 1, int(np.ceil(step * GROWTH)))

    def publish(self, step: int) -> None:
        """Replace ``snapshot``: the checkpoints, the values at ``step``, the marginals if due."""
        if not self.store.n_chains:
            return
        rows = self._rows
        if not rows or rows[-1][0] != step:
            rows = [*rows, (step, self._kl())]
        marginals = self.snapshot.marginals
        now = time.perf_counter()
        if now - self._marginals_at >= MARGINALS_SECONDS:
            self._marginals_at = now
            marginals = {**self.store.expectation(), "exact": self._exact}
        table = np.stack([values for _, values in rows], axis=1)  # (kinds, checkpoints, chains + 1)
        self.snapshot = OpadSnapshot(steps=np.array([step for step, _ in rows]), kl=dict(zip(KINDS, table)),
                                     marginals=marginals, n_particles=self.store.n_particles, full=self.store.full)
