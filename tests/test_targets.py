"""The target contract: exact local quantities, counting, enumeration, registry, bad input."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from scipy.special import logsumexp

import targets
from targets import flip


def brute_force_delta(target, x):
    log_p = target.log_prob(x)
    return np.stack([target.log_prob(flip(x, np.full(len(x), i))) - log_p for i in range(target.dim)], axis=1)


def random_states(target, rng, n=7):
    return rng.integers(0, 2, size=(n, target.dim), dtype=np.uint8)


def test_delta_log_prob_matches_brute_force(tiny_target, rng):
    x = random_states(tiny_target, rng)
    np.testing.assert_allclose(tiny_target.delta_log_prob(x), brute_force_delta(tiny_target, x), atol=1e-12)


def test_flip_log_ratio_matches_log_prob(tiny_target, rng):
    x = random_states(tiny_target, rng)
    idx = rng.integers(0, tiny_target.dim, size=len(x))
    log_p = tiny_target.log_prob(x)
    expected = tiny_target.log_prob(flip(x, idx)) - log_p
    np.testing.assert_allclose(tiny_target.flip_log_ratio(x, idx, log_p), expected, atol=1e-12)


def test_delta_after_flip_gives_the_ratios_of_the_flipped_state(tiny_target, rng):
    x = random_states(tiny_target, rng)
    idx = rng.integers(0, tiny_target.dim, size=len(x))
    delta = tiny_target.delta_log_prob(x)
    sites, values = tiny_target.delta_after_flip(x, delta, idx)
    updated = delta.copy()
    updated[np.arange(len(x))[:, None], sites] = values
    np.testing.assert_allclose(updated, tiny_target.delta_log_prob(flip(x, idx)), atol=1e-12)


def test_block_log_ratio_matches_log_prob(tiny_target, rng):
    n, k, m = 5, 3, 4
    x = random_states(tiny_target, rng, n)
    sites = np.stack([rng.choice(tiny_target.dim, k, replace=False) for _ in range(n)])
    values = rng.integers(0, 2, size=(n, m, k), dtype=np.uint8)
    log_p = tiny_target.log_prob(x)
    expected = np.empty((n, m))
    for a in range(n):
        for b in range(m):
            y = x[a].copy()
            y[sites[a]] = values[a, b]
            expected[a, b] = tiny_target.log_prob(y[None])[0] - log_p[a]
    np.testing.assert_allclose(tiny_target.block_log_ratio(x, sites, values), expected, atol=1e-12)


@pytest.mark.parametrize("name", ["ising1d", "ising_segmentation", "spin_glass_3d", "boltzmann"])
def test_pairwise_gradient_matches_autograd_and_taylor_is_exact(name, rng):
    target = targets.make(name, **({"size": 3} if name in ("ising_segmentation", "spin_glass_3d") else {}))
    x = random_states(target, rng)
    J = torch.tensor(target.coupling_matrix().toarray())
    h = torch.tensor(target._field)
    xt = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    s = 2 * xt - 1
    value = target.beta * (0.5 * ((s @ J) * s).sum(1) + s @ h)
    value.sum().backward()
    log_p, grad = target.value_and_grad(x)
    np.testing.assert_allclose(log_p, value.detach().numpy(), atol=1e-10)
    np.testing.assert_allclose(grad, xt.grad.numpy(), atol=1e-10)
    np.testing.assert_allclose((1 - 2.0 * x) * grad, target.delta_log_prob(x), atol=1e-10)


def test_evaluation_counts_follow_the_documented_rule(rng):
    lattice = targets.make("ising_lattice", size=8)
    box = targets.from_log_prob(lambda x: x.sum(axis=1).astype(float), 5)
    for target, per_flip_update in [(lattice, 1 + 4), (box, 5)]:
        x = random_states(target, rng, 3)
        target.reset_evals()
        target.log_prob(x)
        assert target.n_evals == 3
        delta = target.delta_log_prob(x)
        assert target.n_evals == 3 + 3 * target.dim
        target.reset_evals()
        target.delta_after_flip(x, delta, np.zeros(3, dtype=int))
        assert target.n_evals == 3 * per_flip_update
        target.reset_evals()
        target.block_log_ratio(x, np.array([[0, 1]] * 3), np.zeros((3, 4, 2), dtype=np.uint8))
        assert target.n_evals == 12


def test_enumerate_lists_all_states_and_refuses_large_dims():
    target = targets.make("ising1d", m=5)
    states, log_p = target.enumerate()
    assert states.shape == (32, 5)
    assert len({s.tobytes() for s in states}) == 32
    np.testing.assert_allclose(log_p, target.log_prob(states))
    np.testing.assert_array_equal(targets.state_codes(states), np.arange(32))
    with pytest.raises(ValueError, match="enumerate.. needs dim <= 24"):
        targets.make("ising1d", m=25).enumerate()


def test_ising1d_partition_function_matches_transfer_matrix():
    beta, J, h, mu, m = 0.5, 1.0, 0.1, 1.0, 12
    target = targets.make("ising1d", m=m, beta=beta, J=J, h=h, mu=mu)
    _, log_p = target.enumerate()
    spins = np.array([-1.0, 1.0])
    transfer = np.exp(beta * (J * np.outer(spins, spins) + mu * h * (spins[:, None] + spins[None, :]) / 2))
    eigenvalues = np.linalg.eigvalsh(transfer)
    np.testing.assert_allclose(logsumexp(log_p), np.log(np.sum(eigenvalues**m)), rtol=1e-12)


def test_lattices_have_the_right_graph():
    lattice = targets.make("ising_lattice", size=5, ndim=3)
    assert lattice.dim == 125 and lattice.image_shape == (5, 5, 5)
    assert np.all(lattice._degree == 6)
    glass = targets.make("spin_glass_3d")
    assert glass.dim == 729 and set(np.unique(glass._couplings)) == {-1.0, 1.0}
    assert targets.make("ising_lattice").dim == 3600


def test_segmentation_follows_eq6():
    target = targets.make("ising_segmentation", size=30, lam=1.0, mu=3.0, sigma=3.0, seed=0)
    assert target.ground_truth.shape == (30, 30) and target.image_shape == (30, 30)
    np.testing.assert_allclose(target.alpha, target.observation * 3.0 / 9.0)
    truth_bits = (target.ground_truth.ravel() > 0).astype(np.uint8)[None, :]
    assert target.agreement(truth_bits)[0] == 1.0
    # The ground truth is far more probable than its negation under the clean setting.
    assert target.log_prob(truth_bits)[0] > target.log_prob(1 - truth_bits)[0] + 100
    again = targets.make("ising_segmentation", size=30, lam=1.0, mu=3.0, sigma=3.0, seed=0)
    np.testing.assert_array_equal(again.observation, target.observation)




def test_segmentation_as_the_authors_code_builds_it(rng):
    """field="authors", periodic=True: α = μs* + U(−σ, σ), and the flip ratios of the authors' ``LBS``
    (exp(−2αx − 2λx·Σ of the four wrapped neighbours), spins x = ±1) at a random state."""
    n, lam, mu, sigma = 8, 0.7, 1.0, 3.0
    target = targets.make("ising_segmentation", size=n, lam=lam, mu=mu, sigma=sigma, field="authors", periodic=True,
                          seed=4)
    noise = target.alpha - mu * target.ground_truth
    assert np.all(np.abs(noise) <= sigma) and noise.std() > 1.0  # uniform on (−3, 3): sd √3
    np.testing.assert_array_equal(target.observation, target.alpha)
    bits = random_states(target, rng, n=3)
    spins = 2.0 * bits.reshape(-1, n, n) - 1.0
    neighbours = sum(np.roll(spins, shift, axis) for shift in (1, -1) for axis in (1, 2))
    authors = -2.0 * target.alpha * spins - 2.0 * lam * spins * neighbours
    np.testing.assert_allclose(target.delta_log_prob(bits), authors.reshape(3, -1), atol=1e-12)
    assert targets.IsingSegmentation.estimate_size({"size": n, "periodic": True}).model_bytes > \
        targets.IsingSegmentation.estimate_size({"size": n}).model_bytes
def test_with_params_builds_the_changed_model():
    target = targets.make("ising1d", m=6)
    changed = target.with_params(m=9)
    assert changed.dim == 9 and changed.log_prob(np.zeros((1, 9), dtype=np.uint8)).shape == (1,)
    assert target.dim == 6


def test_every_registered_target_builds_from_defaults(rng):
    for name in targets.available():
        target = targets.make(name)
        x = target.random_states(2, rng)
        assert x.shape == (2, target.dim) and x.dtype == np.uint8
        assert target.log_prob(x).shape == (2,)
        assert np.all(np.isfinite(target.log_prob(x)))


@pytest.mark.parametrize(
    "build, message",
    [
        (lambda: targets.make("ising1d", beta=-1.0), "beta"),
        (lambda: targets.make("ising1d", m=1), "m"),
        (lambda: targets.make("ising_segmentation", sigma=0.0), "sigma"),
        (lambda: targets.make("boltzmann", J=np.array([[0.0, 1.0], [2.0, 0.0]])), "symmetric"),
        (lambda: targets.make("boltzmann", J=np.array([[1.0, 1.0], [1.0, 0.0]])), "zero diagonal"),
        (lambda: targets.make("boltzmann", J=np.array([[0.0, np.nan], [np.nan, 0.0]])), "finite"),
        (lambda: targets.make("boltzmann", J=np.zeros((3, 2))), "square"),
        (lambda: targets.make("boltzmann", J=np.zeros((3, 3)), h=np.zeros(2)), "h must have shape"),
        (lambda: targets.make("no_such_target"), "unknown target"),
        (lambda: targets.from_log_prob("not a function", 3), "callable"),
    ],
)
def test_bad_parameters_raise_clear_errors(build, message):
    with pytest.raises(ValueError, match=message):
        build()


def test_bad_states_raise_clear_errors():
    target = targets.make("ising1d", m=4)
    with pytest.raises(ValueError, match=r"shape \(n, 4\)"):
        target.log_prob(np.zeros((2, 5), dtype=np.uint8))
    with pytest.raises(ValueError, match="only 0 and 1"):
        target.log_prob(np.full((1, 4), 2))
    with pytest.raises(ValueError, match="dtype"):
        target.log_prob(np.zeros((1, 4)))


def test_blackbox_output_is_validated():
    wrong_shape = targets.from_log_prob(lambda x: np.zeros((len(x), 2)), 3)
    with pytest.raises(ValueError, match="must return shape"):
        wrong_shape.log_prob(np.zeros((2, 3), dtype=np.uint8))
    nan = targets.from_log_prob(lambda x: np.full(len(x), np.nan), 3)
    with pytest.raises(ValueError, match="NaN"):
        nan.log_prob(np.zeros((2, 3), dtype=np.uint8))


def test_boltzmann_accepts_sparse_couplings(rng):
    from scipy import sparse

    dense, h = targets.boltzmann._frustrated_default(dim=6, seed=4)
    dense_target = targets.make("boltzmann", J=dense, h=h, beta=0.7)
    sparse_target = targets.make("boltzmann", J=sparse.csr_matrix(dense), h=h, beta=0.7)
    x = random_states(dense_target, rng)
    np.testing.assert_allclose(dense_target.log_prob(x), sparse_target.log_prob(x))
    np.testing.assert_allclose(sparse_target.log_prob(x), 0.7 * (0.5 * np.einsum("ni,ij,nj->n", 2.0 * x - 1, dense, 2.0 * x - 1) + (2.0 * x - 1) @ h))
