"""Single-site flip samplers: Metropolis and single-site Gibbs.

Both propose y = x^(i), x with site i flipped, i uniform on {1, …, d}
(q(x → x^(i)) = 1/d, symmetric) or taken in turn for Gibbs's systematic scan,
and accept with a(t) of the flip ratio t = p̃(x^(i))/p̃(x):

* Metropolis (Metropolis et al. 1953; Hastings 1970): a(t) = min(1, t);
* Gibbs, x_i redrawn from its full conditional p(x_i | x_−i) (Geman & Geman
  1984): a(t) = t/(1+t), Barker's rule.

Any a ≤ 1 with a(t) = t·a(1/t) gives a kernel reversible w.r.t. π; Metropolis's
min(1, t) ≥ t/(1+t) is the Peskun-better choice (Peskun 1973). A systematic
scan composes reversible single-site kernels: it leaves π invariant but is not
itself reversible. Metropolis is the OPAD paper's reference MCMC (§4.1.1,
"a site (index) … is chosen uniformly … and its spin is flipped"; also §4.2).

a is one of the balancing functions of ``samplers.lsb.balancing``, and its
single definition there (``log_g_scalar``) is what the compiled step
(``single_flips``) and ``transition_row`` use.

Cost: one target evaluation per step.
"""

from __future__ import annotations

import numpy as np
import param
from numba import njit

from samplers.base import ExactCase, Sampler, SamplerFacts
from samplers.diagnostics.inspection import ProposalInspection
from samplers.lsb.balancing import CODES, NO_TABLE, log_g_array, log_g_scalar
from targets.base import flip


@njit(cache=True)
def single_flips(states, log_p, idx, log_ratio, uniforms, code, accepted, old_bits, proposed_log_prob):
    """Flip bit idx[c] of chain c with probability a(t_c) = g(t_c), g the balancing function ``code``; in place.

    Fills what the step's record needs: ``accepted``, the bits before the step
    and log p̃ of the proposals.
    """
    for c in range(states.shape[0]):
        i = idx[c]
        old_bits[c] = states[c, i]
        proposed_log_prob[c] = log_p[c] + log_ratio[c]
        accepted[c] = np.log(uniforms[c]) < log_g_scalar(code, log_ratio[c], NO_TABLE, NO_TABLE)
        if accepted[c]:
            states[c, i] ^= 1
            log_p[c] = proposed_log_prob[c]


class _SingleSiteFlip(Sampler):
    """Flip one site per chain with probability a(t) = g(t); subclasses name g (``acceptance``)."""

    #: The balancing function a(t) (a name in ``samplers.lsb.balancing.CODES``).
    acceptance = ""

    def _sites(self, n: int) -> np.ndarray:
        """The site each of ``n`` chains tries next: uniform (random scan)."""
        return self.rng.integers(0, self.target.dim, size=n)

    def _candidate_sites(self) -> np.ndarray:
        """Every site the next step may pick, each with equal probability."""
        return np.arange(self.target.dim)

    def _step(self):
        n = self.states.shape[0]
        idx = self._sites(n)
        log_ratio = self.target.flip_log_ratio(self.states, idx, self.log_p)
        accepted, old_bits, proposed_log_prob = np.empty(n, dtype=bool), np.empty(n, dtype=np.uint8), np.empty(n)
        single_flips(self.states, self.log_p, idx, log_ratio, self.rng.random(n), CODES[self.acceptance], accepted,
                     old_bits, proposed_log_prob)
        return self._single_flip_record(idx, old_bits, accepted, proposed_log_prob)

    def transition_row(self, x):
        sites = self._candidate_sites()
        batch = np.repeat(x[None, :], sites.size, axis=0)
        log_ratio = self.target.flip_log_ratio(batch, sites, self.target.log_prob(batch))
        acceptance = np.exp(log_g_array(log_ratio, CODES[self.acceptance]))
        return self._with_stay(x, flip(batch, sites), acceptance / sites.size)

    def describe_move(self, x, proposal, record, chain, common):
        """A single flip: the site drawn uniformly among the candidates, accepted with a(t) = g(t)."""
        if common["proposed_sites"].size != 1:
            return None
        candidates = self._candidate_sites()
        log_q = np.full(x.size, -np.inf)
        log_q[candidates] = -np.log(candidates.size)
        site = common["proposed_sites"][0]
        acceptance = np.exp(log_g_array(np.array([common["log_target_ratio"]]), CODES[self.acceptance]))[0]
        return ProposalInspection(kind="single flip", log_q=log_q, log_q_forward=float(log_q[site]),
                                  log_q_reverse=float(log_q[site]), acceptance=float(acceptance), **common)


class Metropolis(_SingleSiteFlip):
    """Uniform single-bit-flip Metropolis–Hastings: a(t) = min(1, t)."""

    registry_name = "metropolis"
    facts = SamplerFacts(exact=(ExactCase(), ExactCase(target="boltzmann", target_params={})),
                         warm_up=({},), inspection="single flip")
    acceptance = "min"


class Gibbs(_SingleSiteFlip):
    """Single-site Gibbs sampler, random or systematic scan: a(t) = t/(1+t)."""

    registry_name = "gibbs"
    facts = SamplerFacts(
        # one systematic-scan update flips one given site, reducible on its own (its sweep is exact: the tests)
        exact=(ExactCase({"scan": "random"}), ExactCase({"scan": "random"}, "boltzmann", {})),
        inspection="single flip")
    acceptance = "barker"
    scan = param.Selector(default="random", objects=["random", "systematic"],
                          doc="Random scan (a uniform site each step) or systematic scan (sites 0, 1, …, d−1 in turn).")

    def _sites(self, n):
        if self.scan == "random":
            return super()._sites(n)
        return np.full(n, self.n_steps % self.target.dim)

    def _candidate_sites(self):
        if self.scan == "random":
            return super()._candidate_sites()
        return np.array([self.n_steps % self.target.dim])
