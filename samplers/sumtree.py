"""A batch of binary sum-trees kept in log space, one tree per row.

Leaves hold log-weights log w_j; every internal node holds the logaddexp of its
two children, so the root is log Σ_j w_j. Changing m leaves costs O(m log d),
sampling j ∝ w_j costs O(log d) — independent of d up to the logarithm, which
is what keeps a locally balanced step O(1) on a sparse model. Nodes are always
recomputed from their children (never adjusted by differences), so the root
does not drift however long the chain runs, and log space never overflows.

Layout: row r's tree is ``nodes[r]``, node 1 its root, node v's children 2v
and 2v + 1, leaf j at ``size + j``. The hot paths index the flat view of
``nodes`` (row r's node v at r·width + v) with index arrays computed once
per call: a numpy call on a handful of elements costs far more than its
arithmetic, so ``set_leaves`` refreshes every changed path with four calls
per level and ``sample`` descends with seven, for any number of leaves and
rows at once.
"""

from __future__ import annotations

import numpy as np


def leaf_slots(d: int) -> int:
    """Leaves a tree over ``d`` leaves allocates: d rounded up to a power of two."""
    return 1 << max(0, int(d - 1).bit_length())


class LogSumTree:
    """``n`` sum-trees over ``d`` leaves each, stored as one ``(n, 2·size)`` array."""

    def __init__(self, log_weights: np.ndarray):
        n, d = log_weights.shape
        self.size = leaf_slots(d)
        self.depth = self.size.bit_length() - 1
        self.width = 2 * self.size
        self.nodes = np.full((n, self.width), -np.inf)
        self._flat = np.reshape(self.nodes, -1, copy=False)  # row r's node v is _flat[r·width + v]
        self._levels = np.arange(self.depth + 1)[:, None]
        self.rebuild(log_weights)

    @staticmethod
    def estimated_bytes(n: int, d: int) -> int:
        """Bytes of ``n`` trees over ``d`` leaves: n · 2·size float64 nodes (size = ``leaf_slots(d)`` < 2d)."""
        return 16 * n * leaf_slots(d)

    def rebuild(self, log_weights: np.ndarray) -> None:
        """Set every leaf of every tree (``(n, d)``) and recompute all nodes: O(n·d)."""
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
        self.set_leaves(rows[:, None], sites, log_weights)

    def set_leaves(self, rows: np.ndarray, sites: np.ndarray, log_weights: np.ndarray) -> None:
        """Set leaf ``sites`` of tree ``rows`` (shapes that broadcast to ``log_weights``'s) and refresh their paths.

        Leaves whose value does not change are skipped. Level by level from
        the bottom, every ancestor a of a changed leaf is recomputed as
        logaddexp(w_left(a), w_right(a)) — all paths of a level in one call;
        an ancestor shared by several paths is written several times with the
        same value. Entries repeating a leaf must repeat its value.
        """
        leaf = (rows * self.width + (self.size + sites)).ravel()
        log_weights = log_weights.ravel()
        changed = self._flat[leaf] != log_weights
        leaf = leaf[changed]
        self._flat[leaf] = log_weights[changed]
        local = leaf & (self.width - 1)  # rows start at multiples of width, a power of two
        path = (leaf - local) + (local >> self._levels)  # (depth + 1, m): the leaf, then its ancestors
        lefts = path[:-1] & -2  # a node's left sibling is its parent's left child
        rights = lefts + 1
        flat = self._flat
        for parent, left, right in zip(path[1:], lefts, rights):
            flat[parent] = np.logaddexp(flat[left], flat[right])

    def sample(self, rng: np.random.Generator, rows: np.ndarray | None = None) -> np.ndarray:
        """One leaf per tree (or per tree in ``rows``), drawn with probability w_j / Σ w.

        From the root down, go to the right child with probability w_right / w_node:
        right iff log u_level ≥ log w_left − log w_node, u_level uniform on (0, 1).
        """
        rows = np.arange(self.nodes.shape[0]) if rows is None else np.asarray(rows)
        base = rows * self.width
        node = base + 1
        flat = self._flat
        for log_u in np.log(rng.random((self.depth, rows.size))):
            left = node + node - base
            node = left + (log_u >= flat[left] - flat[node])
        return node - base - self.size
