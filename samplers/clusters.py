"""Cluster moves for ferromagnetic pairwise models: Swendsen–Wang and Wolff.

For log p̃(s) = β(Σ_{(i,j)∈E} J_ij s_i s_j + Σ_i h_i s_i) with every J_ij ≥ 0
(spins s = 2x − 1), the joint of spins and bonds b ∈ {0,1}^E
(Fortuin & Kasteleyn, Physica 57, 536, 1972; Edwards & Sokal, Phys. Rev. D 38,
2009, 1988),

    p̃(s, b) ∝ Π_{(i,j)∈E} [(1 − p_ij)·[b_ij = 0] + p_ij·[b_ij = 1]·[s_i = s_j]] · exp(β Σ_i h_i s_i),
    p_ij = 1 − exp(−2β J_ij),

has p̃(s) as its spin marginal. Given s the bonds are independent: an aligned
edge is bonded with probability p_ij, any other never. Given b the spins are
constant on each cluster C (connected component of the bonds) and independent
across clusters, with P(s_C = +1) = σ(2β h_C), h_C = Σ_{i∈C} h_i and σ the
logistic function: the field is handled exactly inside the cluster update,
with no ghost spin.

Swendsen–Wang (Swendsen & Wang, "Nonuniversal critical dynamics in Monte
Carlo simulations", Phys. Rev. Lett. 58, 86, 1987) draws all bonds, then
redraws every cluster's spin from that conditional: a Gibbs sweep of the
joint, so it leaves p̃ invariant and is reversible, with no rejection.

Wolff (Wolff, "Collective Monte Carlo updating for spin systems", Phys. Rev.
Lett. 62, 361, 1989) grows the one cluster C containing a uniformly random
seed (the seed's connected component in the same random bonds, drawn lazily)
and proposes flipping it. The proposal ratio q(s | s′)/q(s′ | s) cancels
every coupling term of p̃(s′)/p̃(s), so the Metropolis–Hastings acceptance is
the field's alone:

    α = min{1, exp(−2β Σ_{i∈C} h_i s_i)}      (1 in zero field).

A frustrated model (some J_ij < 0) has no such representation; both samplers
refuse it. ``transition_row`` enumerates every bond configuration of the
aligned edges with the same compiled bond, cluster and acceptance functions.
Randomness comes from numba's generator, seeded from the sampler's generator
every step, so runs replay exactly.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from samplers.base import ExactCase, Move, Sampler, SamplerFacts
from samplers.common.exact import MAX_EXACT_DIM
from targets.base import all_states
from targets.compiled import helper


@njit(cache=True)
def bond_probability(coupling, beta):
    """p = 1 − exp(−2βJ): the chance an aligned edge of coupling J ≥ 0 is bonded."""
    return -np.expm1(-2.0 * beta * coupling)


@njit(cache=True)
def cluster_roots(n_sites, edges, bonded):
    """The root (smallest site) of each site's cluster, the connected components of the ``bonded`` edges."""
    parent = np.arange(n_sites)
    for e in range(edges.shape[0]):
        if bonded[e]:
            a, b = edges[e, 0], edges[e, 1]
            while parent[a] != a:
                a = parent[a]
            while parent[b] != b:
                b = parent[b]
            if a != b:
                parent[max(a, b)] = min(a, b)
    for i in range(n_sites):  # parents have smaller indices: one pass compresses every path
        parent[i] = parent[parent[i]]
    return parent


@njit(cache=True)
def cluster_up_log_probabilities(roots, field, beta):
    """(log P(s_C = +1), log P(s_C = −1)) indexed by each cluster's root: log σ(±2β h_C)."""
    cluster_field = np.zeros(roots.size)
    for i in range(roots.size):
        cluster_field[roots[i]] += field[i]
    up, down = np.empty(roots.size), np.empty(roots.size)
    for r in range(roots.size):
        a = 2.0 * beta * cluster_field[r]
        up[r] = -np.log1p(np.exp(-a)) if a >= 0.0 else a - np.log1p(np.exp(a))
        down[r] = up[r] - a
    return up, down


@helper
def cluster_flip_log_acceptance(state, members, size, field, beta):
    """log α of flipping the cluster ``members[:size]`` of ``state`` (before the min): −2β Σ_{i∈C} h_i s_i."""
    total = 0.0
    for k in range(size):
        total += field[members[k]] * (2.0 * state[members[k]] - 1.0)
    return -2.0 * beta * total


