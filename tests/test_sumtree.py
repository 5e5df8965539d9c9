"""The log-space sum-tree: totals, updates, and sampling frequencies."""

from __future__ import annotations

import numpy as np
from scipy import stats
from scipy.special import logsumexp

from samplers.sumtree import LogSumTree


def test_total_is_logsumexp_for_every_size(rng):
    for d in [1, 2, 3, 7, 8, 33]:
        weights = rng.normal(scale=30, size=(4, d))
        tree = LogSumTree(weights)
        np.testing.assert_allclose(tree.log_total, logsumexp(weights, axis=1), rtol=1e-13)


def test_updates_match_a_rebuild_and_revert_exactly(rng):
    weights = rng.normal(scale=5, size=(6, 20))
    tree = LogSumTree(weights)
    original = tree.nodes.copy()
    rows = np.array([0, 2, 5])
    sites = np.array([[1, 4, 4], [19, 0, 7], [3, 3, 3]])
    new = rng.normal(scale=5, size=(3, 3))
    new[:, 2] = new[:, 1] * (sites[:, 2] == sites[:, 1]) + new[:, 2] * (sites[:, 2] != sites[:, 1])
    new[2] = new[2, 0]
    old = tree.leaves(rows[:, None], sites)
    tree.update(rows, sites, new)
    expected = weights.copy()
    expected[rows[:, None], sites] = new
    np.testing.assert_allclose(tree.log_total, logsumexp(expected, axis=1), rtol=1e-13)
    tree.update(rows, sites, old)
    np.testing.assert_array_equal(tree.nodes, original)


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
