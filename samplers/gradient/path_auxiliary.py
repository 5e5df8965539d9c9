"""The path auxiliary sampler PAS (Sun, Dai, Xia & Ramamurthy, "Path auxiliary proposal for MCMC in
discrete space", ICLR 2022).

Proposal. A move flips L distinct bits chosen one after another, without
replacement, from the locally balanced weights of the starting state x,
w_j = g(t_j(x)) with g a balancing function and t_j the exact flip ratio or
its Taylor estimate from one gradient (the "fast" variant, PAFS in DISCS).
The ordered path (i₁, …, i_L) has probability

    q(i₁, …, i_L | x) = Π_{k=1..L} w_{i_k} / (W − Σ_{m<k} w_{i_m}),     W = Σ_j w_j,

and ends at y, which is x with those L bits flipped. L is ``path_length`` or,
with ``random_length`` (the default), uniform on {1, …, ``path_length``} per
move: a mixture of kernels that each leave p̃ invariant. (A fixed even L flips
an even number of bits every move and never leaves the parity class it
started in.)

Acceptance. The order is an auxiliary variable: the reverse move starts at y
with y's weights w′ and retraces the path backwards, (i_L, …, i₁). Reversing
the path is an involution, so the Metropolis–Hastings step on (state, path),

    α = min{1, p̃(y) q(i_L, …, i₁ | y) / (p̃(x) q(i₁, …, i_L | x))},

leaves p̃ exactly invariant although q(y | x), a sum over the L! orders, is
never computed.

L is tuned toward an acceptance rate during ``burn_in`` steps and then frozen
(``samplers.gradient.acceptance_tuning``, as DISCS tunes its path length);
with ``burn_in=0`` the requested ``path_length`` is used throughout.

Cost: the flip ratios at x (kept) and at y, so one value-and-gradient
evaluation per step with ``ratios="gradient"``, or 1 + d with exact ratios.
On a sparse pairwise model (a target with ``flip_tables``) the two are equal,
each chain keeps its ratios and a sum-tree of their weights, and a step is one
compiled call (``samplers.gradient.pairwise_moves``: O(L·(1 + deg)·log d) a
chain); the evaluations counted stay the algorithm's, as above.
"""

from __future__ import annotations

import itertools

import numpy as np
import param
from numba import njit

from samplers.balanced.locally_balanced import flip_log_acceptance
from samplers.balanced.sumtree import LogSumTree
from samplers.base import (ExactCase, Move, Sampler, SamplerFacts, acceptance_probability, inverse_cdf,
                           log_softmax)
from samplers.diagnostics.inspection import ProposalInspection
from samplers.gradient.factorised import TunedLocalProposal
from samplers.gradient.pairwise_moves import path_auxiliary_pairwise_rows, path_auxiliary_pairwise_steps
from samplers.lsb.balancing import CODES


@njit(cache=True)
def draw_paths(log_w, uniforms, lengths):
    """One path of ``lengths[c]`` distinct sites per row c, drawn ∝ w without replacement, padded to
    ``uniforms.shape[1]`` by repeating its last site.

    Returns (paths ``(n, L_max)``, valid ``(n,)``): a row is invalid when fewer than its
    length of sites have positive weight.
    """
    n, longest = uniforms.shape
    paths = np.zeros((n, longest), dtype=np.int64)
    valid = np.ones(n, dtype=np.bool_)
    for c in range(n):
        weights = np.exp(log_w[c] - np.max(log_w[c]))
        for k in range(lengths[c]):
            total = weights.sum()
            if not total > 0.0:
                valid[c] = False
                paths[c, k:] = paths[c, 0]
                break
            pick = inverse_cdf(weights, total, uniforms[c, k])
            paths[c, k:] = pick
            weights[pick] = 0.0
    return paths, valid


