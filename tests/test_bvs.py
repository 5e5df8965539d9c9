"""Bayesian variable selection target: Eq. 12–14 against an independent formula, collinearity, data, input checks."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import targets
from targets.bvs import synthetic_regression


def independent_log_posterior(X, y, gamma, g, a, b, rho):
    """log p(y|γ)p(γ) up to a constant: y is multivariate-t, df 2a, scale (b/a)(I + g P_γ), after integrating β, σ²."""
    X, y = X - X.mean(axis=0), y - y.mean()
    n = len(y)
    included = X[:, gamma.astype(bool)]
    projection = included @ np.linalg.pinv(included) if included.shape[1] else np.zeros((n, n))
    shape = (b / a) * (np.eye(n) + g * projection)
    k = gamma.sum()
    return stats.multivariate_t(loc=np.zeros(n), shape=shape, df=2 * a).logpdf(y) + k * np.log(rho) + (
        len(gamma) - k) * np.log(1 - rho)


def test_log_posterior_matches_the_multivariate_t_marginal():
    X, y, _ = synthetic_regression(n_predictors=6, n_samples=40, seed=5)
    target = targets.make("bvs", X=X, y=y, g=7.0, a=3.0, b=1.0, rho=0.3)
    states, log_p = target.enumerate()
    reference = np.array([independent_log_posterior(X, y, s, 7.0, 3.0, 1.0, 0.3) for s in states])
    np.testing.assert_allclose(log_p - log_p[0], reference - reference[0], atol=1e-8)


def test_default_g_is_n_and_map_recovers_the_synthetic_truth():
    target = targets.make("bvs", n_predictors=8, n_samples=200, seed=1)
    assert target._g == 200.0 and target.dim == 8
    states, log_p = target.enumerate()
    np.testing.assert_array_equal(states[np.argmax(log_p)], target.true_inclusion)


def test_collinear_columns_are_handled_by_the_projection():
    X, y, _ = synthetic_regression(n_predictors=4, n_samples=50, seed=2)
    duplicated = np.column_stack([X, 2.0 * X[:, 1]])
    target = targets.make("bvs", X=duplicated, y=y, rho=0.4)
    one = np.array([[0, 1, 1, 0, 0]], dtype=np.uint8)
    both = np.array([[0, 1, 1, 0, 1]], dtype=np.uint8)
    difference = target.log_prob(both) - target.log_prob(one)
    expected = -0.5 * np.log1p(target._g) + np.log(0.4) - np.log(0.6)
    assert np.all(np.isfinite(target.log_prob(both)))
    assert difference[0] == pytest.approx(expected, abs=1e-8)


def test_diabetes_data_ships_with_names():
    target = targets.make("bvs", dataset="diabetes")
    assert target.dim == 10 and target.predictor_names[:3] == ["age", "sex", "bmi"]
    assert target.true_inclusion is None
    states, log_p = target.enumerate()
    best = states[np.argmax(log_p)]
    assert best[target.predictor_names.index("bmi")] == 1 and best[target.predictor_names.index("s5")] == 1


@pytest.mark.parametrize("params, message", [
    ({"X": np.ones((5, 2))}, "both X and y"),
    ({"X": np.ones(5), "y": np.ones(5)}, "2-D"),
    ({"X": np.ones((5, 2)), "y": np.ones(4)}, "shape"),
    ({"X": np.full((5, 2), np.nan), "y": np.ones(5)}, "finite"),
    ({"X": np.column_stack([np.arange(5.0), np.ones(5)]), "y": np.arange(5.0)}, "constant"),
    ({"rho": 1.0}, "rho"),
    ({"a": 0.0}, "a"),
])
def test_bad_input_is_refused(params, message):
    with pytest.raises(ValueError, match=message):
        targets.make("bvs", **params)
