"""OPAD and OPAD+: optimal particle approximations of a discrete target from any sampler's records.

Afshar, Francis & Cripps, Theorem 1: among all distributions P supported on a
given set S of states, KL(P‖π) is minimised by P(x) = p̃(x)/Σ_{y∈S} p̃(y), and
then KL(P‖π) = −log π(S). So the states a chain visited, reweighted ∝ p̃
(OPAD), are never further from π than the chain's frequencies (MCMC); adding
the rejected proposals, whose p̃ the sampler computed anyway, enlarges S and
can only lower the KL again (OPAD+, §3.1).

``ParticleStore(target)`` is fed every ``StepRecord`` (``store.update(record)``)
and keeps, per chain and pooled over chains,

* MCMC: the count c(x) of every visited state; after k steps a chain holds
  k + 1 samples (its initial state and the state after each step);
* OPAD: the distinct visited states;
* OPAD+: the visited states and every proposal.

Each distinct state is stored once (its packed bits and log p̃, taken from the
record: no target evaluation). ``update`` only queues the record; queued
records are folded in every ``flush_every`` steps (and before any read) with
array operations over all of them at once, so the bookkeeping costs a small
fraction of a sampler step. The exact KL(P‖π) of all three is maintained
incrementally for enumerable targets: with n samples and counts c,

    KL(MCMC) = (1/n) Σ c log c − log n − (1/n) Σ c log p̃ + log Z,
    KL(OPAD) = log Z − log Σ_{x∈S} p̃(x),

where the sums and the running logsumexp are updated as states arrive and
log Z is computed once by enumeration. For larger targets ``log_mass()``
gives the monotone log Σ_S p̃ and ``expectation()`` the three estimates of
any statistic. Memory is capped by ``max_particles``: when the cap is
reached, the store stops updating (all three approximations stay consistent)
and ``full`` says why.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy.special import logsumexp

from targets.base import Target

from .base import StepRecord

KINDS = ("mcmc", "opad", "opad_plus")


def _xlogx(c: np.ndarray) -> np.ndarray:
    c = c.astype(np.float64)
    return c * np.log(np.where(c > 0, c, 1.0))


def _add_grouped_mass(mass: np.ndarray, rows: np.ndarray, log_p: np.ndarray) -> None:
    """mass[r] ← log(e^mass[r] + Σ_{i: rows_i = r} e^log_p_i) for every row r, in one pass."""
    if rows.size == 0:
        return
    shift = np.full(mass.size, -np.inf)
    np.maximum.at(shift, rows, log_p)
    present = np.isfinite(shift)
    shift = np.where(present, shift, 0.0)
    total = np.bincount(rows, weights=np.exp(log_p - shift[rows]), minlength=mass.size)
    with np.errstate(divide="ignore"):
        group = np.where(present, shift + np.log(total), -np.inf)
    np.logaddexp(mass, group, out=mass)


class ParticleStore:
    """MCMC, OPAD and OPAD+ approximations built from a sampler's step records.

    Per chain and pooled (row ``n_chains`` of the count tables), it keeps the
    count of every stored particle, whether it was proposed, and the running
    n, Σ c log c, Σ c log p̃ and the log-masses of the two supports.
    """

    def __init__(self, target: Target, max_particles: int = 2_000_000, flush_every: int = 256):
        if not isinstance(target, Target):
            raise ValueError(f"target must be a targets.Target; got {type(target).__name__}")
        if max_particles < 1:
            raise ValueError(f"max_particles must be >= 1; got {max_particles}")
        if flush_every < 1:
            raise ValueError(f"flush_every must be >= 1; got {flush_every}")
        self.target = target
        self.max_particles = max_particles
        self.flush_every = flush_every
        self.full = ""
        self.n_chains = 0
        self._pending: list[StepRecord] = []
        self._index: dict = {}
        self._n_particles = 0
        self._log_z: float | None = None
        self._codes = target.dim <= 62

    # -- feeding ----------------------------------------------------------------------------------
    def update(self, record: StepRecord) -> None:
        """Queue one step's states (samples) and rejected proposals (OPAD+ particles)."""
        if self.full:
            return
        if not self.n_chains:
            self._start(record.states.shape[0])
        elif record.states.shape[0] != self.n_chains:
            raise ValueError(f"record has {record.states.shape[0]} chains; the store follows {self.n_chains}")
        self._pending.append(record)
        if len(self._pending) >= self.flush_every:
            self.flush()

    def _start(self, n_chains: int, capacity: int = 1024) -> None:
        self.n_chains = n_chains
        rows = n_chains + 1
        self._counts = np.zeros((rows, capacity), dtype=np.int64)
        self._proposed = np.zeros((rows, capacity), dtype=bool)
        self._log_p = np.empty(capacity)
        self._packed = np.empty((capacity, (self.target.dim + 7) // 8), dtype=np.uint8)
        self._n = np.zeros(rows, dtype=np.int64)
        self._sum_xlogx = np.zeros(rows)
        self._sum_log_p = np.zeros(rows)
        self._mass_visited = np.full(rows, -np.inf)
        self._mass_plus = np.full(rows, -np.inf)

    def _keys(self, states: np.ndarray) -> list:
        if self._codes:
            weights = np.left_shift(np.int64(1), np.arange(states.shape[1] - 1, -1, -1, dtype=np.int64))
            return (states.astype(np.int64) @ weights).tolist()
        return [row.tobytes() for row in np.packbits(states, axis=1)]

    def _particles(self, states: np.ndarray, log_p: np.ndarray) -> np.ndarray | None:
        """Particle index of every row, storing new states; None (and ``full`` set) past the cap."""
        keys = self._keys(states)
        index = self._index
        new = {}
        for i, key in enumerate(keys):
            if key not in index and key not in new:
                new[key] = i
        if self._n_particles + len(new) > self.max_particles:
            self.full = (f"the particle store reached max_particles={self.max_particles:,} distinct states and "
                         f"stopped updating after {int(self._n[-1]):,} samples; raise max_particles to go on")
            return None
        if new:
            rows = np.fromiter(new.values(), dtype=np.int64, count=len(new))
            first = self._n_particles
            self._grow(first + len(new))
            self._log_p[first:first + len(new)] = log_p[rows]
            self._packed[first:first + len(new)] = np.packbits(states[rows], axis=1)
            for offset, key in enumerate(new):
                index[key] = first + offset
            self._n_particles += len(new)
        return np.fromiter((index[key] for key in keys), dtype=np.int64, count=len(keys))

    def _grow(self, needed: int) -> None:
        capacity = self._log_p.size
        if needed <= capacity:
            return
        while capacity < needed:
            capacity *= 2
        extra = capacity - self._log_p.size
        self._counts = np.pad(self._counts, ((0, 0), (0, extra)))
        self._proposed = np.pad(self._proposed, ((0, 0), (0, extra)))
        self._log_p = np.concatenate([self._log_p, np.empty(extra)])
        self._packed = np.concatenate([self._packed, np.empty((extra, self._packed.shape[1]), dtype=np.uint8)])

    def flush(self) -> None:
        """Fold the queued records into the counts, sums and supports (array operations over all of them)."""
        pending, self._pending = self._pending, []
        if not pending or self.full:
            return
        chains = np.arange(self.n_chains)
        states = [r.states for r in pending]
        log_p = [r.log_prob for r in pending]
        if pending[0].start_states is not None and self._n[-1] == 0:
            states.insert(0, pending[0].start_states)
            log_p.insert(0, pending[0].start_log_prob)
        proposal_rows, proposal_states, proposal_log_p = self._rejected_proposals(pending)
        sample_log_p = np.concatenate(log_p)
        particles = self._particles(np.concatenate([*states, proposal_states]),
                                    np.concatenate([sample_log_p, proposal_log_p]))
        if particles is None:
            return
        n_samples = sample_log_p.size
        sample_rows = np.tile(chains, len(states))
        self._add_samples(sample_rows, particles[:n_samples], sample_log_p)
        self._add_proposals(proposal_rows, particles[n_samples:], proposal_log_p)

    @staticmethod
    def _rejected_proposals(pending: list[StepRecord]):
        """(chain, state, log p̃) of every rejected proposal (an accepted one is the new sample)."""
        rejected = [np.flatnonzero(~r.accepted) for r in pending]
        rows = np.concatenate(rejected)
        states = np.concatenate([r.states[i] for r, i in zip(pending, rejected)])
        sites = np.concatenate([r.proposed_sites[i] for r, i in zip(pending, rejected)])
        values = np.concatenate([r.proposed_values[i] for r, i in zip(pending, rejected)])
        states[np.arange(rows.size)[:, None], sites] = values  # a rejected chain still holds the old state
        log_p = np.concatenate([r.proposed_log_prob[i] for r, i in zip(pending, rejected)])
        return rows, states, log_p

    def _with_pooled(self, rows, particles, log_p):
        pooled = np.full(rows.size, self.n_chains)
        return np.concatenate([rows, pooled]), np.concatenate([particles, particles]), np.concatenate([log_p, log_p])

    def _add_samples(self, rows, particles, log_p) -> None:
        rows, particles, log_p = self._with_pooled(rows, particles, log_p)
        self._n += np.bincount(rows, minlength=self.n_chains + 1)
        self._sum_log_p += np.bincount(rows, weights=log_p, minlength=self.n_chains + 1)
        pairs, first, added = np.unique(rows * self._log_p.size + particles, return_index=True, return_counts=True)
        r, p = rows[first], particles[first]
        before = self._counts[r, p]
        self._counts[r, p] = before + added
        self._sum_xlogx += np.bincount(r, weights=_xlogx(before + added) - _xlogx(before),
                                       minlength=self.n_chains + 1)
        new = before == 0
        _add_grouped_mass(self._mass_visited, r[new], self._log_p[p[new]])
        new_plus = new & ~self._proposed[r, p]
        _add_grouped_mass(self._mass_plus, r[new_plus], self._log_p[p[new_plus]])

    def _add_proposals(self, rows, particles, log_p) -> None:
        rows, particles, log_p = self._with_pooled(rows, particles, log_p)
        _, first = np.unique(rows * self._log_p.size + particles, return_index=True)
        r, p = rows[first], particles[first]
        new = ~self._proposed[r, p]
        self._proposed[r[new], p[new]] = True
        unseen = new & (self._counts[r, p] == 0)
        _add_grouped_mass(self._mass_plus, r[unseen], self._log_p[p[unseen]])

    # -- reading ------------------------------------------------------------------------------------
    def _row(self, chain: int | None) -> int:
        self.flush()
        if not self.n_chains:
            raise ValueError("the store is empty: call update(record) after sampler.step()")
        if chain is None:
            return self.n_chains
        if not 0 <= chain < self.n_chains:
            raise ValueError(f"chain must be in [0, {self.n_chains}) or None; got {chain}")
        return chain

    @property
    def n_particles(self) -> int:
        """Distinct states stored (visited or proposed, over all chains)."""
        self.flush()
        return self._n_particles

    def n_samples(self, chain: int | None = None) -> int:
        """Samples in the MCMC distribution (k + 1 per chain after k steps from the start)."""
        return int(self._n[self._row(chain)])

    def support(self, kind: str, chain: int | None = None) -> np.ndarray:
        """Particle indices of the ``mcmc`` / ``opad`` (visited) or ``opad_plus`` (visited or proposed) support."""
        row = self._row(chain)
        visited = self._counts[row, :self._n_particles] > 0
        if kind in ("mcmc", "opad"):
            return np.flatnonzero(visited)
        if kind == "opad_plus":
            return np.flatnonzero(visited | self._proposed[row, :self._n_particles])
        raise ValueError(f"kind must be one of {KINDS}; got {kind!r}")

    def counts(self, chain: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(particle indices, visit counts) of the MCMC distribution."""
        index = self.support("mcmc", chain)
        return index, self._counts[self._row(chain), index]

    @property
    def log_z(self) -> float:
        """log Σ_x p̃(x) by enumeration (computed once; needs an enumerable target)."""
        if self._log_z is None:
            _, log_p = self.target.enumerate()
            self._log_z = float(logsumexp(log_p))
        return self._log_z

    def kl(self, chain: int | None = None) -> dict[str, float]:
        """Exact KL(P‖π) of the MCMC, OPAD and OPAD+ distributions (one chain, or pooled)."""
        row = self._row(chain)
        log_z, n = self.log_z, self._n[row]
        mcmc = self._sum_xlogx[row] / n - np.log(n) - self._sum_log_p[row] / n + log_z
        return {"mcmc": max(float(mcmc), 0.0), "opad": max(log_z - float(self._mass_visited[row]), 0.0),
                "opad_plus": max(log_z - float(self._mass_plus[row]), 0.0)}

    def log_mass(self, chain: int | None = None) -> dict[str, float]:
        """log Σ_{x∈S} p̃(x) over the OPAD and OPAD+ supports: non-decreasing as sampling goes on."""
        row = self._row(chain)
        return {"opad": float(self._mass_visited[row]), "opad_plus": float(self._mass_plus[row])}

    def _weights(self, chain: int | None) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """Per approximation: (particle indices, normalised weights)."""
        index, counts = self.counts(chain)
        out = {"mcmc": (index, counts / counts.sum())}
        for kind in ("opad", "opad_plus"):
            support = self.support(kind, chain)
            out[kind] = (support, np.exp(self._log_p[support] - logsumexp(self._log_p[support])))
        return out

    def states(self, index: np.ndarray) -> np.ndarray:
        """The stored states with these particle indices, ``(len(index), d)`` uint8."""
        self.flush()
        return np.unpackbits(self._packed[index], axis=1, count=self.target.dim)

    def expectation(self, statistic: Callable[[np.ndarray], np.ndarray] | None = None,
                    chain: int | None = None) -> dict[str, np.ndarray]:
        """E_P[statistic(x)] under MCMC, OPAD and OPAD+ (default statistic: the marginals x itself)."""
        statistic = statistic or (lambda states: states.astype(float))
        return {kind: np.tensordot(weights, statistic(self.states(index)), axes=1)
                for kind, (index, weights) in self._weights(chain).items()}

    def tv(self, chain: int | None = None) -> dict[str, float]:
        """Exact total-variation distance to π of the three approximations (O(particles))."""
        log_z = self.log_z
        out = {}
        for kind, (index, weights) in self._weights(chain).items():
            pi = np.exp(self._log_p[index] - log_z)
            out[kind] = float(0.5 * (np.abs(weights - pi).sum() + max(0.0, 1.0 - pi.sum())))
        return out
