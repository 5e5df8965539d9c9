"""The Gabor-filter Boltzmann machine: the 0/1 energy, the target contract, local Gabor weights, seeding."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import samplers
import targets
import tests.test_targets as contract

SMALL = dict(side=12, n_hidden=40, patch=7, visible_bias=0.3, hidden_bias=-0.7, beta=0.8, seed=5)


@pytest.fixture
def small():
    return targets.make("gabor_rbm", **SMALL)


def energy_01(target, x):
    """E(v, h) = −vᵀWh − b Σv − c Σh of the 0/1 Boltzmann machine, from the dense weights."""
    v, h = x[:, : target.n_visible].astype(float), x[:, target.n_visible:].astype(float)
    return -np.einsum("np,pj,nj->n", v, target.weights(), h) - SMALL["visible_bias"] * v.sum(1) \
        - SMALL["hidden_bias"] * h.sum(1)


def test_log_prob_is_minus_beta_times_the_01_energy(small, rng):
    x = contract.random_states(small, rng, 20)
    assert small.dim == 144 + 40
    np.testing.assert_allclose(small.log_prob(x), -SMALL["beta"] * energy_01(small, x), atol=1e-10)


def test_spin_form_is_the_01_energy_with_quarter_couplings(small):
    W = small.weights()
    J = small.coupling_matrix().toarray()
    np.testing.assert_allclose(J[:144, 144:], W / 4)
    assert not J[:144, :144].any() and not J[144:, 144:].any()  # bipartite: an RBM's graph


@pytest.mark.parametrize("check", [
    contract.test_delta_log_prob_matches_brute_force,
    contract.test_flip_log_ratio_matches_log_prob,
    contract.test_delta_after_flip_gives_the_ratios_of_the_flipped_state,
    contract.test_block_log_ratio_matches_log_prob,
])
def test_the_target_contract_holds(check, small, rng):
    check(small, rng)


def test_gradient_is_that_of_the_01_energy_and_taylor_is_exact(small, rng):
    x = contract.random_states(small, rng)
    xt = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    v, h = xt[:, :144], xt[:, 144:]
    value = SMALL["beta"] * (((v @ torch.tensor(small.weights())) * h).sum(1) + SMALL["visible_bias"] * v.sum(1)
                             + SMALL["hidden_bias"] * h.sum(1))
    value.sum().backward()
    log_p, grad = small.value_and_grad(x)
    np.testing.assert_allclose(log_p, value.detach().numpy(), atol=1e-10)
    np.testing.assert_allclose(grad, xt.grad.numpy(), atol=1e-10)
    np.testing.assert_allclose((1 - 2.0 * x) * grad, small.delta_log_prob(x), atol=1e-10)


def test_a_flip_changes_one_plus_degree_ratios(small, rng):
    x = contract.random_states(small, rng, 2)
    delta = small.delta_log_prob(x)
    hidden = np.array([144 + 3, 144 + 7])
    small.reset_evals()
    small.delta_after_flip(x, delta, hidden)
    window = (small.weights()[:, hidden - 144] != 0).sum(0)
    assert small.n_evals == 2 + window.sum() and window.max() <= SMALL["patch"] ** 2


def test_weights_are_zero_outside_each_window_and_nonzero_inside(small):
    W, bank, radius = small.weights(), small.bank, SMALL["patch"] // 2
    rows, cols = np.divmod(np.arange(144), 12)
    inside = (np.abs(rows[:, None] - bank.row) <= radius) & (np.abs(cols[:, None] - bank.col) <= radius)
    assert np.all(W[~inside] == 0) and np.all(W[inside] != 0)


def test_weights_follow_the_gabor_closed_form(small):
    W, bank = small.weights(), small.bank
    for j in (0, 11, 39):
        for dr, dc in [(0, 0), (1, -2), (-3, 3), (2, 1)]:
            r, c = bank.row[j] + dr, bank.col[j] + dc
            if not (0 <= r < 12 and 0 <= c < 12):
                continue
            theta, phi = bank.theta[j], bank.phase[j]
            along = dc * np.cos(theta) + dr * np.sin(theta)
            across = -dc * np.sin(theta) + dr * np.cos(theta)
            expected = np.exp(-(along**2 + 0.8**2 * across**2) / (2 * 2.0**2)) * np.cos(2 * np.pi * along / 6.0 + phi)
            assert W[r * 12 + c, j] == pytest.approx(expected, abs=1e-12)


def test_filters_are_reproducible_by_seed():
    first, again = targets.make("gabor_rbm", **SMALL), targets.make("gabor_rbm", **SMALL)
    other = targets.make("gabor_rbm", **{**SMALL, "seed": 6})
    np.testing.assert_array_equal(first.weights(), again.weights())
    assert not np.array_equal(first.weights(), other.weights())


def test_defaults_are_the_papers_size():
    target = targets.make("gabor_rbm")
    assert (target.n_visible, target.n_hidden, target.dim) == (784, 500, 1284)
    assert target.image_shape == (28, 28 + 1 + 18) and target.beta == 1.0  # the image beside 500 hidden units


def test_visible_image_is_the_pixel_grid(small, rng):
    x = contract.random_states(small, rng, 3)
    images = small.visible_image(x)
    assert images.shape == (3, 12, 12)
    np.testing.assert_array_equal(images[:, 4, 5], x[:, 4 * 12 + 5])


@pytest.mark.parametrize("params, message", [
    (dict(patch=6), "odd"),
    (dict(side=5, patch=7), "at most side"),
    (dict(sigma=0.0), "sigma"),
    (dict(wavelength=-1.0), "wavelength"),
    (dict(n_hidden=0), "n_hidden"),
    (dict(beta=-1.0), "beta"),
])
def test_bad_parameters_raise(params, message):
    with pytest.raises(ValueError, match=message):
        targets.make("gabor_rbm", **{**SMALL, **params})


@pytest.mark.parametrize("backend", ["tree", "dense"])
def test_intracluster_moves_stay_on_the_constrained_set(small, backend):
    n_active = small.dim // 3
    sampler = samplers.make("intracluster", small, n_chains=3, seed=2, n_active=n_active, walk_length=(1, 8),
                            gamma=0.8, backend=backend)
    accepted = 0
    for _ in range(60):
        sampler.step(record=False)
        accepted += sampler.last_accepted.sum()
        assert np.all(sampler.states.sum(axis=1) == n_active)
    assert accepted > 0
    np.testing.assert_allclose(sampler.log_p, small.log_prob(sampler.states), atol=1e-9)
