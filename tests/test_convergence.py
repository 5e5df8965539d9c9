"""Convergence against an equilibrium reference: exact and long-run references, first hit, excess area, intervals."""

from __future__ import annotations

import numpy as np
import pytest

import samplers
import targets
from samplers.diagnostics.convergence import (RHAT_LIMIT, Reference, exact_reference, exact_samples_reference,
                                              excess_area, first_hit, interval, long_run_reference,
                                              over_dispersed_starts)


def ones(states, log_p):
    return states.sum(axis=1).astype(float)


def test_exact_reference_is_the_enumerated_expectation():
    target = targets.make("ising1d", m=6, beta=0.4, J=1.0, h=0.3)
    reference = exact_reference(target, ones)
    states, log_p = target.enumerate()
    weights = np.exp(log_p - log_p.max())
    assert reference.value == pytest.approx(weights @ states.sum(axis=1) / weights.sum(), rel=1e-12)
    assert reference.reached and reference.standard_error == 0.0


def test_a_long_run_agrees_with_the_exact_value_and_is_accepted():
    target = targets.make("ising1d", m=8, beta=0.4, J=1.0, h=0.3)
    sampler = samplers.make("metropolis", target, n_chains=12, seed=3,
                            init=over_dispersed_starts(target.dim, 12, np.random.default_rng(0)))
    reference = long_run_reference(sampler, ones, steps=40_000, thin=20)
    exact = exact_reference(target, ones).value
    assert reference.reached and reference.rhat < RHAT_LIMIT
    assert abs(reference.value - exact) < 4 * reference.standard_error + 1e-3
    assert "12 chains × 40,000 steps" in reference.method


def test_chains_stuck_in_different_modes_are_refused_as_a_reference():
    """A cold ferromagnet: chains started all-0 and all-1 stay there, so split-R̂ is far above the limit."""
    target = targets.make("ising1d", m=12, beta=3.0, J=1.0, h=0.0)
    sampler = samplers.make("metropolis", target, n_chains=6, seed=0,
                            init=over_dispersed_starts(target.dim, 6, np.random.default_rng(1)))
    reference = long_run_reference(sampler, ones, steps=4_000, thin=10)
    assert not reference.reached and reference.rhat > 1.1


def test_over_dispersed_starts_cycle_through_all_zeros_all_ones_and_random():
    starts = over_dispersed_starts(20, 7, np.random.default_rng(0))
    assert not starts[0::3].any() and starts[1::3].all()
    assert 0 < starts[2].sum() < 20


def test_a_long_run_needs_enough_draws_to_split():
    sampler = samplers.make("metropolis", targets.make("ising1d", m=4), n_chains=2)
    with pytest.raises(ValueError, match="at least 8·thin"):
        long_run_reference(sampler, ones, steps=50, thin=10)


def test_first_hit_and_excess_area_of_an_exponential_approach():
    """m(a) = μ + e^{−a/τ}: the 1 % band is first reached at τ·ln 100, the area over [0, A] is τ(1 − e^{−A/τ})."""
    tau, mu = 50.0, 3.0
    axis = np.linspace(0.0, 1000.0, 100_001)
    trace = mu + np.exp(-axis / tau)
    assert first_hit(axis, trace, mu) == pytest.approx(tau * np.log(100), abs=0.02)
    assert excess_area(axis, trace, mu, budget=1000.0) == pytest.approx(tau * (1 - np.exp(-20)), rel=1e-6)
    assert excess_area(axis, trace, mu, budget=100.0) == pytest.approx(tau * (1 - np.exp(-2)), rel=1e-6)


def test_a_trace_that_never_reaches_the_band_has_no_first_hit_but_an_area():
    axis = np.arange(10.0)
    trace = np.full(10, 2.0)
    trace[0] = 4.0  # starts 4 away from μ = 0, then stays at 2
    assert np.isnan(first_hit(axis, trace, 0.0))
    assert excess_area(axis, trace, 0.0, budget=9.0) == pytest.approx((3.0 + 8 * 2.0) / 4.0)


