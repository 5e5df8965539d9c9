"""ESS, autocorrelation and exact distances against known answers."""

from __future__ import annotations

import numpy as np
import pytest

import targets
from samplers.diagnostics.ess import autocorrelation, ess, ess_per_chain, exact_distances, rhat


def ar1(rng, phi, n_chains, n):
    x = np.zeros((n_chains, n))
    noise = rng.normal(size=(n_chains, n))
    for t in range(1, n):
        x[:, t] = phi * x[:, t - 1] + noise[:, t]
    return x


def test_ess_of_independent_draws_is_about_the_sample_size(rng):
    draws = rng.normal(size=(4, 2000))
    assert 0.85 * draws.size < ess(draws) < 1.15 * draws.size


def test_ess_of_an_ar1_chain_matches_theory(rng):
    phi = 0.9
    draws = ar1(rng, phi, 4, 20_000)
    expected = draws.size * (1 - phi) / (1 + phi)
    assert 0.8 * expected < ess(draws) < 1.2 * expected
    assert ess_per_chain(draws).shape == (4,)


def test_autocorrelation_of_ar1_decays_geometrically(rng):
    rho = autocorrelation(ar1(rng, 0.7, 1, 50_000))[0]
    np.testing.assert_allclose(rho[:4], 0.7 ** np.arange(4), atol=0.03)


def test_ess_edge_cases():
    assert ess(np.ones((2, 100))) == 0.0
    with pytest.raises(ValueError, match="at least 4 draws"):
        ess(np.zeros((2, 3)))


def test_exact_distances_are_zero_for_the_target_and_positive_otherwise():
    target = targets.make("ising1d", m=4)
    states, log_p = target.enumerate()
    pi = np.exp(log_p - np.logaddexp.reduce(log_p))
    exact = exact_distances(states, target, weights=pi)
    assert exact["tv"] < 1e-12 and abs(exact["kl"]) < 1e-12
    one_state = exact_distances(states[:1], target)
    assert one_state["kl"] == pytest.approx(-np.log(pi[0]))
    assert one_state["tv"] == pytest.approx(1 - pi[0])


def test_rhat_detects_chains_that_disagree(rng):
    mixed = rng.normal(size=(4, 1000))
    assert abs(rhat(mixed) - 1) < 0.01
    stuck = mixed + np.array([[0.0], [0.0], [3.0], [3.0]])
    assert rhat(stuck) > 1.5
    # one chain: its two halves are compared
    assert abs(rhat(mixed[:1]) - 1) < 0.02
    assert rhat(mixed[:1] + np.linspace(0, 3, 1000)) > 1.3  # a drift of 3 sd: R̂ ≈ 1.37


def test_autocorrelation_in_time_compares_samplers_per_unit_of_compute():
    from samplers.diagnostics.ess import autocorrelation_in_time, integrated_time, on_time_grid

    seconds = np.array([0.0, 1.0, 2.5, 4.0])
    values = np.array([10.0, 20.0, 30.0, 40.0])
    np.testing.assert_array_equal(on_time_grid(seconds, values, np.array([0.0, 0.5, 1.0, 3.9, 9.0])),
                                  [10, 10, 20, 30, 40])
    rng = np.random.default_rng(0)
    # AR(1) with φ = 0.9 per step; a slow sampler takes 10 ms per step, a fast one 1 ms
    steps = 4000
    noise = rng.normal(size=(steps, 3))
    trace = np.zeros((steps, 3))
    for t in range(1, steps):
        trace[t] = 0.9 * trace[t - 1] + noise[t]
    slow_lags, slow = autocorrelation_in_time(np.arange(steps) * 0.01, trace, grid_step=0.01)
    fast_lags, fast = autocorrelation_in_time(np.arange(steps) * 0.001, trace, grid_step=0.01)
    assert slow[0] == pytest.approx(1.0) and abs(slow[1] - 0.9) < 0.05  # one step per grid point
    assert abs(fast[1] - 0.9 ** 10) < 0.08  # ten steps per grid point: decorrelates 10× faster in time
    assert slow_lags[1] == pytest.approx(0.01) and fast_lags.max() < slow_lags.max()
    # AR(1): τ = (1 + φ)/(1 − φ) = 19 steps = 0.19 s for the slow sampler, about a tenth of that for the fast one
    assert integrated_time(slow_lags, slow) == pytest.approx(0.19, rel=0.25)
    assert integrated_time(fast_lags, fast) < 0.35 * integrated_time(slow_lags, slow)
    assert np.isnan(integrated_time(np.array([0.0, 1.0]), np.array([1.0, 0.9])))


def test_lsb_authors_ess_follows_their_formula(rng):
    """ess.py's loop on the direct (biased, demeaned) autocorrelation, as statsmodels' acf computes it."""
    from samplers.diagnostics.ess import lsb_authors_ess

    draws, lags = ar1(rng, 0.8, 3, 3000), 100
    expected = []
    for chain in draws:
        centred = chain - chain.mean()
        rho = np.array([centred[: centred.size - j] @ centred[j:] for j in range(lags + 1)]) / (centred @ centred)
        window, total = lags + 1, 0.0
        for j in range(1, window):
            if rho[j] > 0.05:
                total += rho[j] * (1.0 - j / window)
        expected.append(window / (1.0 + 2.0 * total))
    np.testing.assert_allclose(lsb_authors_ess(draws, lags), expected, rtol=1e-9)
    # A window of D = 101 draws of an AR(1) with φ = 0.8 holds about D(1 − φ)/(1 + φ) ≈ 11 effective draws.
    assert 8 < lsb_authors_ess(draws, lags).mean() < 15
    with pytest.raises(ValueError, match="lags"):
        lsb_authors_ess(draws, 0)


def test_discs_ess_uses_each_chains_second_half_and_cannot_see_disagreeing_chains():
    from samplers.diagnostics.ess import discs_ess, hamming_distance, hamming_reference

    rng = np.random.default_rng(0)
    first_half_junk = np.concatenate([np.full((3, 500), 7.0), rng.normal(size=(3, 500))], axis=1)
    np.testing.assert_allclose(discs_ess(first_half_junk), ess_per_chain(first_half_junk[:, 500:]))
    # Two chains, each i.i.d. but around different means: DISCS's per-chain ESS is high, the pooled ESS is not.
    stuck = np.concatenate([rng.normal(size=(1, 2000)), 10 + rng.normal(size=(1, 2000))])
    assert discs_ess(stuck).min() > 500 and ess(stuck[:, 1000:]) < 50
    reference = hamming_reference(12)
    assert reference.dtype == np.uint8 and np.array_equal(reference, hamming_reference(12))
    states = np.stack([reference, 1 - reference])
    np.testing.assert_array_equal(hamming_distance(states, reference), [0, 12])
