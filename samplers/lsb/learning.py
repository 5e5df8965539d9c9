"""Compiled kernels of an LSB learning move (Algorithm 1, see ``samplers.lsb``): proposals, normalisers, ∂L̂/∂v.

A learning move needs, per chain, x' ~ Q_θ₀(·|x), the normalisers
Z(x) = Σ_k g(t_k(x)), Z(x') and Z(x*), log g at four picked ratios, and the
gradient of L̂ (``mi_objective.bound_terms``) in the vector v that the compiled
balancing function is made of. x' and x* differ from x in a few flip ratios
(the *patch*: 1 + deg sites on a sparse model, all d for FLSB's Taylor ratios).

Two ways to get the normalisers:

* Dense (any g; ``dense_proposals`` and ``dense_learning_terms``): g changes
  with every step, so Z(x) is summed afresh. p_k = g(t_k)/Z(x) is stored, and
  Z(x') = Z(x)·(Σ_{k∉patch} p_k + Σ_{patch} g'_k/Z(x)) reuses it (only
  non-negative terms are added, so nothing cancels; when the kept mass
  underflows the sum is redone exactly from log g).
  ∂ log Z(x)/∂v = Σ_k p_k ∂ log g(t_k)/∂v.
* Mixture trees (LSB1 with exact ratios; ``mixture_tree_*``): for
  g = Σ_i w_i g_i over fixed g_i, Z(x) = Σ_i w_i Z_i(x), and the sampler keeps
  each Z_i(x) in a sum-tree (row 4c + i for chain c) that changes only where a
  flip changes ratios. x' is drawn by picking component i with probability
  w_i Z_i(x)/Z(x) and then a site from tree i, and ∂ log Z/∂w_i = Z_i/Z.

Both fill ``log_q`` with (log Q(x'|x), log Q(x|x')) for the MH test, add
Σ_chains ∂L_c/∂v to ``grad`` and return (Σ_c L_c, Σ_c ∂L_c/∂ log η).

Cost: dense, O(d) per chain (Z(x) summed afresh, and one more pass for
∂ log Z(x)/∂v); mixture trees, O((1 + deg)·log d) per chain, like a frozen step.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from samplers.balanced.locally_balanced import flip_log_acceptance
from samplers.balanced.sumtree import commit_path, log_total_after, log_total_of, sample_rows, set_leaf, tree_depth
from samplers.base import inverse_cdf, log_add
from samplers.lsb.balancing import MIXTURE, NO_TABLE, add_log_g_gradient, fixed_log_g, log_g_scalar, mixture_log_g
from samplers.lsb.mi_objective import PARTIALS, bound_terms
from targets.compiled import helper
from targets.pairwise import flip_ratio_update

#: The fixed functions a mixture tree keeps, one tree row each per chain.
COMPONENTS = 4
#: Below this, a patched normaliser's kept mass is recomputed exactly from log g.
_TINY = 1e-250
#: Above this, Z(x)/Z(x') is not used to rescale p_k (p_k may have underflowed).
_HUGE = 1e250


@helper
def _patched_value(sites, values, site):
    """The patch's new ratio at ``site`` (``sites``, ``values``: one chain's row)."""
    for e in range(sites.size):
        if sites[e] == site:
            return values[e]
    return np.nan


@helper
def _add_pick_gradients(code, values, slopes, forward_u, reverse_u, probe_u, probe_reverse_u, partials, grad):
    """The four picked log g's share of ∂L_c/∂v."""
    add_log_g_gradient(code, forward_u, values, slopes, partials[0], grad)
    add_log_g_gradient(code, reverse_u, values, slopes, partials[1], grad)
    add_log_g_gradient(code, probe_u, values, slopes, partials[4], grad)
    add_log_g_gradient(code, probe_reverse_u, values, slopes, partials[5], grad)


# -- dense ---------------------------------------------------------------------------------------------------
@njit(cache=True)
def _dense_log_g(ratios, code, values, slopes, log_g, top):
    """log g(t_k) of every chain's ratios into ``log_g``, and each row's largest into ``top``."""
    n, d = ratios.shape
    for c in range(n):
        top[c] = -np.inf
        for k in range(d):
            log_g[c, k] = log_g_scalar(code, ratios[c, k], values, slopes)
            top[c] = max(top[c], log_g[c, k])


