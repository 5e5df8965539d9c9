"""Compiled moves of PAS, DMALA and DLMC on sparse pairwise models, with the flip log-ratios kept incrementally.

On a pairwise model (``targets.pairwise``) the flip log-ratios of a state,
Δ_i(x) = log p̃(x^(i)) − log p̃(x) = −2β s_i f_i, are exact and equal to their
first-order Taylor estimate (J has a zero diagonal, so ``ratios="gradient"``
and ``ratios="exact"`` propose alike), and flipping bit i changes only Δ_i and
its neighbours' (``targets.pairwise.flip_ratio_update``, O(deg)). Each chain
keeps Δ. A proposal y that flips the bits B of x reaches Δ(y) by flipping B one
bit after another (``flip_logged``, O(|B|·deg)), and

    log p̃(y) − log p̃(x) = Σ_k Δ_{b_k}(x ⊕ {b_1, …, b_{k−1}}),

the sum of the sequential flip ratios. A rejected proposal is undone from the
log of the values it overwrote (``undo_flips``). The proposals and
acceptances are those of ``samplers.gradient.path_auxiliary`` (PAS) and
``samplers.gradient.factorised`` (DMALA, DLMC); only the source of their numbers
changes:

* **PAS** keeps each chain's log g(Δ_j) in a sum-tree (``samplers.balanced.sumtree``).
  A path i₁, …, i_L is drawn from it without replacement by setting each drawn
  leaf to −∞ (``remove_path``), so the normaliser W − Σ_{m<k} w_{i_m} of draw k is
  the tree's total after those removals (added up from the remaining weights,
  never a subtraction). The reverse path is read from y's tree as the path's
  leaves are put back (``add_back_path``), after the other changed ratios'
  leaves took y's weights (O(L·(1 + deg)·log d) a move, not O(L·d)).
* **DMALA and DLMC** keep each site's flip probability p_i and log p_i,
  log(1 − p_i) (``samplers.gradient.flip_probabilities``) at the
  step size in force: a move draws every bit with one comparison (u_i < p_i)
  and sums the cached logs (O(d) additions), and recomputes the cache only at
  the sites whose Δ changed. A new step size (the tuning) recomputes it all.

Every per-chain move also evaluates a given proposal (a path, a flip pattern)
without keeping it, which is what the samplers' ``transition_row`` reads, so
the exact kernel is computed by the code that steps.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from samplers.balanced.locally_balanced import flip_log_acceptance
from samplers.balanced.sumtree import log_total_of, sample_leaf, set_leaf
from samplers.gradient.flip_probabilities import coordinate_flip_logs
from samplers.lsb.balancing import NO_TABLE, log_g_scalar
from targets.compiled import helper
from targets.pairwise import flip_ratio_update


# -- flips with an undo log ------------------------------------------------------------------------------------
@helper
def flip_logged(states, delta, c, i, nbr, w, beta, sites, values, undo_sites, undo_values, n_undo):
    """Flip bit i of chain c and update its flip log-ratios Δ, logging each overwritten entry of Δ.

    Returns (Δ_i before the flip, i.e. the flip's log-ratio; the new length of the log).
    """
    log_ratio = delta[c, i]
    flip_ratio_update(states, delta, c, i, nbr, w, beta, sites, values)
    for k in range(sites.size):
        undo_sites[n_undo] = sites[k]
        undo_values[n_undo] = delta[c, sites[k]]
        delta[c, sites[k]] = values[k]
        n_undo += 1
    states[c, i] ^= 1
    return log_ratio, n_undo


@helper
def undo_flips(states, delta, c, flipped, n_flipped, undo_sites, undo_values, n_undo):
    """Restore chain c's bits ``flipped[:n_flipped]`` and its Δ from the log (newest entry first)."""
    for k in range(n_undo - 1, -1, -1):
        delta[c, undo_sites[k]] = undo_values[k]
    for k in range(n_flipped):
        states[c, flipped[k]] ^= 1


# -- PAS -------------------------------------------------------------------------------------------------------
@helper
def remove_path(log_leaves, sums, shift, c, path, length, draw, uniforms, saved):
    """log q of a path through chain c's tree of log-weights, each site drawn without replacement,
    Σ_k log w_{i_k} − log(W − Σ_{m<k} w_{i_m}) (``samplers.gradient.path_auxiliary``), each site's leaf set to
    −∞ once drawn (its weight kept in ``saved[k]``): W − Σ_{m<k} w_{i_m} is the tree's total then.

    With ``draw`` the sites are drawn into ``path[:length]`` (draw k from
    ``uniforms[k]``, one per tree level); otherwise ``path`` is read. A path
    that meets a weight of 0 cannot be drawn: its leaves are restored and −∞
    returned.
    """
    log_q = 0.0
    for k in range(length):
        if draw:
            path[k] = sample_leaf(log_leaves, sums, c, uniforms[k])
        log_w = log_leaves[c, path[k]]
        if not log_w > -np.inf:
            for m in range(k - 1, -1, -1):
                set_leaf(log_leaves, sums, shift, c, path[m], saved[m])
            return -np.inf
        log_q += log_w - log_total_of(sums, shift, c)
        saved[k] = log_w
        set_leaf(log_leaves, sums, shift, c, path[k], -np.inf)
    return log_q


@helper
def add_back_path(log_leaves, sums, shift, c, path, length, code, delta):
    """log q of the reverse path (i_L, …, i₁) through y's tree, from a tree holding y's weights everywhere but on
    the path (its leaves at −∞): setting i₁, …, i_L back one after another (weights g(Δ(y))), the total after
    i_m is set is the normaliser of the reverse draw of i_m, W′ − Σ_{k>m} w′_{i_k}, so
    log q = Σ_m log w′_{i_m} − log(that total). −∞ when a weight is 0."""
    log_q = 0.0
    for m in range(length):
        log_w = log_g_scalar(code, delta[c, path[m]], NO_TABLE, NO_TABLE)
        set_leaf(log_leaves, sums, shift, c, path[m], log_w)
        log_q += log_w - log_total_of(sums, shift, c)
    return log_q


@helper
def path_move(c, states, log_p, delta, log_leaves, sums, shift, path, length, draw, uniforms, log_u, nbr, w, beta,
              code, sites, values, undo_sites, undo_values, old_leaves, saved, marks, stamp):
    """One PAS move of chain c: the path (drawn, or given in ``path[:length]``), the flips, y's tree and Δ, and
    α = min{1, p̃(y) q(i_L, …, i₁ | y) / (p̃(x) q(i₁, …, i_L | x))}; the move is kept iff log u < log α.

    The path's leaves stay removed (``remove_path``) while the other changed
    ratios' leaves take y's weights; putting the path back (``add_back_path``)
    then reads the reverse path's normalisers. ``marks[j] == stamp`` marks the
    path's sites (``stamp`` a number no earlier move used). Returns (accepted,
    log q of the path, log α, log p̃(y) − log p̃(x)); a path that cannot be drawn
    has log q = log α = −∞ and flips nothing. A move not kept leaves every
    array as it found it.
    """
    log_forward = remove_path(log_leaves, sums, shift, c, path, length, draw, uniforms, saved)
    if log_forward == -np.inf:
        return False, -np.inf, -np.inf, 0.0
    log_ratio, n_undo = 0.0, 0
    for k in range(length):
        marks[path[k]] = stamp
        flip_ratio, n_undo = flip_logged(states, delta, c, path[k], nbr, w, beta, sites, values, undo_sites,
                                         undo_values, n_undo)
        log_ratio += flip_ratio
    for k in range(n_undo):
        site = undo_sites[k]
        old_leaves[k] = log_leaves[c, site]
        if marks[site] != stamp:
            set_leaf(log_leaves, sums, shift, c, site, log_g_scalar(code, delta[c, site], NO_TABLE, NO_TABLE))
    log_reverse = add_back_path(log_leaves, sums, shift, c, path, length, code, delta)
    log_alpha = flip_log_acceptance(log_ratio, log_forward, log_reverse)
    if log_u < log_alpha:
        log_p[c] += log_ratio
        return True, log_forward, log_alpha, log_ratio
    for k in range(n_undo - 1, -1, -1):
        if marks[undo_sites[k]] != stamp:
            set_leaf(log_leaves, sums, shift, c, undo_sites[k], old_leaves[k])
    for k in range(length):
        set_leaf(log_leaves, sums, shift, c, path[k], saved[k])
    undo_flips(states, delta, c, path, length, undo_sites, undo_values, n_undo)
    return False, log_forward, log_alpha, log_ratio


@njit(cache=True)
def path_auxiliary_pairwise_steps(states, log_p, delta, log_leaves, sums, shift, lengths, uniforms, log_u, nbr, w,
                                  beta, code, paths, proposed_values, accepted, proposed_log_prob, log_alpha):
    """A PAS step of every chain (``path_move``), chain c along a path of ``lengths[c]`` sites drawn with
    ``uniforms[c]`` (``(longest, tree depth)``).

    Fills ``paths`` (zeros from the caller; padded by repeating the last site, as
    ``draw_paths``), the proposal's bits there (``proposed_values``), ``accepted``,
    ``proposed_log_prob`` and ``log_alpha``.
    """
    longest = paths.shape[1]
    m = 1 + nbr.shape[1]
    sites, values = np.empty(m, dtype=np.int64), np.empty(m)
    undo_sites, undo_values, old_leaves = np.empty(longest * m, dtype=np.int64), np.empty(longest * m), \
        np.empty(longest * m)
    saved, marks = np.empty(longest), np.full(states.shape[1], -1, dtype=np.int64)
    for c in range(states.shape[0]):
        length = lengths[c]
        before = log_p[c]
        accepted[c], log_forward, log_alpha[c], log_ratio = path_move(
            c, states, log_p, delta, log_leaves, sums, shift, paths[c], length, True, uniforms[c], log_u[c], nbr, w,
            beta, code, sites, values, undo_sites, undo_values, old_leaves, saved, marks, c)
        paths[c, length:] = paths[c, length - 1]
        proposed_log_prob[c] = before + log_ratio
        flipped = log_forward > -np.inf and not accepted[c]  # the proposal's bits differ from the state's
        for k in range(longest):
            proposed_values[c, k] = states[c, paths[c, k]] ^ flipped


@njit(cache=True)
def path_auxiliary_pairwise_rows(states, log_p, delta, log_leaves, sums, shift, paths, lengths, nbr, w, beta, code):
    """(log q, log α) of each given path ``paths[e, :lengths[e]]`` from chain 0, keeping none (``path_move``
    with log u = ∞)."""
    longest = paths.shape[1]
    m = 1 + nbr.shape[1]
    sites, values = np.empty(m, dtype=np.int64), np.empty(m)
    undo_sites, undo_values, old_leaves = np.empty(longest * m, dtype=np.int64), np.empty(longest * m), \
        np.empty(longest * m)
    saved, marks, no_uniforms = np.empty(longest), np.full(states.shape[1], -1, dtype=np.int64), \
        np.empty((longest, 1))
    log_forward, log_alpha = np.empty(paths.shape[0]), np.empty(paths.shape[0])
    for e in range(paths.shape[0]):
        _, log_forward[e], log_alpha[e], _ = path_move(
            0, states, log_p, delta, log_leaves, sums, shift, paths[e], lengths[e], False, no_uniforms, np.inf, nbr,
            w, beta, code, sites, values, undo_sites, undo_values, old_leaves, saved, marks, e)
    return log_forward, log_alpha


# -- DMALA and DLMC --------------------------------------------------------------------------------------------
@helper
def set_flip_cache(p, log_flip, log_stay, c, i, log_t, scheme, code, step):
    """Cache site i of chain c: (log p_i, log(1 − p_i)) for flip log-ratio ``log_t`` (``coordinate_flip_logs``),
    and p_i."""
    log_flip[c, i], log_stay[c, i] = coordinate_flip_logs(scheme, code, log_t, step)
    p[c, i] = np.exp(log_flip[c, i])


@njit(cache=True)
def fill_flip_caches(delta, p, log_flip, log_stay, scheme, code, step):
    """``set_flip_cache`` of every site of every chain (O(n·d) logarithms and exponentials)."""
    for c in range(delta.shape[0]):
        for i in range(delta.shape[1]):
            set_flip_cache(p, log_flip, log_stay, c, i, delta[c, i], scheme, code, step)


@helper
def pattern_log_probability(log_flip, log_stay, c, flips):
    """log q of flip pattern ``flips`` from chain c's cache: Σ_i log p_i where it flips, log(1 − p_i) elsewhere."""
    out = 0.0
    for i in range(flips.size):
        out += log_flip[c, i] if flips[i] else log_stay[c, i]
    return out


@helper
def factorised_move(c, states, log_p, delta, p, log_flip, log_stay, flips, log_u, nbr, w, beta, scheme, code, step,
                    sites, values, flipped, undo_sites, undo_values, changed, old_cache, marks, stamp):
    """One DMALA/DLMC move of chain c with flip pattern ``flips``: y = x ⊕ flips, its Δ and cache, and
    α = min{1, p̃(y) q(x | y) / (p̃(x) q(y | x))}; kept iff log u < log α.

    Returns (accepted, log α, log p̃(y) − log p̃(x)). A move not kept leaves
    every array as it found it. The cache is recomputed once per changed site:
    ``marks[j] == stamp`` (a number no earlier move used) marks site j done.
    q(x | y) and q(y | x) differ only in the factors of the changed sites, so
    log q(x | y) − log q(y | x) is the sum of those factors' changes (O(changed),
    without the cancellation of two sums over all d sites). ``changed``,
    ``old_cache`` (3 × its length) and ``marks`` are scratch.
    """
    log_ratio, n_undo, n_flipped = 0.0, 0, 0
    for i in range(flips.size):
        if flips[i]:
            flip_ratio, n_undo = flip_logged(states, delta, c, i, nbr, w, beta, sites, values, undo_sites,
                                             undo_values, n_undo)
            log_ratio += flip_ratio
            flipped[n_flipped] = i
            n_flipped += 1
    n_changed, log_q_change = 0, 0.0
    for k in range(n_undo):
        site = undo_sites[k]
        if marks[site] == stamp:
            continue
        marks[site] = stamp
        changed[n_changed] = site
        old_cache[3 * n_changed], old_cache[3 * n_changed + 1], old_cache[3 * n_changed + 2] = \
            p[c, site], log_flip[c, site], log_stay[c, site]
        n_changed += 1
        set_flip_cache(p, log_flip, log_stay, c, site, delta[c, site], scheme, code, step)
        log_q_change += ((log_flip[c, site] - old_cache[3 * n_changed - 2]) if flips[site]
                         else (log_stay[c, site] - old_cache[3 * n_changed - 1]))
    log_alpha = flip_log_acceptance(log_ratio, 0.0, log_q_change)
    if log_u < log_alpha:
        log_p[c] += log_ratio
        return True, log_alpha, log_ratio
    for k in range(n_changed):
        site = changed[k]
        p[c, site], log_flip[c, site], log_stay[c, site] = old_cache[3 * k], old_cache[3 * k + 1], \
            old_cache[3 * k + 2]
    undo_flips(states, delta, c, flipped, n_flipped, undo_sites, undo_values, n_undo)
    return False, log_alpha, log_ratio


@helper
def factorised_scratch_size(d, nbr):
    """Entries of the undo log of a move that flips all d bits: d · (1 + the neighbour table's width)."""
    return d * (1 + nbr.shape[1])


@njit(cache=True)
def factorised_pairwise_steps(states, log_p, delta, p, log_flip, log_stay, uniforms, log_u, nbr, w, beta, scheme,
                              code, step, proposals, accepted, proposed_log_prob, log_alpha):
    """A DMALA/DLMC step of every chain (``factorised_move``): bit i of chain c flips iff uniforms[c, i] < p_i.

    Fills ``proposals`` (the proposed states), ``accepted``, ``proposed_log_prob`` and ``log_alpha``.
    """
    n, d = states.shape
    m = 1 + nbr.shape[1]
    size = factorised_scratch_size(d, nbr)
    sites, values, flipped = np.empty(m, dtype=np.int64), np.empty(m), np.empty(d, dtype=np.int64)
    undo_sites, undo_values = np.empty(size, dtype=np.int64), np.empty(size)
    changed, old_cache, marks = np.empty(d, dtype=np.int64), np.empty(3 * d), np.full(d, -1, dtype=np.int64)
    flips = np.empty(d, dtype=np.bool_)
    for c in range(n):
        for i in range(d):
            flips[i] = uniforms[c, i] < p[c, i]
        before = log_p[c]
        accepted[c], log_alpha[c], log_ratio = factorised_move(
            c, states, log_p, delta, p, log_flip, log_stay, flips, log_u[c], nbr, w, beta, scheme, code, step, sites,
            values, flipped, undo_sites, undo_values, changed, old_cache, marks, c)
        proposed_log_prob[c] = before + log_ratio
        for i in range(d):
            proposals[c, i] = states[c, i] ^ (flips[i] and not accepted[c])


@njit(cache=True)
def factorised_pairwise_rows(states, log_p, delta, p, log_flip, log_stay, patterns, nbr, w, beta, scheme, code, step):
    """(log q, log α) of each flip pattern ``patterns[e]`` from chain 0, keeping none (``factorised_move`` with
    log u = ∞)."""
    d = states.shape[1]
    m = 1 + nbr.shape[1]
    size = factorised_scratch_size(d, nbr)
    sites, values, flipped = np.empty(m, dtype=np.int64), np.empty(m), np.empty(d, dtype=np.int64)
    undo_sites, undo_values = np.empty(size, dtype=np.int64), np.empty(size)
    changed, old_cache, marks = np.empty(d, dtype=np.int64), np.empty(3 * d), np.full(d, -1, dtype=np.int64)
    log_forward, log_alpha = np.empty(patterns.shape[0]), np.empty(patterns.shape[0])
    for e in range(patterns.shape[0]):
        log_forward[e] = pattern_log_probability(log_flip, log_stay, 0, patterns[e])
        _, log_alpha[e], _ = factorised_move(
            0, states, log_p, delta, p, log_flip, log_stay, patterns[e], np.inf, nbr, w, beta, scheme, code, step,
            sites, values, flipped, undo_sites, undo_values, changed, old_cache, marks, e)
    return log_forward, log_alpha
