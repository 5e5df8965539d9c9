"""Locally balanced proposals over single flips (Zanella 2020) and Gibbs-with-Gradients.

With t_j(x) = p̃(x^(j))/p̃(x) the ratio of flipping bit j, a locally balanced
proposal is

    Q(x^(j) | x) = g(t_j(x)) / Z(x),     Z(x) = Σ_k g(t_k(x))

(LSB paper, Eq. 1–2), made exact by a Metropolis–Hastings correction

    α = min{1, t_j(x) · Q(x | x^(j)) / Q(x^(j) | x)}.

For a balancing function (g(t) = t·g(1/t)) this is min{1, Z(x)/Z(x^(j))}; we
always evaluate the general form, so a g that is not balancing (or a learned g
part-way through training) still gives an exact chain.

``LocallyBalanced`` uses the exact ratios. It caches t(x) for every chain and
keeps log g(t_j) in a log-space sum-tree: after a flip only the ratios that
changed are recomputed (1 + deg on a sparse pairwise model, d on a black box)
and sampling is O(log d), so a step costs O(1) evaluations on a lattice.

``GibbsWithGradients`` (Grathwohl et al. 2021) replaces t_j by its first-order
Taylor estimate  log t̃_j = (1 − 2x_j) ∂ log p̃/∂x_j  and uses g = √t; the MH
correction uses the exact log p̃ at the proposal. One evaluation (value and
gradient) per step.
"""

from __future__ import annotations

import numpy as np
import param

from targets.base import flip

from .balancing import BALANCING, log_balancing
from .base import Sampler, acceptance_probability, log_softmax, metropolis_accept, sample_categorical
from .sumtree import LogSumTree


def flip_log_acceptance(log_ratio, log_q_forward, log_q_reverse):
    """log α before the min: log t_j(x) + log Q(x | x^(j)) − log Q(x^(j) | x)."""
    return log_ratio + log_q_reverse - log_q_forward


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

    def transition_row(self, x):
        d = x.size
        log_q = self._log_proposal(x[None, :])[0]
        neighbours = flip(np.repeat(x[None, :], d, axis=0), np.arange(d))
        log_q_back = self._log_proposal(neighbours)[np.arange(d), np.arange(d)]
        log_ratio = self.target.log_prob(neighbours) - self.target.log_prob(x[None, :])
        log_alpha = flip_log_acceptance(log_ratio, log_q, log_q_back)
        return self._with_stay(x, neighbours, np.exp(log_q) * acceptance_probability(log_alpha))


class LocallyBalanced(_FlipProposalSampler):
    """Zanella's locally balanced single-flip proposal with exact flip ratios and MH correction."""

    registry_name = "locally_balanced"
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
        self._delta = self.target.delta_log_prob(self.states)
        self._tree = LogSumTree(self.log_g(self._delta))

    def _log_proposal(self, x):
        return log_softmax(self.log_g(self.target.delta_log_prob(x)))

    def _scored_neighbourhood(self):
        return self._delta.copy() if self.record_neighbours else None

    def _step(self):
        n = self.states.shape[0]
        rows = np.arange(n)
        tree = self._tree
        idx = tree.sample(self.rng)
        log_ratio = self._delta[rows, idx]
        log_q_forward = tree.leaves(rows, idx) - tree.log_total
        sites, values = self.target.delta_after_flip(self.states, self._delta, idx)
        old_leaves = tree.leaves(rows[:, None], sites)
        tree.update(rows, sites, self.log_g(values))
        log_q_reverse = tree.leaves(rows, idx) - tree.log_total
        accepted = metropolis_accept(flip_log_acceptance(log_ratio, log_q_forward, log_q_reverse), self.rng)
        rejected = np.flatnonzero(~accepted)
        tree.update(rejected, sites[rejected], old_leaves[rejected])
        kept = np.flatnonzero(accepted)
        self._delta[kept[:, None], sites[kept]] = values[kept]
        old_bits = self.states[rows, idx]
        proposed_log_prob = self.log_p + log_ratio
        self._apply_flips(idx, accepted, log_ratio)
        return self._single_flip_record(idx, old_bits, accepted, proposed_log_prob)


class GibbsWithGradients(_FlipProposalSampler):
    """Gibbs-with-Gradients: locally balanced proposal on Taylor-estimated flip ratios."""

    registry_name = "gwg"
    bytes_per_site = Sampler.bytes_per_site + 8  # the gradient of log p̃

    def _validate(self):
        if not self.target.differentiable:
            raise ValueError(f"gwg needs a differentiable target; {self.target.registry_name!r} has no gradient")

    def _prepare(self):
        self.log_p, self._grad = self.target.value_and_grad(self.states)

    def _taylor_log_proposal(self, x, grad):
        return log_softmax(self.log_g((1.0 - 2.0 * x) * grad))

    def _log_proposal(self, x):
        return self._taylor_log_proposal(x, self.target.grad_log_prob(x))

    def _step(self):
        n = self.states.shape[0]
        rows = np.arange(n)
        log_q = self._taylor_log_proposal(self.states, self._grad)
        idx = sample_categorical(log_q, self.rng)
        proposals = flip(self.states, idx)
        proposed_log_prob, proposed_grad = self.target.value_and_grad(proposals)
        log_q_back = self._taylor_log_proposal(proposals, proposed_grad)[rows, idx]
        log_ratio = proposed_log_prob - self.log_p
        accepted = metropolis_accept(flip_log_acceptance(log_ratio, log_q[rows, idx], log_q_back), self.rng)
        old_bits = self.states[rows, idx]
        previous_log_p = self.log_p.copy()
        self._apply_flips(idx, accepted, log_ratio)
        self._grad[accepted] = proposed_grad[accepted]
        return self._single_flip_record(idx, old_bits, accepted, previous_log_p + log_ratio)
