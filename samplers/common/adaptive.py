"""The contract of samplers that adapt their kernel during a burn-in and then freeze it.

LSB and FLSB learn their balancing function g_θ, intracluster with
``adapt=True`` tunes its walk bias γ and walk length. While a sampler adapts,
the kernel K_t of step t depends on the chain's past: the chain is adaptive
MCMC, whose invariance is not guaranteed. When it freezes at step s, the
kernel becomes one fixed K (K_t = K for every t > s) that leaves the target
exactly invariant (π K = π). ``Adaptive`` states this once for all of them:

* ``adapting`` — whether the next step still adapts (K_t is not yet fixed);
* ``frozen_at`` — the step s after which the kernel is fixed (the value of
  ``n_steps`` when it froze), or None while adapting and for a configuration
  that never adapts;
* ``freeze()`` — stop adapting now: the next step is the first with the fixed
  kernel. Idempotent, and a no-op for a configuration that never adapts;
* ``frozen_params()`` — None while adapting; afterwards the sampler
  parameters that describe K, to be merged over the requested ones:
  ``make(name, target, **{**config()["params"], **frozen_params()}, init=states)``
  builds a sampler whose kernel is K from step 0 (same ``transition_row``). A
  configuration that never adapts gives ``{}``: its requested parameters
  already describe its kernel. So ``frozen_params() is None`` exactly when
  ``adapting``.

A sampler freezes by itself at the first step once ``n_steps ≥ burn_in``
(``frozen_at = burn_in``), unless ``_adaptation_steps`` says it adapts until
``freeze()`` is called; a burn-in of 0 is frozen at the reset (``frozen_at = 0``).

Freezing never changes a parameter: ``config()`` returns the requested
settings, the same before and after freezing, and replaying it with the same
seed repeats the run step for step — adaptation and freeze included. The
tuned values live in the sampler's state, where the frozen kernel reads them.
A reset starts the adaptation again from the requested settings.
"""

from __future__ import annotations


class Adaptive:
    """Mixin of the adaptive samplers (see the module docstring); the host sampler implements the hooks below."""

    frozen_at: int | None = None
    _adaptive = False

    @property
    def adapts(self) -> bool:
        """Whether this configuration adapts at all (before its freeze, or after it): a learned g, tuned walks."""
        return self._adaptive

    @property
    def adapting(self) -> bool:
        """Whether the next step still adapts the kernel (the chain is adaptive MCMC, not exact, meanwhile)."""
        return self._adaptive and self.frozen_at is None

    def freeze(self) -> None:
        """Stop adapting now: from the next step on the kernel is fixed and the chain is exact MCMC (idempotent)."""
        if self.adapting:
            self.frozen_at = self.n_steps
            self._fix_kernel()

    def frozen_params(self) -> dict | None:
        """The fixed kernel's parameters, over the requested ones: None while adapting, {} if never adaptive."""
        if self.adapting:
            return None
        return self._kernel_params() if self._adaptive else {}

    # -- for the host sampler ------------------------------------------------------------------------------------
    def _start_adaptation(self, adaptive: bool) -> None:
        """At every reset: adapt from step 0 if ``adaptive`` (frozen at once when the burn-in is 0 steps)."""
        self._adaptive = adaptive
        self.frozen_at = 0 if adaptive and self._adaptation_steps() == 0 else None

    def _adapts_this_step(self) -> bool:
        """Called first in ``_step``: freeze when the burn-in is over; whether this step adapts."""
        steps = self._adaptation_steps()
        if self.adapting and steps is not None and self.n_steps >= steps:
            self.freeze()
        return self.adapting

    # -- hooks ------------------------------------------------------------------------------------------------------
    def _adaptation_steps(self) -> int | None:
        """Steps after a reset during which the kernel adapts (None: until ``freeze()``); ``burn_in`` by default."""
        return self.burn_in

    def _fix_kernel(self) -> None:
        """Make the kernel in force the fixed one, from the adapted state (rebuild what adapting left stale)."""
        raise TypeError(f"{type(self).__name__} must implement _fix_kernel")

    def _kernel_params(self) -> dict:
        """The parameters (JSON-able) that, merged over the requested ones, build the frozen kernel from step 0."""
        raise TypeError(f"{type(self).__name__} must implement _kernel_params")