@njit(cache=True)
def _draw_rows(weights, totals, uniforms, proposed):
    """j ∝ weights[c] per row (``inverse_cdf`` with ``uniforms[c]``)."""
    for c in range(weights.shape[0]):
        proposed[c] = inverse_cdf(weights[c], totals[c], uniforms[c])


def dense_proposals(ratios, code, values, slopes, rng):
    """(j ~ Q(·|x) per chain, then the arrays ``dense_learning_terms`` reads: log g(t_k), g(t_k)/Z(x) and log Z(x)).

    The exponentials are numpy's (vectorised); the loops around them compiled.
    """
    n = ratios.shape[0]
    log_g, top, proposed = np.empty(ratios.shape), np.empty(n), np.empty(n, dtype=np.int64)
    _dense_log_g(ratios, code, values, slopes, log_g, top)
    weights = np.exp(log_g - top[:, None])
    totals = weights.sum(axis=1)
    _draw_rows(weights, totals, rng.random(n), proposed)
    weights /= totals[:, None]
    return proposed, (log_g, weights, top + np.log(totals))


@helper
def _mark_patch(sites, values, c, marks, bit, code, table_values, slopes, patch_log_g):
    """Mark chain c's patch sites with ``bit`` and put log g of each first occurrence in ``patch_log_g``
    (−∞ for a repeat, which then adds nothing)."""
    for e in range(sites.shape[1]):
        site = sites[c, e]
        if marks[site] & bit:
            patch_log_g[e] = -np.inf
        else:
            marks[site] |= bit
            patch_log_g[e] = log_g_scalar(code, values[c, e], table_values, slopes)


@helper
def _patched_log_z(log_z_state, kept, patch_log_g, log_g, c, marks, bit):
    """log Z after the patch: Z(x)·kept (the unmarked p_k) plus the patch's g's, exact when ``kept`` underflows."""
    top = 0.0
    for e in range(patch_log_g.size):
        top = max(top, patch_log_g[e] - log_z_state)
    total = kept * np.exp(-top)
    for e in range(patch_log_g.size):
        total += np.exp(patch_log_g[e] - log_z_state - top)
    if total > _TINY:
        return log_z_state + top + np.log(total)
    total = -np.inf  # the kept mass underflowed: add up the log g's themselves
    for k in range(log_g.shape[1]):
        if not marks[k] & bit:
            total = log_add(total, log_g[c, k])
    for e in range(patch_log_g.size):
        total = log_add(total, patch_log_g[e])
    return total


