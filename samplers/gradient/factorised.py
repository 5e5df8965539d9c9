"""Factorised multi-flip proposals from local flip rates: DMALA and DLMC.

Both propose y from x by flipping every coordinate i independently with
probability p_i(x),

    q(y | x) = Π_i p_i(x)^[y_i ≠ x_i] · (1 − p_i(x))^[y_i = x_i],

and accept with the Metropolis–Hastings probability

    α = min{1, p̃(y) q(x | y) / (p̃(x) q(y | x))}.

p_i depends on x through the flip log-ratio u_i = log t_i(x) =
log p̃(x^(i)) − log p̃(x), exact (``ratios="exact"``) or its first-order
Taylor estimate u_i ≈ (1 − 2x_i) ∂log p̃(x)/∂x_i (``ratios="gradient"``),
and on a balancing function g, g(t) = t·g(1/t) (``balancing``).

DMALA (Zhang, Liu & Liu, "A Langevin-like sampler for discrete
distributions", ICML 2022) discretises a Langevin step,
q(y | x) ∝ exp(½ ∇log p̃(x)ᵀ(y − x) − ‖y − x‖²/(2α)), which factorises into
p_i = σ(u_i/2 − 1/(2α)) with u_i the Taylor estimate and σ the logistic
function. Written here, as in DISCS, as p_i = σ(log g(t_i) − 1/(2α)):
g(t) = √t is DMALA.

DLMC (Sun, Dai, Dai, Zhou & Schuurmans, "Discrete Langevin samplers via
Wasserstein gradient flow", AISTATS 2023) runs each coordinate, for a time h,
as the two-state continuous-time chain that jumps x_i → 1 − x_i at rate
g(t_i) and back at rate g(1/t_i); it ends flipped with probability

    p_i = ν_i (1 − exp(−h (g(t_i) + g(1/t_i)))),   ν_i = g(t_i) / (g(t_i) + g(1/t_i)) = t_i / (1 + t_i).

With exact ratios this is DLMC, with the Taylor estimate DLMCf.

The step size (α, or h) is tuned toward an acceptance rate during
``burn_in`` steps and then frozen (``samplers.gradient.acceptance_tuning``);
with ``burn_in=0`` the requested value is used throughout.
``transition_row`` enumerates all 2^d flip patterns with the same compiled
probabilities and acceptance.

Cost: one value-and-gradient evaluation per state with ``ratios="gradient"``,
1 + d evaluations per state with ``ratios="exact"``. A step evaluates the
proposal once (its value and its ratios, which q(x | y) needs); the ratios of
the current state are kept. On a sparse pairwise model (a target with
``flip_tables``) the two ratios are equal, and a step is one compiled call
that keeps them incrementally (``samplers.gradient.pairwise_moves``: O(d)
additions and O(flips·deg) updates a chain); the evaluations counted stay the
ones above, the algorithm's, whichever kernel computes them.
"""

from __future__ import annotations

import numpy as np
import param
from numba import njit

from samplers.balanced.locally_balanced import flip_log_acceptance
from samplers.base import (ExactCase, Move, Sampler, SamplerFacts, acceptance_probability, metropolis_accept,
                          taylor_flip_log_ratios)
from samplers.diagnostics.inspection import ProposalInspection
from samplers.gradient.acceptance_tuning import AcceptanceTuned
from samplers.gradient.flip_probabilities import JUMP_CHAIN_SCHEME, LANGEVIN_SCHEME, coordinate_flip_logs
from samplers.gradient.pairwise_moves import factorised_pairwise_rows, factorised_pairwise_steps, fill_flip_caches
from samplers.lsb.balancing import BALANCING, CODES, log_balancing
from targets.base import all_states

@njit(cache=True)
def draw_flips(log_t, uniforms, scheme, code, step):
    """Flip pattern (bool ``(n, d)``): coordinate i of row c flips iff uniforms[c, i] < p_i."""
    flips = np.empty(log_t.shape, dtype=np.bool_)
    for c in range(log_t.shape[0]):
        for i in range(log_t.shape[1]):
            flips[c, i] = np.log(uniforms[c, i]) < coordinate_flip_logs(scheme, code, log_t[c, i], step)[0]
    return flips


@njit(cache=True)
def flips_log_probability(log_t, flips, scheme, code, step):
    """log q of each row's flip pattern: Σ_i log p_i where it flips, log(1 − p_i) where it does not."""
    out = np.zeros(log_t.shape[0])
    for c in range(log_t.shape[0]):
        for i in range(log_t.shape[1]):
            log_flip, log_stay = coordinate_flip_logs(scheme, code, log_t[c, i], step)
            out[c] += log_flip if flips[c, i] else log_stay
    return out


