"""The compiled (numba) kernels: sum-tree paths, balancing functions, block choice, and the caches they keep.

The exactness and k-step tests (``test_exactness``) check the laws of the
samplers built on these kernels; here each kernel is checked against a plain
recomputation, and a long run checks that the incremental caches a compiled
step keeps (sum-tree nodes, flip ratios, log p̃) never drift from a rebuild.
"""

from __future__ import annotations

from math import comb

import numpy as np
import pytest
from scipy import stats
from scipy.special import log_expit

import samplers
import targets
from samplers.balanced.sumtree import LogSumTree, commit_path, log_total_after
from samplers.local.block_gibbs import random_blocks
from samplers.lsb.balancing import BALANCING, KNOTS, BalancingTable
from tests.tiny import TINY_TARGETS


def test_path_after_gives_the_rebuilt_totals_without_writing_and_commit_writes_them(rng):
    weights = rng.normal(scale=5, size=(3, 37))
    tree = LogSumTree(weights)
    before = [array.copy() for array in tree.arrays]
    sites = np.array([36, 5, 12, 5, 0])  # unsorted, with a repeat carrying the same value
    new = rng.normal(scale=5, size=5)
    new[3] = new[1]
    capacity = sites.size * (tree.depth + 1)
    path_nodes, path_values = np.empty(capacity, dtype=np.int64), np.empty(capacity)
    log_z, count = log_total_after(*tree.arrays, 1, sites, new, path_nodes, path_values)
    for array, old in zip(tree.arrays, before):
        np.testing.assert_array_equal(array, old)  # nothing written
    expected = weights.copy()
    expected[1, sites] = new
    rebuilt = LogSumTree(expected)
    assert path_nodes[count - 1] == tree.root
    np.testing.assert_allclose(log_z, rebuilt.log_total[1], rtol=1e-14)
    untouched = LogSumTree(weights).log_total
    commit_path(*tree.arrays, 1, sites, new, path_nodes, path_values, count)
    np.testing.assert_array_equal(tree.log_leaves[1], rebuilt.log_leaves[1])
    np.testing.assert_array_equal(tree.log_leaves[[0, 2]], before[0][[0, 2]])
    np.testing.assert_allclose(tree.log_total, [untouched[0], rebuilt.log_total[1], untouched[2]], rtol=1e-14)


def test_a_total_out_of_the_scaled_range_is_computed_exactly_and_the_commit_rescales():
    tree = LogSumTree(np.zeros((1, 8)))
    sites, new = np.arange(8), np.full(8, 3000.0)
    path_nodes, path_values = np.empty(8 * 4, dtype=np.int64), np.empty(8 * 4)
    log_z, count = log_total_after(*tree.arrays, 0, sites, new, path_nodes, path_values)
    np.testing.assert_allclose(log_z, 3000.0 + np.log(8.0), rtol=1e-14)
    commit_path(*tree.arrays, 0, sites, new, path_nodes, path_values, count)
    np.testing.assert_allclose(tree.log_total, [3000.0 + np.log(8.0)], rtol=1e-14)
    assert tree.shift[0] == 3000.0


def test_a_one_leaf_tree_has_its_leaf_and_the_root_on_its_path():
    tree = LogSumTree(np.array([[0.3]]))
    capacity = tree.depth + 1
    path_nodes, path_values = np.empty(capacity, dtype=np.int64), np.empty(capacity)
    log_z, count = log_total_after(*tree.arrays, 0, np.array([0]), np.array([-2.0]), path_nodes, path_values)
    assert tree.depth == 1 and count == 2 and list(path_nodes[:count]) == [0, tree.root]
    assert log_z == pytest.approx(-2.0, rel=1e-15)
    assert tree.sample(np.random.default_rng(0))[0] == 0


