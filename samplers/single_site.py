"""Single-site flip samplers: Metropolis and single-site Gibbs.

Both pick a site i (uniformly, or in turn for a systematic scan) and flip it
with a probability a(t) of the flip ratio t = p̃(x^(i))/p̃(x):

* Metropolis (the OPAD papers' reference MCMC): a(t) = min(1, t);
* Gibbs (x_i redrawn from its full conditional): a(t) = t/(1+t).

Any a with a(t) = t·a(1/t) satisfies detailed balance; Metropolis's choice is
the larger (Peskun-better) one. One evaluation per step.
"""

from __future__ import annotations

import numpy as np
import param
from scipy.special import log_expit

from targets.base import flip

from .base import Sampler


class _SingleSiteFlip(Sampler):
    """Flip one site per chain with probability a(t); subclasses define log a."""

    def _log_acceptance(self, log_ratio: np.ndarray) -> np.ndarray:
        raise TypeError(f"{type(self).__name__} must implement _log_acceptance")

    def _candidate_sites(self) -> np.ndarray:
        """Sites the next step may pick, each with equal probability."""
        return np.arange(self.target.dim)

    def _step(self):
        n = self.states.shape[0]
        candidates = self._candidate_sites()
        idx = candidates[self.rng.integers(0, candidates.size, size=n)]
        log_ratio = self.target.flip_log_ratio(self.states, idx, self.log_p)
        accepted = np.log(self.rng.random(n)) < self._log_acceptance(log_ratio)
        old_bits = self.states[np.arange(n), idx]
        proposed_log_prob = self.log_p + log_ratio
        self._apply_flips(idx, accepted, log_ratio)
        return self._single_flip_record(idx, old_bits, accepted, proposed_log_prob)

    def transition_row(self, x):
        sites = self._candidate_sites()
        batch = np.repeat(x[None, :], sites.size, axis=0)
        log_ratio = self.target.flip_log_ratio(batch, sites, self.target.log_prob(batch))
        return self._with_stay(x, flip(batch, sites), np.exp(self._log_acceptance(log_ratio)) / sites.size)


class Metropolis(_SingleSiteFlip):
    """Uniform single-bit-flip Metropolis–Hastings."""

    registry_name = "metropolis"

    def _log_acceptance(self, log_ratio):
        return np.minimum(0.0, log_ratio)


class Gibbs(_SingleSiteFlip):
    """Single-site Gibbs sampler, random or systematic scan."""

    registry_name = "gibbs"
    scan = param.Selector(default="random", objects=["random", "systematic"],
                          doc="Random scan (a uniform site each step) or systematic scan (sites 0, 1, …, d−1 in turn).")

    def _log_acceptance(self, log_ratio):
        return log_expit(log_ratio)

    def _candidate_sites(self):
        if self.scan == "random":
            return super()._candidate_sites()
        return np.array([self.n_steps % self.target.dim])
