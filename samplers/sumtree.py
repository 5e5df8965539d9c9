"""A batch of binary sum-trees over log-weights, one tree per row, with compiled (numba) kernels.

Tree r holds the log-weights l_j of its leaves exactly (``log_leaves[r]``) and,
for speed, the weights themselves scaled by a per-row shift s_r:

    sums[r, size + j] = exp(l_j − s_r),    sums[r, v] = sums[r, 2v] + sums[r, 2v + 1],

node 1 being the root, so log Σ_j w_j = s_r + log sums[r, 1]. Changing m leaves
costs O(m log d) additions (one exp per leaf), sampling j ∝ w_j costs O(log d)
comparisons — independent of d up to the logarithm, which is what keeps a
locally balanced step O(1) on a sparse model. Nodes are always recomputed from
their children (never adjusted by differences), so totals do not drift
however long a chain runs, and every sum adds non-negative numbers (no
cancellation).

Range. Whenever a row's scaled total leaves [``SMALLEST``, ``LARGEST``] (a
leaf grew by hundreds of nats, or every large leaf shrank), the row is
*rescaled*: s_r becomes its largest log-weight and its sums are rebuilt from
the exact log-weights, O(d). A leaf more than ~745 nats below s_r is stored as
0 and is never drawn; ratios that extreme (below 10⁻³²³ of the largest weight)
are beyond what a double can sample anyway, and the same numbers serve
proposal and acceptance.

A move that changes a few leaves and may be rejected asks first what the
total *would* be (``path_after``: the changed paths are recomputed into a
scratch list, sorted by node so that siblings sit side by side) and writes
that list only if the move is accepted (``commit_path``): a rejected move
writes nothing. If that total falls outside the range it is recomputed
exactly from the log-weights (``log_total_after``, O(d), rare).

The ``@njit`` functions here are the only implementation; ``LogSumTree`` is
their batch front end for Python callers, and compiled samplers call the row
functions directly. Random numbers come from the caller's seeded
``numpy.random.Generator`` as arrays of uniforms (one per tree level), so a
run is reproducible from its seed.
"""

from __future__ import annotations

import numpy as np
from numba import njit

#: A row whose scaled total leaves [SMALLEST, LARGEST] is rescaled.
SMALLEST = 1e-250
LARGEST = 1e250


def leaf_slots(d: int) -> int:
    """Leaves a tree over ``d`` leaves allocates: d rounded up to a power of two."""
    return 1 << max(0, int(d - 1).bit_length())


# -- compiled row kernels --------------------------------------------------------------------------------------
@njit(cache=True)
def rescale_row(log_leaves, sums, shift, r):
    """Set s_r to row r's largest finite log-weight (0 if none) and rebuild its sums: O(d)."""
    row_leaves, row = log_leaves[r], sums[r]
    size = row_leaves.size
    top = -np.inf
    for j in range(size):
        top = max(top, row_leaves[j])
    shift[r] = top if np.isfinite(top) else 0.0
    for j in range(size):
        row[size + j] = np.exp(row_leaves[j] - shift[r])
    for v in range(size - 1, 0, -1):
        row[v] = row[2 * v] + row[2 * v + 1]


@njit(cache=True)
def keep_in_range(log_leaves, sums, shift, r):
    """Rescale row r if its scaled total left [SMALLEST, LARGEST] (or is 0 or ∞)."""
    total = sums[r, 1]
    if not (SMALLEST <= total <= LARGEST):
        rescale_row(log_leaves, sums, shift, r)


@njit(cache=True)
def rebuild_rows(log_leaves, sums, shift, rows, log_weights):
    """Set every leaf of row ``rows[e]`` to ``log_weights[e]`` (``(m, d)``; the padding leaves to −∞) and rebuild."""
    d = log_weights.shape[1]
    for e in range(rows.size):
        r = rows[e]
        for j in range(d):
            log_leaves[r, j] = log_weights[e, j]
        for j in range(d, log_leaves.shape[1]):
            log_leaves[r, j] = -np.inf
        rescale_row(log_leaves, sums, shift, r)


