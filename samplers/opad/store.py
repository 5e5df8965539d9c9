"""OPAD and OPAD+: optimal particle approximations of a discrete target from any sampler's records.

Afshar, Francis & Cripps, Theorem 1: among all distributions P supported on a
given set S of states, KL(P‖π) is minimised by P(x) = p̃(x)/Σ_{y∈S} p̃(y)
(Eq. 5), and then KL(P‖π) = −log π(S) (Eq. 4). So the states a chain visited,
reweighted ∝ p̃ (OPAD), are never further from π than the chain's frequencies
(MCMC); adding the rejected proposals, whose p̃ the sampler computed anyway,
enlarges S and can only lower the KL again (OPAD+, §3.1, Eq. 9:
KL(MCMC) ≥ KL(OPAD) ≥ KL(OPAD+)).

``ParticleStore(target)`` is fed every ``StepRecord`` (``store.update(record)``)
and keeps, per chain and pooled over chains,

* MCMC: the count c(x) of every visited state; after k steps a chain holds
  k + 1 samples (its initial state and the state after each step);
* OPAD: the distinct visited states;
* OPAD+: the visited states and every proposal.

Each distinct state is stored once (its bits and log p̃, taken from the
record: no target evaluation), numbered by a hash index
(``samplers.opad.particle_index``). ``update`` only queues the record; queued
records are folded in every ``flush_every`` steps (sooner when their states
pass ``PENDING_BYTES``, and before any read) by one compiled pass over their
steps: each chain's state is looked up, a repeated state (a rejected move)
extends the chain's run, counted once when the run ends, and each rejected
proposal is keyed from the state and the sites it changes. The exact
KL(P‖π) of all three is maintained incrementally for enumerable targets: with
n samples and counts c,

    KL(MCMC) = (1/n) Σ c log c − log n − (1/n) Σ c log p̃ + log Z,
    KL(OPAD) = log Z − log Σ_{x∈S} p̃(x)   (Eq. 4),

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

Cost: the fold takes about a third of a Metropolis step of 20 chains on the
15-spin chain of the OPAD paper's Fig. 1 (``benchmarks.papers.opad_ising``).
Memory: per particle 8 bytes of log p̃, 8·⌈d/64⌉ bytes of state, 16–32 bytes
of hash index and, per chain and pooled, 4 bytes of visits and 4 of proposals
(int32). ``max_particles`` caps the particles: when the cap is reached, the
store stops updating (all three approximations stay consistent) and ``full``
says why.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from operator import attrgetter
from typing import NamedTuple

import numpy as np
from numba import njit
from scipy.special import logsumexp

from samplers.base import StepRecord, log_add
from samplers.common.prefetch import prefetch
from samplers.opad.particle_index import (ParticleIndex, find_or_insert, home, number_in, pack_state, same_key,
                                          set_sites, slot_of)
from targets.base import Target
from targets.compiled import helper

KINDS = ("mcmc", "opad", "opad_plus")
#: Counts are int32 (8 bytes per particle and chain for visits and proposals); past this the store stops.
COUNT_LIMIT = np.iinfo(np.int32).max
#: Bytes of queued records' states past which the store folds them in, whatever ``flush_every`` says; with scored
#: neighbours, a step's d neighbours of each chain's state (as a flush unfolds them) and their scores count too.
PENDING_BYTES = 16 << 20
#: c log c for the counts below this, looked up rather than computed on every run of samples.
XLOGX_TABLE = 1 << 16
_XLOGX = np.arange(XLOGX_TABLE) * np.log(np.maximum(np.arange(XLOGX_TABLE), 1))


@helper
def _xlogx(c, table):
    """c log c of a count c (0 for 0), from ``table`` below its size."""
    return table[c] if c < table.size else c * np.log(c)


@helper
def _count_run(tallies, row, particle, length, log_p, xlogx, sum_xlogx, mass_visited, mass_plus):
    """Add a run of ``length`` samples of ``particle`` to ``row`` and to the pool (the last row).

    For each row with count c of the particle before: c += length, Σ c log c
    gains its change, and a particle new to the row adds its p̃ to the visited
    mass (OPAD) and, unless it was proposed there before, to the OPAD+ mass.
    """
    for r in (row, sum_xlogx.size - 1):
        before = tallies[particle, 2 * r]
        tallies[particle, 2 * r] = before + length
        sum_xlogx[r] += _xlogx(before + length, xlogx) - _xlogx(before, xlogx)
        if before == 0:
            mass_visited[r] = log_add(mass_visited[r], log_p)
            if tallies[particle, 2 * r + 1] == 0:
                mass_plus[r] = log_add(mass_plus[r], log_p)


@helper
def _count_proposal(tallies, row, particle, log_p, mass_plus):
    """Count a proposal of ``particle`` for ``row`` and the pool; one neither visited nor proposed there before
    adds its p̃ to the OPAD+ mass."""
    for r in (row, mass_plus.size - 1):
        if tallies[particle, 2 * r + 1] == 0 and tallies[particle, 2 * r] == 0:
            mass_plus[r] = log_add(mass_plus[r], log_p)
        tallies[particle, 2 * r + 1] += 1


@helper
def _prefetch_tallies(tallies, particle, row):
    """Start loading the tallies of ``particle`` in ``row`` and in the pool."""
    prefetch(tallies, particle, 2 * row)
    prefetch(tallies, particle, tallies.shape[1] - 2)


@helper
def _particle(table, bits, words, size, keys, k, log_p, particle_log_p):
    """(particle number of keys[k], the new size): a new particle keeps ``log_p``, its p̃ from the record."""
    number, new = find_or_insert(table, bits, words, size, keys, k)
    if new:
        particle_log_p[number] = log_p
        return number, size + 1
    return number, size


@helper
def _new_keys(table, bits, words, keys, moved, items):
    """Keys among a step's ``items`` not yet stored: chains that moved, proposals, scored states (an upper bound:
    a key repeated within the step counts each time)."""
    new = 0
    for j in range(items):
        if (j >= moved.size or moved[j]) and number_in(table, slot_of(table, bits, words, keys, j)) < 0:
            new += 1
    return new


class FlushSteps(NamedTuple):
    """The steps of one flush, read only by the fold.

    ``states`` (steps·chains, d) uint8: row t·chains + c is chain c after step t; ``log_p`` (steps, chains) their
    log p̃; ``accepted`` (steps, chains) whether the step's proposal was taken; ``sites`` (steps·chains, k) int64
    and ``values`` (same, uint8): a rejected proposal is the row's state with ``sites`` set to ``values`` (none
    when k = 0), with log p̃ ``proposed_log_p`` (steps, chains); ``scored_start`` (steps + 1,): the scored states
    of step t are rows ``scored_start[t]`` to ``scored_start[t + 1]`` of ``scored_states`` (·, d) uint8, of
    chains ``scored_rows`` and log p̃ ``scored_log_p``.
    """

    states: np.ndarray
    log_p: np.ndarray
    accepted: np.ndarray
    sites: np.ndarray
    values: np.ndarray
    proposed_log_p: np.ndarray
    scored_start: np.ndarray
    scored_rows: np.ndarray
    scored_states: np.ndarray
    scored_log_p: np.ndarray


class ParticleTable(NamedTuple):
    """The hash index of the particles (``ParticleIndex``'s arrays), filled in place.

    ``table`` its hash slots, ``bits`` log2 of their number, ``words`` (capacity, ⌈d/64⌉) uint64 the packed
    states, ``size`` the particles stored when the fold starts (the fold returns the new size) and
    ``max_particles`` the cap past which it stops.
    """

    table: np.ndarray
    bits: int
    words: np.ndarray
    size: int
    max_particles: int


class Tallies(NamedTuple):
    """Counts and running sums per row (a chain, or the pool: the last row), updated in place.

    ``tallies[p, 2r]`` the visits of particle p in row r, ``tallies[p, 2r + 1]`` its proposals there;
    ``particle_log_p`` each particle's log p̃; ``xlogx`` the table of c log c; ``n`` samples, ``sum_log_p``
    Σ c log p̃, ``sum_xlogx`` Σ c log c, ``mass_visited`` and ``mass_plus`` log Σ p̃ over the OPAD and OPAD+
    supports, per row.
    """

    tallies: np.ndarray
    particle_log_p: np.ndarray
    xlogx: np.ndarray
    n: np.ndarray
    sum_log_p: np.ndarray
    sum_xlogx: np.ndarray
    mass_visited: np.ndarray
    mass_plus: np.ndarray


@njit(cache=True)
def _fold_steps(first, flush, particles, counts):
    """Fold steps ``first``, ``first`` + 1, … of ``flush`` (``FlushSteps``) into ``particles``
    (``ParticleTable``) and ``counts`` (``Tallies``), one step of all chains at a time.

    A step's items are its chains' states (items 0 … chains − 1), then its
    proposals and scored states. A chain whose state did not change (a
    rejected move) extends its run, counted once when the run ends, without a
    lookup.

    Stops before a step whose new particles might not fit the arrays or would
    pass ``max_particles``. Returns (next step, size, whether
    ``max_particles`` stopped it, the particles the arrays must hold for the
    next step: the caller grows them to that and calls again, 0 when done).

    Cost: each step first keys every item and prefetches its hash slot, then
    finds the particle numbers and prefetches their tallies, then counts: the
    cache misses of all items overlap instead of following one another.
    """
    states, log_p, accepted, sites, values, proposed_log_p, scored_start, scored_rows, scored_states, scored_log_p \
        = flush
    table, bits, words, size, max_particles = particles
    tallies, particle_log_p, xlogx, n, sum_log_p, sum_xlogx, mass_visited, mass_plus = counts
    steps, n_chains = log_p.shape
    pooled = n_chains
    width = words.shape[1]
    most_scored = 0
    for t in range(first, steps):
        most_scored = max(most_scored, scored_start[t + 1] - scored_start[t])
    items = 2 * n_chains + most_scored
    keys = np.empty((items, width), dtype=np.uint64)
    rows, item_log_p, numbers = np.empty(items, dtype=np.int64), np.empty(items), np.empty(items, dtype=np.int64)
    running_keys = np.empty((n_chains, width), dtype=np.uint64)
    running = np.full(n_chains, -1)  # each chain's particle in its current run
    length = np.zeros(n_chains, dtype=np.int64)
    moved = np.empty(n_chains, dtype=np.bool_)
    step, capped, needed = first, False, 0
    while step < steps:
        low, high = scored_start[step], scored_start[step + 1]
        worst = size + 2 * n_chains + high - low
        if worst > words.shape[0]:
            needed = worst
            break
        m = n_chains  # items keyed so far: keys, and their hash slots on their way
        for c in range(n_chains):
            sample = step * n_chains + c
            pack_state(states, sample, keys, c)
            rows[c], item_log_p[c] = c, log_p[step, c]
            moved[c] = running[c] < 0 or not same_key(keys, c, running_keys, c)
            if moved[c]:
                prefetch(table, home(keys, c, bits), 0)
            if sites.shape[1] > 0 and not accepted[step, c]:
                for w in range(width):
                    keys[m, w] = keys[c, w]
                set_sites(keys, m, sites, values, sample)
                rows[m], item_log_p[m] = c, proposed_log_p[step, c]
                prefetch(table, home(keys, m, bits), 0)
                m += 1
        for j in range(low, high):
            pack_state(scored_states, j, keys, m)
            rows[m], item_log_p[m] = scored_rows[j], scored_log_p[j]
            prefetch(table, home(keys, m, bits), 0)
            m += 1
        if worst > max_particles and size + _new_keys(table, bits, words, keys, moved, m) > max_particles:
            capped = True
            break
        for j in range(m):  # particle numbers, and their tallies on their way
            if j >= n_chains or moved[j]:
                numbers[j], size = _particle(table, bits, words, size, keys, j, item_log_p[j], particle_log_p)
                _prefetch_tallies(tallies, numbers[j], rows[j])
        for c in range(n_chains):
            if moved[c]:
                if running[c] >= 0:
                    _count_run(tallies, c, running[c], length[c], particle_log_p[running[c]], xlogx, sum_xlogx,
                               mass_visited, mass_plus)
                running[c], length[c] = numbers[c], 0
                for w in range(width):
                    running_keys[c, w] = keys[c, w]
            length[c] += 1
            n[c] += 1
            sum_log_p[c] += log_p[step, c]
            sum_log_p[pooled] += log_p[step, c]
        n[pooled] += n_chains
        for j in range(n_chains, m):
            _count_proposal(tallies, rows[j], numbers[j], particle_log_p[numbers[j]], mass_plus)
        step += 1
    for c in range(n_chains):
        if running[c] >= 0:
            _count_run(tallies, c, running[c], length[c], particle_log_p[running[c]], xlogx, sum_xlogx,
                       mass_visited, mass_plus)
    return step, size, capped, needed


#: What a flush reads from each record, in one call per record.
_RECORD_FIELDS = attrgetter("states", "log_prob", "accepted", "proposed_log_prob", "proposed_sites", "proposed_values")


def _stacked(arrays: Sequence[np.ndarray]) -> np.ndarray:
    """``np.stack`` for equal-shaped arrays, without its per-array Python overhead."""
    return np.concatenate(arrays).reshape(len(arrays), *arrays[0].shape)


class _Scored:
    """States a flush's records scored beyond the single-site proposals, ordered by step: ``steps``, ``rows``
    (chains), ``states`` and ``log_p``."""

    def __init__(self, parts: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]], d: int):
        parts = [part for part in parts if part[0].size]
        if not parts:
            self.steps, self.rows = np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
            self.states, self.log_p = np.empty((0, d), dtype=np.uint8), np.empty(0)
            return
        steps, rows, states, log_p = (np.concatenate(column) for column in zip(*parts))
        order = np.argsort(steps, kind="stable") if len(parts) > 1 else slice(None)
        self.steps, self.rows = steps[order], rows[order].astype(np.int64)
        self.states, self.log_p = np.ascontiguousarray(states[order], dtype=np.uint8), log_p[order]

    def starts(self, n_steps: int) -> np.ndarray:
        """Row where each step's scored states begin (and the end), ``(n_steps + 1,)``."""
        return np.searchsorted(self.steps, np.arange(n_steps + 1))


def _rejected_full_proposals(pending: list[StepRecord], accepted: np.ndarray, proposed_log_p: np.ndarray,
                             offset: int):
    """(step, chain, state, log p̃) of every rejected proposal, for records whose proposals change different
    numbers of sites from step to step (an accepted proposal is the new sample); ``accepted`` and
    ``proposed_log_p`` are the flush's, whose records start at step ``offset``."""
    steps, chains = np.nonzero(~accepted[offset:])
    proposals = _stacked([r.proposed for r in pending])[steps, chains]
    return steps + offset, chains, proposals, proposed_log_p[steps + offset, chains]


def _extra_states(pending: list[StepRecord], offset: int):
    """(step, chain, state, log p̃) of the further states the records scored (e.g. parallel tempering's hot
    replicas)."""
    extra = _stacked([r.extra_states for r in pending])  # (steps, chains, m, d)
    log_p = _stacked([r.extra_log_prob for r in pending])
    steps, chains, _ = np.indices(log_p.shape)
    return (steps.ravel() + offset, chains.ravel(), extra.reshape(-1, extra.shape[-1]), log_p.ravel())


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
        self._index = ParticleIndex(target.dim)
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
        if len(self._pending) >= self._flush_at:
            self.flush()

    def _start(self, n_chains: int) -> None:
        self.n_chains = n_chains
        dim = self.target.dim
        step_bytes = n_chains * dim * (1 + (dim + 8 if self.scored_neighbours else 0))
        self._flush_at = max(1, min(self.flush_every, PENDING_BYTES // step_bytes))
        rows, capacity = n_chains + 1, self._index.capacity
        self._tallies = np.zeros((capacity, 2 * rows), dtype=np.int32)  # visits and proposals per row
        self._log_p = np.empty(capacity)
        self._n = np.zeros(rows, dtype=np.int64)
        self._sum_xlogx = np.zeros(rows)
        self._sum_log_p = np.zeros(rows)
        self._mass_visited = np.full(rows, -np.inf)
        self._mass_plus = np.full(rows, -np.inf)
        self._previous: StepRecord | None = None
        self._n_scored = 0

    def _reserve(self, needed: int) -> None:
        """Room for ``needed`` particles in the index and the tables."""
        if self._index.reserve(needed):
            capacity = self._index.capacity
            self._tallies = np.concatenate([self._tallies, np.zeros((capacity - self._tallies.shape[0],
                                                                     self._tallies.shape[1]), dtype=np.int32)])
            self._log_p = np.concatenate([self._log_p, np.empty(capacity - self._log_p.size)])

    def flush(self) -> None:
        """Fold the queued records into the counts, sums and supports (one compiled pass over their steps)."""
        pending, self._pending = self._pending, []
        if not pending or self.full:
            return
        columns = list(zip(*map(_RECORD_FIELDS, pending)))
        fields = [_stacked(column) for column in columns[:4]]
        uniform = len({s.shape for s in columns[4]}) == 1
        no_sites = (np.zeros((len(pending), self.n_chains, 0), dtype=dtype) for dtype in (np.int64, np.uint8))
        sites, values = (_stacked(columns[4]), _stacked(columns[5])) if uniform else no_sites
        offset = int(pending[0].start_states is not None and self._n[-1] == 0)
        if offset:  # the chains' initial states: samples without a proposal
            start = pending[0]
            starts = (start.start_states, start.start_log_prob, np.ones(self.n_chains, dtype=bool),
                      np.zeros(self.n_chains))
            fields = [np.concatenate([first[None], field]) for first, field in zip(starts, fields)]
            sites, values = (np.concatenate([np.zeros_like(field[:1]), field]) for field in (sites, values))
        states, log_p, accepted, proposed_log_p = (np.ascontiguousarray(field, dtype=dtype) for field, dtype in
                                                   zip(fields, (np.uint8, np.float64, np.bool_, np.float64)))
        # one signature of the compiled fold for every sampler (a new one would compile in the middle of a run)
        states, sites, values = (np.ascontiguousarray(field.reshape(log_p.size, field.shape[-1]), dtype=dtype)
                                 for field, dtype in ((states, np.uint8), (sites, np.int64), (values, np.uint8)))
        parts = [] if uniform else [_rejected_full_proposals(pending, accepted, proposed_log_p, offset)]
        if self.scored_neighbours:
            parts.append(self._neighbours(pending, offset))
        if pending[0].extra_states is not None:
            parts.append(_extra_states(pending, offset))
        scored = _Scored(parts, self.target.dim)
        self._n_scored += int(np.count_nonzero(~accepted)) + scored.log_p.size
        steps = log_p.shape[0]
        if max(self._n[-1] + steps * self.n_chains, self._n_scored) > COUNT_LIMIT:
            self.full = (f"the store's 32-bit counters would pass {COUNT_LIMIT:,} samples or proposals after "
                         f"{int(self._n[-1]):,} samples; start a new store to go on")
            return
        self._previous = pending[-1]
        scored_start = scored.starts(steps)
        flush = FlushSteps(states, log_p, accepted, sites, values, proposed_log_p, scored_start, scored.rows,
                           scored.states, scored.log_p)
        index, step, needed = self._index, 0, 0
        while True:
            self._reserve(needed)  # may grow (replace) the index's and the tallies' arrays
            particles = ParticleTable(index.table, index.bits, index.words, index.size, self.max_particles)
            counts = Tallies(self._tallies, self._log_p, _XLOGX, self._n, self._sum_log_p, self._sum_xlogx,
                             self._mass_visited, self._mass_plus)
            step, index.size, capped, needed = _fold_steps(step, flush, particles, counts)
            if not needed:
                break
        if capped:
            self.full = (f"the particle store reached max_particles={self.max_particles:,} distinct states "
                         f"and stopped updating after {int(self._n[-1]):,} samples; raise max_particles to go on")

    def _neighbours(self, pending: list[StepRecord], offset: int):
        """(step, chain, state, log p̃) of the single-flip neighbours each record scored around a state new to its
        chain.

        A record's neighbourhood is that of the state its chain held before the
        step; it is new when the chain moved in the previous step (or at the
        start), so each visited state's neighbourhood is folded in once.
        """
        d = self.target.dim
        first = offset
        if self._previous is not None:
            before = [self._previous, *pending[:-1]]
        elif pending[0].start_states is not None:
            before = [None, *pending[:-1]]  # None: the chains' start, where every state is new
        else:  # the store joined a running chain: its first record's neighbourhood may not be new
            before, pending, first = pending[:-1], pending[1:], offset + 1
        if not pending:
            return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64), np.empty((0, d), dtype=np.uint8), \
                np.empty(0)
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
        return (np.repeat(steps + first, d), np.repeat(chains, d), neighbours,
                (centre_log_p[:, None] + ratios).ravel())

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
        arrays = (self._tallies, self._log_p)
        return sum(a.nbytes for a in arrays) + self._index.nbytes

    def n_samples(self, chain: int | None = None) -> int:
        """Samples in the MCMC distribution (k + 1 per chain after k steps from the start)."""
        return int(self._n[self._row(chain)])

    def support(self, kind: str, chain: int | None = None) -> np.ndarray:
        """Particle indices of the ``mcmc`` / ``opad`` (visited) or ``opad_plus`` (visited or proposed) support."""
        row = self._row(chain)
        visited = self._tallies[:self._index.size, 2 * row] > 0
        if kind in ("mcmc", "opad"):
            return np.flatnonzero(visited)
        if kind == "opad_plus":
            return np.flatnonzero(visited | (self._tallies[:self._index.size, 2 * row + 1] > 0))
        raise ValueError(f"kind must be one of {KINDS}; got {kind!r}")

    def counts(self, chain: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(particle indices, visit counts) of the MCMC distribution."""
        index = self.support("mcmc", chain)
        return index, self._tallies[index, 2 * self._row(chain)]

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
        return self._index.states(index)

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
