"""A batch of binary sum-trees kept in log space, one tree per row, with compiled (numba) kernels.

Leaves hold log-weights log w_j; every internal node holds the logaddexp of its
two children, so the root is log Σ_j w_j. Changing m leaves costs O(m log d),
sampling j ∝ w_j costs O(log d) — independent of d up to the logarithm, which
is what keeps a locally balanced step O(1) on a sparse model. Nodes are always
recomputed from their children (never adjusted by differences), so the root
does not drift however long the chain runs, and log space never overflows.

Layout: row r's tree is ``nodes[r]``, node 1 its root, node v's children 2v
and 2v + 1, leaf j at ``size + j``.

A move that changes a few leaves and may be rejected asks first what the root
*would* be (``path_after``: the changed paths are recomputed into a scratch
list, sorted by node so that siblings sit side by side, O(m log d) with m
leaves) and writes that list into the tree only if the move is accepted
(``commit_path``): a rejected move writes nothing.

The ``@njit`` functions here are the only implementation; ``LogSumTree`` is
their batch front end for Python callers, and compiled samplers call the row
functions directly. Random numbers come from the caller's seeded
``numpy.random.Generator`` as arrays of uniforms (one per tree level), so a
run is reproducible from its seed.
"""

from __future__ import annotations

import numpy as np
from numba import njit


def leaf_slots(d: int) -> int:
    """Leaves a tree over ``d`` leaves allocates: d rounded up to a power of two."""
    return 1 << max(0, int(d - 1).bit_length())


# -- compiled row kernels --------------------------------------------------------------------------------------
@njit(cache=True)
def rebuild_rows(nodes, log_weights):
    """Set every leaf of every row to ``log_weights`` (``(n, d)``) and recompute all internal nodes."""
    size = nodes.shape[1] // 2
    n, d = log_weights.shape
    for r in range(n):
        row = nodes[r]
        for j in range(d):
            row[size + j] = log_weights[r, j]
        for j in range(d, size):
            row[size + j] = -np.inf
        for v in range(size - 1, 0, -1):
            row[v] = np.logaddexp(row[2 * v], row[2 * v + 1])


@njit(cache=True)
def set_leaf(row, leaf, log_weight):
    """Set node ``leaf`` of one tree and recompute its ancestors (nothing if the value is unchanged)."""
    if row[leaf] == log_weight:
        return
    row[leaf] = log_weight
    v = leaf >> 1
    while v >= 1:
        row[v] = np.logaddexp(row[2 * v], row[2 * v + 1])
        v >>= 1


@njit(cache=True)
def set_leaves_rows(nodes, rows, sites, log_weights):
    """Leaf ``sites[e]`` of tree ``rows[e]`` := ``log_weights[e]`` for every entry e (flat arrays)."""
    size = nodes.shape[1] // 2
    for e in range(rows.size):
        set_leaf(nodes[rows[e]], size + sites[e], log_weights[e])


@njit(cache=True)
def sample_row(row, uniforms):
    """One leaf drawn with probability w_j / Σ w, from the root down.

    At each level go to the right child iff log u ≥ log w_left − log w_node
    (u = ``uniforms[level]``, uniform on [0, 1)), i.e. with probability w_right / w_node.
    """
    size = row.shape[0] // 2
    v = 1
    level = 0
    while v < size:
        left = 2 * v
        v = left + (np.log(uniforms[level]) >= row[left] - row[v])
        level += 1
    return v - size


@njit(cache=True)
def sample_rows(nodes, rows, uniforms):
    """``sample_row`` for tree ``rows[c]`` with ``uniforms[c]`` (``(len(rows), depth)``)."""
    out = np.empty(rows.size, dtype=np.int64)
    for c in range(rows.size):
        out[c] = sample_row(nodes[rows[c]], uniforms[c])
    return out


