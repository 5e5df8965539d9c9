"""Locally balanced single-flip proposals (Zanella 2020) and Gibbs-with-Gradients (Grathwohl et al. 2021).

With t_j(x) = p̃(x^(j))/p̃(x) the ratio of flipping bit j and g > 0 (a balancing
function, g(t) = t·g(1/t), in Zanella's construction), the proposal is (LSB paper, Eq. 2)

    Q(x^(j) | x) = g(t_j(x)) / Z(x),     Z(x) = Σ_k g(t_k(x)),

accepted with the Metropolis–Hastings probability (LSB paper, the text after Eq. 1)

    α = min{1, t_j(x) · Q(x | x^(j)) / Q(x^(j) | x)}.

For a balancing g this is min{1, Z(x)/Z(x^(j))} (LSB paper §2, "Acceptance
rate"); the general form is always evaluated, so a g that is not balancing (or
a learned g part-way through training) still gives an exact chain.

``LocallyBalanced`` uses the exact ratios t_j. ``GibbsWithGradients`` replaces
them in the proposal by the first-order Taylor estimate
log t̃_j = (1 − 2x_j) ∂ log p̃/∂x_j with g = √t (LSB paper §3.3); α uses the
exact log p̃ at the proposal and the estimated proposal probabilities both ways.

Cost: ``LocallyBalanced`` caches t(x) for every chain and keeps log g(t_j) in a
log-space sum-tree (``sumtree``). After a flip only the ratios that changed are
recomputed (1 + deg evaluations on a sparse pairwise model, d on a black box)
and drawing j is O(log d), so a step costs O(1) evaluations on a lattice.
``GibbsWithGradients`` costs one evaluation (value and gradient) per step.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import param
from numba import njit

from samplers.balanced.sumtree import (LogSumTree, commit_path, log_total_after, log_total_of, prefetch_path,
                                       sample_rows, tree_depth)
from samplers.base import (ExactCase, Sampler, SamplerFacts, acceptance_probability, inverse_cdf, log_softmax,
                          metropolis_accept, taylor_flip_log_ratios)
from samplers.common.prefetch import prefetch
from samplers.diagnostics.inspection import ProposalInspection
from samplers.lsb.balancing import BALANCING, CODES, NO_TABLE, log_balancing, log_g_scalar
from targets.base import flip
from targets.compiled import helper
from targets.pairwise import flip_ratio_update


@njit(cache=True)
def flip_log_acceptance(log_ratio, log_q_forward, log_q_reverse):
    """log α before the min: log t_j(x) + log Q(x | x^(j)) − log Q(x^(j) | x)."""
    return log_ratio + log_q_reverse - log_q_forward


@helper
def tree_flip_log_alpha(log_leaves, sums, shift, c, i, log_ratio, sites, log_g_after, path_nodes, path_values):
    """log α of flipping bit i in chain c, from its sum-tree of log g(t_j(x)) and the changed leaves at x^(i).

    Q(x^(i)|x) = g(t_i(x))/Z(x) is read off the tree; Q(x|x^(i)) = g(t_i(x^(i)))/Z(x^(i))
    with Z(x^(i)) from ``log_total_after`` (leaves ``sites`` set to ``log_g_after``;
    nothing is written). Returns (log α, the path count that ``commit_path`` writes on acceptance).
    """
    log_q_forward = log_leaves[c, i] - log_total_of(sums, shift, c)
    log_z_after, count = log_total_after(log_leaves, sums, shift, c, sites, log_g_after, path_nodes, path_values)
    log_g_reverse = log_leaves[c, i]
    for k in range(sites.size):
        if sites[k] == i:
            log_g_reverse = log_g_after[k]
            break
    return flip_log_acceptance(log_ratio, log_q_forward, log_g_reverse - log_z_after), count


@helper
def locally_balanced_move(c, states, log_p, delta, log_leaves, sums, shift, i, sites, values, code, table_values,
                          table_slopes, log_u, accepted, proposed_log_prob, old_bits, log_g_after, path_nodes,
                          path_values):
    """Accept or reject the flip of bit i in chain c, updating everything kept for the chain.

    ``sites``/``values`` are the flip log-ratios that change at x^(i); their log g
    become the tree's leaves there. The chain accepts iff log u < log α
    (``tree_flip_log_alpha``); an accepted move writes its tree paths, ratios,
    bit and log p̃, a rejected one writes nothing. Fills entry c of
    ``accepted``, ``proposed_log_prob`` and ``old_bits``; the last three
    arguments are scratch.
    """
    for k in range(sites.size):
        log_g_after[k] = log_g_scalar(code, values[k], table_values, table_slopes)
    log_ratio = delta[c, i]
    log_alpha, count = tree_flip_log_alpha(log_leaves, sums, shift, c, i, log_ratio, sites, log_g_after, path_nodes,
                                           path_values)
    old_bits[c] = states[c, i]
    proposed_log_prob[c] = log_p[c] + log_ratio
    accepted[c] = log_u < log_alpha
    if accepted[c]:
        commit_path(log_leaves, sums, shift, c, sites, log_g_after, path_nodes, path_values, count)
        for k in range(sites.size):
            delta[c, sites[k]] = values[k]
        states[c, i] ^= 1
        log_p[c] += log_ratio


@njit(cache=True)
def locally_balanced_moves(states, log_p, delta, log_leaves, sums, shift, idx, sites, values, code, table_values,
                           table_slopes, log_u, accepted, proposed_log_prob, old_bits):
    """``locally_balanced_move`` of bit ``idx[c]`` in every chain c, given the changed ratios ``sites[c]``,
    ``values[c]``."""
    m = sites.shape[1]
    capacity = m * (tree_depth(log_leaves) + 1)
    path_nodes, path_values, log_g_after = np.empty(capacity, dtype=np.int64), np.empty(capacity), np.empty(m)
    for c in range(states.shape[0]):
        locally_balanced_move(c, states, log_p, delta, log_leaves, sums, shift, idx[c], sites[c], values[c], code,
                              table_values, table_slopes, log_u[c], accepted, proposed_log_prob, old_bits,
                              log_g_after, path_nodes, path_values)


@helper
def taylor_flip_weights(x, grad, c, code, table_values, table_slopes, log_w, weights):
    """Row c of GWG's proposal: ``log_w`` = log g(t̃_j), t̃_j the Taylor estimate log t̃_j = (1 − 2x_j) ∂ log p̃/∂x_j,
    and ``weights`` = g(t̃_j)·e^{−top}; returns (top, Σ weights), so that log Q(x^(j) | x) = log_w[j] − top −
    log Σ weights."""
    top = -np.inf
    for j in range(x.shape[1]):
        log_w[j] = log_g_scalar(code, (1.0 - 2.0 * x[c, j]) * grad[c, j], table_values, table_slopes)
        top = max(top, log_w[j])
    total = 0.0
    for j in range(x.shape[1]):
        weights[j] = np.exp(log_w[j] - top)
        total += weights[j]
    return top, total


@njit(cache=True)
def taylor_flip_log_proposal(x, grad, code, table_values, table_slopes):
    """GWG's log Q(x^(j) | x) for every row and j (``taylor_flip_weights``)."""
    n, d = x.shape
    out, weights = np.empty((n, d)), np.empty(d)
    for c in range(n):
        top, total = taylor_flip_weights(x, grad, c, code, table_values, table_slopes, out[c], weights)
        out[c] -= top + np.log(total)
    return out


