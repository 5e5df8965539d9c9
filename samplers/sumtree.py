"""A batch of binary sum-trees kept in log space, one tree per chain.

Leaves hold log-weights log w_j; every internal node holds the logaddexp of its
two children, so the root is log Σ_j w_j. Changing k leaves costs O(k log d),
sampling j ∝ w_j costs O(log d) — independent of d up to the logarithm, which
is what keeps a locally balanced step O(1) on a sparse model. Nodes are always
recomputed from their children (never adjusted by differences), so the root
does not drift however long the chain runs, and log space never overflows.
"""

from __future__ import annotations

import numpy as np


class LogSumTree:
    """``n`` sum-trees over ``d`` leaves each, stored as one ``(n, 2·size)`` array."""

    def __init__(self, log_weights: np.ndarray):
        n, d = log_weights.shape
        self.size = 1 << max(0, int(d - 1).bit_length())
        self.depth = self.size.bit_length() - 1
        self.nodes = np.full((n, 2 * self.size), -np.inf)
        self.rebuild(log_weights)

    def rebuild(self, log_weights: np.ndarray) -> None:
        d = log_weights.shape[1]
        self.nodes[:, self.size : self.size + d] = log_weights
        width = self.size
        while width > 1:
            children = self.nodes[:, width : 2 * width]
            width //= 2
            self.nodes[:, width : 2 * width] = np.logaddexp(children[:, 0::2], children[:, 1::2])

    @property
    def log_total(self) -> np.ndarray:
        """log Σ_j w_j for every tree."""
        return self.nodes[:, 1]

    def leaves(self, rows: np.ndarray, sites: np.ndarray) -> np.ndarray:
        return self.nodes[rows, self.size + sites]

    def update(self, rows: np.ndarray, sites: np.ndarray, log_weights: np.ndarray) -> None:
        """Set leaves ``sites`` (``(r, k)``) of trees ``rows`` (``(r,)``) and refresh their paths."""
        r = rows[:, None]
        node = self.size + sites
        self.nodes[r, node] = log_weights
        for _ in range(self.depth):
            node = node >> 1
            self.nodes[r, node] = np.logaddexp(self.nodes[r, 2 * node], self.nodes[r, 2 * node + 1])

    def sample(self, rng: np.random.Generator) -> np.ndarray:
        """One leaf per tree, drawn with probability w_j / Σ w."""
        n = self.nodes.shape[0]
        rows = np.arange(n)
        node = np.ones(n, dtype=np.int64)
        for _ in range(self.depth):
            log_left = self.nodes[rows, 2 * node] - self.nodes[rows, node]
            node = 2 * node + (np.log(rng.random(n)) >= log_left)
        return node - self.size
