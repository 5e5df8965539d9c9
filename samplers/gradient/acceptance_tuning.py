"""Tuning one kernel parameter toward a target acceptance rate during a burn-in, then freezing it.

At step t of the burn-in, with ā_t the mean Metropolis–Hastings acceptance
probability over the chains and a* the target, the tuned value v takes the
Robbins–Monro step

    v ← v + (ā_t − a*) / √(t + 1)      (on log v for a scale: α and h),

kept within the parameter's bounds, so it settles where the acceptance rate is
a*. DMALA's step size α, DLMC's time h and PAS's path length L are tuned this
way; the DISCS benchmark (Goshvadi et al., NeurIPS 2023 Datasets & Benchmarks)
tunes all three toward a* = 0.574. During the burn-in the chains interact
through ā_t and the kernel changes with t, so the chain is adaptive MCMC
(``samplers.common.adaptive``); at the freeze the kernel takes the tuned
value, fixed, and is exact from then on (``frozen_params()`` names it).
``burn_in=0`` never tunes: the requested value is the kernel from step 0.

A target rate need not be reachable: where E_π[α] exceeds a* for every value
in the range (DLMC's h on some frustrated models), ā_t never crosses a* and v
drifts toward a bound for as long as the burn-in lasts.
``acceptance_target_reached()`` says whether the recent acceptance, the
moving average ā = ā + (ā_t − ā)/``SMOOTHING`` over the tuning steps
(``tuning_acceptance``), ended within ``REACHED_WITHIN`` of a* (None before any
tuning step), so that a caller can say the frozen value is not the target's.
"""

from __future__ import annotations

import math

import param

from samplers.common.adaptive import Adaptive


#: Steps the moving average of the tuning's acceptance (``tuning_acceptance``) mostly remembers.
SMOOTHING = 10
#: The target counts as reached when that average ends within this of it.
REACHED_WITHIN = 0.05


class AcceptanceTuned(Adaptive, param.Parameterized):
    """Mixin: the host names its tuned parameter (``tuned_parameter``) and whether it is a scale (``tuned_on_log``)."""

    burn_in = param.Integer(500, bounds=(0, None), doc="Steps during which the tuned parameter adapts toward "
                                                       "target_acceptance; then it is frozen and the chain is exact.")
    target_acceptance = param.Number(0.574, bounds=(0.01, 0.99), doc="Acceptance rate the burn-in tunes toward.")

    #: Name of the parameter tuned (its requested value is the start of the tuning).
    tuned_parameter = ""
    #: True: tune log v (a positive scale); False: tune v itself, kept within ``_tuned_bounds``.
    tuned_on_log = True

    def reset(self, init=None) -> None:
        """The host's reset, then the tuning starts again from the requested value."""
        super().reset(init)
        self.tuned_value = float(getattr(self, self.tuned_parameter))
        self.tuning_acceptance = math.nan
        self._start_adaptation(self.burn_in > 0)

    def acceptance_target_reached(self) -> bool | None:
        """Whether the tuning's recent acceptance (``tuning_acceptance``) ended within ``REACHED_WITHIN`` of
        ``target_acceptance`` (None before any tuning step). False: the tuned value is where a drift stopped."""
        if math.isnan(self.tuning_acceptance):
            return None
        return abs(self.tuning_acceptance - self.target_acceptance) <= REACHED_WITHIN

    def _tuned_bounds(self) -> tuple[float, float]:
        """Range the tuned value is kept in: the parameter's bounds (both must be finite)."""
        return self.param[self.tuned_parameter].bounds

    def _tune(self, mean_acceptance: float) -> None:
        """One Robbins–Monro step of the tuned value toward ``target_acceptance`` (during the burn-in only)."""
        recent = self.tuning_acceptance
        self.tuning_acceptance = (mean_acceptance if math.isnan(recent)
                                  else recent + (mean_acceptance - recent) / SMOOTHING)
        gain = (mean_acceptance - self.target_acceptance) / math.sqrt(self.n_steps + 1)
        low, high = self._tuned_bounds()
        value = self.tuned_value * math.exp(gain) if self.tuned_on_log else self.tuned_value + gain
        self.tuned_value = min(max(value, low), high)

    def _fix_kernel(self) -> None:
        """Nothing to rebuild: the kernel reads ``tuned_value``."""

    def _kernel_params(self) -> dict:
        return {self.tuned_parameter: self._frozen_value(), "burn_in": 0}

    def _frozen_value(self):
        """The tuned value as the parameter takes it."""
        return self.tuned_value
