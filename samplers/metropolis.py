"""Random-walk Metropolis over single flips (the OPAD papers' reference MCMC).

Propose x' = x with one uniformly chosen bit flipped (a symmetric proposal)
and accept with probability min(1, p̃(x')/p̃(x)). One evaluation per step.
"""

from __future__ import annotations

import numpy as np

from targets.base import flip

from .base import Sampler, acceptance_probability, metropolis_accept


class Metropolis(Sampler):
    """Uniform single-bit-flip Metropolis–Hastings."""

    registry_name = "metropolis"

    def _step(self):
        n, d = self.states.shape
        idx = self.rng.integers(0, d, size=n)
        log_ratio = self.target.flip_log_ratio(self.states, idx, self.log_p)
        accepted = metropolis_accept(log_ratio, self.rng)
        old_bits = self.states[np.arange(n), idx]
        proposed_log_prob = self.log_p + log_ratio
        self._apply_flips(idx, accepted, log_ratio)
        return self._single_flip_record(idx, old_bits, accepted, proposed_log_prob)

    def transition_row(self, x):
        d = x.size
        batch = np.repeat(x[None, :], d, axis=0)
        sites = np.arange(d)
        log_ratio = self.target.flip_log_ratio(batch, sites, self.target.log_prob(batch))
        return self._with_stay(x, flip(batch, sites), acceptance_probability(log_ratio) / d)
