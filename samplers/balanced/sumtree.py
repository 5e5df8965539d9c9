"""A batch of 8-ary sum-trees over log-weights, one tree per row, with compiled (numba) kernels.

Tree r holds the log-weights l_j of its leaves exactly (``log_leaves[r]``) and
the weights themselves scaled by a per-row shift s_r, level by level from the
leaves up:

    level 0:  exp(l_j − s_r),       level k + 1, node v:  Σ_{c<8} (level k, node 8v + c),

the root being the first of the row's last eight entries, so
log Σ_j w_j = s_r + log(root); j is drawn with probability w_j/Σ_k w_k by
descending from the root. Nodes are always recomputed from their children,
adding them in one order (c = 0, …, 7), never adjusted by differences: totals
do not drift however long a chain runs, every sum adds non-negative numbers (no
cancellation), and sampling, which adds the same children in the same order,
ends exactly at the node's total.

Layout. With d leaves, level k ≥ 1 has n_k = ⌈d / 8^k⌉ nodes, the top level
(n_L = 1, L = max(1, ⌈log₈ d⌉)) being the root; level k < L is stored with
8·n_{k+1} slots (its last node padded to eight children with zero weights), the
root's level with 8 (the root and 7 zeros), and the levels follow each other in
one row, leaves first. Rows start on a 64-byte boundary (``aligned``), so a
node's eight children are one 64-byte cache line.

Range. Whenever a row's scaled total leaves [``SMALLEST``, ``LARGEST``] (a leaf
grew by hundreds of nats, or every large leaf shrank), the row is *rescaled*:
s_r becomes its largest log-weight and its sums are rebuilt from the exact
log-weights. A leaf more than ~745 nats below s_r is stored as 0 and is never
drawn; ratios that extreme (below 10⁻³²³ of the largest weight) are beyond what
a double can sample anyway, and the same numbers serve proposal and acceptance.

A move that changes a few leaves and may be rejected asks first what the total
*would* be (``path_after``: the changed paths are recomputed into a scratch
list, level by level and sorted by node, so that siblings sit side by side) and
writes that list only if the move is accepted (``commit_path``): a rejected move
writes nothing. If that total falls outside the range it is recomputed exactly
from the log-weights (``log_total_after``).

The ``@njit`` functions here are the only implementation; ``LogSumTree`` is
their batch front end for Python callers, and compiled samplers call the row
functions directly. Random numbers come from the caller's seeded
``numpy.random.Generator`` as arrays of uniforms (one per tree level), so a run
is reproducible from its seed.

Cost: changing m leaves costs O(m log d) additions (one exp per leaf) and a draw
O(log d) comparisons, which keeps a locally balanced step O(1) on a sparse
model up to the logarithm. A leaf-to-root path touches L + 1 cache lines (a
binary tree touches log₂ d), which keeps a step on a large model from waiting
on memory. A rescale, and an out-of-range total after a move (rare), cost O(d).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from samplers.common.prefetch import prefetch
from targets.compiled import helper

#: A row whose scaled total leaves [SMALLEST, LARGEST] is rescaled.
SMALLEST = 1e-250
LARGEST = 1e250
#: Children per node: one 64-byte cache line of float64.
FANOUT = 8
FANOUT_BITS = FANOUT.bit_length() - 1


def leaf_slots(d: int) -> int:
    """Leaf slots a tree over ``d`` leaves allocates: d rounded up to a multiple of ``FANOUT`` (at least one node's)."""
    return -(-max(d, 1) // FANOUT) * FANOUT


def node_slots(d: int) -> int:
    """Entries of one row of sums for ``d`` leaves: every level's slots (``level_slots``, a multiple of ``FANOUT``)."""
    width = leaf_slots(d)
    depth = levels_above(width)
    return sum(level_slots(width, level, depth) for level in range(depth + 1))


def aligned(shape: tuple[int, int], fill: float) -> np.ndarray:
    """A C-ordered float64 array of ``shape`` filled with ``fill`` whose data starts on a 64-byte (cache line)
    boundary: a view into a slightly larger buffer."""
    size = shape[0] * shape[1]
    buffer = np.full(size + FANOUT, fill)
    start = (-buffer.ctypes.data % 64) // 8
    return buffer[start:start + size].reshape(shape)


# -- the shape of a tree, from its leaf slots --------------------------------------------------------------------
@helper
def levels_above(leaf_width):
    """Levels above the leaves (the root's level L ≥ 1) of a tree with ``leaf_width`` leaf slots."""
    count, depth = leaf_width // FANOUT, 1
    while count > 1:
        count = (count - 1) // FANOUT + 1
        depth += 1
    return depth


@helper
def tree_depth(log_leaves):
    """``levels_above`` the leaves of trees with ``log_leaves.shape[1]`` leaf slots."""
    return levels_above(log_leaves.shape[1])


@helper
def level_nodes(leaf_width, level):
    """n_level = ⌈d / 8^level⌉ nodes of ``level`` ≥ 1."""
    return ((leaf_width // FANOUT - 1) >> (FANOUT_BITS * (level - 1))) + 1


@helper
def level_slots(leaf_width, level, depth):
    """Slots of ``level`` (0 = the leaves): 8·n_{level+1} below the root (the leaf slots at level 0), 8 for the
    root's."""
    return FANOUT if level == depth else FANOUT * level_nodes(leaf_width, level + 1)


@helper
def children_total(sums, r, first):
    """Σ_{c<8} sums[r, first + c], added in that order (how every node is computed)."""
    total = 0.0
    for c in range(FANOUT):
        total += sums[r, first + c]
    return total


# -- compiled row kernels --------------------------------------------------------------------------------------
@helper
def rescale_row(log_leaves, sums, shift, r):
    """Set s_r to row r's largest finite log-weight (0 if none) and rebuild its sums: O(d)."""
    width = log_leaves.shape[1]
    top = -np.inf
    for j in range(width):
        top = max(top, log_leaves[r, j])
    shift[r] = top if np.isfinite(top) else 0.0
    for j in range(width):
        sums[r, j] = np.exp(log_leaves[r, j] - shift[r])
    depth = tree_depth(log_leaves)
    below, offset = 0, width
    for level in range(1, depth + 1):
        slots, nodes = level_slots(width, level, depth), level_nodes(width, level)
        for v in range(nodes):
            sums[r, offset + v] = children_total(sums, r, below + FANOUT * v)
        for v in range(nodes, slots):
            sums[r, offset + v] = 0.0
        below, offset = offset, offset + slots


@helper
def log_total_of(sums, shift, r):
    """log Σ_j w_j of row r."""
    return shift[r] + np.log(sums[r, sums.shape[1] - FANOUT])


@helper
def keep_in_range(log_leaves, sums, shift, r):
    """Rescale row r if its scaled total left [SMALLEST, LARGEST] (or is 0 or ∞)."""
    total = sums[r, sums.shape[1] - FANOUT]
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
def log_totals_of(sums, shift, rows):
    """log Σ_j w_j of each row in ``rows``."""
    out = np.empty(rows.size)
    for e in range(rows.size):
        out[e] = log_total_of(sums, shift, rows[e])
    return out


@helper
def set_leaf(log_leaves, sums, shift, r, j, log_weight):
    """Set leaf j of row r and recompute its ancestors (nothing if the value is unchanged)."""
    if log_leaves[r, j] == log_weight:
        return
    log_leaves[r, j] = log_weight
    sums[r, j] = np.exp(log_weight - shift[r])
    width = log_leaves.shape[1]
    depth = tree_depth(log_leaves)
    below, offset, v = 0, width, j
    for level in range(1, depth + 1):
        v //= FANOUT
        sums[r, offset + v] = children_total(sums, r, below + FANOUT * v)
        below, offset = offset, offset + level_slots(width, level, depth)
    keep_in_range(log_leaves, sums, shift, r)


@njit(cache=True)
def set_leaves_rows(log_leaves, sums, shift, rows, sites, log_weights):
    """Leaf ``sites[e]`` of row ``rows[e]`` := ``log_weights[e]`` for every entry e (flat arrays)."""
    for e in range(rows.size):
        set_leaf(log_leaves, sums, shift, rows[e], sites[e], log_weights[e])


@helper
def _child_drawn(sums, r, first, target):
    """The first child c (of those at ``first``, …, ``first`` + 7) whose running total exceeds ``target``.

    That child is the number of running totals at or below ``target``. A child
    of weight 0 is never drawn: if rounding put ``target`` at or above the
    node's total, the last child of positive weight is (child 0 if all weigh
    0: a tree of total weight 0 draws leaf 0, whose move a sampler then finds
    impossible). Written without branches on the weights, so that a tree whose
    line is still on its way from memory does not stall the trees descending
    beside it.
    """
    running, below, last_positive = 0.0, 0, 0
    for c in range(FANOUT):
        weight = sums[r, first + c]
        running += weight
        below += running <= target
        last_positive = max(last_positive, c * (weight > 0.0))
    return below if below < FANOUT else last_positive


@njit(cache=True)
def sample_rows(log_leaves, sums, rows, uniforms, drawn):
    """One leaf of tree ``rows[e]`` for every e, drawn with probability w_j / Σ w, into ``drawn[e]``.

    From the root down, at each level the child c is drawn with probability
    (its total) / (the node's total): the first c whose running total exceeds
    u·(node's total), u uniform on [0, 1) — ``uniforms[e, 0]`` for the root's
    children, ``uniforms[e, L − 1]`` for the leaves (levels are numbered from
    the leaves, 0, up to the root, L). The trees descend together, level by level, so that their
    memory reads overlap instead of waiting for each other: as soon as a tree has drawn its node on
    one level, the line of that node's children is prefetched, and it arrives while the other trees
    draw theirs.
    """
    width = log_leaves.shape[1]
    depth = tree_depth(log_leaves)
    offset = sums.shape[1] - FANOUT
    for e in range(rows.size):
        drawn[e] = 0
    for level in range(depth, 0, -1):
        below = offset - level_slots(width, level - 1, depth)
        beneath = below - level_slots(width, level - 2, depth) if level > 1 else 0
        for e in range(rows.size):
            r, v = rows[e], drawn[e]
            target = uniforms[e, depth - level] * sums[r, offset + v]
            drawn[e] = FANOUT * v + _child_drawn(sums, r, below + FANOUT * v, target)
            if level > 1:
                prefetch(sums, r, beneath + FANOUT * drawn[e])
        offset = below


@helper
def sample_leaf(log_leaves, sums, r, uniforms):
    """One leaf of tree r drawn with probability w_j / Σ w, as ``sample_rows`` draws it (``uniforms[0]`` for the
    root's children, ``uniforms[L − 1]`` for the leaves), for a caller that draws one tree at a time."""
    width = log_leaves.shape[1]
    depth = tree_depth(log_leaves)
    offset, v = sums.shape[1] - FANOUT, 0
    for level in range(depth, 0, -1):
        below = offset - level_slots(width, level - 1, depth)
        v = FANOUT * v + _child_drawn(sums, r, below + FANOUT * v, uniforms[depth - level] * sums[r, offset + v])
        offset = below
    return v


@helper
def prefetch_path(log_leaves, sums, r, j):
    """Prefetch (``samplers.common.prefetch``) leaf j of tree r and the nodes on its path to the root."""
    prefetch(log_leaves, r, j)
    width = log_leaves.shape[1]
    depth = tree_depth(log_leaves)
    offset, v = 0, j
    for level in range(depth + 1):
        prefetch(sums, r, offset + v)
        offset += level_slots(width, level, depth)
        v //= FANOUT


@helper
def path_after(log_leaves, sums, shift, r, sites, log_weights, path_nodes, path_values):
    """Row r's scaled sums after setting leaves ``sites`` to ``log_weights``, without writing them.

    Fills ``path_nodes``/``path_values`` (capacity ≥ m·(depth + 1)) with every
    node whose value would change — leaves first, then level by level up to
    the root, each level sorted by node — and returns how many were filled;
    the last entry is the root. A site listed twice must carry the same value.
    """
    count = 0
    # Insertion into the sorted leaf level, dropping repeats: O(m) when the sites come sorted (a black box's
    # all d sites), O(m²) otherwise (m = 1 + deg on a sparse model).
    for k in range(sites.size):
        node = sites[k]
        e = count
        while e > 0 and path_nodes[e - 1] > node:
            e -= 1
        if e > 0 and path_nodes[e - 1] == node:
            continue
        for f in range(count, e, -1):
            path_nodes[f] = path_nodes[f - 1]
            path_values[f] = path_values[f - 1]
        path_nodes[e] = node
        path_values[e] = np.exp(log_weights[k] - shift[r])
        count += 1
    width = log_leaves.shape[1]
    depth = tree_depth(log_leaves)
    start, below = 0, 0
    for level in range(1, depth + 1):
        offset = below + level_slots(width, level - 1, depth)
        end = count
        e = start
        while e < end:  # one parent per run of siblings: its eight children, new where the level below changed
            parent = (path_nodes[e] - below) // FANOUT
            first = below + FANOUT * parent
            total = 0.0
            for child in range(first, first + FANOUT):
                if e < end and path_nodes[e] == child:
                    total += path_values[e]
                    e += 1
                else:
                    total += sums[r, child]
            path_nodes[count] = offset + parent
            path_values[count] = total
            count += 1
        start, below = end, offset
    return count


@helper
def log_total_after(log_leaves, sums, shift, r, sites, log_weights, path_nodes, path_values):
    """(log Σ_j w_j of row r with leaves ``sites`` set to ``log_weights``, the ``path_after`` count); writes nothing.

    From the scaled sums (``path_after``) when their total stays in range, else
    exactly from the log-weights (O(d)).
    """
    count = path_after(log_leaves, sums, shift, r, sites, log_weights, path_nodes, path_values)
    total = path_values[count - 1]
    if SMALLEST <= total <= LARGEST:
        return shift[r] + np.log(total), count
    top = -np.inf
    for j in range(log_leaves.shape[1]):
        top = max(top, _log_leaf_after(log_leaves, r, j, sites, log_weights))
    if not np.isfinite(top):
        return top, count
    total = 0.0
    for j in range(log_leaves.shape[1]):
        total += np.exp(_log_leaf_after(log_leaves, r, j, sites, log_weights) - top)
    return top + np.log(total), count


@helper
def _log_leaf_after(log_leaves, r, j, sites, log_weights):
    """Leaf j of row r once ``sites`` are set to ``log_weights`` (the last of repeated sites wins)."""
    value = log_leaves[r, j]
    for k in range(sites.size):
        if sites[k] == j:
            value = log_weights[k]
    return value


@helper
def commit_path(log_leaves, sums, shift, r, sites, log_weights, path_nodes, path_values, count):
    """Write leaves ``sites`` = ``log_weights`` of row r with the ``count`` sums that ``path_after`` computed."""
    for k in range(sites.size):
        log_leaves[r, sites[k]] = log_weights[k]
    for e in range(count):
        sums[r, path_nodes[e]] = path_values[e]
    keep_in_range(log_leaves, sums, shift, r)


# -- the Python front end --------------------------------------------------------------------------------------
class LogSumTree:
    """``n`` sum-trees over ``d`` leaves: ``log_leaves`` ``(n, leaf_slots(d))``, ``sums`` ``(n, node_slots(d))``,
    ``shift`` ``(n,)``."""

    def __init__(self, log_weights: np.ndarray):
        n, d = log_weights.shape
        self.log_leaves = aligned((n, leaf_slots(d)), -np.inf)
        self.sums = aligned((n, node_slots(d)), 0.0)
        self.shift = np.zeros(n)
        self.depth = int(tree_depth(self.log_leaves))
        self.rebuild(log_weights)

    @staticmethod
    def estimated_bytes(n: int, d: int) -> int:
        """Bytes of ``n`` trees over ``d`` leaves: n · (leaf slots + node slots + 1) float64, and one cache line for
        each of the two aligned arrays (node slots < 8d/7 + 8(L + 1), L the levels above the leaves)."""
        return 8 * n * (leaf_slots(d) + node_slots(d) + 1) + 2 * 64

    @property
    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(log_leaves, sums, shift): what compiled kernels take."""
        return self.log_leaves, self.sums, self.shift

    @property
    def root(self) -> int:
        """The root's index in a row of ``sums``."""
        return self.sums.shape[1] - FANOUT

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
        """One leaf per tree (or per tree in ``rows``), drawn with probability w_j / Σ w (``sample_rows``)."""
        rows = np.arange(self.sums.shape[0]) if rows is None else np.asarray(rows, dtype=np.int64)
        drawn = np.empty(rows.size, dtype=np.int64)
        sample_rows(self.log_leaves, self.sums, rows, rng.random((rows.size, self.depth)), drawn)
        return drawn
