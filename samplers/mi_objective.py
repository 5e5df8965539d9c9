"""The mutual-information objective of LSB and the learner that minimises it.

LSB learns g_θ by minimising the mutual information between consecutive
states, I_θ = KL{p(x)T_θ(x'|x) ‖ p(x)p(x')} (LSB paper, Eq. 3), through the
surrogate L_θ of Theorem 3.3, case (b) (Eq. 5):

    L_θ = E_{x~Q₁, x'~Q₂} [ p̃(x) Q_θ(x'|x) / (Q₁(x) Q₂(x')) · A_θ(x',x) · log(A_θ(x',x) Q_θ(x'|x) / p̃(x')) ]
        + E_{x~Q₁} [ M(x)/Q₁(x) · (η M(x) − p̃(x)(log η + 1)) ],
    M(x) = 1 − A_θ(x*,x) Q_θ(x*|x),   x* uniform over the d single-flip neighbours,

with Q₁ = π·Uniform + (1−π)·δ(x − x̂) (x̂ the chain's last accepted state,
π = 1e-8) and Q₂ = Q_θ₀(·|x), the proposal at the parameters θ₀ of the
previous step, detached (Algorithm 1).

The estimator implemented (``mutual_information_bound``), on a batch of N
chains, one x, one x' ~ Q_θ₀(·|x) (the move the chain is about to try) and one
x* per chain:

    L̂ = (1/N) Σ_i [ r_i A_i (log A_i + log Q_θ(x'_i|x_i) − log t_i)
                    + M_i (η M_i − log η − 1) ],
    r_i = Q_θ(x'_i|x_i) / Q_θ₀(x'_i|x_i),   t_i = p̃(x'_i)/p̃(x_i),

where A_i = min{1, t_i Q_θ(x_i|x'_i)/Q_θ(x'_i|x_i)} and Q_θ(·|x) = g_θ(t_j)/Σ_k g_θ(t_k)
are differentiated through both normalisers, Z_θ(x) and Z_θ(x'). r_i equals 1
in value; its gradient is the score-function term ∇ log Q_θ.

Numerical stability: p̃ is measured relative to each chain's own state. The
literal weights p̃(x_i)/Q₁(x_i) span hundreds of orders of magnitude across
chains (log p̃ of a 30×30 segmentation changes by hundreds between chains),
so any global rescaling — e.g. exp(log p̃ − max over the batch) — hands the
whole gradient to one chain. Instead each chain's term is divided by p̃(x_i):

* the chains stand for draws from p, so the self-normalised Monte Carlo
  weight of each is 1/N (this is what Q₁ ≈ δ(x − x̂) approximates when the
  chains are near stationarity);
* inside the logarithm p̃(x') becomes the flip ratio t_i, which is always
  finite and is what the sampler already computed;
* η becomes η(x) = η·p̃(x), a per-state choice — the inequality
  log y ≤ ηy − log η − 1 behind case (b) holds for any positive η per state,
  so L̂ is still an upper-bound estimator.

What this changes: the case-(b) bound is not invariant to the arbitrary
normalising constant of p̃. Writing L per state as F_rel(x) + log p̃(x)·c(x),
the coefficient c(x) = −(Σ_x' Q A + M(x)) is exactly −1 in case (a) (the
transition probabilities sum to one) but depends on θ in case (b), so with
raw p̃ adding a constant to an energy would change what is learned (a large
log p̃ would push the acceptance rate up, a negative one down). Measuring p̃
relative to the current state sets log p̃(x_i) = 0 and removes that term: the
estimator is invariant to the normalisation of p̃, as the mutual information is.

With probability π a chain's x is drawn uniformly instead (Q₁'s uniform part);
the chain itself stays put for that step (a mixture with the identity kernel
leaves p invariant) and its learning term is computed at the uniform state.

Gradients come from torch autograd; the only custom piece is ``_LogPartition``:
log Z_θ(x) = log Σ_j g_θ(t_j) with log g_θ tabulated on knots
(``balancing.BalancingTable``) is linear in the knot values inside the
logsumexp, so its backward pass is a softmax-weighted histogram over the knots
(numpy ``bincount``) instead of d network evaluations per chain.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from .balancing import HALF_KNOTS, KNOTS, BalancingTable, KnotPositions, LearnedBalancing
from .base import sample_weighted
from .history import BoundedHistory


class FlipProposal:
    """Q_θ₀(x^(j)|x) for a batch: log g at every flip ratio, log Z and the probabilities.

    With ``parent`` and ``sites`` (``(n, k)``), the proposal at states whose
    flip ratios differ from the parent's only at ``sites`` (1 + deg after a
    flip on a sparse model) recomputes those entries alone.
    """

    def __init__(self, table: BalancingTable, log_ratios: np.ndarray, *, parent: "FlipProposal | None" = None,
                 sites: np.ndarray | None = None):
        if parent is None or sites is None:
            self.positions = KnotPositions(log_ratios)
            log_g = table.at(self.positions)
        else:
            rows = np.arange(sites.shape[0])[:, None]
            patch = KnotPositions(log_ratios[rows, sites])
            self.positions = parent.positions.copy()
            self.positions.assign((rows, sites), patch)
            log_g = parent.log_g.copy()
            log_g[rows, sites] = table.at(patch)
        self.log_g = log_g
        shift = log_g.max(axis=1, keepdims=True)
        unnormalised = np.exp(log_g - shift)
        total = unnormalised.sum(axis=1, keepdims=True)
        self.probs = unnormalised / total
        self.log_z = (shift + np.log(total))[:, 0]

    def sample(self, rng: np.random.Generator) -> np.ndarray:
        return sample_weighted(self.probs, rng)

    def log_q_at(self, idx: np.ndarray) -> np.ndarray:
        rows = np.arange(idx.size)
        return self.log_g[rows, idx] - self.log_z

    def knot_histogram(self, row_weights: np.ndarray) -> np.ndarray:
        """Σ_i row_weights_i · ∂ log Z(x_i)/∂G, a vector over the knots."""
        weights = (row_weights[:, None] * self.probs).ravel()
        k, w = self.positions.segment.ravel(), self.positions.weight.ravel()
        upper = weights * w
        return (np.bincount(k, weights - upper, minlength=KNOTS.size)
                + np.bincount(k + 1, upper, minlength=KNOTS.size))


class _LogPartitions(torch.autograd.Function):
    """log Z_θ(x) = log Σ_j g_θ(t_j) for each proposal's batch, ``(m, N)``, differentiable in the knots G."""

    @staticmethod
    def forward(ctx, knot_values, proposals: tuple[FlipProposal, ...]):
        ctx.proposals = proposals
        return torch.as_tensor(np.stack([proposal.log_z for proposal in proposals]))

    @staticmethod
    def backward(ctx, grad_output):
        grads = grad_output.numpy()
        histogram = sum(proposal.knot_histogram(g) for proposal, g in zip(ctx.proposals, grads))
        return torch.as_tensor(histogram), None


