"""Exactness tests of the RBM target against brute force on a tiny model, and of the shipped asset."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch
from scipy.special import logsumexp, xlogy
from scipy.stats import chisquare
from sklearn.datasets import load_digits

from targets.base import Target, all_states
from targets.rbm import RBM


@pytest.fixture
def tiny() -> RBM:
    return RBM.random(8, 3, seed=1)


def pooled_chisquare_pvalue(observed: np.ndarray, expected: np.ndarray, min_expected: float = 5.0) -> float:
    """Pearson χ² p-value, with the cells expected to hold fewer than ``min_expected`` pooled into one."""
    small = expected < min_expected
    if small.any():
        observed = np.append(observed[~small], observed[small].sum())
        expected = np.append(expected[~small], expected[small].sum())
    return chisquare(observed, expected).pvalue


def random_states(n: int, d: int, seed: int = 2) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 2, size=(n, d), dtype=np.uint8)


def test_shapes_and_parameters(tiny):
    assert (tiny.dim, tiny.n_hidden, tiny.image_shape) == (8, 3, None)
    W = np.ones((5, 2))
    ones = tiny.with_params(weights=W, visible_bias=np.zeros(5), hidden_bias=np.zeros(2))
    assert (ones.dim, ones.n_hidden) == (5, 2)
    # log p̃(v) = Σ_j softplus((vW)_j) = 2 log(1 + e^{|v|}) for W = 1 and zero biases.
    v = random_states(10, 5)
    np.testing.assert_allclose(ones.log_prob(v), 2 * np.log1p(np.exp(v.sum(axis=1))))


def test_hidden_probabilities_are_the_joint_models_conditionals(tiny):
    """p(h_j = 1 | v) from the joint p̃(v, h) = exp(bᵀv + cᵀh + vᵀWh), by summing over all 2^H hidden states."""
    v = random_states(6, tiny.dim).astype(np.float64)
    W, b, c = tiny.weights, tiny.visible_bias, tiny.hidden_bias
    hidden = np.array(list(itertools.product((0.0, 1.0), repeat=tiny.n_hidden)))
    joint = np.exp(v @ b[:, None] + (hidden @ c)[None, :] + v @ W @ hidden.T)  # (n, 2^H)
    expected = joint @ hidden / joint.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(tiny.hidden_probabilities(v.astype(np.uint8)), expected, rtol=1e-12)
    assert tiny.hidden_probabilities(v[0].astype(np.uint8)).shape == (1, tiny.n_hidden)


def test_log_partition_matches_enumeration(tiny):
    _, log_p = tiny.enumerate()
    assert abs(tiny.log_partition() - logsumexp(log_p)) < 1e-10


def test_delta_log_prob_matches_brute_force_flips(tiny):
    x = all_states(tiny.dim)
    np.testing.assert_allclose(tiny.delta_log_prob(x), Target._delta_log_prob(tiny, x), rtol=0, atol=1e-12)
    assert tiny.n_evals == len(x) * tiny.dim


def test_flip_log_ratio_matches_brute_force(tiny):
    x = random_states(50, tiny.dim)
    idx = np.random.default_rng(3).integers(0, tiny.dim, size=len(x))
    log_p = tiny.log_prob(x)
    np.testing.assert_allclose(
        tiny.flip_log_ratio(x, idx, log_p), Target._flip_log_ratio(tiny, x, idx, log_p), rtol=0, atol=1e-12
    )


def test_block_log_ratio_matches_brute_force(tiny):
    rng = np.random.default_rng(4)
    x = random_states(20, tiny.dim)
    sites = np.stack([rng.choice(tiny.dim, size=3, replace=False) for _ in x])
    values = rng.integers(0, 2, size=(len(x), 5, 3), dtype=np.uint8)
    np.testing.assert_allclose(
        tiny.block_log_ratio(x, sites, values), Target._block_log_ratio(tiny, x, sites, values), rtol=0, atol=1e-12
    )


def test_value_and_grad_match_torch_autograd(tiny):
    x = random_states(30, tiny.dim)
    value, grad = tiny.value_and_grad(x)
    W, b, c = (torch.tensor(a) for a in (tiny.weights, tiny.visible_bias, tiny.hidden_bias))
    v = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    log_p = v @ b + torch.nn.functional.softplus(c + v @ W).sum(dim=1)
    log_p.sum().backward()
    np.testing.assert_allclose(value, tiny.log_prob(x), rtol=0, atol=1e-12)
    np.testing.assert_allclose(value, log_p.detach().numpy(), rtol=0, atol=1e-12)
    np.testing.assert_allclose(grad, v.grad.numpy(), rtol=0, atol=1e-12)


def test_sample_exact_matches_exact_probabilities(tiny):
    """Pearson χ² of 100,000 exact draws against p(v), cells with expected count < 5 pooled.

    The seed is fixed, so the test is deterministic; for a random seed the
    threshold p > 1e-4 would fail a correct sampler with probability 1e-4.
    """
    n = 100_000
    states, log_p = tiny.enumerate()
    expected = n * np.exp(log_p - tiny.log_partition())
    codes = tiny.sample_exact(n, seed=5) @ (1 << np.arange(tiny.dim - 1, -1, -1))  # all_states order
    observed = np.bincount(codes, minlength=len(states))
    assert pooled_chisquare_pvalue(observed, expected) > 1e-4


def test_exact_methods_refuse_large_hidden_layers():
    rbm = RBM.random(4, 21)
    with pytest.raises(ValueError, match="H <= 20"):
        rbm.log_partition()
    with pytest.raises(ValueError, match="H <= 20"):
        rbm.sample_exact(1, seed=0)


def test_shipped_model_beats_independent_bernoulli():
    rbm = RBM()
    assert (rbm.dim, rbm.n_hidden, rbm.image_shape) == (64, 16, (8, 8))
    data = (load_digits().data > 7).astype(np.uint8)
    rbm_ll = rbm.log_prob(data).mean() - rbm.log_partition()
    p = data.mean(axis=0)  # maximum-likelihood independent Bernoulli model
    bernoulli_ll = (xlogy(data, p) + xlogy(1 - data, 1 - p)).sum(axis=1).mean()
    assert rbm_ll > bernoulli_ll + 5.0


@pytest.mark.parametrize(
    "params, message",
    [
        ({"weights": np.ones(4)}, "weights must be a 2-D"),
        ({"weights": np.full((4, 2), np.nan)}, "weights must contain only finite"),
        ({"weights": np.ones((4, 2)), "visible_bias": np.ones(3)}, "visible_bias must have shape"),
        ({"weights": np.ones((4, 2)), "hidden_bias": np.ones(4)}, "hidden_bias must have shape"),
        ({"weights": np.ones((4, 2)), "hidden_bias": np.array([0.0, np.inf])}, "hidden_bias must contain only"),
        ({"visible_bias": np.ones(4)}, "weights must be given"),
    ],
)
def test_bad_parameters_raise(params, message):
    with pytest.raises(ValueError, match=message):
        RBM(**params)
