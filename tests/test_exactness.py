"""Every sampler leaves its target invariant, checked exactly and statistically.

1. Exact: on tiny targets (d ≤ 10) the full transition matrix is built from the
   sampler's own ``transition_row`` (its proposal and acceptance functions) and
   π T = π is asserted to 1e-10; reversible samplers also satisfy detailed balance
   π_x T_xy = π_y T_yx to 1e-10.
2. Statistical: thousands of independent chains are run with ``step()`` (the
   vectorised code path, with its caches and sum-trees); their states after k
   steps are i.i.d. draws from μ₀Tᵏ, which we compute exactly (μ₀ = uniform,
   the samplers' initial distribution) and compare with a χ² goodness-of-fit
   test at level 1e-4 (false-alarm rate 1e-4 per test; seeds are fixed, so a
   run is reproducible). We also check that μ₀Tᵏ is within 1e-3 of π in total
   variation, so the same draws are a check against exact enumeration.
3. Long runs: per-site means of a few long chains agree with the exact
   marginals within 5 Monte-Carlo standard errors (using the bulk ESS).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import samplers
import targets
from samplers.common.exact import integrated_time, stationary_distribution, transition_matrix
from samplers.diagnostics.ess import ess
from tests.conformance import assert_invariant
from tests.tiny import TINY_TARGETS

SAMPLER_SETTINGS = [
    ("metropolis", {}),
    ("gibbs", {"scan": "random"}),
    ("block_gibbs", {"block_size": 2}),
    ("block_gibbs", {"block_size": 3}),
    ("hamming_ball", {"block_size": 3, "radius": 1}),
    ("hamming_ball", {"block_size": 4, "radius": 2}),
    ("locally_balanced", {"balancing": "barker"}),
    ("locally_balanced", {"balancing": "sqrt"}),
    ("locally_balanced", {"balancing": "min"}),
    ("locally_balanced", {"balancing": "max"}),
    ("gwg", {}),
]
SETTING_IDS = [f"{name}-{'-'.join(f'{k}={v}' for k, v in kw.items())}" for name, kw in SAMPLER_SETTINGS]


def test_gradient_samplers_refuse_targets_without_gradients():
    with pytest.raises(ValueError, match="differentiable"):
        samplers.make("gwg", TINY_TARGETS["blackbox"]())


@pytest.mark.parametrize("name, kw", SAMPLER_SETTINGS, ids=SETTING_IDS)
def test_exact_kernel_is_stochastic_invariant_and_reversible(name, kw, tiny_target):
    if name == "gwg" and not tiny_target.differentiable:
        return  # covered by test_gradient_samplers_refuse_targets_without_gradients
    sampler = samplers.make(name, tiny_target, n_chains=2, seed=0, **kw)
    pi = stationary_distribution(tiny_target)
    T = transition_matrix(sampler)
    assert_invariant(T, pi)


def test_systematic_scan_gibbs_leaves_pi_invariant_at_every_position():
    target = TINY_TARGETS["frustrated_boltzmann"]()
    sampler = samplers.make("gibbs", target, scan="systematic", seed=0)
    pi = stationary_distribution(target)
    sweep = np.eye(len(pi))
    for position in range(target.dim):
        sampler.n_steps = position
        T = transition_matrix(sampler)
        np.testing.assert_allclose(pi @ T, pi, atol=1e-10, rtol=0)
        flow = pi[:, None] * T
        np.testing.assert_allclose(flow, flow.T, atol=1e-10, rtol=0)
        sweep = sweep @ T
    np.testing.assert_allclose(pi @ sweep, pi, atol=1e-10, rtol=0)


def chi_square_p_value(observed_codes, expected_probs, n):
    observed = np.bincount(observed_codes, minlength=len(expected_probs))
    expected = expected_probs * n
    # Merge cells with small expectation into one so the χ² approximation holds.
    small = expected < 5
    obs = np.append(observed[~small], observed[small].sum())
    exp = np.append(expected[~small], expected[small].sum())
    if exp[-1] == 0:
        obs, exp = obs[:-1], exp[:-1]
    return stats.chisquare(obs, exp * obs.sum() / exp.sum()).pvalue


def steps_to_converge(T, pi, tolerance=1e-3, max_steps=5000):
    """Smallest k with TV(μ₀Tᵏ, π) < tolerance from the uniform start, and μ₀Tᵏ."""
    mu = np.full(len(pi), 1.0 / len(pi))
    for k in range(1, max_steps + 1):
        mu = mu @ T
        if 0.5 * np.abs(mu - pi).sum() < tolerance:
            return k, mu
    raise AssertionError(f"the kernel did not come within {tolerance} of π in {max_steps} steps")


K_STEP_CASES = [
    (target_name, name, kw)
    for target_name in ("frustrated_boltzmann", "blackbox")
    for name, kw in SAMPLER_SETTINGS
    if not (name == "gwg" and target_name == "blackbox")
]


@pytest.mark.parametrize("target_name, name, kw", K_STEP_CASES,
                         ids=[f"{t}-{i}" for t, n, kw in K_STEP_CASES for i in [f"{n}-{kw}"]])
def test_vectorised_steps_sample_the_exact_k_step_distribution(target_name, name, kw):
    target = TINY_TARGETS[target_name]()
    n_chains = 10_000
    pi = stationary_distribution(target)
    k, mu_k = steps_to_converge(transition_matrix(samplers.make(name, target, **kw)), pi)
    sampler = samplers.make(name, target, n_chains=n_chains, seed=7, **kw)
    for _ in range(k):
        record = sampler.step()
    np.testing.assert_allclose(sampler.log_p, target.log_prob(sampler.states), atol=1e-9)
    codes = targets.state_codes(record.states)
    assert chi_square_p_value(codes, mu_k, n_chains) > 1e-4
    assert chi_square_p_value(codes, pi, n_chains) > 1e-4


@pytest.mark.parametrize("name, kw", SAMPLER_SETTINGS, ids=SETTING_IDS)
def test_long_run_marginals_match_enumeration(name, kw):
    target = TINY_TARGETS["ising1d"]()
    states, log_p = target.enumerate()
    exact_marginals = stationary_distribution(target) @ states
    sampler = samplers.make(name, target, n_chains=8, seed=3, **kw)
    assert_long_run_marginals(sampler, exact_marginals, steps=4000, burn_in=1000)


def assert_long_run_marginals(sampler, exact_marginals, steps: int, burn_in: int) -> None:
    """Every site's long-run mean over the chains is within 5 Monte-Carlo standard errors (bulk ESS) of exact."""
    draws = samplers.run(sampler, steps, keep_states_every=1).states[burn_in:].astype(float)  # (draws, chains, d)
    for site in range(draws.shape[2]):
        series = draws[:, :, site].T
        standard_error = series.std() / np.sqrt(max(ess(series), 1.0))
        assert abs(series.mean() - exact_marginals[site]) < 5 * standard_error + 1e-12, site