def _selected_log_g(knot_values: torch.Tensor, picks: list[tuple[FlipProposal, np.ndarray]]) -> torch.Tensor:
    """log g_θ(t_idx) for each (proposal, idx) pick, ``(m, N)``, differentiable in the knots."""
    rows = np.arange(picks[0][1].size)
    segment, weight, excess = (np.stack([getattr(proposal.positions, name)[rows, idx] for proposal, idx in picks])
                               for name in ("segment", "weight", "excess"))
    k, w = torch.as_tensor(segment), torch.as_tensor(weight)
    return torch.lerp(knot_values[k], knot_values[k + 1], w) + torch.as_tensor(excess)


@dataclass(frozen=True)
class LearningBatch:
    """One learning sample per chain: x, x' = x^(j) ~ Q_θ₀(·|x), x* = x^(k) with k uniform."""

    at_state: FlipProposal
    at_proposal: FlipProposal
    at_probe: FlipProposal
    proposed: np.ndarray
    probe: np.ndarray
    log_t_proposed: np.ndarray
    log_t_probe: np.ndarray


def mutual_information_bound(knot_values: torch.Tensor, log_eta: torch.Tensor, batch: LearningBatch) -> torch.Tensor:
    """L̂, the case-(b) estimate of Eq. 5 described in the module docstring."""
    log_z_state, log_z_proposal, log_z_probe = _LogPartitions.apply(
        knot_values, (batch.at_state, batch.at_proposal, batch.at_probe))
    forward, reverse, probe_forward, probe_reverse = _selected_log_g(knot_values, [
        (batch.at_state, batch.proposed), (batch.at_proposal, batch.proposed),
        (batch.at_state, batch.probe), (batch.at_probe, batch.probe)])
    log_t, log_t_probe = torch.as_tensor(batch.log_t_proposed), torch.as_tensor(batch.log_t_probe)

    log_q_forward = forward - log_z_state
    log_a = torch.clamp(log_t + reverse - log_z_proposal - log_q_forward, max=0.0)
    log_r = log_q_forward - torch.as_tensor(batch.at_state.log_q_at(batch.proposed))
    transition = torch.exp(log_r + log_a) * (log_a + log_q_forward - log_t)

    log_q_probe = probe_forward - log_z_state
    log_a_probe = torch.clamp(log_t_probe + probe_reverse - log_z_probe - log_q_probe, max=0.0)
    rejection = -torch.expm1(log_a_probe + log_q_probe)
    stay = rejection * (torch.exp(log_eta) * rejection - log_eta - 1.0)
    return (transition + stay).mean()