@njit(cache=True)
def path_log_probability(log_w, paths, lengths, backwards):
    """log q of each row's path (its first ``lengths[c]`` sites, read backwards if ``backwards``) under sequential
    draws ∝ w without replacement."""
    out = np.zeros(paths.shape[0])
    for c in range(paths.shape[0]):
        weights = np.exp(log_w[c] - np.max(log_w[c]))
        length = lengths[c]
        for k in range(length):
            site = paths[c, length - 1 - k] if backwards else paths[c, k]
            total = weights.sum()
            if not weights[site] > 0.0:
                out[c] = -np.inf
                break
            out[c] += np.log(weights[site]) - np.log(total)
            weights[site] = 0.0
    return out


class PathAuxiliary(TunedLocalProposal):
    """PAS: L locally balanced flips along a path, accepted with the exact reverse-path probability."""

    registry_name = "pas"
    facts = SamplerFacts(
        example={"path_length": 3, "burn_in": 20},
        exact=(ExactCase({"burn_in": 0, "path_length": 2}),
               ExactCase({"burn_in": 0, "path_length": 3, "ratios": "exact", "balancing": "min"}, "boltzmann", {})),
        warm_up=({"ratios": "exact", "path_length": 2, "burn_in": 0},), warm_up_transition_row=True,
        inspection="path")
    bytes_per_site = Sampler.bytes_per_site + 8  # the flip log-ratios of the states
    tuned_parameter = "path_length"
    tuned_on_log = False
    path_length = param.Integer(1, bounds=(1, 100_000), doc="Flips per move L (with random_length, the longest), "
                                                            "the start of the tuning if burn_in > 0; at most d.")
    random_length = param.Boolean(True, doc="Draw each move's L uniformly from 1, …, path_length: flips of one fixed "
                                            "even L never change the parity of x, so a fixed L can be reducible.")

    @classmethod
    def estimated_bytes(cls, n_chains, dim, params=None):
        """The default plus each record's path: L sites (int64) and their new values per chain, L as requested
        (tuning may lengthen it, by 9 bytes per chain and flip), and on a pairwise model the sum-trees."""
        return (super().estimated_bytes(n_chains, dim, params) + 9 * n_chains * cls._requested(params, "path_length")
                + LogSumTree.estimated_bytes(n_chains, dim))

    def _validate(self):
        super()._validate()
        if self.path_length > self.target.dim:
            raise ValueError(f"pas: path_length={self.path_length} exceeds the dimension {self.target.dim}")

    def _tuned_bounds(self):
        return 1.0, float(self.target.dim)

    def _frozen_value(self):
        return self._length()

    def _length(self) -> int:
        """L in force: the tuned radius, rounded."""
        return int(round(self.tuned_value))

    def _prepare(self):
        super()._prepare()
        self._tree = LogSumTree(self.log_g(self._log_t)) if self._pairwise() else None

    def _path_lengths(self) -> np.ndarray:
        """The possible path lengths in force (each equally likely)."""
        longest = self._length()
        return np.arange(1, longest + 1) if self.random_length else np.array([longest])

    def _step(self):
        tuning = self._adapts_this_step()
        n = self.states.shape[0]
        choices = self._path_lengths()
        lengths = choices[self.rng.integers(0, choices.size, size=n)]
        step = self._pairwise_step if self._pairwise() else self._generic_step
        paths, proposed_values, accepted, proposed_log_prob = step(lengths, choices[-1], tuning)
        return Move(accepted=accepted, proposed_sites=paths, proposed_values=proposed_values,
                    proposed_log_prob=proposed_log_prob)

    def _generic_step(self, lengths, longest, tuning):
        """Any target: draw the paths, evaluate the proposals and their ratios, accept (paths, the proposals'
        bits on them, accepted, log p̃ of the proposals)."""
        n = self.states.shape[0]
        log_w = self.log_g(self._log_t)
        paths, valid = draw_paths(log_w, self.rng.random((n, longest)), lengths)
        rows, steps = np.nonzero((np.arange(longest) < lengths[:, None]) & valid[:, None])
        proposals = self.states.copy()
        proposals[rows, paths[rows, steps]] ^= 1
        proposed_log_prob, proposed_log_t = self._value_and_log_ratios(proposals)
        log_alpha = np.where(valid, flip_log_acceptance(
            proposed_log_prob - self.log_p, path_log_probability(log_w, paths, lengths, False),
            path_log_probability(self.log_g(proposed_log_t), paths, lengths, True)), -np.inf)
        accepted = self._accept(proposals, proposed_log_prob, proposed_log_t, log_alpha, tuning)
        return paths, proposals[np.arange(n)[:, None], paths], accepted, proposed_log_prob

    def _pairwise_step(self, lengths, longest, tuning):
        """A pairwise model: one compiled call (``path_auxiliary_pairwise_steps``), the algorithm's evaluations
        counted."""
        n = self.states.shape[0]
        nbr, w, _, beta = self.target.flip_tables
        paths, proposed_values = np.zeros((n, longest), dtype=np.int64), np.empty((n, longest), dtype=np.uint8)
        accepted, proposed_log_prob, log_alpha = self._pairwise_outputs()
        uniforms, log_u = self.rng.random((n, longest, self._tree.depth)), np.log(self.rng.random(n))
        path_auxiliary_pairwise_steps(self.states, self.log_p, self._log_t, *self._tree.arrays, lengths, uniforms,
                                      log_u, nbr, w, beta, CODES[self.balancing], paths, proposed_values, accepted,
                                      proposed_log_prob, log_alpha)
        self.target.count_evaluations(n * self._evaluations_per_state())
        self._tune_on(log_alpha, tuning)
        return paths, proposed_values, accepted, proposed_log_prob

    def transition_row(self, x):
        """Every ordered path of every length in force with P(L)·q(path | x)·α, from the step's own kernel:
        ``path_auxiliary_pairwise_rows`` on a pairwise model, else the compiled path probabilities."""
        log_p, log_t = self._value_and_log_ratios(x[None, :])
        choices = self._path_lengths()
        candidates, probs = [], []
        for length in choices:
            paths = np.array(list(itertools.permutations(range(x.size), int(length))), dtype=np.int64)
            lengths = np.full(len(paths), length)
            proposals = np.repeat(x[None, :], len(paths), axis=0)
            proposals[np.arange(len(paths))[:, None], paths] ^= 1
            if not self._pairwise():
                proposed_log_prob, proposed_log_t = self._value_and_log_ratios(proposals)
                log_forward = path_log_probability(np.repeat(self.log_g(log_t), len(paths), axis=0), paths, lengths,
                                                   False)
                log_alpha = flip_log_acceptance(proposed_log_prob - log_p[0], log_forward,
                                                path_log_probability(self.log_g(proposed_log_t), paths, lengths, True))
            else:
                nbr, w, _, beta = self.target.flip_tables
                log_forward, log_alpha = path_auxiliary_pairwise_rows(
                    x[None, :].copy(), log_p, log_t, *LogSumTree(self.log_g(log_t)).arrays, paths, lengths, nbr, w,
                    beta, CODES[self.balancing])
            candidates.append(proposals)
            probs.append(np.exp(log_forward) * acceptance_probability(log_alpha) / choices.size)
        return self._with_stay(x, np.vstack(candidates), np.concatenate(probs))

    def describe_move(self, x, proposal, record, chain, common):
        """A PAS move: its path (the padded path's distinct sites in order), the first flip's distribution, the
        path's probability from x and the reversed path's from y, and the acceptance."""
        padded_path = record.proposed_sites[chain]
        _, first = np.unique(padded_path, return_index=True)
        path = np.asarray(padded_path)[np.sort(first)]
        log_t = self._value_and_log_ratios(x[None])[1]
        log_w = self.log_g(log_t)
        log_w_reverse = self.log_g(self._value_and_log_ratios(proposal[None])[1])
        length = np.array([path.size])
        forward = float(path_log_probability(log_w, path[None], length, False)[0])
        reverse = float(path_log_probability(log_w_reverse, path[None], length, True)[0])
        log_alpha = flip_log_acceptance(common["log_target_ratio"], forward, reverse)
        return ProposalInspection(kind="path", path=path, log_q=log_softmax(log_w)[0], log_q_forward=forward,
                                  log_q_reverse=reverse,
                                  acceptance=float(acceptance_probability(np.array([log_alpha]))[0]),
                                  estimated_log_ratio=log_t[0] if self.ratios == "gradient" else None, **common)