@pytest.mark.parametrize("name", sorted(BALANCING))
def test_compiled_fixed_balancing_functions_match_their_formulas(name):
    u = np.concatenate([np.linspace(-800, 800, 4001), [-np.inf, np.inf]])
    expected = {"barker": log_expit(u), "sqrt": 0.5 * u, "min": np.minimum(0, u), "max": np.maximum(0, u)}[name]
    np.testing.assert_allclose(BALANCING[name](u), expected, rtol=1e-15, atol=0)
    assert BALANCING[name](u[:4000].reshape(2, -1)).shape == (2, 2000)


def test_table_lookup_is_the_interpolation_at_the_knot_positions(rng):
    table = BalancingTable(rng.normal(size=KNOTS.size))
    u = np.concatenate([rng.normal(scale=40, size=500), [-70.0, 70.0, -np.inf, np.inf, 64.0, -64.0]])
    position = (np.clip(u, -64.0, 64.0) + 64.0) * 8.0
    k = np.minimum(np.floor(position).astype(int), KNOTS.size - 2)
    w = position - k
    manual = (1 - w) * table.values[k] + w * table.values[k + 1] + np.maximum(u - 64.0, 0.0)
    np.testing.assert_allclose(table.log_g(u), manual, rtol=1e-12, atol=1e-12)


def test_random_blocks_draw_every_subset_equally_often_without_rejection():
    rng = np.random.default_rng(3)
    d, k, n = 7, 3, 140_000
    blocks = random_blocks(rng, n, d, k)
    assert (np.sort(blocks, axis=1)[:, 1:] != np.sort(blocks, axis=1)[:, :-1]).all()
    codes = (np.sort(blocks, axis=1) * d ** np.arange(k)[::-1]).sum(axis=1)
    _, counts = np.unique(codes, return_counts=True)
    assert counts.size == comb(d, k)
    assert stats.chisquare(counts).pvalue > 1e-4
    whole = random_blocks(rng, 5, 10, 10)  # the whole vector: one pass, no redraws
    np.testing.assert_array_equal(np.sort(whole, axis=1), np.broadcast_to(np.arange(10), (5, 10)))


@pytest.mark.parametrize("target_name", ["segmentation", "blackbox"])
@pytest.mark.parametrize("balancing", sorted(BALANCING))
def test_locally_balanced_caches_match_a_rebuild_after_a_long_run(target_name, balancing):
    if target_name == "segmentation":
        target = targets.make("ising_segmentation", size=12, lam=1.0, mu=1.0, sigma=3.0, seed=0)
    else:
        target = TINY_TARGETS["blackbox"]()
    sampler = samplers.make("locally_balanced", target, n_chains=7, seed=2, balancing=balancing)
    accepted = 0
    for _ in range(2000):
        sampler.step(record=False)
        accepted += sampler.last_accepted.sum()
    assert accepted > 0
    np.testing.assert_allclose(sampler.log_p, target.log_prob(sampler.states), atol=1e-9)
    np.testing.assert_allclose(sampler._delta, target.delta_log_prob(sampler.states), atol=1e-9)
    rebuilt = LogSumTree(sampler.log_g(sampler._delta))
    np.testing.assert_allclose(sampler._tree.log_leaves, rebuilt.log_leaves, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(sampler._tree.log_total, rebuilt.log_total, rtol=1e-9, atol=1e-9)


def test_a_rejected_locally_balanced_move_writes_nothing():
    target = targets.make("ising_segmentation", size=8, lam=3.0, mu=1.0, sigma=3.0, seed=0)
    sampler = samplers.make("locally_balanced", target, n_chains=50, seed=1, balancing="max")
    for _ in range(30):
        kept = (sampler.states, sampler.log_p, sampler._delta, *sampler._tree.arrays)
        before = [array.copy() for array in kept]
        sampler.step(record=False)
        stayed = ~sampler.last_accepted
        for old, new in zip(before, kept):
            np.testing.assert_array_equal(new[stayed], old[stayed])