@njit(cache=True)
def swendsen_wang_steps(states, edges, probabilities, field, beta, seed):
    """One Swendsen–Wang sweep of every chain, in place."""
    np.random.seed(seed)
    n, d = states.shape
    bonded = np.empty(edges.shape[0], dtype=np.bool_)
    up = np.empty(d, dtype=np.uint8)
    for c in range(n):
        for e in range(edges.shape[0]):
            bonded[e] = states[c, edges[e, 0]] == states[c, edges[e, 1]] and np.random.random() < probabilities[e]
        roots = cluster_roots(d, edges, bonded)
        log_up, _ = cluster_up_log_probabilities(roots, field, beta)
        for r in range(d):
            if roots[r] == r:
                up[r] = np.log(np.random.random()) < log_up[r]
        for i in range(d):
            states[c, i] = up[roots[i]]


@njit(cache=True)
def wolff_steps(states, nbr, w, field, beta, seed, proposals, accepted, sizes):
    """One Wolff move of every chain: grow the seed's cluster, write the flipped state to ``proposals``, accept
    with ``cluster_flip_log_acceptance``; the chain's state is updated in place."""
    np.random.seed(seed)
    n, d = states.shape
    in_cluster = np.zeros(d, dtype=np.bool_)
    members = np.empty(d, dtype=np.int64)
    for c in range(n):
        seed_site = np.random.randint(0, d)
        spin = states[c, seed_site]
        members[0], size, head = seed_site, 1, 0
        in_cluster[seed_site] = True
        while head < size:
            i = members[head]
            head += 1
            for k in range(nbr.shape[1]):
                j = nbr[i, k]
                if j != i and not in_cluster[j] and states[c, j] == spin and w[i, k] > 0.0 \
                        and np.random.random() < bond_probability(w[i, k], beta):
                    in_cluster[j] = True
                    members[size] = j
                    size += 1
        proposals[c] = states[c]
        for k in range(size):
            proposals[c, members[k]] ^= 1
            in_cluster[members[k]] = False
        sizes[c] = size
        accepted[c] = np.log(np.random.random()) < cluster_flip_log_acceptance(states[c], members, size, field, beta)
        if accepted[c]:
            states[c] = proposals[c]


@njit(cache=True)
def aligned_edges(x, edges, probabilities):
    """The edges of x that can be bonded: aligned endpoints and a positive bond probability."""
    return np.array([e for e in range(edges.shape[0]) if x[edges[e, 0]] == x[edges[e, 1]] and probabilities[e] > 0])


@njit(cache=True)
def set_bond_pattern(pattern, aligned, probabilities, bonded):
    """Bond ``aligned[k]`` iff bit k of ``pattern`` is set (in ``bonded``); returns the log probability of that
    bond set, Σ log p over bonded edges + Σ log(1 − p) over the other aligned ones."""
    log_probability = 0.0
    for k in range(aligned.size):
        edge = aligned[k]
        bonded[edge] = (pattern >> k) & 1
        log_probability += np.log(probabilities[edge]) if bonded[edge] else np.log1p(-probabilities[edge])
    return log_probability


@njit(cache=True)
def swendsen_wang_row(x, edges, probabilities, field, beta):
    """Exact next-state probabilities from x, indexed by state code: every bond set of the aligned edges × every
    spin assignment of its clusters."""
    d = x.size
    out = np.zeros(2 ** d)
    aligned = aligned_edges(x, edges, probabilities)
    bonded = np.zeros(edges.shape[0], dtype=np.bool_)
    for pattern in range(2 ** aligned.size):
        log_bonds = set_bond_pattern(pattern, aligned, probabilities, bonded)
        roots = cluster_roots(d, edges, bonded)
        log_up, log_down = cluster_up_log_probabilities(roots, field, beta)
        clusters = np.array([r for r in range(d) if roots[r] == r])
        for spins in range(2 ** clusters.size):
            log_total, code = log_bonds, 0
            for k in range(clusters.size):
                log_total += log_up[clusters[k]] if (spins >> k) & 1 else log_down[clusters[k]]
            for i in range(d):
                position = np.searchsorted(clusters, roots[i])
                code |= ((spins >> position) & 1) << (d - 1 - i)
            out[code] += np.exp(log_total)
    return out


