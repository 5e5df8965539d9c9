"""One chain's last move: the proposal over the state's neighbours, the move drawn, the reverse, the acceptance.

``inspect_move(sampler, before, record, chain)`` reads a chain's last step
(``before``: its state before the step, ``record``: the step's ``StepRecord``)
and asks the sampler's kernel to describe it (``Sampler.describe_move``, each
family's in its own module, its kind named in ``facts.inspection``): the kernel
recomputes, from its own proposal functions, what a teacher wants to show:

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
import numpy as np

from samplers.base import Sampler, StepRecord

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
    """The last move of ``chain`` (started from ``before``, recorded in ``record``), as its kernel describes it
    (``Sampler.describe_move``); a kernel that says nothing more gives the sites it changed and the outcome."""
    x = np.asarray(before, dtype=np.uint8)
    proposal = record.proposed[chain]
    sites = np.flatnonzero(proposal != x)
    log_p = sampler.target.log_prob(np.stack([x, proposal]))
    common = dict(step=record.step, before=x, proposed_sites=sites, accepted=bool(record.accepted[chain]),
                  log_target_ratio=float(log_p[1] - log_p[0]), log_ratio=_exact_ratios(sampler, x))
    return sampler.describe_move(x, proposal, record, chain, common) or ProposalInspection(kind="other", **common)
