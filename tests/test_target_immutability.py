"""Targets are immutable once built: no parameter can be set, no stored array written in place;
``with_params`` builds a changed copy and leaves the original as it was."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import sparse

import samplers
import targets

#: One change per registered target, for ``with_params``.
CHANGES = {
    "ising1d": {"beta": 2.0},
    "ising_segmentation": {"lam": 0.25},
    "ising_lattice": {"size": 6},
    "discs_ising": {"seed": 1},
    "spin_glass_3d": {"seed": 1},
    "boltzmann": {"beta": 2.0},
    "rbm": {"weights": np.full((3, 2), 0.5)},
    "gabor_rbm": {"beta": 0.5},
    "markov_network": {"evidence": {0: 1}},
    "from_log_prob": {"n_dim": 4},
    "bvs": {"rho": 0.2},
    "dag": {"graph_prior": "sparse"},
}


def _weights(x):
    return x @ np.linspace(-1.0, 1.0, x.shape[1])


def build(name: str) -> targets.Target:
    """The registered target ``name`` at its default parameters (``from_log_prob`` through its factory)."""
    return targets.from_log_prob(_weights, 5) if name == "from_log_prob" else targets.make(name)


def stored_arrays(value, seen=None):
    """Every numpy array reachable from ``value`` through containers and object attributes (param's own
    bookkeeping aside); sparse matrices are reached through their data and index arrays.

    Deliberately broader than the walker the targets freeze with (``targets.base._held_arrays``, which follows only
    containers, dataclasses, sparse matrices and the package's own objects): an array that walker misses is caught
    here instead of being trusted to it."""
    seen = set() if seen is None else seen
    if id(value) in seen or callable(value) or isinstance(value, (str, bytes, int, float, type(None))):
        return
    seen.add(id(value))
    if isinstance(value, np.ndarray):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from stored_arrays(item, seen)
    elif isinstance(value, (list, tuple, set, frozenset)):
        for item in value:
            yield from stored_arrays(item, seen)
    elif hasattr(value, "__dict__"):
        yield from stored_arrays({k: v for k, v in vars(value).items() if k != "_param__private"}, seen)


def all_stored_arrays(target):
    return list(stored_arrays([target, target.param.values()]))


def assert_read_only(array: np.ndarray) -> None:
    assert not array.flags.writeable
    if array.size:
        with pytest.raises(ValueError, match="read-only"):
            array.flat[0] = array.flat[0]


def test_changes_cover_every_registered_target():
    assert set(CHANGES) == set(targets.available())


@pytest.mark.parametrize("name", targets.available())
def test_setting_any_parameter_raises(name):
    target = build(name)
    before = dict(target.param.values())
    for key, value in before.items():
        with pytest.raises(TypeError, match="immutable once built.*with_params"):
            setattr(target, key, value)
        with pytest.raises(TypeError, match="immutable once built"):
            target.param.update(**{key: value})
    assert target.param.values().keys() == before.keys()
    assert all(target.param.values()[key] is value for key, value in before.items())
    target.n_evals = 7  # the counter stays mutable
    target.reset_evals()
    assert target.n_evals == 0


@pytest.mark.parametrize("name", targets.available())
def test_stored_arrays_cannot_be_written_in_place(name):
    # A user's black box stores no arrays; the default one stores its log-odds.
    target = targets.make(name)
    arrays = all_stored_arrays(target)
    assert arrays, f"{name} stores no arrays?"
    for array in arrays + all_stored_arrays(build(name)):
        assert_read_only(array)


@pytest.mark.parametrize("name", targets.available())
def test_with_params_builds_a_new_target_and_leaves_the_old_one(name, rng):
    target = build(name)
    states = target.random_states(5, rng)
    log_p = target.log_prob(states)
    values = dict(target.param.values())
    changed = target.with_params(**CHANGES[name])
    assert type(changed) is type(target) and changed is not target
    for key, value in CHANGES[name].items():
        np.testing.assert_array_equal(getattr(changed, key), value)
        assert not np.array_equal(getattr(target, key), value)
    for key, value in values.items():  # the other parameters carry over
        if key not in CHANGES[name] and key != "name":
            assert getattr(changed, key) is value or np.array_equal(getattr(changed, key), value)
    assert all(target.param.values()[key] is value for key, value in values.items())
    np.testing.assert_array_equal(target.log_prob(states), log_p)
    for array in all_stored_arrays(changed):
        assert_read_only(array)


@pytest.mark.parametrize(
    "name, params",
    [
        ("boltzmann", {"J": np.array([[0.0, 1.0, -0.5], [1.0, 0.0, 0.2], [-0.5, 0.2, 0.0]]), "h": np.ones(3)}),
        ("rbm", {"weights": np.ones((4, 2)), "visible_bias": np.zeros(4), "hidden_bias": np.zeros(2)}),
        ("bvs", {"X": np.random.default_rng(0).normal(size=(20, 3)), "y": np.arange(20.0)}),
        ("dag", {"data": np.random.default_rng(1).normal(size=(30, 3))}),
    ],
)
def test_the_callers_arrays_are_copied_not_frozen(name, params, rng):
    target = targets.make(name, **params)
    states = target.random_states(4, rng)
    log_p = target.log_prob(states)
    for value in params.values():
        assert value.flags.writeable  # the caller's array is left writable …
        value[...] = 3.0  # … and writing to it does not reach the target
    np.testing.assert_array_equal(target.log_prob(states), log_p)
    for key in params:
        assert_read_only(getattr(target, key))


def test_nested_lists_and_sparse_couplings_are_stored_read_only():
    J = [[0.0, 1.0, 0.0], [1.0, 0.0, -2.0], [0.0, -2.0, 0.0]]
    dense = targets.make("boltzmann", J=J, h=[0.1, 0.2, 0.3])
    assert_read_only(dense.J)
    assert_read_only(dense.h)
    J_sparse = sparse.csr_matrix(np.array(J))
    target = targets.make("boltzmann", J=J_sparse)
    for array in (target.J.data, target.J.indices, target.J.indptr):
        assert_read_only(array)
    assert J_sparse.data.flags.writeable
    x = np.random.default_rng(0).integers(0, 2, size=(8, 3), dtype=np.uint8)
    np.testing.assert_allclose(target.log_prob(x), targets.make("boltzmann", J=np.array(J)).log_prob(x))


def test_copies_of_a_target_are_immutable_too():
    import copy
    import pickle

    target = targets.make("ising1d", m=5)
    for twin in (copy.deepcopy(target), pickle.loads(pickle.dumps(target))):
        with pytest.raises(TypeError, match="immutable"):
            twin.beta = 2.0
        for array in all_stored_arrays(twin):
            assert_read_only(array)


def test_a_sampler_cache_cannot_go_stale():
    """The issue's scenario: changing β under a built sampler used to leave its log p̃ 31 nats off."""
    target = targets.make("ising1d")
    sampler = samplers.make("locally_balanced", target, n_chains=4, seed=0)
    for _ in range(5):
        sampler.step()
    with pytest.raises(TypeError, match="with_params"):
        target.beta = 2.0
    with pytest.raises(TypeError, match="immutable"):
        target.param.update(beta=2.0, m=9)
    assert target.beta == 0.5 and target.m == 15
    np.testing.assert_allclose(sampler.log_p, target.log_prob(sampler.states), rtol=1e-12)
    hotter = target.with_params(beta=2.0)
    assert hotter.beta == 2.0 and target.beta == 0.5
    np.testing.assert_allclose(sampler.log_p, target.log_prob(sampler.states), rtol=1e-12)
