"""One chain's last move: the proposal over the state's neighbours, the move drawn, the reverse, the acceptance.

``inspect_move(sampler, before, record, chain)`` reads a chain's last step
(``before``: its state before the step, ``record``: the step's ``StepRecord``)
and recomputes, from the sampler's own proposal functions, what a teacher
wants to show:

* single-flip proposals — Metropolis and Gibbs (uniform site, accepted with
  a(t)), locally balanced, GWG, LSB and FLSB (Q(x^(j) | x) = g(t_j)/Z, MH on
  Q(x | x^(j))/Q(x^(j) | x)): ``log_q`` is the distribution over the d flips;
* independent flips (DMALA, DLMC): ``log_q`` is each bit's own flip probability;
* a block (block Gibbs, Hamming ball): the block B, drawn uniformly among the
  C(d, k) blocks, and the probability of the values drawn for it given the rest
  (the Gibbs conditional, averaged over the Hamming ball's centre); always kept;
* a path (PAS): the ordered sites i₁ … i_L, ``log_q`` the first flip's
  distribution w_j/W, q(path | x) and the reverse path's q from y, the acceptance;
* a walk (intracluster moves): the 2k flips of both walks in order, log f of
  the forward and reverse paths (Eq. 3) and Eq. 6's acceptance;
* any other move (clusters, replicas): the sites it changed and the outcome
  only (``log_q`` is None).

``log_ratio`` holds the exact flip log-ratios log t_j(x) (d evaluations of a
black box, 1 + deg each on a sparse model; not counted as the sampler's);
``estimated_log_ratio`` the gradient's Taylor estimate (1 − 2x_j)∂_j log p̃ for
the proposals built on it. While LSB/FLSB learn, the g shown is the current one.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import comb, log

import numpy as np

from samplers.balanced.locally_balanced import GibbsWithGradients, _FlipProposalSampler, flip_log_acceptance
from samplers.base import Sampler, StepRecord, acceptance_probability, log_softmax, taylor_flip_log_ratios
from samplers.gradient.factorised import LocalRatios, flips_log_probability
from samplers.gradient.flip_probabilities import coordinate_flip_logs
from samplers.gradient.path_auxiliary import PathAuxiliary, path_log_probability
from samplers.intracluster.walks import Intracluster
from samplers.local.block_gibbs import BlockGibbs
from samplers.local.single_site import _SingleSiteFlip
from samplers.lsb.balancing import CODES, log_g_array

#: Largest dimension for which the exact flip ratios of a state are computed for the inspector.
MAX_INSPECTED_DIM = 65_536


@dataclass(frozen=True)
class ProposalInspection:
    """One chain's last move (see the module docstring)."""

    kind: str  # "single flip", "independent flips", "block", "path", "walk" or "other"
    step: int  # the step the move was (``StepRecord.step``)
    before: np.ndarray  # (d,) the state x the move started from
    proposed_sites: np.ndarray  # the sites the proposal changes
    accepted: bool
    log_target_ratio: float  # log p̃(y) − log p̃(x) of the proposal y
    log_q: np.ndarray | None = None  # (d,) see the module docstring
    log_q_forward: float = float("nan")  # log q(y | x) of the move drawn
    log_q_reverse: float = float("nan")  # log q(x | y)
    acceptance: float = float("nan")  # the probability the move was accepted with
    log_ratio: np.ndarray | None = None  # (d,) exact log t_j(x)
    estimated_log_ratio: np.ndarray | None = None  # (d,) gradient estimate, gradient proposals only
    path: np.ndarray | None = None  # the block's sites, or a path's or walk's sites in order
    log_block_choice: float = float("nan")  # log P(B) of a block


def _exact_ratios(sampler: Sampler, x: np.ndarray) -> np.ndarray | None:
    return sampler.target.delta_log_prob(x[None])[0] if x.size <= MAX_INSPECTED_DIM else None