@njit(cache=True)
def dense_learning_terms(ratios, log_g, probs, log_z, code, values, slopes, proposed, proposal_sites, proposal_values,
                         probe, probe_sites, probe_values, log_t, log_t_probe, log_eta, log_q, grad):
    """The learning terms of every chain from ``dense_proposals``'s arrays and the two patches (module docstring)."""
    n, d = ratios.shape
    marks = np.zeros(d, dtype=np.uint8)
    proposal_log_g, probe_log_g = np.empty(proposal_sites.shape[1]), np.empty(probe_sites.shape[1])
    partials = np.empty(len(PARTIALS))
    loss, grad_eta = 0.0, 0.0
    for c in range(n):
        j, k = proposed[c], probe[c]
        _mark_patch(proposal_sites, proposal_values, c, marks, 1, code, values, slopes, proposal_log_g)
        _mark_patch(probe_sites, probe_values, c, marks, 2, code, values, slopes, probe_log_g)
        kept_proposal, kept_probe = 0.0, 0.0
        for site in range(d):
            if not marks[site] & 1:
                kept_proposal += probs[c, site]
            if not marks[site] & 2:
                kept_probe += probs[c, site]
        log_z_proposal = _patched_log_z(log_z[c], kept_proposal, proposal_log_g, log_g, c, marks, 1)
        log_z_probe = _patched_log_z(log_z[c], kept_probe, probe_log_g, log_g, c, marks, 2)
        reverse_u = _patched_value(proposal_sites[c], proposal_values[c], j)
        probe_reverse_u = _patched_value(probe_sites[c], probe_values[c], k)
        reverse = log_g_scalar(code, reverse_u, values, slopes)
        loss += bound_terms(log_g[c, j], reverse, log_z[c], log_z_proposal, log_g[c, k],
                            log_g_scalar(code, probe_reverse_u, values, slopes), log_z_probe, log_t[c],
                            log_t_probe[c], log_eta, partials)
        grad_eta += partials[7]
        log_q[c, 0] = log_g[c, j] - log_z[c]
        log_q[c, 1] = reverse - log_z_proposal
        _add_pick_gradients(code, values, slopes, ratios[c, j], reverse_u, ratios[c, k], probe_reverse_u, partials,
                            grad)
        # ∂/∂v of the normalisers: Σ_k p_k ∂ log g(t_k)/∂v with each normaliser's own p — at x' that is
        # p_k·Z(x)/Z(x'), or exp(log g − log Z(x')) when that ratio overflows.
        scale_proposal, scale_probe = np.exp(log_z[c] - log_z_proposal), np.exp(log_z[c] - log_z_probe)
        rescaled = scale_proposal < _HUGE and scale_probe < _HUGE
        for site in range(d):
            coefficient = partials[2] * probs[c, site]
            if not marks[site] & 1:
                coefficient += partials[3] * (probs[c, site] * scale_proposal if rescaled
                                              else np.exp(log_g[c, site] - log_z_proposal))
            if not marks[site] & 2:
                coefficient += partials[6] * (probs[c, site] * scale_probe if rescaled
                                              else np.exp(log_g[c, site] - log_z_probe))
            add_log_g_gradient(code, ratios[c, site], values, slopes, coefficient, grad)
        for e in range(proposal_sites.shape[1]):
            add_log_g_gradient(code, proposal_values[c, e], values, slopes,
                               partials[3] * np.exp(proposal_log_g[e] - log_z_proposal), grad)
            marks[proposal_sites[c, e]] = 0
        for e in range(probe_sites.shape[1]):
            add_log_g_gradient(code, probe_values[c, e], values, slopes,
                               partials[6] * np.exp(probe_log_g[e] - log_z_probe), grad)
            marks[probe_sites[c, e]] = 0
    return loss, grad_eta


# -- mixture trees -------------------------------------------------------------------------------------------
@njit(cache=True)
def mixture_component_log_g(ratios):
    """log g_i(t) of the four fixed functions, ``(n·4, d)`` (row 4c + i): the leaves of the mixture trees."""
    n, d = ratios.shape
    out = np.empty((n * COMPONENTS, d))
    for c in range(n):
        for i in range(COMPONENTS):
            for k in range(d):
                out[COMPONENTS * c + i, k] = fixed_log_g(i, ratios[c, k])
    return out


@helper
def _mixture_log_z(weights, component_log_z, shares):
    """log Σ_i w_i Z_i, and ∂ log Z/∂w_i = Z_i/Z into ``shares``."""
    top = -np.inf
    for i in range(COMPONENTS):
        top = max(top, component_log_z[i])
    total = 0.0
    for i in range(COMPONENTS):
        shares[i] = np.exp(component_log_z[i] - top)
        total += weights[i] * shares[i]
    for i in range(COMPONENTS):
        shares[i] /= total
    return top + np.log(total)


@njit(cache=True)
def mixture_tree_proposals(log_leaves, sums, shift, weights, uniforms, proposed):
    """j ~ Q(·|x) per chain c: component i with probability w_i Z_i(x)/Z(x) (``uniforms[c, -1]``), then a site
    from tree 4c + i (``sample_rows`` with the other uniforms)."""
    component_log_z, shares = np.empty(COMPONENTS), np.empty(COMPONENTS)
    last = uniforms.shape[1] - 1
    rows = np.empty(proposed.size, dtype=np.int64)
    for c in range(proposed.size):
        for i in range(COMPONENTS):
            component_log_z[i] = log_total_of(sums, shift, COMPONENTS * c + i)
        _mixture_log_z(weights, component_log_z, shares)
        for i in range(COMPONENTS):
            shares[i] *= weights[i]  # w_i Z_i / Z
        rows[c] = COMPONENTS * c + inverse_cdf(shares, 1.0, uniforms[c, last])
    sample_rows(log_leaves, sums, rows, uniforms, proposed)