def test_the_area_holds_the_last_value_past_the_end_of_a_shorter_trace():
    axis, trace = np.array([0.0, 1.0]), np.array([2.0, 1.0])
    assert excess_area(axis, trace, 0.0, budget=3.0) == pytest.approx((1.5 + 2.0) / 2.0)


def test_interval_covers_the_mean_and_shrinks_with_more_seeds(rng):
    few, many = interval(rng.normal(1.0, 1.0, 5)), interval(rng.normal(1.0, 1.0, 500))
    assert few.low < few.mean < few.high and many.high - many.low < few.high - few.low
    assert many.low < 1.0 < many.high
    assert interval([np.nan, 2.0]).n == 1 and str(interval([np.nan])) == "—"


def test_a_reference_is_reached_only_when_exact_or_agreed():
    assert Reference(1.0, 0.0, float("nan"), "exact", exact=True).reached
    assert not Reference(1.0, 0.1, 1.05, "long run").reached
    assert not Reference(1.0, 0.0, float("nan"), "chains that never changed").reached


def test_a_long_run_of_log_p_reads_every_draw_not_the_last_one_again():
    """log p̃ as the statistic returns the sampler's own array, which each step overwrites: the run copies it."""
    target = targets.make("ising1d", m=8, beta=0.4, J=1.0, h=0.3)
    sampler = samplers.make("metropolis", target, n_chains=6, seed=1,
                            init=over_dispersed_starts(target.dim, 6, np.random.default_rng(0)))
    reference = long_run_reference(sampler, lambda states, log_p: log_p, steps=20_000, thin=10)
    exact = exact_reference(target, lambda states, log_p: log_p)
    assert reference.reached and abs(reference.value - exact.value) < 4 * reference.standard_error + 1e-3


def test_a_reference_from_exact_samples_has_their_standard_error(rng):
    values = rng.normal(2.0, 3.0, 10_000)
    reference = exact_samples_reference(values)
    assert reference.reached and reference.value == pytest.approx(values.mean())
    assert reference.standard_error == pytest.approx(3.0 / 100, rel=0.05)


def test_the_noise_of_a_chain_mean_at_equilibrium_is_neither_distance_nor_arrival():
    """A trace that reaches μ and then wanders within ε: the first hit waits for the band max(1 %, ε), and the area
    after arrival is zero; without ε the wandering would count."""
    axis = np.arange(6.0)
    trace = np.array([10.0, 5.0, 0.5, -0.4, 0.3, -0.5])
    assert first_hit(axis, trace, 0.0) != first_hit(axis, trace, 0.0, noise=0.6) == 2.0
    assert excess_area(axis, trace, 0.0, budget=5.0, noise=0.6) == pytest.approx(
        np.trapezoid([9.4, 4.4, 0.0, 0.0, 0.0, 0.0], axis) / 10.0)
    assert excess_area(axis, trace, 0.0, budget=5.0) > excess_area(axis, trace, 0.0, budget=5.0, noise=0.6)
    reference = Reference(0.0, 0.0, float("nan"), "exact", spread=3.0)
    assert reference.noise(9) == pytest.approx(2.0)


def test_references_carry_the_spread_of_the_statistic():
    target = targets.make("ising1d", m=6, beta=0.4, J=1.0, h=0.3)
    exact = exact_reference(target, ones)
    states, log_p = target.enumerate()
    weights = np.exp(log_p - log_p.max())
    weights /= weights.sum()
    values = states.sum(axis=1)
    assert exact.spread == pytest.approx(np.sqrt(weights @ (values - exact.value) ** 2), rel=1e-12)
    sampler = samplers.make("metropolis", target, n_chains=6, seed=0)
    assert long_run_reference(sampler, ones, steps=4000, thin=10).spread == pytest.approx(exact.spread, rel=0.15)