class BalancingLearner:
    """Holds g_θ and η, takes one optimiser step on L̂ per ``update`` and re-tabulates g_θ."""

    def __init__(self, function: LearnedBalancing, optimizer: str = "sgd", learning_rate: float = 1e-2,
                 momentum: float = 0.9):
        self.function = function
        self.log_eta = torch.zeros((), dtype=torch.float64, requires_grad=True)
        parameters = [*function.parameters(), self.log_eta]
        if optimizer == "sgd":
            self.optimizer = torch.optim.SGD(parameters, lr=learning_rate, momentum=momentum)
        elif optimizer == "adam":
            self.optimizer = torch.optim.Adam(parameters, lr=learning_rate)
        else:
            raise ValueError(f"optimizer must be 'sgd' or 'adam'; got {optimizer!r}")
        self.refresh()
        self.updates = 0
        self.skipped = 0
        self.history = BoundedHistory(["loss", "eta", *function.describe()])

    @staticmethod
    def estimated_bytes(function: LearnedBalancing) -> int:
        """Bytes a learner of ``function`` holds (float64 throughout).

        Its history (``BoundedHistory``, allocated in full), the table (knot
        values and slopes) and the knot values it keeps, the autograd graph of
        those (``saved_floats_per_knot`` per knot u ≥ 0), and θ and η with
        their gradients and up to two optimiser moments (Adam; SGD keeps one).
        """
        n_theta = sum(parameter.numel() for parameter in function.parameters()) + 1
        return (BoundedHistory.estimated_bytes(2 + len(function.describe())) + 8 * 3 * KNOTS.size
                + 8 * HALF_KNOTS.size * function.saved_floats_per_knot() + 8 * 4 * n_theta)

    @property
    def eta(self) -> float:
        return float(self.log_eta.detach().exp())

    def refresh(self) -> None:
        """Evaluate g_θ at the knots (kept for the next loss) and re-tabulate it."""
        self._knot_values = self.function.knot_values()
        self.table = BalancingTable(self._knot_values.detach().numpy())

    def update(self, batch: LearningBatch, step: int) -> float:
        """One gradient step on L̂ (θ and η together); returns L̂ at the parameters before the step.

        A step that would make L̂ or g_θ non-finite is undone (and counted in
        ``skipped``), with the optimiser's momentum cleared: the chain keeps
        its last valid g rather than stopping.
        """
        self.optimizer.zero_grad()
        loss = mutual_information_bound(self._knot_values, self.log_eta, batch)
        value = loss.item()
        if np.isfinite(value):
            saved = [p.detach().clone() for group in self.optimizer.param_groups for p in group["params"]]
            loss.backward()
            self.optimizer.step()
            try:
                self.refresh()
            except ValueError:
                self._restore(saved)
        else:
            self.skipped += 1
        self.updates += 1
        self.history.append(step, [value, self.eta, *self.function.describe().values()])
        return value

    def _restore(self, saved: list[torch.Tensor]) -> None:
        with torch.no_grad():
            parameters = [p for group in self.optimizer.param_groups for p in group["params"]]
            for parameter, value in zip(parameters, saved):
                parameter.copy_(value)
        self.optimizer.state.clear()
        self.refresh()
        self.skipped += 1