@helper
def _mixture_log_z_after(log_leaves, sums, shift, c, sites, values, weights, component_log_z, shares, patch_log_g,
                         path_nodes, path_values, counts):
    """log Z after chain c's patch (``sites``, ``values``: one row), from its four trees; nothing is written.

    Component i's log g at the patch goes to ``patch_log_g[i]`` and its changed
    path (``log_total_after``) to ``path_nodes[i]``, ``path_values[i]``, ``counts[i]``.
    """
    for i in range(COMPONENTS):
        for e in range(sites.size):
            patch_log_g[i, e] = fixed_log_g(i, values[e])
        component_log_z[i], counts[i] = log_total_after(log_leaves, sums, shift, COMPONENTS * c + i, sites,
                                                        patch_log_g[i], path_nodes[i], path_values[i])
    return _mixture_log_z(weights, component_log_z, shares)


@njit(cache=True)
def mixture_scratch(m, depth):
    """Scratch arrays of ``mixture_chain_terms`` for patches of up to m sites on trees of ``depth`` levels:
    (patch log g, path nodes, path values, path counts, component log Z, the three normalisers' shares, partials)."""
    capacity = m * (depth + 1)
    return (np.empty((COMPONENTS, m)), np.empty((COMPONENTS, capacity), dtype=np.int64),
            np.empty((COMPONENTS, capacity)), np.empty(COMPONENTS, dtype=np.int64), np.empty(COMPONENTS),
            np.empty((3, COMPONENTS)), np.empty(len(PARTIALS)))


@helper
def mixture_chain_terms(log_leaves, sums, shift, c, ratios, weights, j, proposal_sites, proposal_values, k,
                        probe_sites, probe_values, log_t, log_t_probe, log_eta, log_q, grad, patch_log_g,
                        path_nodes, path_values, counts, component_log_z, shares, partials):
    """Chain c's learning terms from its mixture trees and the two patches (one row each; module docstring).

    Fills ``log_q[c]``, adds ∂L_c/∂w to ``grad`` and returns (L_c, ∂L_c/∂ log η).
    The proposal's patch is evaluated last, so its four changed paths stay in
    the scratch for ``commit_mixture_path``.
    """
    for i in range(COMPONENTS):
        component_log_z[i] = log_total_of(sums, shift, COMPONENTS * c + i)
    log_z_state = _mixture_log_z(weights, component_log_z, shares[0])
    log_z_probe = _mixture_log_z_after(log_leaves, sums, shift, c, probe_sites, probe_values, weights,
                                       component_log_z, shares[1], patch_log_g, path_nodes, path_values, counts)
    log_z_proposal = _mixture_log_z_after(log_leaves, sums, shift, c, proposal_sites, proposal_values, weights,
                                          component_log_z, shares[2], patch_log_g, path_nodes, path_values, counts)
    reverse_u = _patched_value(proposal_sites, proposal_values, j)
    probe_reverse_u = _patched_value(probe_sites, probe_values, k)
    forward, reverse = mixture_log_g(ratios[c, j], weights), mixture_log_g(reverse_u, weights)
    term = bound_terms(forward, reverse, log_z_state, log_z_proposal, mixture_log_g(ratios[c, k], weights),
                       mixture_log_g(probe_reverse_u, weights), log_z_probe, log_t, log_t_probe, log_eta, partials)
    log_q[c, 0] = forward - log_z_state
    log_q[c, 1] = reverse - log_z_proposal
    _add_pick_gradients(MIXTURE, weights, NO_TABLE, ratios[c, j], reverse_u, ratios[c, k], probe_reverse_u,
                        partials, grad)
    for i in range(COMPONENTS):
        grad[i] += partials[2] * shares[0, i] + partials[3] * shares[2, i] + partials[6] * shares[1, i]
    return term, partials[7]


@njit(cache=True)
def mixture_tree_learning_terms(log_leaves, sums, shift, ratios, weights, proposed, proposal_sites,
                                proposal_values, probe, probe_sites, probe_values, log_t, log_t_probe, log_eta, log_q,
                                grad):
    """``mixture_chain_terms`` of every chain; returns (Σ_c L_c, Σ_c ∂L_c/∂ log η)."""
    m = max(proposal_sites.shape[1], probe_sites.shape[1])
    patch_log_g, path_nodes, path_values, counts, component_log_z, shares, partials = mixture_scratch(
        m, tree_depth(log_leaves))
    loss, grad_eta = 0.0, 0.0
    for c in range(proposed.size):
        term, term_eta = mixture_chain_terms(log_leaves, sums, shift, c, ratios, weights, proposed[c],
                                             proposal_sites[c], proposal_values[c], probe[c], probe_sites[c],
                                             probe_values[c], log_t[c], log_t_probe[c], log_eta, log_q, grad,
                                             patch_log_g, path_nodes, path_values, counts, component_log_z, shares,
                                             partials)
        loss += term
        grad_eta += term_eta
    return loss, grad_eta


