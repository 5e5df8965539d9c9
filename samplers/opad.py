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
record: no target evaluation), numbered by a hash index
(``samplers.particle_index``). ``update`` only queues the record; queued
records are folded in every ``flush_every`` steps (and before any read): the
samples of all of them are cut into runs of a chain's repeated state (rejected
moves), each run and each proposal looked up once, and a compiled loop adds
them to the counts, sums and masses, so the bookkeeping costs a fraction of a sampler
step. The exact KL(P‖π) of all three is maintained incrementally for
enumerable targets: with n samples and counts c,

    KL(MCMC) = (1/n) Σ c log c − log n − (1/n) Σ c log p̃ + log Z,
    KL(OPAD) = log Z − log Σ_{x∈S} p̃(x),

where the sums and the running logsumexp are updated as states arrive and
log Z is computed once by enumeration. For larger targets ``log_mass()``
gives the monotone log Σ_S p̃ and ``expectation()`` the three estimates of
any statistic.

When the chains sample p̃ restricted to a subset — a fixed-distance sampler's
S_n(c) — pass ``support`` (e.g. the sampler's ``in_support``): π is then p̃
restricted and renormalised there, which is what the KL is measured against.

Beyond the paper, ``scored_neighbours=True`` adds to OPAD+ every state whose
p̃ the sampler scored: for locally balanced and LSB samplers (built with
``record_neighbours=True``) all d single-flip neighbours of each visited state.

Memory: per particle 8 bytes of log p̃, ⌈d/8⌉ bytes of state, about 32 bytes of
hash index and, per chain and pooled, 4 bytes of visits and 4 of proposals
(int32). ``max_particles`` caps the particles: when the cap is reached, the
store stops updating (all three approximations stay consistent) and ``full``
says why.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numba import njit
from scipy.special import logsumexp

from targets.base import Target

from .base import StepRecord, log_add
from .particle_index import make_index, state_keys

KINDS = ("mcmc", "opad", "opad_plus")
#: Counts are int32 (8 bytes per particle and chain for visits and proposals); past this the store stops.
COUNT_LIMIT = np.iinfo(np.int32).max


@njit(cache=True)
def _xlogx(c):
    return c * np.log(c) if c > 0 else 0.0


@njit(cache=True)
def _fold_samples(counts, proposed, rows, particles, lengths, log_p, sum_xlogx, mass_visited, mass_plus):
    """Add runs of ``lengths[j]`` samples of particle ``particles[j]`` to chain ``rows[j]`` and to the pool.

    For each row r (the chain's and the pooled last row) with count c of the
    particle before: c += length, Σ c log c gains its change, and a particle
    new to the row adds its p̃ to the visited mass (OPAD) and, unless it was
    proposed there before, to the OPAD+ mass.
    """
    pooled = counts.shape[0] - 1
    for j in range(rows.size):
        p = particles[j]
        for r in (rows[j], pooled):
            before = counts[r, p]
            counts[r, p] = before + lengths[j]
            sum_xlogx[r] += _xlogx(float(before + lengths[j])) - _xlogx(float(before))
            if before == 0:
                mass_visited[r] = log_add(mass_visited[r], log_p[j])
                if proposed[r, p] == 0:
                    mass_plus[r] = log_add(mass_plus[r], log_p[j])


@njit(cache=True)
def _fold_proposals(counts, proposed, rows, particles, log_p, mass_plus):
    """Count proposal ``particles[j]`` for chain ``rows[j]`` and the pool; one neither visited nor proposed
    there before adds its p̃ to the OPAD+ mass."""
    pooled = counts.shape[0] - 1
    for j in range(rows.size):
        p = particles[j]
        for r in (rows[j], pooled):
            if proposed[r, p] == 0 and counts[r, p] == 0:
                mass_plus[r] = log_add(mass_plus[r], log_p[j])
            proposed[r, p] += 1


def _widened(table: np.ndarray, columns: int) -> np.ndarray:
    """``table`` with zero columns appended up to ``columns``."""
    wider = np.zeros((table.shape[0], columns), dtype=table.dtype)
    wider[:, :table.shape[1]] = table
    return wider


def _stacked(arrays: list[np.ndarray]) -> np.ndarray:
    """``np.stack`` for equal-shaped arrays, without its per-array Python overhead."""
    return np.concatenate(arrays).reshape(len(arrays), *arrays[0].shape)


def _rejected_proposals(pending: list[StepRecord], states: np.ndarray):
    """(chain, state, log p̃) of every rejected proposal (an accepted one is the new sample).

    ``states`` are the records' states stacked, ``(steps, chains, d)``.
    """
    steps, chains = np.nonzero(~_stacked([r.accepted for r in pending]))
    sites = [r.proposed_sites for r in pending]
    if len({s.shape for s in sites}) == 1:
        proposals = states[steps, chains]  # a rejected chain still holds its old state
        np.put_along_axis(proposals, _stacked(sites)[steps, chains],
                          _stacked([r.proposed_values for r in pending])[steps, chains], axis=1)
    else:  # samplers whose proposals change different numbers of sites from step to step
        proposals = _stacked([r.proposed for r in pending])[steps, chains]
    log_p = _stacked([r.proposed_log_prob for r in pending])[steps, chains]
    return chains, proposals, log_p


def _extra_states(pending: list[StepRecord]):
    """(chain, state, log p̃) of the further states the records scored (e.g. parallel tempering's hot replicas)."""
    extra = _stacked([r.extra_states for r in pending])  # (steps, chains, m, d)
    log_p = _stacked([r.extra_log_prob for r in pending])
    chains = np.broadcast_to(np.arange(extra.shape[1])[None, :, None], log_p.shape)
    return chains.ravel(), extra.reshape(-1, extra.shape[-1]), log_p.ravel()


class _Runs:
    """A flush's samples as runs of identical consecutive states per chain (a rejected move repeats the state).

    From ``states`` (steps, chains, d) and their log p̃ (steps, chains):
    ``keys``, ``states``, ``log_p``, ``rows`` (chain) and ``lengths`` of each
    run, chain-major, so the store looks up and counts a run once.
    """

    def __init__(self, states: np.ndarray, log_p: np.ndarray):
        self.steps, n_chains, d = states.shape
        self.size = self.steps * n_chains
        self.sum_log_p = log_p.sum(axis=0)
        keys = state_keys(states.reshape(-1, d)).reshape(self.steps, n_chains).T.ravel()
        starts = np.ones(keys.size, dtype=bool)
        starts[1:] = keys[1:] != keys[:-1]
        starts[::self.steps] = True
        first = np.flatnonzero(starts)
        self.lengths = np.diff(np.append(first, keys.size))
        self.rows, step = np.divmod(first, self.steps)
        self.keys = keys[first]
        self.states = states[step, self.rows]
        self.log_p = log_p[step, self.rows]


class ParticleStore:
    """MCMC, OPAD and OPAD+ approximations built from a sampler's step records.

    Per chain and pooled (row ``n_chains`` of the count tables), it keeps the
    count of every stored particle, whether it was proposed (or scored), and
    the running n, Σ c log c, Σ c log p̃ and the log-masses of the two supports.

    ``scored_neighbours=True`` goes beyond the paper: OPAD+ then also holds
    every single-flip neighbour of every visited state, whose p̃ a locally
    balanced or LSB proposal computed anyway (records of samplers built with
    ``record_neighbours=True``), at no extra target evaluation.
    """

    def __init__(self, target: Target, max_particles: int = 2_000_000, flush_every: int = 256,
                 scored_neighbours: bool = False, support: Callable[[np.ndarray], np.ndarray] | None = None):
        if not isinstance(target, Target):
            raise ValueError(f"target must be a targets.Target; got {type(target).__name__}")
        if max_particles < 1:
            raise ValueError(f"max_particles must be >= 1; got {max_particles}")
        if flush_every < 1:
            raise ValueError(f"flush_every must be >= 1; got {flush_every}")
        self.target = target
        self.max_particles = max_particles
        self.flush_every = flush_every
        self.scored_neighbours = scored_neighbours
        self.support_of_chains = support
        self.full = ""
        self.n_chains = 0
        self._pending: list[StepRecord] = []
        self._index = make_index(target.dim)
        self._log_z: float | None = None

    # -- feeding ----------------------------------------------------------------------------------
    def update(self, record: StepRecord) -> None:
        """Queue one step's states (samples) and proposals (OPAD+ particles)."""
        if self.full:
            return
        if self.scored_neighbours and record.scored_log_ratio is None:
            raise ValueError("scored_neighbours=True needs records with the scored neighbourhood: build a "
                             "locally_balanced or lsb sampler with record_neighbours=True")
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
        self._counts = np.zeros((rows, capacity), dtype=np.int32)
        self._proposed = np.zeros((rows, capacity), dtype=np.int32)
        self._log_p = np.empty(capacity)
        self._packed = np.empty((capacity, (self.target.dim + 7) // 8), dtype=np.uint8)
        self._n = np.zeros(rows, dtype=np.int64)
        self._sum_xlogx = np.zeros(rows)
        self._sum_log_p = np.zeros(rows)
        self._mass_visited = np.full(rows, -np.inf)
        self._mass_plus = np.full(rows, -np.inf)
        self._previous: StepRecord | None = None
        self._n_scored = 0

    def _particles(self, keys: np.ndarray, states: np.ndarray, log_p: np.ndarray) -> np.ndarray | None:
        """Particle number of every row (given its key), storing new states; None (and ``full`` set) past the cap."""
        found = self._index.find(keys)
        missing = np.flatnonzero(found < 0)
        if missing.size:
            new_keys, first, inverse = np.unique(keys[missing], return_index=True, return_inverse=True)
            start = self._index.size
            if start + new_keys.size > self.max_particles:
                self.full = (f"the particle store reached max_particles={self.max_particles:,} distinct states "
                             f"and stopped updating after {int(self._n[-1]):,} samples; raise max_particles to go on")
                return None
            rows = missing[first]
            order = np.argsort(rows)  # number new particles in order of first appearance
            self._index.insert(new_keys[order])
            self._grow(start + new_keys.size)
            self._log_p[start:start + rows.size] = log_p[rows[order]]
            self._packed[start:start + rows.size] = np.packbits(states[rows[order]], axis=1)
            rank = np.empty(order.size, dtype=np.int64)
            rank[order] = np.arange(order.size)
            found[missing] = start + rank[inverse.ravel()]
        return found

    def _grow(self, needed: int) -> None:
        capacity = self._log_p.size
        if needed <= capacity:
            return
        while capacity < needed:
            capacity *= 2
        self._counts, self._proposed = (_widened(table, capacity) for table in (self._counts, self._proposed))
        self._log_p = np.concatenate([self._log_p, np.empty(capacity - self._log_p.size)])
        self._packed = np.concatenate([self._packed, np.empty((capacity - self._packed.shape[0],
                                                               self._packed.shape[1]), dtype=np.uint8)])

    def flush(self) -> None:
        """Fold the queued records into the counts, sums and supports (array operations over all of them)."""
        pending, self._pending = self._pending, []
        if not pending or self.full:
            return
        states = _stacked([r.states for r in pending])  # stacked once: the samples and the proposals' base
        log_p = _stacked([r.log_prob for r in pending])
        if pending[0].start_states is not None and self._n[-1] == 0:
            samples = _Runs(np.concatenate([pending[0].start_states[None], states]),
                            np.concatenate([pending[0].start_log_prob[None], log_p]))
        else:
            samples = _Runs(states, log_p)
        scored = [_rejected_proposals(pending, states)]
        if self.scored_neighbours:
            scored.append(self._neighbours(pending))
        if pending[0].extra_states is not None:
            scored.append(_extra_states(pending))
        scored_rows, scored_states, scored_log_p = (np.concatenate(parts) for parts in zip(*scored))
        self._n_scored += scored_log_p.size
        if max(self._n[-1] + samples.size, self._n_scored) > COUNT_LIMIT:
            self.full = (f"the store's 32-bit counters would pass {COUNT_LIMIT:,} samples or proposals after "
                         f"{int(self._n[-1]):,} samples; start a new store to go on")
            return
        keys = np.concatenate([samples.keys, state_keys(scored_states)])
        particles = self._particles(keys, np.concatenate([samples.states, scored_states]),
                                    np.concatenate([samples.log_p, scored_log_p]))
        self._previous = pending[-1]
        if particles is None:
            return
        n_runs = samples.keys.size
        self._n += np.append(np.full(self.n_chains, samples.steps), samples.size)
        per_chain = samples.sum_log_p
        self._sum_log_p += np.append(per_chain, per_chain.sum())
        _fold_samples(self._counts, self._proposed, samples.rows, particles[:n_runs], samples.lengths, samples.log_p,
                      self._sum_xlogx, self._mass_visited, self._mass_plus)
        _fold_proposals(self._counts, self._proposed, scored_rows, particles[n_runs:], scored_log_p, self._mass_plus)

    def _neighbours(self, pending: list[StepRecord]):
        """(chain, state, log p̃) of the single-flip neighbours each record scored around a state new to its chain.

        A record's neighbourhood is that of the state its chain held before the
        step; it is new when the chain moved in the previous step (or at the
        start), so each visited state's neighbourhood is folded in once.
        """
        d = self.target.dim
        if self._previous is not None:
            before = [self._previous, *pending[:-1]]
        elif pending[0].start_states is not None:
            before = [None, *pending[:-1]]  # None: the chains' start, where every state is new
        else:  # the store joined a running chain: its first record's neighbourhood may not be new
            before, pending = pending[:-1], pending[1:]
        if not pending:
            return np.empty(0, dtype=np.int64), np.empty((0, d), dtype=np.uint8), np.empty(0)
        start = pending[0] if before[0] is None else None
        moved = [np.ones(self.n_chains, dtype=bool) if r is None else r.accepted for r in before]
        states = [start.start_states if r is None else r.states for r in before]
        log_p = [start.start_log_prob if r is None else r.log_prob for r in before]
        steps, chains = np.nonzero(_stacked(moved))
        centres = _stacked(states)[steps, chains]
        centre_log_p = _stacked(log_p)[steps, chains]
        ratios = _stacked([r.scored_log_ratio for r in pending])[steps, chains]
        neighbours = np.repeat(centres, d, axis=0)
        neighbours[np.arange(neighbours.shape[0]), np.tile(np.arange(d), chains.size)] ^= 1
        return np.repeat(chains, d), neighbours, (centre_log_p[:, None] + ratios).ravel()

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
        return self._index.size

    @property
    def nbytes(self) -> int:
        """Memory held by the store's arrays and index (allocated capacity included)."""
        if not self.n_chains:
            return 0
        arrays = (self._counts, self._proposed, self._log_p, self._packed)
        return sum(a.nbytes for a in arrays) + self._index.nbytes

    def n_samples(self, chain: int | None = None) -> int:
        """Samples in the MCMC distribution (k + 1 per chain after k steps from the start)."""
        return int(self._n[self._row(chain)])

    def support(self, kind: str, chain: int | None = None) -> np.ndarray:
        """Particle indices of the ``mcmc`` / ``opad`` (visited) or ``opad_plus`` (visited or proposed) support."""
        row = self._row(chain)
        visited = self._counts[row, :self._index.size] > 0
        if kind in ("mcmc", "opad"):
            return np.flatnonzero(visited)
        if kind == "opad_plus":
            return np.flatnonzero(visited | (self._proposed[row, :self._index.size] > 0))
        raise ValueError(f"kind must be one of {KINDS}; got {kind!r}")

    def counts(self, chain: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(particle indices, visit counts) of the MCMC distribution."""
        index = self.support("mcmc", chain)
        return index, self._counts[self._row(chain), index]

    def exact(self) -> tuple[np.ndarray, np.ndarray]:
        """π by enumeration: the states the chains sample from and their probabilities (sets ``log_z``)."""
        states, log_p = self.target.enumerate()
        if self.support_of_chains is not None:
            inside = self.support_of_chains(states)
            states, log_p = states[inside], log_p[inside]
        self._log_z = float(logsumexp(log_p))
        return states, np.exp(log_p - self._log_z)

    @property
    def log_z(self) -> float:
        """log Σ_x p̃(x) over the chains' space by enumeration (once; needs an enumerable target), or as set."""
        if self._log_z is None:
            self.exact()
        return self._log_z

    @log_z.setter
    def log_z(self, value: float) -> None:
        """Give the log normaliser when it is already known (saves the enumeration)."""
        self._log_z = float(value)

    def kl(self, chain: int | None = None) -> dict[str, float]:
        """Exact KL(P‖π) of the MCMC, OPAD and OPAD+ distributions (one chain, or pooled)."""
        row = self._row(chain)
        log_z, n = self.log_z, self._n[row]
        mcmc = self._sum_xlogx[row] / n - np.log(n) - self._sum_log_p[row] / n + log_z
        return {"mcmc": max(float(mcmc), 0.0), "opad": max(log_z - float(self._mass_visited[row]), 0.0),
                "opad_plus": max(log_z - float(self._mass_plus[row]), 0.0)}

    def kl_table(self, chains) -> np.ndarray:
        """(kinds, len(chains)) exact KL of each of ``chains`` (a chain, or None for the pooled chains), the rows in
        the order of ``KINDS``."""
        per_chain = [self.kl(chain) for chain in chains]
        return np.array([[kl[kind] for kl in per_chain] for kind in KINDS])

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
