"""``Target.estimate_size`` against the built target's ``nbytes``, and its cheapness.

Bounds: the estimate must never be below what the built target holds
(``nbytes``), and at most 2× above it plus 64 KiB (the slack covers fixed
small terms, e.g. the stored text of an uploaded network, on tiny models).
The cheapness checks measure memory with ``tracemalloc``, never time.
"""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
from scipy import sparse

import targets
from targets.base import Target
from targets.markov_network import ASSETS
from targets.uai import UAIModel, format_uai
from tests.tiny import TINY_UAI

SLACK = 65_536


def _symmetric(d: int, seed: int = 0) -> np.ndarray:
    upper = np.triu(np.random.default_rng(seed).normal(size=(d, d)), k=1)
    return upper + upper.T


def _banded(d: int) -> np.ndarray:
    return np.diag(np.ones(d - 1), 1) + np.diag(np.ones(d - 1), -1)


def _chain_uai(n: int) -> str:
    """A binary chain of n variables, one pairwise factor per link (the kind of text a user uploads)."""
    scopes = [[i, i + 1] for i in range(n - 1)]
    tables = [[[1.0, 0.5], [0.5, 2.0]]] * (n - 1)
    return format_uai(UAIModel(n, [2] * n, tuple(scopes), tuple(tables)))


_RNG = np.random.default_rng(7)
CASES = [(name, {}) for name in targets.available()] + [
    ("ising1d", {"m": 2}),
    ("ising1d", {"m": 1000, "beta": 2.0}),
    ("ising_segmentation", {"size": 2}),
    ("ising_segmentation", {"size": 100}),
    ("ising_lattice", {"size": 2}),
    ("ising_lattice", {"size": 7, "ndim": 3}),
    ("ising_lattice", {"size": 25, "ndim": 3}),
    ("discs_ising", {"size": 2}),
    ("discs_ising", {"size": 45, "mu": 0.0, "sigma": 0.0}),
    ("spin_glass_3d", {"size": 2}),
    ("spin_glass_3d", {"size": 20}),
    ("boltzmann", {"J": _symmetric(30).tolist(), "h": list(np.linspace(-1, 1, 30))}),  # as from JSON
    ("boltzmann", {"J": _banded(40)}),
    ("boltzmann", {"J": sparse.coo_matrix(_banded(300)), "beta": 0.5}),
    ("rbm", {"weights": _RNG.normal(size=(30, 5))}),
    ("rbm", {"weights": np.ones((30, 5), dtype=np.int32), "visible_bias": [0.5] * 30}),
    ("rbm", {"weights": _RNG.normal(size=(12, 4)).tolist(), "hidden_bias": np.zeros(4, dtype=np.float32)}),
    ("gabor_rbm", {"side": 10, "n_hidden": 20, "patch": 3}),
    ("gabor_rbm", {"side": 12, "n_hidden": 60, "patch": 11, "seed": 3}),
    ("gabor_rbm", {"side": 20, "n_hidden": 200, "patch": 19}),
    ("markov_network", {"uai_text": TINY_UAI}),
    ("markov_network", {"evidence": {3: 1, "7": 0}}),
    ("markov_network", {"network": "grid10x10_pairwise_random_triplets", "evidence": {0: 1}}),
    ("markov_network", {"uai_text": (ASSETS / "bn_grid10x10_90pct_near_deterministic.uai").read_text()}),
    ("from_log_prob", {"n_dim": 1000}),
    ("from_log_prob", {"n_dim": 100_000}),
    ("from_log_prob", {"fn": lambda x: x.sum(axis=1) * 0.5, "n_dim": 50}),
    ("bvs", {"dataset": "diabetes"}),
    ("bvs", {"X": _RNG.normal(size=(50, 7)).tolist(), "y": _RNG.normal(size=50)}),
    ("bvs", {"n_predictors": 40, "n_samples": 500}),
    ("dag", {"n_nodes": 8}),
    ("dag", {"n_nodes": 12, "n_samples": 50}),
    ("dag", {"n_nodes": 6, "score": "bdeu"}),
    ("dag", {"data": _RNG.normal(size=(40, 4))}),
]


def assert_estimate_bounds(size, built: Target) -> None:
    assert size.dim == built.dim
    assert built.nbytes <= size.model_bytes <= 2 * built.nbytes + SLACK, (size.model_bytes, built.nbytes)


def test_every_registered_target_has_three_or_more_cases():
    names = [name for name, _ in CASES]
    assert all(names.count(name) >= 3 for name in targets.available())


@pytest.mark.parametrize("name, params", CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)])
def test_estimate_matches_the_built_target(name, params):
    cls = targets.target_class(name)
    size = cls.estimate_size(params)
    assert isinstance(size.dim, int) and isinstance(size.model_bytes, int)
    assert_estimate_bounds(size, cls(**params))


def test_from_log_prob_factory():
    fn = lambda x: x.sum(axis=1).astype(float)  # noqa: E731
    assert_estimate_bounds(targets.BlackBox.estimate_size({"fn": fn, "n_dim": 9}), targets.from_log_prob(fn, 9))


def test_nbytes_counts_shared_buffers_once():
    target = targets.make("ising_segmentation", size=10)  # the field is a view of α
    arrays = [target._field, target.alpha, target.observation, target.ground_truth]
    assert target.nbytes < sum(a.nbytes for a in arrays) + sum(
        a.nbytes for a in (target._edges, target._couplings, target._nbr, target._w, target._degree))


def test_a_huge_3d_lattice_is_estimated_without_allocating_it():
    tracemalloc.start()
    try:
        size = targets.IsingLattice.estimate_size({"size": 125, "ndim": 3})
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert size.dim == 1_953_125 and peak < 1_000_000
    # Every term is per site: the estimate scales as L³ from a size that was checked against a build.
    assert size.model_bytes == targets.IsingLattice.estimate_size({"size": 25, "ndim": 3}).model_bytes * 5**3


def test_dense_couplings_are_read_without_a_square_temporary():
    J = _symmetric(1000)  # 8 MB
    tracemalloc.start()
    try:
        size = targets.Boltzmann.estimate_size({"J": J})
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert size.dim == 1000 and peak < 1_000_000
    assert_estimate_bounds(size, targets.Boltzmann(J=J))


def test_an_uploaded_network_is_estimated_from_its_preamble():
    text = _chain_uai(40_000)
    assert len(text) > 1_000_000
    tracemalloc.start()
    try:
        size = targets.MarkovNetwork.estimate_size({"uai_text": text})
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert size.dim == 40_000 and peak < len(text) / 2  # tokenising the whole text would take ~10× its length
    assert_estimate_bounds(size, targets.MarkovNetwork(uai_text=text))


@pytest.mark.parametrize(
    "name, params, error",
    [
        ("ising_lattice", {"size": 10**6}, ValueError),
        ("ising_lattice", {"sise": 10}, TypeError),
        ("boltzmann", {"J": [1.0, 2.0]}, ValueError),
        ("rbm", {"visible_bias": np.zeros(3)}, ValueError),
        ("markov_network", {"uai_text": "BAYES 2"}, ValueError),
        ("markov_network", {"evidence": {500: 1}}, ValueError),
        ("gabor_rbm", {"patch": 4}, ValueError),
    ],
)
def test_parameters_the_constructor_would_reject_raise(name, params, error):
    with pytest.raises(error):
        targets.target_class(name).estimate_size(params)


def test_the_base_class_has_no_estimate():
    with pytest.raises(TypeError, match="must implement estimate_size"):
        Target.estimate_size({})