def inspect_move(sampler: Sampler, before: np.ndarray, record: StepRecord, chain: int) -> ProposalInspection:
    """The last move of ``chain`` (started from ``before``, recorded in ``record``)."""
    x = np.asarray(before, dtype=np.uint8)
    proposal = record.proposed[chain]
    sites = np.flatnonzero(proposal != x)
    log_p = sampler.target.log_prob(np.stack([x, proposal]))
    common = dict(step=record.step, before=x, proposed_sites=sites, accepted=bool(record.accepted[chain]),
                  log_target_ratio=float(log_p[1] - log_p[0]), log_ratio=_exact_ratios(sampler, x))
    if isinstance(sampler, _FlipProposalSampler) and sites.size == 1:
        log_q = sampler._log_proposal(x[None])[0]
        log_q_reverse = float(sampler._log_proposal(proposal[None])[0][sites[0]])
        log_alpha = flip_log_acceptance(common["log_target_ratio"], log_q[sites[0]], log_q_reverse)
        estimated = (taylor_flip_log_ratios(x[None], sampler.target.grad_log_prob(x[None]))[0]
                     if isinstance(sampler, GibbsWithGradients) else None)
        return ProposalInspection(kind="single flip", log_q=log_q, log_q_forward=float(log_q[sites[0]]),
                                  log_q_reverse=log_q_reverse, acceptance=float(acceptance_probability(
                                      np.array([log_alpha]))[0]), estimated_log_ratio=estimated, **common)
    if isinstance(sampler, _SingleSiteFlip) and sites.size == 1:
        candidates = sampler._candidate_sites()
        log_q = np.full(x.size, -np.inf)
        log_q[candidates] = -np.log(candidates.size)
        acceptance = np.exp(log_g_array(np.array([common["log_target_ratio"]]), CODES[sampler.acceptance]))[0]
        return ProposalInspection(kind="single flip", log_q=log_q, log_q_forward=float(log_q[sites[0]]),
                                  log_q_reverse=float(log_q[sites[0]]), acceptance=float(acceptance), **common)
    if isinstance(sampler, LocalRatios) and hasattr(sampler, "scheme"):
        _, log_t = sampler._value_and_log_ratios(x[None])
        _, log_t_reverse = sampler._value_and_log_ratios(proposal[None])
        kernel = sampler._kernel()
        flips = (proposal != x)[None]
        log_q = np.array([coordinate_flip_logs(kernel[0], kernel[1], u, kernel[2])[0] for u in log_t[0]])
        forward = float(flips_log_probability(log_t, flips, *kernel)[0])
        reverse = float(flips_log_probability(log_t_reverse, flips, *kernel)[0])
        log_alpha = flip_log_acceptance(common["log_target_ratio"], forward, reverse)
        return ProposalInspection(kind="independent flips", log_q=log_q, log_q_forward=forward,
                                  log_q_reverse=reverse, acceptance=float(min(1.0, np.exp(log_alpha))),
                                  estimated_log_ratio=log_t[0] if sampler.ratios == "gradient" else None, **common)
    if isinstance(sampler, BlockGibbs):
        block = np.asarray(record.proposed_sites[chain])
        probability = sampler.block_move_probability(x, block, proposal[block])
        return ProposalInspection(kind="block", path=block, log_block_choice=-log(comb(x.size, block.size)),
                                  log_q_forward=log(probability) if probability > 0 else float("nan"),
                                  acceptance=1.0, **common)
    if isinstance(sampler, PathAuxiliary):
        return _path_inspection(sampler, x, proposal, record.proposed_sites[chain], common)
    walk = getattr(sampler, "last_walk", None)
    if isinstance(sampler, Intracluster) and walk is not None and record.step == sampler.n_steps:
        return ProposalInspection(kind="walk", path=walk.sites[chain, :walk.length[chain]],
                                  log_q_forward=float(walk.log_forward[chain]),
                                  log_q_reverse=float(walk.log_reverse[chain]),
                                  acceptance=float(acceptance_probability(walk.log_acceptance[chain:chain + 1])[0]),
                                  **common)
    return ProposalInspection(kind="other", **common)


def _path_inspection(sampler: PathAuxiliary, x: np.ndarray, proposal: np.ndarray, padded_path: np.ndarray,
                     common: dict) -> ProposalInspection:
    """A PAS move: its path (the padded path's distinct sites in order), the first flip's distribution, the path's
    probability from x and the reversed path's from y, and the acceptance."""
    _, first = np.unique(padded_path, return_index=True)
    path = np.asarray(padded_path)[np.sort(first)]
    log_t = sampler._value_and_log_ratios(x[None])[1]
    log_w = sampler.log_g(log_t)
    log_w_reverse = sampler.log_g(sampler._value_and_log_ratios(proposal[None])[1])
    length = np.array([path.size])
    forward = float(path_log_probability(log_w, path[None], length, False)[0])
    reverse = float(path_log_probability(log_w_reverse, path[None], length, True)[0])
    log_alpha = flip_log_acceptance(common["log_target_ratio"], forward, reverse)
    return ProposalInspection(kind="path", path=path, log_q=log_softmax(log_w)[0], log_q_forward=forward,
                              log_q_reverse=reverse, acceptance=float(acceptance_probability(np.array([log_alpha]))[0]),
                              estimated_log_ratio=log_t[0] if sampler.ratios == "gradient" else None, **common)
