"""The checks every registered sampler passes (``tests/test_conformance.py`` runs them over the registry).

Each takes a sampler built from its class's ``facts`` (``samplers.base.SamplerFacts``) and raises
``AssertionError`` saying what fails:

* ``assert_exact_kernel``: the exact transition matrix T over the sampler's own ``exact_support``, built from its
  ``transition_row``, is stochastic and leaves π ∝ p̃ invariant (π T = π to 1e-10), satisfies detailed balance
  when the sampler claims it, and is irreducible and aperiodic: every eigenvalue but the one at 1 has modulus
  below one (the second-largest eigenvalue modulus, SLEM < 1). Invariance alone is not correctness: a kernel
  that never changes a state's parity leaves π invariant and never reaches half the states.
* ``assert_long_run_marginals``: a few long chains advanced by the vectorised ``step()`` agree with the exact
  marginals of π on the support (each site's mean within 5 Monte-Carlo standard errors, bulk ESS).
* ``assert_counts_every_evaluation``: on a black box that counts the states it is asked for, the sampler's
  ``n_evals`` is exactly that count.
"""

from __future__ import annotations

import numpy as np
from scipy.special import logsumexp

import samplers
import targets
from samplers.common.exact import transition_matrix
from samplers.diagnostics.ess import ess

#: How far below one the second-largest eigenvalue modulus must be: rounding in a 10⁻¹⁶ world, and a kernel
#: whose SLEM is this close to one mixes too slowly to test anyway.
SLEM_MARGIN = 1e-9


def exact_target(case) -> targets.Target:
    """The registered target of an ``ExactCase``."""
    return targets.make(case.target, **case.target_params)


def build(name: str, case, **params) -> samplers.Sampler:
    """Sampler ``name`` in the setting of ``case`` (an ``ExactCase``) on its target."""
    return samplers.make(name, exact_target(case), **{**case.params, **params})


def second_eigenvalue_modulus(kernel: np.ndarray) -> float:
    """The second-largest modulus among the eigenvalues of a stochastic matrix (one eigenvalue 1 is removed)."""
    moduli = np.sort(np.abs(np.linalg.eigvals(kernel)))[::-1]
    return float(moduli[1]) if moduli.size > 1 else 0.0


def assert_invariant(kernel: np.ndarray, pi: np.ndarray, reversible: bool = True) -> None:
    """The matrix ``kernel`` is stochastic and leaves ``pi`` invariant (π T = π to 1e-10), and satisfies detailed
    balance π_x T_xy = π_y T_yx when ``reversible``: the one statement of exactness every test makes."""
    assert kernel.min() >= -1e-15, "a transition probability is negative"
    np.testing.assert_allclose(kernel.sum(axis=1), 1.0, atol=1e-12, err_msg="a row does not sum to one")
    np.testing.assert_allclose(pi @ kernel, pi, atol=1e-10, rtol=0, err_msg="π T ≠ π: π is not invariant")
    if reversible:
        flow = pi[:, None] * kernel
        np.testing.assert_allclose(flow, flow.T, atol=1e-10, rtol=0, err_msg="detailed balance fails")


def assert_exact_kernel(sampler: samplers.Sampler, reversible: bool) -> None:
    """π-invariant, reversible if claimed, irreducible and aperiodic on the sampler's support (module docstring)."""
    states, log_p = sampler.exact_support()
    pi = np.exp(log_p - logsumexp(log_p))
    kernel = transition_matrix(sampler, states)
    assert_invariant(kernel, pi, reversible)
    slem = second_eigenvalue_modulus(kernel)
    assert slem < 1 - SLEM_MARGIN, (
        f"the kernel is reducible or periodic on its {len(states)} states (second-largest eigenvalue modulus "
        f"{slem:.12f}): from some state it never reaches others, or only at some step counts")


def assert_long_run_marginals(sampler: samplers.Sampler, steps: int = 3000, burn_in: int = 1000) -> None:
    """Every site's long-run mean over the chains is within 5 Monte-Carlo standard errors (bulk ESS) of its
    exact mean under π on the sampler's support (a joint chain's support: the chain's own sites, first)."""
    states, log_p = sampler.exact_support()
    d = sampler.target.dim
    exact = np.exp(log_p - logsumexp(log_p)) @ states[:, :d]
    draws = samplers.run(sampler, steps, keep_states_every=1).states[burn_in:].astype(float)  # (draws, chains, d)
    for site in range(d):
        series = draws[:, :, site].T
        if np.ptp(series) == 0:
            assert series[0, 0] == exact[site], f"site {site} never moves from {series[0, 0]}, its mean is {exact[site]}"
            continue
        standard_error = series.std() / np.sqrt(max(ess(series), 1.0))
        assert abs(series.mean() - exact[site]) < 5 * standard_error + 1e-12, (
            f"site {site}: long-run mean {series.mean():.4f}, exact {exact[site]:.4f} "
            f"(5 standard errors: {5 * standard_error:.4f})")


def counting_black_box(target: targets.Target) -> tuple[targets.Target, list[int]]:
    """The same log p̃ as ``target`` as a black box without flip tables or gradient, and a list that the number
    of states it is asked for is added to at each call."""
    asked = []

    def log_prob(x):
        asked.append(len(x))
        return target.log_prob(np.asarray(x).astype(np.uint8))

    return targets.from_log_prob(log_prob, target.dim), asked


def assert_counts_every_evaluation(sampler: samplers.Sampler, asked: list[int], steps: int = 20) -> None:
    """After ``steps`` steps the sampler's ``n_evals`` is the number of states its black box was asked for."""
    for _ in range(steps):
        sampler.step()
    assert sampler.n_evals == sum(asked), (
        f"{sampler.registry_name} reports {sampler.n_evals} target evaluations; its black box was asked for "
        f"{sum(asked)} states")