@njit(cache=True)
def wolff_row(x, edges, probabilities, field, beta):
    """Exact next-state probabilities from x, indexed by state code: seed (1/d) × bond set of the aligned edges
    (the seed's component is the cluster) × acceptance, the rest on staying."""
    d = x.size
    out = np.zeros(2 ** d)
    aligned = aligned_edges(x, edges, probabilities)
    bonded = np.zeros(edges.shape[0], dtype=np.bool_)
    members = np.empty(d, dtype=np.int64)
    x_code = 0
    for i in range(d):
        x_code |= np.int64(x[i]) << (d - 1 - i)
    for pattern in range(2 ** aligned.size):
        log_bonds = set_bond_pattern(pattern, aligned, probabilities, bonded)
        roots = cluster_roots(d, edges, bonded)
        for seed_site in range(d):
            size, code = 0, x_code
            for i in range(d):
                if roots[i] == roots[seed_site]:
                    members[size] = i
                    size += 1
                    code ^= np.int64(1) << (d - 1 - i)
            move = np.exp(log_bonds) / d * min(1.0, np.exp(cluster_flip_log_acceptance(x, members, size, field,
                                                                                        beta)))
            out[code] += move
            out[x_code] += np.exp(log_bonds) / d - move
    return out


class _ClusterSampler(Sampler):
    """Shared checks and exact rows of the cluster samplers (pairwise targets with J ≥ 0)."""

    bytes_per_site = Sampler.bytes_per_site + 1  # the record's copy of the new states or proposals

    def _validate(self):
        model = getattr(self.target, "pairwise_model", None)
        if model is None:
            raise ValueError(f"{self.registry_name} needs a pairwise model (Ising, segmentation, Boltzmann); "
                             f"{self.target.registry_name!r} is not one")
        couplings = model()[1]
        if np.any(couplings < 0):
            raise ValueError(f"{self.registry_name} needs non-negative couplings (a ferromagnet): this target has "
                             f"{int(np.sum(couplings < 0))} negative ones — it is frustrated, and clusters of "
                             f"aligned spins do not represent it")

    def _bonds(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
        """(edges, bond probabilities 1 − e^{−2βJ}, field h, β) of the target, read when needed (not held)."""
        edges, couplings, field, beta = self.target.pairwise_model()
        return edges, bond_probability(couplings, beta), field, beta

    def _exact_row(self, x, row_function):
        if x.size > MAX_EXACT_DIM:
            raise ValueError(f"{self.registry_name}: exact rows need dim <= {MAX_EXACT_DIM}")
        probs = row_function(x.astype(np.uint8), *self._bonds())
        codes = np.flatnonzero(probs)
        return all_states(x.size)[codes], probs[codes]

    def _seed(self) -> int:
        """A seed for numba's generator, drawn from the sampler's (so a run replays exactly)."""
        return int(self.rng.integers(0, 2**32))


class SwendsenWang(_ClusterSampler):
    """Swendsen–Wang: bond every aligned edge with probability 1 − e^{−2βJ}, redraw every cluster's spin."""

    registry_name = "swendsen_wang"
    facts = SamplerFacts(
        exact=(ExactCase(), ExactCase(target="ising_lattice", target_params={"size": 3, "ndim": 2, "beta": 0.4})),
        warm_up=({},), warm_up_on=("pairwise",))

    def _step(self):
        swendsen_wang_steps(self.states, *self._bonds(), self._seed())
        self.log_p = self.target.log_prob(self.states)
        n = self.states.shape[0]
        return Move(accepted=np.ones(n, dtype=bool), proposed_sites=np.broadcast_to(np.arange(self.target.dim),
                                                                                     self.states.shape),
                    proposed_values=self.states.copy(), proposed_log_prob=self.log_p.copy())

    def transition_row(self, x):
        return self._exact_row(x, swendsen_wang_row)


class Wolff(_ClusterSampler):
    """Wolff: grow one random seed's cluster of bonded aligned spins and flip it (MH on the field's change)."""

    registry_name = "wolff"
    facts = SamplerFacts(
        exact=(ExactCase(), ExactCase(target="ising_lattice", target_params={"size": 3, "ndim": 2, "beta": 0.4})),
        warm_up=({},), warm_up_on=("pairwise",), warm_up_transition_row=True)

    def _step(self):
        n = self.states.shape[0]
        proposals, accepted = np.empty_like(self.states), np.empty(n, dtype=bool)
        self.last_cluster_sizes = np.empty(n, dtype=np.int64)
        nbr, w, _, _ = self.target.flip_tables
        _, _, field, beta = self.target.pairwise_model()
        wolff_steps(self.states, nbr, w, field, beta, self._seed(), proposals, accepted, self.last_cluster_sizes)
        proposed_log_prob = self.target.log_prob(proposals)
        self.log_p[accepted] = proposed_log_prob[accepted]
        return Move(accepted=accepted, proposed_sites=np.broadcast_to(np.arange(self.target.dim), proposals.shape),
                    proposed_values=proposals, proposed_log_prob=proposed_log_prob)

    def transition_row(self, x):
        return self._exact_row(x, wolff_row)