@njit(cache=True)
def taylor_flip_draws(x, grad, code, table_values, table_slopes, uniforms, drawn, log_q_drawn):
    """One site per row drawn from GWG's proposal (``taylor_flip_weights``, ``inverse_cdf`` with ``uniforms[c]``)
    into ``drawn``, its log Q into ``log_q_drawn``; with ``uniforms`` None, ``drawn`` is given and only its log Q
    is computed (the reverse move's)."""
    n, d = x.shape
    log_w, weights = np.empty(d), np.empty(d)
    for c in range(n):
        top, total = taylor_flip_weights(x, grad, c, code, table_values, table_slopes, log_w, weights)
        if uniforms is not None:
            drawn[c] = inverse_cdf(weights, total, uniforms[c])
        log_q_drawn[c] = log_w[drawn[c]] - top - np.log(total)


#: A step prefetches the flip neighbourhood of the chain this many chains ahead of the one it moves.
PREFETCH_AHEAD = 1


@helper
def prefetch_flip_neighbourhood(states, delta, log_leaves, sums, c, i, nbr):
    """Prefetch (``samplers.common.prefetch``) what flipping bit i of chain c reads: the bits, flip ratios and tree
    paths of i and its neighbours."""
    for k in range(-1, nbr.shape[1]):
        j = i if k < 0 else nbr[i, k]
        prefetch(states, c, j)
        prefetch(delta, c, j)
        prefetch_path(log_leaves, sums, c, j)


