"""The log-space sum-tree: totals, updates, and sampling frequencies."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from scipy.special import logsumexp

from samplers.balanced.sumtree import FANOUT, LogSumTree, leaf_slots, node_slots, sample_rows


def test_total_is_logsumexp_for_every_size(rng):
    for d in [1, 2, 3, 7, 8, 9, 33, 64, 65, 513, 4097]:
        weights = rng.normal(scale=30, size=(4, d))
        tree = LogSumTree(weights)
        np.testing.assert_allclose(tree.log_total, logsumexp(weights, axis=1), rtol=1e-13)


def test_updates_match_a_rebuild_and_revert_exactly(rng):
    weights = rng.normal(scale=5, size=(6, 20))
    tree = LogSumTree(weights)
    original = tree.sums.copy()
    rows = np.array([0, 2, 5])
    sites = np.array([[1, 4, 4], [19, 0, 7], [3, 3, 3]])
    new = rng.normal(scale=5, size=(3, 3))
    new[:, 2] = new[:, 1] * (sites[:, 2] == sites[:, 1]) + new[:, 2] * (sites[:, 2] != sites[:, 1])
    new[2] = new[2, 0]
    old = tree.leaves(rows[:, None], sites)
    tree.set_leaves(rows[:, None], sites, new)
    expected = weights.copy()
    expected[rows[:, None], sites] = new
    np.testing.assert_allclose(tree.log_total, logsumexp(expected, axis=1), rtol=1e-13)
    tree.set_leaves(rows[:, None], sites, old)
    np.testing.assert_array_equal(tree.log_leaves[:, :20], weights)
    np.testing.assert_allclose(tree.sums, original, rtol=1e-14)


def test_extreme_weights_do_not_overflow():
    weights = np.array([[800.0, -800.0, 799.0, -np.inf]])
    tree = LogSumTree(weights)
    assert np.isfinite(tree.log_total).all()
    np.testing.assert_allclose(tree.log_total, logsumexp(weights, axis=1))


def test_sampling_frequencies_match_the_weights():
    rng = np.random.default_rng(0)
    probs = np.array([0.05, 0.3, 0.0, 0.15, 0.4, 0.1])
    n = 200_000
    with np.errstate(divide="ignore"):
        tree = LogSumTree(np.log(np.broadcast_to(probs, (n, probs.size))))
    draws = tree.sample(rng)
    counts = np.bincount(draws, minlength=probs.size)
    assert counts[2] == 0
    keep = probs > 0
    # χ² goodness of fit at level 1e-4 (false-alarm rate 1e-4; the seed is fixed).
    assert stats.chisquare(counts[keep], probs[keep] * n).pvalue > 1e-4


def test_set_leaves_broadcasts_skips_unchanged_leaves_and_matches_a_rebuild(rng):
    weights = rng.normal(scale=5, size=(4, 37))
    tree = LogSumTree(weights)
    rows = np.array([[0], [3]])  # broadcast against sites: both trees get the same three sites
    sites = np.array([5, 36, 5])
    new = rng.normal(size=(2, 3))
    new[:, 2] = new[:, 0]  # a repeated leaf repeats its value
    new[1, 1] = weights[3, 36]  # an unchanged leaf
    tree.set_leaves(rows, sites, new)
    expected = weights.copy()
    expected[rows, sites] = new
    rebuilt = LogSumTree(expected)
    np.testing.assert_array_equal(tree.log_leaves, rebuilt.log_leaves)
    np.testing.assert_allclose(tree.log_total, rebuilt.log_total, rtol=1e-14)


def test_sampling_a_subset_of_trees_draws_from_those_trees():
    rng = np.random.default_rng(1)
    probs = np.array([[0.7, 0.1, 0.2, 0.0, 0.0], [0.0, 0.0, 0.1, 0.3, 0.6]])
    with np.errstate(divide="ignore"):
        tree = LogSumTree(np.log(probs))
    rows = np.repeat([1, 0, 1], 50_000)
    draws = tree.sample(rng, rows)
    for row in (0, 1):
        counts = np.bincount(draws[rows == row], minlength=5)
        keep = probs[row] > 0
        assert np.all(counts[~keep] == 0)
        assert stats.chisquare(counts[keep], probs[row, keep] * counts.sum()).pvalue > 1e-4


def test_sampling_every_tree_is_the_default_subset(rng):
    tree = LogSumTree(rng.normal(size=(5, 9)))
    first, second = np.random.default_rng(4), np.random.default_rng(4)
    np.testing.assert_array_equal(tree.sample(first), tree.sample(second, np.arange(5)))


def test_rows_are_rescaled_when_weights_grow_or_shrink_by_hundreds_of_nats(rng):
    weights = rng.normal(size=(2, 33))
    tree = LogSumTree(weights)
    expected = weights.copy()
    for shift in (900.0, -2000.0, 5.0):  # beyond what exp() of the old scale could hold, both ways
        expected[0] = weights[0] + shift
        tree.set_leaves(np.array([0]), np.arange(33), expected[0])
        np.testing.assert_allclose(tree.log_total, logsumexp(expected, axis=1), rtol=1e-13)
        assert np.isfinite(tree.sums).all() and 1e-250 <= tree.sums[0, tree.root] <= 1e250
    draws = tree.sample(np.random.default_rng(0), np.zeros(100_000, dtype=np.int64))
    probs = np.exp(expected[0] - logsumexp(expected[0]))
    assert stats.chisquare(np.bincount(draws, minlength=33), probs * draws.size).pvalue > 1e-4


def test_a_row_of_impossible_leaves_has_total_minus_infinity_until_one_becomes_possible():
    tree = LogSumTree(np.full((1, 5), -np.inf))
    assert tree.log_total[0] == -np.inf
    tree.set_leaves(np.array([0]), np.array([3]), np.array([-1000.0]))
    assert tree.log_total[0] == -1000.0 and tree.sample(np.random.default_rng(1))[0] == 3


@pytest.mark.parametrize("d", [1, 8, 9, 64, 65, 900, 4097])
def test_every_node_is_the_sum_of_its_eight_children_and_padding_is_zero(rng, d):
    tree = LogSumTree(rng.normal(scale=3, size=(2, d)))
    assert tree.sums.shape == (2, node_slots(d)) and tree.log_leaves.shape == (2, leaf_slots(d))
    assert tree.sums.ctypes.data % 64 == 0 and tree.log_leaves.ctypes.data % 64 == 0
    below, offset, count = 0, leaf_slots(d), -(-d // FANOUT)
    for _ in range(tree.depth):
        level = tree.sums[:, offset:offset + count]
        children = tree.sums[:, below:below + FANOUT * count].reshape(2, count, FANOUT)
        in_order = children[..., 0].copy()  # every node adds its children in one order: c = 0, …, 7
        for c in range(1, FANOUT):
            in_order += children[..., c]
        np.testing.assert_array_equal(level, in_order)
        slots = max(FANOUT, -(-count // FANOUT) * FANOUT) if count > 1 else FANOUT
        assert np.all(tree.sums[:, offset + count:offset + slots] == 0)
        below, offset, count = offset, offset + slots, -(-count // FANOUT)
    assert count == 1 and offset == tree.sums.shape[1] and below == tree.root
    assert np.all(tree.sums[:, d:leaf_slots(d)] == 0)  # padding leaves weigh nothing


def test_sampling_a_deep_tree_matches_the_weights_and_never_draws_a_zero_leaf():
    rng = np.random.default_rng(2)
    d = 600  # three levels above the leaves
    log_weights = rng.normal(scale=1.5, size=d)
    log_weights[rng.choice(d, size=100, replace=False)] = -np.inf
    tree = LogSumTree(np.broadcast_to(log_weights, (200_000, d)))
    draws = tree.sample(rng)
    counts = np.bincount(draws, minlength=d)
    keep = np.isfinite(log_weights)
    assert counts[~keep].sum() == 0
    probs = np.exp(log_weights[keep] - logsumexp(log_weights[keep]))
    assert stats.chisquare(counts[keep], probs * draws.size).pvalue > 1e-4


def test_a_uniform_at_the_top_of_its_range_draws_the_last_leaf_of_positive_weight():
    with np.errstate(divide="ignore"):
        tree = LogSumTree(np.log(np.array([[0.2, 0.5, 0.3, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]])))
    drawn = np.empty(1, dtype=np.int64)
    sample_rows(*tree.arrays[:2], np.array([0]), np.full((1, tree.depth), np.nextafter(1.0, 0.0)), drawn)
    assert drawn[0] == 2