def test_step_records_are_consistent(tiny_target):
    for name, kw in SAMPLER_SETTINGS:
        if name == "gwg" and not tiny_target.differentiable:
            continue
        sampler = samplers.make(name, tiny_target, n_chains=6, seed=1, **kw)
        before = sampler.states.copy()
        record = sampler.step()
        assert record.states.dtype == np.uint8 and record.states.shape == (6, tiny_target.dim)
        np.testing.assert_allclose(record.log_prob, tiny_target.log_prob(record.states), atol=1e-9)
        np.testing.assert_allclose(record.proposed_log_prob, tiny_target.log_prob(record.proposed), atol=1e-9)
        moved = (record.states != before).any(axis=1)
        assert not np.any(moved & ~record.accepted), name
        np.testing.assert_array_equal(record.states[record.accepted], record.proposed[record.accepted])
        assert record.n_evals == sampler.n_evals > 0


def test_the_exact_integrated_time_is_that_of_a_two_state_chain():
    """τ of the indicator under P = [[1 − a, a], [b, 1 − b]] is (1 + λ)/(1 − λ), λ = 1 − a − b; i.i.d. draws give 1."""
    a, b = 0.3, 0.1
    kernel, pi, f = np.array([[1 - a, a], [b, 1 - b]]), np.array([b, a]) / (a + b), np.array([0.0, 1.0])
    lam = 1 - a - b
    assert integrated_time(kernel, pi, f) == pytest.approx((1 + lam) / (1 - lam), rel=1e-12)
    assert integrated_time(np.tile(pi, (2, 1)), pi, f) == pytest.approx(1.0, rel=1e-12)
    with pytest.raises(ValueError, match="constant"):
        integrated_time(kernel, pi, np.ones(2))