@njit(cache=True)
def locally_balanced_pairwise_steps(states, log_p, delta, log_leaves, sums, shift, uniforms, nbr, w, degree, beta,
                                    code, table_values, table_slopes, idx, accepted, proposed_log_prob, old_bits):
    """A whole locally balanced step of every chain on a sparse pairwise model, in one compiled call.

    Draws every chain's bit i from its tree (``sample_rows`` with ``uniforms[c, :depth]``);
    then per chain c the changed ratios (``flip_ratio_update``) and
    ``locally_balanced_move`` with log u = log ``uniforms[c, depth]``. On a large
    model each chain's reads are scattered misses to memory: the neighbour
    table rows of every drawn bit are prefetched first, and each chain's flip
    neighbourhood ``PREFETCH_AHEAD`` chains before it moves, so that the
    memory fetches it while the chains before it compute. Fills ``idx`` and
    the move's outputs; returns the evaluations, Σ_c 1 + deg(i_c).
    """
    n = states.shape[0]
    m = 1 + nbr.shape[1]
    depth = tree_depth(log_leaves)
    capacity = m * (depth + 1)
    path_nodes, path_values, log_g_after = np.empty(capacity, dtype=np.int64), np.empty(capacity), np.empty(m)
    sites, values = np.empty(m, dtype=np.int64), np.empty(m)
    sample_rows(log_leaves, sums, np.arange(n), uniforms, idx)
    for c in range(n):
        prefetch(nbr, idx[c], 0)
        prefetch(w, idx[c], 0)
    for c in range(min(PREFETCH_AHEAD, n)):
        prefetch_flip_neighbourhood(states, delta, log_leaves, sums, c, idx[c], nbr)
    evaluations = 0
    for c in range(n):
        if c + PREFETCH_AHEAD < n:
            ahead = c + PREFETCH_AHEAD
            prefetch_flip_neighbourhood(states, delta, log_leaves, sums, ahead, idx[ahead], nbr)
        i = idx[c]
        flip_ratio_update(states, delta, c, i, nbr, w, beta, sites, values)
        evaluations += 1 + degree[i]
        locally_balanced_move(c, states, log_p, delta, log_leaves, sums, shift, i, sites, values, code, table_values,
                              table_slopes, np.log(uniforms[c, depth]), accepted, proposed_log_prob, old_bits,
                              log_g_after, path_nodes, path_values)
    return evaluations