@njit(cache=True)
def log_total_of(sums, shift, r):
    """log Σ_j w_j of row r."""
    return shift[r] + np.log(sums[r, 1])


@njit(cache=True)
def log_totals_of(sums, shift, rows):
    """log Σ_j w_j of each row in ``rows``."""
    out = np.empty(rows.size)
    for e in range(rows.size):
        out[e] = log_total_of(sums, shift, rows[e])
    return out


@njit(cache=True)
def set_leaf(log_leaves, sums, shift, r, j, log_weight):
    """Set leaf j of row r and recompute its ancestors (nothing if the value is unchanged)."""
    if log_leaves[r, j] == log_weight:
        return
    log_leaves[r, j] = log_weight
    v = log_leaves.shape[1] + j
    sums[r, v] = np.exp(log_weight - shift[r])
    v >>= 1
    while v >= 1:
        sums[r, v] = sums[r, 2 * v] + sums[r, 2 * v + 1]
        v >>= 1
    keep_in_range(log_leaves, sums, shift, r)


@njit(cache=True)
def set_leaves_rows(log_leaves, sums, shift, rows, sites, log_weights):
    """Leaf ``sites[e]`` of row ``rows[e]`` := ``log_weights[e]`` for every entry e (flat arrays)."""
    for e in range(rows.size):
        set_leaf(log_leaves, sums, shift, rows[e], sites[e], log_weights[e])


@njit(cache=True)
def sample_row(sums, r, uniforms, c):
    """One leaf of tree r drawn with probability w_j / Σ w, from the root down.

    At each level go to the right child iff u·w_node ≥ w_left (u = ``uniforms[c, level]``,
    uniform on [0, 1)), i.e. with probability w_right / w_node. (Rows are indexed,
    not sliced, here and below: a slice in a compiled loop costs more than the arithmetic.)
    """
    size = sums.shape[1] // 2
    v = 1
    level = 0
    while v < size:
        left = 2 * v
        v = left + (uniforms[c, level] * sums[r, v] >= sums[r, left])
        level += 1
    return v - size


@njit(cache=True)
def sample_rows(sums, rows, uniforms):
    """``sample_row`` for tree ``rows[c]`` with ``uniforms[c]`` (``(len(rows), depth)``)."""
    out = np.empty(rows.size, dtype=np.int64)
    for c in range(rows.size):
        out[c] = sample_row(sums, rows[c], uniforms, c)
    return out


@njit(cache=True)
def path_after(sums, r, shift, sites, log_weights, path_nodes, path_values):
    """Row r's scaled sums after setting leaves ``sites`` to ``log_weights``, without writing them.

    Fills ``path_nodes``/``path_values`` (capacity ≥ m·(depth + 1)) with every
    node whose value would change — leaves first, then level by level up to
    the root, each level sorted by node — and returns how many were filled;
    the last entry is the root. A site listed twice must carry the same value.
    """
    size = sums.shape[1] // 2
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
        path_values[e] = np.exp(log_weights[k] - shift)
        count += 1
    start = 0
    while path_nodes[count - 1] > 1:  # the level [start, end) has nodes below the root
        end = count
        e = start
        while e < end:
            v = path_nodes[e]
            if v % 2 == 0 and e + 1 < end and path_nodes[e + 1] == v + 1:
                total = path_values[e] + path_values[e + 1]
                e += 2
            elif v % 2 == 0:
                total = path_values[e] + sums[r, v + 1]
                e += 1
            else:
                total = sums[r, v - 1] + path_values[e]
                e += 1
            path_nodes[count] = v >> 1
            path_values[count] = total
            count += 1
        start = end
    return count