class LocalRatios(Sampler):
    """Samplers whose proposal reads every flip log-ratio of a state, exact or from the gradient (``ratios``)."""

    ratios = param.Selector(default="gradient", objects=["gradient", "exact"],
                            doc="Flip log-ratios from the gradient (Taylor estimate, 1 evaluation a state) or "
                                "exact (1 + d evaluations a state, cheap on sparse pairwise models).")
    balancing = param.Selector(default="sqrt", objects=list(BALANCING), doc="Balancing function g of the rates.")

    def _validate(self):
        if self.ratios == "gradient":
            self._require_gradient()

    def log_g(self, log_t: np.ndarray) -> np.ndarray:
        """log g(t) of the balancing function, elementwise."""
        return log_balancing(self.balancing)(log_t)

    def _value_and_log_ratios(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """log p̃(x) and the ``(n, d)`` flip log-ratios the proposal uses (counted evaluations)."""
        if self.ratios == "exact":
            log_p = self.target.log_prob(x)
            return log_p, self.target.delta_log_prob(x, log_p)
        log_p, grad = self.target.value_and_grad(x)
        return log_p, taylor_flip_log_ratios(x, grad)

    def _pairwise(self) -> bool:
        """Whether steps run the compiled pairwise kernels (``samplers.gradient.pairwise_moves``): the target has
        ``flip_tables``."""
        return self.target.flip_tables is not None

    def _evaluations_per_state(self) -> int:
        """What ``_value_and_log_ratios`` counts for one state: 1 (value and gradient) or 1 + d (exact)."""
        return 1 if self.ratios == "gradient" else 1 + self.target.dim

    def _prepare(self):
        self.log_p, self._log_t = self._value_and_log_ratios(self.states)


class TunedLocalProposal(AcceptanceTuned, LocalRatios):
    """A proposal from local flip ratios with one parameter tuned in the burn-in (DMALA, DLMC, PAS)."""

    def _tune_on(self, log_alpha: np.ndarray, tuning: bool) -> None:
        """While ``tuning``, one tuning step on the mean acceptance probability of the chains' proposals."""
        if tuning:
            self._tune(float(acceptance_probability(log_alpha).mean()))

    def _accept(self, proposals, proposed_log_prob, proposed_log_t, log_alpha, tuning: bool) -> np.ndarray:
        """Accept each chain's proposal with probability min(1, e^{log α}), tune on the mean of those
        probabilities while ``tuning``, move the accepted chains (states, log p̃, flip ratios); the accepted mask."""
        accepted = metropolis_accept(log_alpha, self.rng)
        self._tune_on(log_alpha, tuning)
        self.states[accepted] = proposals[accepted]
        self.log_p[accepted] = proposed_log_prob[accepted]
        self._log_t[accepted] = proposed_log_t[accepted]
        return accepted

    def _pairwise_outputs(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Arrays a compiled pairwise step fills per chain: accepted, log p̃ of the proposal, log α."""
        n = self.states.shape[0]
        return np.empty(n, dtype=bool), np.empty(n), np.empty(n)


class _FactorisedFlips(TunedLocalProposal):
    """Shared step of DMALA and DLMC; subclasses set ``scheme`` and the step-size parameter."""

    #: the flip log-ratios of the states; on a pairwise model p, log p, log(1 − p) of every site; the record's
    #: proposals
    bytes_per_site = Sampler.bytes_per_site + 8 + 24 + 1
    tuned_parameter = "step_size"
    scheme = LANGEVIN_SCHEME

    def _kernel(self) -> tuple[int, int, float]:
        """(scheme, balancing code, step size in force)."""
        return self.scheme, CODES[self.balancing], self.tuned_value

    def _prepare(self):
        super()._prepare()
        self._flip_caches = tuple(np.empty(self.states.shape) for _ in range(3)) if self._pairwise() else None
        self._cached_step = None

    def _caches_at(self, kernel) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(p, log p, log(1 − p)) of every site at ``kernel``'s step size, refilled when that changed."""
        if self._cached_step != kernel[2]:
            fill_flip_caches(self._log_t, *self._flip_caches, *kernel)
            self._cached_step = kernel[2]
        return self._flip_caches

    def _step(self):
        tuning = self._adapts_this_step()
        kernel = self._kernel()
        if self._pairwise():
            proposals, accepted, proposed_log_prob = self._pairwise_step(kernel, tuning)
        else:
            proposals, accepted, proposed_log_prob = self._generic_step(kernel, tuning)
        sites = np.broadcast_to(np.arange(self.target.dim), proposals.shape)
        return Move(accepted=accepted, proposed_sites=sites, proposed_values=proposals,
                    proposed_log_prob=proposed_log_prob)

    def _generic_step(self, kernel, tuning: bool):
        """Any target: draw the flips, evaluate the proposals and their ratios, accept (proposals, accepted,
        log p̃ of the proposals)."""
        flips = draw_flips(self._log_t, self.rng.random(self.states.shape), *kernel)
        proposals = self.states ^ flips.view(np.uint8)
        proposed_log_prob, proposed_log_t = self._value_and_log_ratios(proposals)
        log_alpha = flip_log_acceptance(proposed_log_prob - self.log_p,
                                        flips_log_probability(self._log_t, flips, *kernel),
                                        flips_log_probability(proposed_log_t, flips, *kernel))
        return proposals, self._accept(proposals, proposed_log_prob, proposed_log_t, log_alpha, tuning), \
            proposed_log_prob

    def _pairwise_step(self, kernel, tuning: bool):
        """A pairwise model: one compiled call (``factorised_pairwise_steps``), the algorithm's evaluations counted."""
        n = self.states.shape[0]
        nbr, w, _, beta = self.target.flip_tables
        proposals = np.empty_like(self.states)
        accepted, proposed_log_prob, log_alpha = self._pairwise_outputs()
        uniforms, log_u = self.rng.random(self.states.shape), np.log(self.rng.random(n))
        factorised_pairwise_steps(self.states, self.log_p, self._log_t, *self._caches_at(kernel), uniforms, log_u, nbr,
                                  w, beta, *kernel, proposals, accepted, proposed_log_prob, log_alpha)
        self.target.count_evaluations(n * self._evaluations_per_state())
        self._tune_on(log_alpha, tuning)
        return proposals, accepted, proposed_log_prob

    def transition_row(self, x):
        """Every flip pattern f (2^d of them) with q(x ⊕ f | x)·α at the step size in force, from the step's own
        kernel: ``factorised_pairwise_rows`` on a pairwise model, else ``flips_log_probability`` and the step's
        acceptance."""
        kernel = self._kernel()
        flips = all_states(x.size).astype(bool)
        proposals = x[None, :] ^ flips.view(np.uint8)
        log_p, log_t = self._value_and_log_ratios(x[None, :])
        if self._pairwise():
            nbr, w, _, beta = self.target.flip_tables
            caches = tuple(np.empty(log_t.shape) for _ in range(3))
            fill_flip_caches(log_t, *caches, *kernel)
            log_forward, log_alpha = factorised_pairwise_rows(x[None, :].copy(), log_p, log_t, *caches, flips, nbr, w,
                                                              beta, *kernel)
        else:
            proposed_log_prob, proposed_log_t = self._value_and_log_ratios(proposals)
            log_forward = flips_log_probability(np.repeat(log_t, len(flips), axis=0), flips, *kernel)
            log_alpha = flip_log_acceptance(proposed_log_prob - log_p[0], log_forward,
                                            flips_log_probability(proposed_log_t, flips, *kernel))
        return self._with_stay(x, proposals, np.exp(log_forward) * acceptance_probability(log_alpha))

    def describe_move(self, x, proposal, record, chain, common):
        """Independent flips: each bit's own flip probability from its ratio t_j, the product for the flips drawn
        from x and for the same flips back from y, and MH on their ratio."""
        _, log_t = self._value_and_log_ratios(x[None])
        _, log_t_reverse = self._value_and_log_ratios(proposal[None])
        kernel = self._kernel()
        flips = (proposal != x)[None]
        log_q = np.array([coordinate_flip_logs(kernel[0], kernel[1], u, kernel[2])[0] for u in log_t[0]])
        forward = float(flips_log_probability(log_t, flips, *kernel)[0])
        reverse = float(flips_log_probability(log_t_reverse, flips, *kernel)[0])
        log_alpha = flip_log_acceptance(common["log_target_ratio"], forward, reverse)
        return ProposalInspection(kind="independent flips", log_q=log_q, log_q_forward=forward,
                                  log_q_reverse=reverse, acceptance=float(min(1.0, np.exp(log_alpha))),
                                  estimated_log_ratio=log_t[0] if self.ratios == "gradient" else None, **common)


class DMALA(_FactorisedFlips):
    """Discrete Metropolis-adjusted Langevin (Zhang, Liu & Liu 2022): every bit flips with σ(log g(t_i) − 1/(2α))."""

    registry_name = "dmala"
    facts = SamplerFacts(
        example={"burn_in": 20},
        exact=(ExactCase({"burn_in": 0, "step_size": 0.5}),
               ExactCase({"burn_in": 0, "step_size": 3.0, "balancing": "barker", "ratios": "exact"}, "boltzmann", {})),
        warm_up=({"ratios": "exact", "burn_in": 1},), warm_up_transition_row=True, inspection="independent flips")
    scheme = LANGEVIN_SCHEME
    step_size = param.Number(0.2, bounds=(1e-3, 1e3), doc="Step size α (the start of the tuning if burn_in > 0); "
                                                          "larger α flips more bits.")


class DLMC(_FactorisedFlips):
    """Discrete Langevin Monte Carlo (Sun et al. 2023): every bit runs its two-state jump chain for a time h."""

    registry_name = "dlmc"
    facts = SamplerFacts(
        example={"burn_in": 20},
        exact=(ExactCase({"burn_in": 0, "step_size": 0.4}),
               ExactCase({"burn_in": 0, "step_size": 2.0, "ratios": "gradient"}, "boltzmann", {})),
        warm_up=({"burn_in": 0},), inspection="independent flips")
    scheme = JUMP_CHAIN_SCHEME
    ratios = param.Selector(default="exact", objects=["exact", "gradient"],
                            doc="exact flip ratios (DLMC) or their gradient estimate (DLMCf).")
    step_size = param.Number(0.5, bounds=(1e-3, 1e3), doc="Time h each coordinate's jump chain runs (the start of "
                                                          "the tuning if burn_in > 0).")