class _FlipProposalSampler(Sampler):
    """Shared parameters of the single-flip proposal samplers."""

    balancing = param.Selector(default="sqrt", objects=list(BALANCING),
                               doc="Balancing function g: barker t/(1+t), sqrt √t, min min(1,t), max max(1,t).")

    def log_g(self, log_t: np.ndarray) -> np.ndarray:
        """log g(t) of the sampler's balancing function, elementwise."""
        return log_balancing(self.balancing)(log_t)

    def _log_proposal(self, x: np.ndarray) -> np.ndarray:
        """log Q(x^(j) | x) for every j, ``(n, d)``."""
        raise TypeError(f"{type(self).__name__} must implement _log_proposal")

    def _g_kernel(self) -> tuple[int, np.ndarray, np.ndarray]:
        """The balancing function as ``log_g_scalar`` takes it: (code, table values, table slopes)."""
        return CODES[self.balancing], NO_TABLE, NO_TABLE

    def _keep_flip_ratios(self, delta: np.ndarray) -> None:
        """Keep the exact flip log-ratios Δ of the states and a sum-tree of their log g (the tree kernels' caches)."""
        self._delta = delta
        self._tree = LogSumTree(self.log_g(delta))

    def _pairwise_tree_step(self):
        """One compiled call of ``locally_balanced_pairwise_steps`` on the target's ``flip_tables``.

        Returns (drawn bits, old bits, accepted, log p̃ of the proposals, the ratios it evaluated)."""
        n = self.states.shape[0]
        accepted, proposed_log_prob, old_bits = np.empty(n, dtype=bool), np.empty(n), np.empty(n, dtype=np.uint8)
        uniforms, idx = self.rng.random((n, self._tree.depth + 1)), np.empty(n, dtype=np.int64)
        evaluations = locally_balanced_pairwise_steps(
            self.states, self.log_p, self._delta, *self._tree.arrays, uniforms, *self.target.flip_tables,
            *self._g_kernel(), idx, accepted, proposed_log_prob, old_bits)
        return idx, old_bits, accepted, proposed_log_prob, evaluations

    def _tree_transition_row(self, x: np.ndarray, delta: np.ndarray):
        """Q(x^(j)|x)·α_j for every j from a sum-tree over x's flip log-ratios ``delta`` (``(1, d)``), with
        ``tree_flip_log_alpha`` (the tree kernels' acceptance)."""
        d = x.size
        tree = LogSumTree(self.log_g(delta))
        log_alpha = np.empty(d)
        for j in range(d):
            sites, values = self.target.delta_after_flip(x[None, :], delta, np.array([j]))
            m = sites.shape[1]
            path_nodes, path_values = np.empty(m * (tree.depth + 1), dtype=np.int64), np.empty(m * (tree.depth + 1))
            log_alpha[j], _ = tree_flip_log_alpha(*tree.arrays, 0, j, delta[0, j], np.ascontiguousarray(sites[0]),
                                                  self.log_g(values[0]), path_nodes, path_values)
        log_q = tree.leaves(0, np.arange(d)) - tree.log_total[0]
        neighbours = flip(np.repeat(x[None, :], d, axis=0), np.arange(d))
        return self._with_stay(x, neighbours, np.exp(log_q) * acceptance_probability(log_alpha))

    def transition_row(self, x):
        d = x.size
        log_q = self._log_proposal(x[None, :])[0]
        neighbours = flip(np.repeat(x[None, :], d, axis=0), np.arange(d))
        log_q_back = self._log_proposal(neighbours)[np.arange(d), np.arange(d)]
        log_ratio = self.target.log_prob(neighbours) - self.target.log_prob(x[None, :])
        log_alpha = flip_log_acceptance(log_ratio, log_q, log_q_back)
        return self._with_stay(x, neighbours, np.exp(log_q) * acceptance_probability(log_alpha))

    def describe_move(self, x, proposal, record, chain, common):
        """A single flip drawn from Q(x^(j) | x) = g(t_j)/Z, accepted by MH on Q(x | x^(j))/Q(x^(j) | x)."""
        if common["proposed_sites"].size != 1:
            return None
        site = common["proposed_sites"][0]
        log_q = self._log_proposal(x[None])[0]
        log_q_reverse = float(self._log_proposal(proposal[None])[0][site])
        log_alpha = flip_log_acceptance(common["log_target_ratio"], log_q[site], log_q_reverse)
        return ProposalInspection(kind="single flip", log_q=log_q, log_q_forward=float(log_q[site]),
                                  log_q_reverse=log_q_reverse,
                                  acceptance=float(acceptance_probability(np.array([log_alpha]))[0]), **common)