@njit(cache=True)
def path_after(row, sites, log_weights, path_nodes, path_values):
    """The tree's nodes after setting leaves ``sites`` to ``log_weights``, without writing them.

    Fills ``path_nodes``/``path_values`` (capacity ≥ m·(depth + 1)) with every
    node whose value would change — leaves first, then level by level up to
    the root, each level sorted by node — and returns how many were filled;
    the last entry is the root. A site listed twice must carry the same value.
    """
    size = row.shape[0] // 2
    count = 0
    # Insertion into the sorted leaf level, dropping repeats: O(m) when the sites come sorted (a black box's
    # all d sites), O(m²) otherwise (m = 1 + deg on a sparse model).
    for k in range(sites.size):
        node = size + sites[k]
        e = count
        while e > 0 and path_nodes[e - 1] > node:
            e -= 1
        if e > 0 and path_nodes[e - 1] == node:
            continue
        for f in range(count, e, -1):
            path_nodes[f] = path_nodes[f - 1]
            path_values[f] = path_values[f - 1]
        path_nodes[e] = node
        path_values[e] = log_weights[k]
        count += 1
    start = 0
    while path_nodes[count - 1] > 1:  # the level [start, end) has nodes below the root
        end = count
        e = start
        while e < end:
            v = path_nodes[e]
            if v % 2 == 0 and e + 1 < end and path_nodes[e + 1] == v + 1:
                left, right = path_values[e], path_values[e + 1]
                e += 2
            elif v % 2 == 0:
                left, right = path_values[e], row[v + 1]
                e += 1
            else:
                left, right = row[v - 1], path_values[e]
                e += 1
            path_nodes[count] = v >> 1
            path_values[count] = np.logaddexp(left, right)
            count += 1
        start = end
    return count


@njit(cache=True)
def commit_path(row, path_nodes, path_values, count):
    """Write the first ``count`` entries that ``path_after`` computed into the tree."""
    for e in range(count):
        row[path_nodes[e]] = path_values[e]


@njit(cache=True)
def path_value(path_nodes, path_values, count, node, default):
    """The value ``path_after`` gave ``node``, or ``default`` if the node is not on a changed path."""
    for e in range(count):
        if path_nodes[e] == node:
            return path_values[e]
    return default


# -- the Python front end --------------------------------------------------------------------------------------
class LogSumTree:
    """``n`` sum-trees over ``d`` leaves each, stored as one ``(n, 2·size)`` array."""

    def __init__(self, log_weights: np.ndarray):
        n, d = log_weights.shape
        self.size = leaf_slots(d)
        self.depth = self.size.bit_length() - 1
        self.nodes = np.full((n, 2 * self.size), -np.inf)
        self.rebuild(log_weights)

    @staticmethod
    def estimated_bytes(n: int, d: int) -> int:
        """Bytes of ``n`` trees over ``d`` leaves: n · 2·size float64 nodes (size = ``leaf_slots(d)`` < 2d)."""
        return 16 * n * leaf_slots(d)

    def rebuild(self, log_weights: np.ndarray) -> None:
        """Set every leaf of every tree (``(n, d)``) and recompute all nodes: O(n·d)."""
        rebuild_rows(self.nodes, np.ascontiguousarray(log_weights, dtype=np.float64))

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

        Leaves whose value does not change are skipped; an ancestor shared by
        several changed leaves is recomputed once per leaf. Entries repeating a
        leaf must repeat its value.
        """
        rows, sites, log_weights = np.broadcast_arrays(rows, sites, log_weights)
        set_leaves_rows(self.nodes, rows.astype(np.int64).ravel(), sites.astype(np.int64).ravel(),
                        log_weights.astype(np.float64).ravel())

    def sample(self, rng: np.random.Generator, rows: np.ndarray | None = None) -> np.ndarray:
        """One leaf per tree (or per tree in ``rows``), drawn with probability w_j / Σ w (``sample_row``)."""
        rows = np.arange(self.nodes.shape[0]) if rows is None else np.asarray(rows, dtype=np.int64)
        return sample_rows(self.nodes, rows, rng.random((rows.size, self.depth)))