@njit(cache=True)
def log_total_after(log_leaves, sums, shift, r, sites, log_weights, path_nodes, path_values):
    """(log Σ_j w_j of row r with leaves ``sites`` set to ``log_weights``, the ``path_after`` count); writes nothing.

    From the scaled sums (``path_after``) when their total stays in range, else
    exactly from the log-weights (O(d)).
    """
    count = path_after(sums, r, shift[r], sites, log_weights, path_nodes, path_values)
    total = path_values[count - 1]
    if SMALLEST <= total <= LARGEST:
        return shift[r] + np.log(total), count
    changed = log_leaves[r].copy()
    for k in range(sites.size):
        changed[sites[k]] = log_weights[k]
    top = changed.max()
    if not np.isfinite(top):
        return top, count
    return top + np.log(np.sum(np.exp(changed - top))), count


@njit(cache=True)
def commit_path(log_leaves, sums, shift, r, sites, log_weights, path_nodes, path_values, count):
    """Write leaves ``sites`` = ``log_weights`` of row r with the ``count`` sums that ``path_after`` computed."""
    for k in range(sites.size):
        log_leaves[r, sites[k]] = log_weights[k]
    for e in range(count):
        sums[r, path_nodes[e]] = path_values[e]
    keep_in_range(log_leaves, sums, shift, r)


# -- the Python front end --------------------------------------------------------------------------------------
class LogSumTree:
    """``n`` sum-trees over ``d`` leaves: ``log_leaves`` ``(n, size)``, ``sums`` ``(n, 2·size)``, ``shift`` ``(n,)``."""

    def __init__(self, log_weights: np.ndarray):
        n, d = log_weights.shape
        self.size = leaf_slots(d)
        self.depth = self.size.bit_length() - 1
        self.log_leaves = np.full((n, self.size), -np.inf)
        self.sums = np.zeros((n, 2 * self.size))
        self.shift = np.zeros(n)
        self.rebuild(log_weights)

    @staticmethod
    def estimated_bytes(n: int, d: int) -> int:
        """Bytes of ``n`` trees over ``d`` leaves: n · (3·size + 1) float64 (size = ``leaf_slots(d)`` < 2d)."""
        return 8 * n * (3 * leaf_slots(d) + 1)

    @property
    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(log_leaves, sums, shift): what compiled kernels take."""
        return self.log_leaves, self.sums, self.shift

    def rebuild(self, log_weights: np.ndarray, rows: np.ndarray | None = None) -> None:
        """Set every leaf of every tree (or of the trees ``rows``) to ``log_weights`` (one row each) and recompute
        their nodes: O(d) per tree."""
        rows = np.arange(self.sums.shape[0]) if rows is None else np.asarray(rows, dtype=np.int64)
        rebuild_rows(*self.arrays, rows, np.ascontiguousarray(log_weights, dtype=np.float64))

    @property
    def log_total(self) -> np.ndarray:
        """log Σ_j w_j for every tree."""
        return self.log_totals(np.arange(self.sums.shape[0]))

    def log_totals(self, rows: np.ndarray) -> np.ndarray:
        """log Σ_j w_j for the trees ``rows`` (int64)."""
        return log_totals_of(self.sums, self.shift, rows)

    def leaves(self, rows: np.ndarray, sites: np.ndarray) -> np.ndarray:
        return self.log_leaves[rows, sites]

    def set_leaves(self, rows: np.ndarray, sites: np.ndarray, log_weights: np.ndarray) -> None:
        """Set leaf ``sites`` of tree ``rows`` (shapes that broadcast to ``log_weights``'s) and refresh their paths.

        Leaves whose value does not change are skipped; an ancestor shared by
        several changed leaves is recomputed once per leaf. Entries repeating a
        leaf must repeat its value.
        """
        rows, sites, log_weights = np.broadcast_arrays(rows, sites, log_weights)
        set_leaves_rows(*self.arrays, rows.astype(np.int64).ravel(), sites.astype(np.int64).ravel(),
                        log_weights.astype(np.float64).ravel())

    def sample(self, rng: np.random.Generator, rows: np.ndarray | None = None) -> np.ndarray:
        """One leaf per tree (or per tree in ``rows``), drawn with probability w_j / Σ w (``sample_row``)."""
        rows = np.arange(self.sums.shape[0]) if rows is None else np.asarray(rows, dtype=np.int64)
        return sample_rows(self.sums, rows, rng.random((rows.size, self.depth)))