class LocallyBalanced(_FlipProposalSampler):
    """Zanella's locally balanced single-flip proposal with exact flip ratios and MH correction.

    On a sparse pairwise model a step is one compiled call
    (``locally_balanced_pairwise_steps``); on other targets three: draw j ∝ g(t_j)
    from each chain's sum-tree, the target's ``delta_after_flip``, and
    ``locally_balanced_moves``. Both run ``locally_balanced_move`` per chain, and
    ``transition_row`` uses its acceptance kernel (``tree_flip_log_alpha``).
    """

    registry_name = "locally_balanced"
    facts = SamplerFacts(
        example={"balancing": "barker"},
        exact=(*(ExactCase({"balancing": name}) for name in ("barker", "sqrt", "min", "max")),
               ExactCase({"balancing": "sqrt"}, "boltzmann", {})),
        warm_up=({},), warm_up_transition_row=True, inspection="single flip")
    bytes_per_site = Sampler.bytes_per_site + 8  # the flip log-ratios Δ
    record_neighbours = param.Boolean(False, doc="Put the flip ratios of all d neighbours of each chain's state "
                                                 "(computed for the proposal anyway) in every step record, so "
                                                 "that OPAD+ can add every scored state "
                                                 "(ParticleStore(scored_neighbours=True)).")

    @classmethod
    def estimated_bytes(cls, n_chains, dim, params=None):
        """The default plus the sum-trees of log g(t_j) and, with ``record_neighbours``, each record's copy of Δ."""
        neighbours = 8 * n_chains * dim if cls._requested(params, "record_neighbours") else 0
        return super().estimated_bytes(n_chains, dim, params) + LogSumTree.estimated_bytes(n_chains, dim) + neighbours

    def _prepare(self):
        self._keep_flip_ratios(self.target.delta_log_prob(self.states, self.log_p))

    def _log_proposal(self, x):
        return log_softmax(self.log_g(self.target.delta_log_prob(x)))

    def _scored_neighbourhood(self):
        return self._delta.copy() if self.record_neighbours else None

    def _step(self):
        if self.target.flip_tables is not None:
            idx, old_bits, accepted, proposed_log_prob, evaluations = self._pairwise_tree_step()
            self.target.count_evaluations(evaluations)
            return self._single_flip_record(idx, old_bits, accepted, proposed_log_prob)
        n = self.states.shape[0]
        accepted, proposed_log_prob, old_bits = np.empty(n, dtype=bool), np.empty(n), np.empty(n, dtype=np.uint8)
        idx = self._tree.sample(self.rng)
        flipped_log_p = self.log_p + self._delta[np.arange(n), idx]  # known: the ratios are to the current states
        sites, values = self.target.delta_after_flip(self.states, self._delta, idx, flipped_log_p)
        locally_balanced_moves(self.states, self.log_p, self._delta, *self._tree.arrays, idx, sites, values,
                               *self._g_kernel(), np.log(self.rng.random(n)), accepted, proposed_log_prob, old_bits)
        return self._single_flip_record(idx, old_bits, accepted, proposed_log_prob)

    def transition_row(self, x):
        """Q(x^(j)|x)·α_j for every j from a sum-tree over x (``_tree_transition_row``, the step's kernel)."""
        return self._tree_transition_row(x, self.target.delta_log_prob(x[None, :]))


