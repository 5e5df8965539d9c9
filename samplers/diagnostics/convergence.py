"""Convergence to equilibrium, measured against a reference known to be reached.

A claim such as "LSB2 converges twice as fast as √t" (LSB paper, Fig. 2) reads
the chain-mean trace m(a) of a statistic f against an axis a — iterations,
moves, target evaluations or CPU seconds — and asks when it reaches
equilibrium, μ = E_π[f]. Two measures, both against μ:

* ``first_hit``: the first a with |m(a) − μ| ≤ max(tol·|m(0) − μ|, ε)
  (tol = 1 %);
* ``excess_area``: ∫₀^A max(|m(a) − μ| − ε, 0) da / |m(0) − μ| over a budget
  A common to the samplers compared — the time spent away from equilibrium,
  in the axis's unit, which does not hinge on a single crossing (a noisy
  trace may touch the band early, and a trace that never reaches it still
  gets a number).

ε = ``Reference.noise(n)`` is two standard deviations of a mean of n chains
drawn from π (2·sd_π(f)/√n): a chain mean at equilibrium still wanders that
much, and that wandering is neither distance from equilibrium nor arrival.

Measuring against the run's own later mean instead (what the authors' plots
and our earlier benchmark did) rewards a chain that has stopped moving: on
the paper's case 3 chains still drift after 5,000 steps.

The reference μ (``Reference``) is exact where the target can be enumerated
(``exact_reference``) or sampled exactly (``exact_samples_reference``, e.g. an
RBM's hidden units summed out); otherwise it is the mean of a long run of an exact
sampler (``long_run_reference``), started from over-dispersed states and
accepted only if its rank-normalised split-R̂ over all chains (``ess.rhat``,
Vehtari et al. 2021), on the second half, is below ``RHAT_LIMIT``. When it is not, ``reached`` is False and
the reference must not be used to claim convergence: the long run itself has
not converged (metastable modes, for instance), and that is the finding.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import stats
from scipy.special import logsumexp

from samplers.diagnostics.ess import ess, rhat
from targets.base import Target

#: A long run is taken as equilibrium only when its split-R̂ is below this.
RHAT_LIMIT = 1.01

#: f(states, log p̃) → one value per state (per chain).
Statistic = Callable[[np.ndarray, np.ndarray], np.ndarray]


@dataclass(frozen=True)
class Reference:
    """μ = E_π[f] and how it was obtained.

    ``standard_error`` is the Monte Carlo standard error (0 when exact), ``rhat``
    the long run's split-R̂ (NaN when exact or when its chains never changed),
    ``method`` a sentence saying how, ``spread`` the standard deviation of f
    under π (0 when not known), ``exact`` whether μ comes from enumeration or
    exact samples rather than a run.
    """

    value: float
    standard_error: float
    rhat: float
    method: str
    spread: float = 0.0
    exact: bool = False

    def noise(self, n_chains: int) -> float:
        """2·sd_π(f)/√n: how far a mean of ``n_chains`` chains at equilibrium strays from μ (about 95 % of the
        time)."""
        return 2.0 * self.spread / np.sqrt(n_chains)

    @property
    def reached(self) -> bool:
        """Whether μ can be trusted as equilibrium: exact (or from exact samples), or a long run with split-R̂ <
        ``RHAT_LIMIT`` (a run whose chains never changed has R̂ NaN: not reached)."""
        return self.exact or bool(self.rhat < RHAT_LIMIT)


def exact_reference(target: Target, statistic: Statistic) -> Reference:
    """E_π[f] by enumerating the target's states."""
    states, log_p = target.enumerate()
    weights = np.exp(log_p - logsumexp(log_p))
    values = statistic(states, log_p)
    mean = float(weights @ values)
    return Reference(mean, 0.0, float("nan"), f"exact, by enumerating {len(weights):,} states",
                     float(np.sqrt(max(weights @ (values - mean) ** 2, 0.0))), exact=True)