@helper
def commit_mixture_path(log_leaves, sums, shift, c, sites, patch_log_g, path_nodes, path_values, counts):
    """Write chain c's accepted patch into its four trees from the paths ``mixture_chain_terms`` left."""
    for i in range(COMPONENTS):
        commit_path(log_leaves, sums, shift, COMPONENTS * c + i, sites, patch_log_g[i], path_nodes[i],
                    path_values[i], counts[i])


@njit(cache=True)
def mixture_tree_pairwise_learning_moves(states, log_p, delta, log_leaves, sums, shift, weights, uniforms, probe,
                                         accept_uniforms, nbr, w, degree, beta, log_eta, proposed, accepted,
                                         proposed_log_prob, old_bits, log_q, grad):
    """A whole LSB1 learning move (Algorithm 1, with Q₁ the chains' states) of every chain on a sparse pairwise
    model, in one compiled call.

    x' ~ Q_θ₀(·|x) from the mixture trees (``mixture_tree_proposals`` with
    ``uniforms``); per chain c the flip ratios that change at x' and at the
    probe x* (``flip_ratio_update``), ``mixture_chain_terms``, and the MH test of
    x' (log ``accept_uniforms[c]`` < log α) with θ₀, an accepted move writing its
    four tree paths, ratios, bit and log p̃. Fills ``proposed`` and the move's
    outputs; returns (Σ_c L_c, Σ_c ∂L_c/∂ log η, the evaluations Σ_c 2 + deg(j_c) + deg(k_c)).
    """
    n = states.shape[0]
    m = 1 + nbr.shape[1]
    mixture_tree_proposals(log_leaves, sums, shift, weights, uniforms, proposed)
    patch_log_g, path_nodes, path_values, counts, component_log_z, shares, partials = mixture_scratch(
        m, tree_depth(log_leaves))
    proposal_sites, proposal_values = np.empty(m, dtype=np.int64), np.empty(m)
    probe_sites, probe_values = np.empty(m, dtype=np.int64), np.empty(m)
    loss, grad_eta, evaluations = 0.0, 0.0, 0
    for c in range(n):
        j, k = proposed[c], probe[c]
        flip_ratio_update(states, delta, c, j, nbr, w, beta, proposal_sites, proposal_values)
        flip_ratio_update(states, delta, c, k, nbr, w, beta, probe_sites, probe_values)
        evaluations += 2 + degree[j] + degree[k]
        log_t = delta[c, j]
        term, term_eta = mixture_chain_terms(log_leaves, sums, shift, c, delta, weights, j, proposal_sites,
                                             proposal_values, k, probe_sites, probe_values, log_t, delta[c, k],
                                             log_eta, log_q, grad, patch_log_g, path_nodes, path_values, counts,
                                             component_log_z, shares, partials)
        loss += term
        grad_eta += term_eta
        old_bits[c] = states[c, j]
        proposed_log_prob[c] = log_p[c] + log_t
        accepted[c] = np.log(accept_uniforms[c]) < flip_log_acceptance(log_t, log_q[c, 0], log_q[c, 1])
        if accepted[c]:
            commit_mixture_path(log_leaves, sums, shift, c, proposal_sites, patch_log_g, path_nodes, path_values,
                                counts)
            for e in range(m):
                delta[c, proposal_sites[e]] = proposal_values[e]
            states[c, j] ^= 1
            log_p[c] += log_t
    return loss, grad_eta, evaluations


@njit(cache=True)
def commit_mixture_flips(log_leaves, sums, shift, chains, sites, values):
    """Write the accepted patches (chains ``chains``) into their four trees: O((1 + deg)·log d) each."""
    for e in range(chains.size):
        c = chains[e]
        for f in range(sites.shape[1]):
            for i in range(COMPONENTS):
                set_leaf(log_leaves, sums, shift, COMPONENTS * c + i, sites[c, f], fixed_log_g(i, values[c, f]))