class GibbsWithGradients(_FlipProposalSampler):
    """Gibbs-with-Gradients: locally balanced proposal on Taylor-estimated flip ratios.

    On a sparse pairwise model (a target with ``flip_tables``) the Taylor
    estimate is exact (J has a zero diagonal), so the proposal is the locally
    balanced one on exact ratios, and a step is ``LocallyBalanced``'s compiled
    step (``locally_balanced_pairwise_steps``: the ratios kept, O(deg + log d)
    a chain). The evaluations counted stay GWG's, one value-and-gradient a
    proposal, whichever kernel computes them.
    """

    registry_name = "gwg"
    facts = SamplerFacts(
        exact=(ExactCase(), ExactCase(target="boltzmann", target_params={})),
        # on a pairwise model GWG is the locally balanced kernel; on an RBM its compiled pass over the gradient
        warm_up=({},), warm_up_on=("rbm",), inspection="single flip")
    bytes_per_site = Sampler.bytes_per_site + 8  # the gradient of log p̃, or on a pairwise model the flip ratios
    #: Whether steps on a pairwise model run the locally balanced kernel (a subclass that reads the gradient
    #: does not).
    tree_on_pairwise = True

    @classmethod
    def estimated_bytes(cls, n_chains, dim, params=None):
        """The default plus, when steps may run the locally balanced kernel, its sum-trees of log g(t_j)."""
        trees = LogSumTree.estimated_bytes(n_chains, dim) if cls.tree_on_pairwise else 0
        return super().estimated_bytes(n_chains, dim, params) + trees

    def _validate(self):
        self._require_gradient()

    def _compiled_pairwise(self) -> bool:
        """Whether steps run the locally balanced kernel: on a pairwise model, unless ``tree_on_pairwise`` is off."""
        return self.tree_on_pairwise and self.target.flip_tables is not None

    def _prepare(self):
        self.log_p, self._grad = self.target.value_and_grad(self.states)
        self._tree = None
        if self._compiled_pairwise():
            self._keep_flip_ratios(taylor_flip_log_ratios(self.states, self._grad))
            self._grad = None

    def _taylor_log_proposal(self, x, grad):
        return taylor_flip_log_proposal(x, grad, *self._g_kernel())

    def _log_proposal(self, x):
        return self._taylor_log_proposal(x, self.target.grad_log_prob(x))

    def _step(self):
        n = self.states.shape[0]
        if self._tree is not None:
            idx, old_bits, accepted, proposed_log_prob, _ = self._pairwise_tree_step()
            self.target.count_evaluations(n)
            return self._single_flip_record(idx, old_bits, accepted, proposed_log_prob)
        idx, log_q, log_q_back = np.empty(n, dtype=np.int64), np.empty(n), np.empty(n)
        taylor_flip_draws(self.states, self._grad, *self._g_kernel(), self.rng.random(n), idx, log_q)
        proposals = flip(self.states, idx)
        proposed_log_prob, proposed_grad = self.target.value_and_grad(proposals)
        taylor_flip_draws(proposals, proposed_grad, *self._g_kernel(), None, idx, log_q_back)
        log_ratio = proposed_log_prob - self.log_p
        accepted = metropolis_accept(flip_log_acceptance(log_ratio, log_q, log_q_back), self.rng)
        old_bits = self.states[np.arange(n), idx]
        previous_log_p = self.log_p.copy()
        self._apply_flips(idx, accepted, log_ratio)
        self._grad[accepted] = proposed_grad[accepted]
        return self._single_flip_record(idx, old_bits, accepted, previous_log_p + log_ratio)

    def transition_row(self, x):
        """On a pairwise model the tree kernel's row (``_tree_transition_row``), else from ``_log_proposal``."""
        if not self._compiled_pairwise():
            return super().transition_row(x)
        return self._tree_transition_row(x, taylor_flip_log_ratios(x[None, :], self.target.grad_log_prob(x[None, :])))

    def describe_move(self, x, proposal, record, chain, common):
        """The single flip, with the gradient's Taylor estimates of the flip ratios the proposal was built on."""
        described = super().describe_move(x, proposal, record, chain, common)
        return None if described is None else replace(
            described, estimated_log_ratio=taylor_flip_log_ratios(x[None], self.target.grad_log_prob(x[None]))[0])