def long_run_reference(sampler, statistic: Statistic, steps: int, thin: int = 100) -> Reference:
    """E_π[f] from ``steps`` steps of an exact ``sampler`` (its chains started over-dispersed), second half kept.

    f is read every ``thin`` steps (``thinned_run_reference`` does the rest).
    """
    if steps < 8 * thin:
        raise ValueError(f"a long run needs at least 8·thin = {8 * thin} steps to split its second half; got {steps}")
    draws = []
    for k in range(1, steps + 1):
        sampler.step(record=False)
        if k % thin == 0:
            draws.append(np.array(statistic(sampler.states, sampler.log_p), dtype=np.float64))  # a copy: f may
            # return the sampler's own array (log p̃), which the next step overwrites
    return thinned_run_reference(np.array(draws), f"{sampler.registry_name} ({sampler.n_chains} chains × {steps:,} "
                                                  f"steps)")


def thinned_run_reference(draws: np.ndarray, run: str) -> Reference:
    """E_π[f] from a long run's thinned draws of f, ``(draws, chains)``: the second half is kept; the standard
    error is sd/√ESS of the kept draws (bulk ESS over all chains), and split-R̂ says whether the chains agree.
    ``run`` names the run in the reference's sentence."""
    if len(draws) < 8:
        raise ValueError(f"a long run needs at least 8 thinned draws to split its second half; got {len(draws)}")
    kept = np.asarray(draws, dtype=np.float64)[len(draws) // 2:].T  # (chains, draws)
    spread = kept.std() / np.sqrt(max(ess(kept), 1.0))
    method = f"long run of {run}: second half, split-R̂ {rhat(kept):.4g}"
    return Reference(float(kept.mean()), float(spread), rhat(kept), method, float(kept.std()))


def exact_samples_reference(values: np.ndarray) -> Reference:
    """E_π[f] as the mean of f over independent exact samples (e.g. an RBM's ``sample_exact``)."""
    values = np.asarray(values, dtype=float)
    spread = float(values.std(ddof=1))
    return Reference(float(values.mean()), spread / np.sqrt(values.size), float("nan"),
                     f"mean over {values.size:,} exact samples", spread, exact=True)


def over_dispersed_starts(dim: int, n_chains: int, rng: np.random.Generator) -> np.ndarray:
    """Start states for a reference run: all zeros, all ones, and uniform random states, in turn."""
    states = rng.integers(0, 2, size=(n_chains, dim), dtype=np.uint8)
    states[0::3] = 0
    states[1::3] = 1
    return states


def first_hit(axis: np.ndarray, trace: np.ndarray, reference: float, tolerance: float = 0.01,
              noise: float = 0.0) -> float:
    """The first ``axis`` value where |trace − μ| ≤ max(tolerance·|trace[0] − μ|, noise); NaN if never."""
    band = max(tolerance * abs(trace[0] - reference), noise)
    inside = np.flatnonzero(np.abs(trace - reference) <= band)
    return float(axis[inside[0]]) if inside.size else float("nan")


def excess_area(axis: np.ndarray, trace: np.ndarray, reference: float, budget: float, noise: float = 0.0) -> float:
    """∫₀^budget max(|trace − μ| − noise, 0) d(axis) / |trace[0] − μ| by trapezoids; the trace is cut, or held
    flat, at ``budget``."""
    inside = axis <= budget
    a, m = axis[inside], trace[inside]
    if a[-1] < budget:  # hold the last value up to the budget
        a, m = np.append(a, budget), np.append(m, trace[np.flatnonzero(inside)[-1]])
    return float(np.trapezoid(np.maximum(np.abs(m - reference) - noise, 0.0), a) / abs(trace[0] - reference))


@dataclass(frozen=True)
class Interval:
    """Mean over seeds with a two-sided Student-t confidence interval."""

    mean: float
    low: float
    high: float
    n: int

    def __str__(self) -> str:
        if not np.isfinite(self.mean):
            return "—"
        return f"{self.mean:.3g} [{self.low:.3g}, {self.high:.3g}]" if self.n > 1 else f"{self.mean:.3g}"


def interval(values, level: float = 0.95) -> Interval:
    """Mean and ``level`` t-interval of the finite ``values`` (NaN mean when none is finite)."""
    values = np.asarray(values, dtype=float)
    values = values[np.isfinite(values)]
    if values.size == 0:
        return Interval(float("nan"), float("nan"), float("nan"), 0)
    mean = float(values.mean())
    if values.size == 1:
        return Interval(mean, mean, mean, 1)
    half = stats.t.ppf(0.5 + level / 2, values.size - 1) * values.std(ddof=1) / np.sqrt(values.size)
    return Interval(mean, mean - half, mean + half, int(values.size))
