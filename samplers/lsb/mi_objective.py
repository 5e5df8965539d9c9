"""The estimator of LSB's mutual-information bound, and the learner that minimises it.

The objective is the case-(b) bound L_θ of Theorem 3.3 (LSB paper, Eq. 5) on
the mutual information I_θ (Eq. 3), with Q₁, Q₂, M(x) and x* as stated in
``samplers.lsb``. On a batch of N chains, with one x, one x' ~ Q_θ₀(·|x) (the
move the chain is about to try) and one x* per chain, the estimator
(``bound_terms`` per chain) is

    L̂ = (1/N) Σ_i [ r_i A_i (log A_i + log Q_θ(x'_i|x_i) − log t_i)
                    + M_i (η M_i − log η − 1) ],
    r_i = Q_θ(x'_i|x_i) / Q_θ₀(x'_i|x_i),   t_i = p̃(x'_i)/p̃(x_i),

where A_i = min{1, t_i Q_θ(x_i|x'_i)/Q_θ(x'_i|x_i)}, M_i = 1 − A_θ(x*_i,x_i)Q_θ(x*_i|x_i)
and Q_θ(·|x) = g_θ(t_j)/Σ_k g_θ(t_k) are differentiated through both
normalisers, Z_θ(x) and Z_θ(x'). r_i equals 1 in value; its gradient is the
score-function term ∇ log Q_θ.

p̃ relative to each chain's state. The literal weights p̃(x_i)/Q₁(x_i) span
hundreds of orders of magnitude across chains (log p̃ of a 30×30 segmentation
differs by hundreds between chains), so any global rescaling, e.g.
exp(log p̃ − max over the batch), hands the whole gradient to one chain.
Instead each chain's term is divided by p̃(x_i):

* the chains stand for draws from p, so the self-normalised Monte Carlo
  weight of each is 1/N (what Q₁ ≈ δ(x − x̂) approximates when the chains are
  near stationarity);
* inside the logarithm p̃(x') becomes the flip ratio t_i, always finite and
  already computed by the sampler;
* η becomes η(x) = η·p̃(x), a per-state choice: the inequality
  log y ≤ ηy − log η − 1 behind case (b) holds for any positive η per state,
  so L̂ still estimates an upper bound.

This also matters beyond numerics: the case-(b) bound is not invariant to the
arbitrary normalising constant of p̃. Writing L per state as
F_rel(x) + log p̃(x)·c(x), the coefficient c(x) = −(Σ_x' Q A + M(x)) is exactly
−1 in case (a) (the transition probabilities sum to one) but depends on θ in
case (b), so with raw p̃ adding a constant to an energy would change what is
learned (a large log p̃ would push the acceptance rate up, a negative one
down). Measuring p̃ relative to the current state sets log p̃(x_i) = 0 and
removes that term: the estimator is invariant to the normalisation of p̃, as
the mutual information is.

With probability π a chain's x is drawn uniformly instead (Q₁'s uniform part);
the chain itself stays put for that step (a mixture with the identity kernel
leaves p invariant) and its learning term is computed at the uniform state.

Gradients. Each chain's term depends on g_θ only through seven numbers: log g_θ
at the four picked ratios (t_j(x), t_j(x'), t_k(x), t_k(x*)) and the three
normalisers log Z_θ(x), log Z_θ(x'), log Z_θ(x*). ``bound_terms`` gives the term
and its partial derivatives in those numbers (and in log η) in closed form;
the compiled kernels of ``samplers.lsb.learning`` chain them into ∂L̂/∂v, v(θ)
being the vector a compiled balancing function is made of (knot values, or
LSB1's weights, ``networks.LearnedBalancing.compiled_parameters``), and torch
back-propagates ∂L̂/∂v through v(θ) alone. The tests check the result against
plain autograd of Eq. 5.

Cost: no tensor work grows with d or with the number of chains.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
from numba import njit

from samplers.common.history import BoundedHistory
from samplers.lsb.balancing import KNOTS, LearnedSize
from samplers.lsb.optimizers import OPTIMIZERS, Adam, Sgd

if TYPE_CHECKING:
    from samplers.lsb.networks import LearnedBalancing

#: The order of ``bound_terms``'s partial derivatives.
PARTIALS = ("forward", "reverse", "log_z_state", "log_z_proposal", "probe_forward", "probe_reverse", "log_z_probe",
            "log_eta")


@njit(cache=True)
def bound_terms(forward, reverse, log_z_state, log_z_proposal, probe_forward, probe_reverse, log_z_probe, log_t,
                log_t_probe, log_eta, partials):
    """One chain's term of L̂ (module docstring) and, in ``partials`` (``PARTIALS`` order), its derivatives.

    forward = log g(t_j(x)), reverse = log g(t_j(x')), probe_forward = log g(t_k(x)),
    probe_reverse = log g(t_k(x*)); log Q(x'|x) = forward − log Z(x) and so on. With
    a = log t + log Q(x|x') − log Q(x'|x), log A = min(0, a) and r = 1 in value:

        T = A·(log A + log Q(x'|x) − log t),   dT = A·(log A + log Q(x'|x) − log t + 1)·(d log Q(x'|x) + d log A),

    and with R = 1 − A*·Q(x*|x), S = R·(ηR − log η − 1), dS = (2ηR − log η − 1)·dR.
    A clamp passes its gradient where a ≤ 0 (as torch's ``clamp`` does).
    """
    log_q_forward = forward - log_z_state
    a = log_t + reverse - log_z_proposal - log_q_forward
    log_a = min(0.0, a)
    open_a = 1.0 if a <= 0.0 else 0.0
    accept = np.exp(log_a)
    transition = accept * (log_a + log_q_forward - log_t)
    c_t = accept * (log_a + log_q_forward - log_t + 1.0)

    log_q_probe = probe_forward - log_z_state
    b = log_t_probe + probe_reverse - log_z_probe - log_q_probe
    log_a_probe = min(0.0, b)
    open_b = 1.0 if b <= 0.0 else 0.0
    rejection = -np.expm1(log_a_probe + log_q_probe)
    eta = np.exp(log_eta)
    stay = rejection * (eta * rejection - log_eta - 1.0)
    c_s = -(2.0 * eta * rejection - log_eta - 1.0) * np.exp(log_a_probe + log_q_probe)

    partials[0] = c_t * (1.0 - open_a)
    partials[1] = c_t * open_a
    partials[2] = -c_t * (1.0 - open_a) - c_s * (1.0 - open_b)
    partials[3] = -c_t * open_a
    partials[4] = c_s * (1.0 - open_b)
    partials[5] = c_s * open_b
    partials[6] = -c_s * open_b
    partials[7] = rejection * (eta * rejection - 1.0)
    return transition + stay


class BalancingLearner:
    """Holds g_θ and η, takes one optimiser step per ``update`` and recompiles g_θ (``kernel``).

    The steps are ``samplers.lsb.optimizers``' (torch.optim's updates, on numpy views
    of θ and log η): torch only back-propagates ∂L̂/∂v into θ, and only where
    v(θ) is a network (LSB1's gradient is in closed form).
    """

    def __init__(self, function: LearnedBalancing, optimizer: str = "sgd", learning_rate: float = 1e-2,
                 momentum: float = 0.9):
        if optimizer not in OPTIMIZERS:
            raise ValueError(f"optimizer must be 'sgd' or 'adam'; got {optimizer!r}")
        self.function = function
        self.log_eta = np.zeros(())
        self.optimizer = Sgd(learning_rate, momentum) if optimizer == "sgd" else Adam(learning_rate)
        self.refresh()
        self.updates = 0
        self.skipped = 0
        self.history = BoundedHistory(["loss", "eta", *function.describe()])

    @staticmethod
    def estimated_bytes(size: LearnedSize) -> int:
        """Bytes a learner of a g_θ of ``size`` holds (float64 throughout; ``balancing.learned_size``).

        Its history (``BoundedHistory``, allocated in full), the compiled
        function (at most values and slopes of every knot) and the vector v(θ)
        it keeps with that vector's autograd graph (``graph_floats``), and θ and
        η with their gradients and up to two optimiser moments (Adam; SGD keeps one).
        """
        n_theta = size.parameters + 1
        return (BoundedHistory.estimated_bytes(2 + size.traced) + 8 * 3 * KNOTS.size
                + 8 * size.graph_floats + 8 * 4 * n_theta)

    @property
    def eta(self) -> float:
        return math.exp(self.log_eta.item())

    def refresh(self) -> None:
        """Evaluate v(θ) (kept, with its graph, for the next gradient) and recompile g_θ from it."""
        self._values = self.function.compiled_parameters()
        self.kernel = self.function.compiled_from(self._values.detach().numpy())

    def update(self, value: float, grad_values: np.ndarray, grad_log_eta: float, step: int) -> float:
        """One optimiser step given L̂ (``value``) and its gradient in v and log η; returns ``value``.

        A step with a non-finite L̂ or gradient is skipped, and one that would
        make g_θ non-finite is undone with the optimiser's momentum cleared
        (both counted in ``skipped``): the chain keeps its last valid g rather
        than stopping.
        """
        if math.isfinite(value) and math.isfinite(grad_log_eta) and np.isfinite(grad_values).all():
            parameters = self._parameters()
            saved = [parameter.copy() for parameter in parameters]
            self.optimizer.step(parameters,
                                [*self.function.parameter_gradients(self._values, grad_values), grad_log_eta])
            try:
                self.refresh()
            except ValueError:
                self._restore(saved)
        else:
            self.skipped += 1
        self.updates += 1
        if self.history.records(step):
            self.history.append(step, [value, self.eta, *self.function.describe(self.kernel.values).values()])
        return value

    def _parameters(self) -> list[np.ndarray]:
        """θ (numpy views sharing the torch parameters' memory, taken afresh) and log η."""
        return [*(parameter.detach().numpy() for parameter in self.function.parameters()), self.log_eta]

    def _restore(self, saved: list[np.ndarray]) -> None:
        for parameter, value in zip(self._parameters(), saved):
            parameter[...] = value
        self.optimizer.reset()
        self.refresh()
        self.skipped += 1
