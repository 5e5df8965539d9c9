"""The machinery of intracluster walks (``samplers.intracluster.walks``, whose docstring states the kernel: Eq. 1–3
and 6): the kernel's functions that both ``step()`` and ``transition_row()`` use, the record a move keeps of its
walks (``MoveLog``, ``WalkRecord``), and the walkers that choose, flip, undo and redo walk steps over every chain
at once — by sum-trees on sparse models (``TreeWalks``, with compiled steps on a sparse pairwise model) or dense
weights (``DenseWalks``).
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np
from numba import njit, vectorize

from samplers.balanced.sumtree import LogSumTree, log_total_of, sample_rows, set_leaf
from samplers.base import sample_categorical
from targets.compiled import helper
from targets.pairwise import PairwiseBinaryModel, flip_ratio_update


# -- the kernel's functions, shared by step() and transition_row() --------------------------------------
def step_toward(t, k, toward_first):
    """Whether step t (1-based) of a move of walk length k flips toward c: the first walk's kind for t ≤ k."""
    return (t <= k) == toward_first


@vectorize(["boolean(uint8, uint8, boolean, boolean)"], cache=True)
def allowed_bits(bits, reference_bits, toward, barred):
    """The bits a step may flip (Eq. 2's sets): not barred, and differing from c (toward) or agreeing (away).

    A ufunc (numpy broadcasting; also callable on scalars in compiled code).
    """
    return ((bits != reference_bits) == toward) and not barred


@vectorize(["float64(float64, boolean, float64)"], cache=True)
def masked_log_weights(delta, allowed, gamma):
    """log of Eq. 2's unnormalised step probabilities: γ Δ_i on allowed bits, −∞ elsewhere (a ufunc)."""
    return gamma * delta if allowed else -np.inf


@helper
def refresh_walk_leaf(log_leaves, sums, shift, bits, ratios, bars, reference, gamma, key):
    """Leaf i of both trees of chain c, for the key c·d + i: γ_c Δ_i where the step kind allows bit i, else −∞.

    Row c is chain c's tree for steps toward the reference, row n + c its
    tree for steps away (``TreeWalks``); ``bits``, ``ratios``, ``bars`` are
    the chains' flat views.
    """
    d, n = reference.size, gamma.size
    c = key // d
    i = key - c * d
    for kind in range(2):
        allowed = allowed_bits(bits[key], reference[i], kind == 0, bars[key])
        set_leaf(log_leaves, sums, shift, c + kind * n, i, masked_log_weights(ratios[key], allowed, gamma[c]))


@njit(cache=True)
def refresh_walk_leaves(log_leaves, sums, shift, bits, ratios, bars, reference, gamma, keys):
    """``refresh_walk_leaf`` for every key."""
    for key in keys:
        refresh_walk_leaf(log_leaves, sums, shift, bits, ratios, bars, reference, gamma, key)


@njit(cache=True)
def tree_walk_steps(log_leaves, sums, shift, states, delta, bits, ratios, bars, reference, gamma, nbr, w, degree, beta,
                    rows, toward, reverse_now, uniforms, t, path, step_ratio, log_z_forward, log_z_reverse, sites,
                    before, after):
    """Walk step t + 1 (Eq. 2) of every chain c = rows[e] on a sparse pairwise model, logged at row t.

    Draws the bit from the chain's tree of the step's kind (``uniforms[e]``; all chains first, ``sample_rows``),
    logs Z_F and Δ of the bit, flips it with ``flip_ratio_update`` and logs
    the flip ratios it changed before and after, writes them and refreshes
    both trees' leaves there; where ``reverse_now[e]``, logs Z_R (the other
    kind's tree) after the flip. ``states``/``delta`` and ``bits``/``ratios``/``bars``
    are the chains' arrays and their flat views. Returns the evaluations,
    Σ 1 + deg(bit).
    """
    n, d = states.shape
    trees = np.where(toward, rows, rows + n)
    drawn = np.empty(rows.size, dtype=np.int64)
    sample_rows(log_leaves, sums, trees, uniforms, drawn)
    evaluations = 0
    for e in range(rows.size):
        c = rows[e]
        tree, other = (c, c + n) if toward[e] else (c + n, c)
        i = drawn[e]
        path[t, c] = i
        log_z_forward[t, c] = log_total_of(sums, shift, tree)
        step_ratio[t, c] = delta[c, i]
        flip_ratio_update(states, delta, c, i, nbr, w, beta, sites[t, c], after[t, c])
        for k in range(sites.shape[2]):
            before[t, c, k] = delta[c, sites[t, c, k]]
        for k in range(sites.shape[2]):
            delta[c, sites[t, c, k]] = after[t, c, k]
        states[c, i] ^= 1
        evaluations += 1 + degree[i]
        for k in range(sites.shape[2]):
            refresh_walk_leaf(log_leaves, sums, shift, bits, ratios, bars, reference, gamma, c * d + sites[t, c, k])
        if reverse_now[e]:
            log_z_reverse[t, c] = log_total_of(sums, shift, other)
    return evaluations


@njit(cache=True)
def tree_unwalk_steps(log_leaves, sums, shift, states, delta, bits, ratios, bars, reference, gamma, rows, toward, t,
                      path, log_z_reverse, sites, before):
    """Undo logged walk step t + 1 of every chain c = rows[e], logging Z_R (the other kind's tree at s_{t+1}) first:
    no evaluation."""
    n, d = states.shape
    for e in range(rows.size):
        c = rows[e]
        log_z_reverse[t, c] = log_total_of(sums, shift, c + n if toward[e] else c)
        for k in range(sites.shape[2]):
            delta[c, sites[t, c, k]] = before[t, c, k]
        states[c, path[t, c]] ^= 1
        for k in range(sites.shape[2]):
            refresh_walk_leaf(log_leaves, sums, shift, bits, ratios, bars, reference, gamma, c * d + sites[t, c, k])


def log_normaliser(log_weights):
    """log Z = log Σ_i exp(log_weights_i) along the last axis (−∞ entries allowed, at least one finite)."""
    shift = log_weights.max(axis=-1)
    return shift + np.log(np.exp(log_weights - shift[..., None]).sum(axis=-1))


def path_log_acceptance(log_ratio, log_forward, log_reverse):
    """log of Eq. 6's ratio: log p̃(x')/p̃(x) + log f(x, R(ρ), R(σ) | x') − log f(x', σ, ρ | x)."""
    return log_ratio + log_reverse - log_forward


def walk_length_range(walk_length, limit: int) -> tuple[int, int]:
    """``walk_length`` (k or (k_min, k_max)) as (k_min, k_max), checked against 1 ≤ k ≤ ``limit``."""
    bounds = tuple(walk_length) if isinstance(walk_length, (tuple, list)) else (walk_length, walk_length)
    if len(bounds) != 2 or not all(isinstance(k, numbers.Integral) and not isinstance(k, bool) for k in bounds):
        raise ValueError(f"walk_length must be an integer k or a pair (k_min, k_max); got {walk_length!r}")
    k_min, k_max = (int(k) for k in bounds)
    if not 1 <= k_min <= k_max <= limit:
        raise ValueError(f"walk_length must satisfy 1 ≤ k_min ≤ k_max ≤ min(n, d − n) = {limit} (a move of "
                         f"length k flips k differing and k agreeing bits); got {walk_length!r}")
    return k_min, k_max


def bit_mask(bits: np.ndarray, dim: int) -> np.ndarray:
    """``(m, dim)`` boolean mask with the ``bits`` of each row (``(m, j)``) set."""
    mask = np.zeros((bits.shape[0], dim), dtype=bool)
    mask[np.arange(bits.shape[0])[:, None], bits] = True
    return mask


def prefixes(path: np.ndarray, stop: np.ndarray) -> np.ndarray:
    """``path[c, :stop_c]`` per row, padded to the longest by repeating the row's last entry (none empty)."""
    columns = np.minimum(np.arange(int(stop.max())), stop[:, None] - 1)
    return np.take_along_axis(path, columns, axis=1)


def by_chain(table: np.ndarray) -> np.ndarray:
    """A step-major ``(2K, n)`` table as chain-major ``(n, 2K)``."""
    return np.ascontiguousarray(table.T)


def flip_update_width(target) -> int:
    """How many flip ratios one flip changes: 1 + the maximum degree on a pairwise model, d otherwise."""
    if isinstance(target, PairwiseBinaryModel):
        return 1 + int(target.coupling_matrix().getnnz(axis=1).max(initial=0))
    return target.dim


# -- records -----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class WalkRecord:
    """Every state one intracluster move scored: its 2k walk steps, per chain.

    ``sites[c, t]`` is the bit flipped at step t + 1 and ``log_prob[c, t]``
    the log p̃ of the state after it, s_{t+1}, for t < ``length[c]`` = 2k_c
    (padding: −1 and NaN). s_{2k} is the proposal; the others lie on
    S_{n∓1}, …, S_{n∓k}, outside the support of π_n, so an estimator of π_n
    that reuses them must weight them accordingly. They cost no evaluation
    beyond the move's: log p̃(s_t) = log p̃(s_{t−1}) + Δ_{b_t}(s_{t−1}).
    """

    sites: np.ndarray
    log_prob: np.ndarray
    length: np.ndarray
    #: log of Eq. 6's ratio of each chain's move (α = min(1, exp(log_acceptance))).
    log_acceptance: np.ndarray
    #: log f of each chain's forward path and of its reverse (Eq. 3), which that ratio compares.
    log_forward: np.ndarray
    log_reverse: np.ndarray

    def states(self, start: np.ndarray) -> np.ndarray:
        """The walk states s_1 … s_{2K} of the moves begun at ``start``, ``(n_chains, 2K, d)`` (padding: s_{2k})."""
        chain, step = np.nonzero(self.sites >= 0)
        flips = np.zeros(self.sites.shape + (start.shape[1],), dtype=np.uint8)
        flips[chain, step, self.sites[chain, step]] = 1
        return start[:, None, :] ^ np.bitwise_xor.accumulate(flips, axis=1)


@dataclass
class MoveLog:
    """What the walks of one move did, step-major: column c of row t − 1 is chain c's step t (padding past 2k_c).

    ``toward`` says whether step t goes toward c, ``path`` is the flipped bit
    b_t (−1), ``ratio`` Δ_{b_t}(s_{t−1}) (0), ``log_z_forward`` log Z_{F_t}(s_{t−1})
    and ``log_z_reverse`` log Z_{R_t}(s_t) (0); ``sites``, ``before`` and ``after`` the flip ratios step t changed
    (``delta_after_flip``'s sites, ``(2K, n, w)``) and their values before and
    after it, so that any run of steps can be undone or redone without an
    evaluation.
    """

    k: np.ndarray
    toward: np.ndarray
    path: np.ndarray
    ratio: np.ndarray
    log_z_forward: np.ndarray
    log_z_reverse: np.ndarray
    sites: np.ndarray | None = None
    before: np.ndarray | None = None
    after: np.ndarray | None = None

    @classmethod
    def empty(cls, k: np.ndarray, toward_first: np.ndarray) -> MoveLog:
        shape = (2 * int(k.max()), k.size)
        toward = step_toward(np.arange(1, shape[0] + 1)[:, None], k, toward_first)
        return cls(k, toward, np.full(shape, -1), np.zeros(shape), np.zeros(shape), np.zeros(shape))

    def allocate_flips(self, width: int) -> None:
        """Make room for the flip ratios of every step: ``width`` per flip (``delta_after_flip``'s)."""
        if self.sites is None:
            shape = self.path.shape + (width,)
            self.sites, self.before, self.after = np.zeros(shape, dtype=np.int64), np.zeros(shape), np.zeros(shape)

    def record(self, t: int, rows: np.ndarray, idx, sites, before, after) -> None:
        """Log step t of the chains ``rows``: the flipped bits and the flip ratios they changed."""
        self.allocate_flips(sites.shape[1])
        self.path[t - 1, rows] = idx
        self.sites[t - 1, rows], self.before[t - 1, rows], self.after[t - 1, rows] = sites, before, after

    def steps(self, first, last) -> np.ndarray:
        """``(2K, n)`` mask of the steps t with first_c ≤ t ≤ last_c (arrays or scalars)."""
        t = np.arange(1, self.path.shape[0] + 1)[:, None]
        return (t >= first) & (t <= last)

    def path_log_probabilities(self, gamma: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """log f of each chain's forward path and of its reverse (Eq. 3, γ per chain); Eq. 6's log α is
        Σ_t Δ_t + log f(reverse) − log f(forward) (``path_log_acceptance``)."""
        return ((gamma * self.ratio - self.log_z_forward).sum(axis=0),
                (-gamma * self.ratio - self.log_z_reverse).sum(axis=0))


# -- the walks' caches: two backends -----------------------------------------------------------------------
class Walks:
    """The chains' states (flipped in place), flip log-ratios Δ and barred bits, and the Z of Eq. 2.

    Bits, Δ and bars are addressed by *keys* c·d + i (chain c, bit i) in flat
    views, so one numpy call reaches any set of (chain, bit) pairs. Writes
    leave derived structures stale until ``refresh`` is given the keys that
    changed (a no-op for the dense backend).
    """

    def __init__(self, target, states: np.ndarray, log_p: np.ndarray, reference: np.ndarray, gamma: float):
        self.target = target
        self.states = states
        self.reference = reference
        self.dim = states.shape[1]
        self.gamma = np.full(states.shape[0], float(gamma))
        self.delta = target.delta_log_prob(states, log_p)
        self.log_p_now = np.array(log_p, dtype=np.float64)  # each chain's log p̃ as it walks (``begin``)
        self.barred = np.zeros(states.shape, dtype=bool)
        # Flat views (never copies: the walks write through them into the chains' states).
        self._bits, self._ratios, self._bars = (np.reshape(a, -1, copy=False)
                                                for a in (self.states, self.delta, self.barred))

    def keys(self, chains, bits) -> np.ndarray:
        return chains * self.dim + bits

    def ratio(self, rows, idx) -> np.ndarray:
        """Δ_idx of the chains ``rows``."""
        return self._ratios[self.keys(rows, idx)]

    def flip(self, rows: np.ndarray, idx: np.ndarray):
        """Flip bit ``idx`` of each chain in ``rows`` (refreshed); returns ``(sites, before, after)`` of Δ.

        ``delta_after_flip`` (counted) is given the chains' rows in place when
        every chain walks, so a step copies nothing of size d.
        """
        everyone = rows.size == self.states.shape[0]
        x, delta = (self.states, self.delta) if everyone else (self.states[rows], self.delta[rows])
        self.log_p_now[rows] += self._ratios[self.keys(rows, idx)]
        sites, after = self.target.delta_after_flip(x, delta, idx, self.log_p_now[rows])
        keys = self.keys(rows[:, None], sites)
        before = self._ratios[keys]
        self._write(keys, after, self.keys(rows, idx))
        return sites, before, after

    def begin(self, log_p: np.ndarray) -> None:
        """A move starts from states of log p̃ ``log_p``: each flip then knows the log p̃ of the state it reaches
        (the ratios after it are to a known state: a black box is asked for the neighbours alone)."""
        self.log_p_now[:] = log_p

    def undo(self, rows, idx, sites, before) -> None:
        """Undo one logged step of the chains ``rows`` (refreshed): no evaluation."""
        self._write(self.keys(rows[:, None], sites), before, self.keys(rows, idx))

    def _write(self, keys, values, flipped) -> None:
        self._ratios[keys] = values
        self._bits[flipped] ^= 1
        self.refresh(np.concatenate([keys.ravel(), flipped]))

    def restore(self, log: MoveLog, steps: np.ndarray, undo: bool) -> np.ndarray:
        """Undo (to before the first) or redo (to after the last) the ``steps`` (mask) of each chain at once.

        Not refreshed; returns the keys that changed. A bit's Δ becomes its
        value before the earliest of these steps that changed it (undo) or
        after the latest (redo), and each step's bit is toggled (a bit flipped
        twice by a re-flipping move is toggled back).
        """
        t, c = np.nonzero(steps)
        keys = self.keys(c[:, None], log.sites[t, c]).ravel()
        values = (log.before if undo else log.after)[t, c].ravel()
        if not undo:
            keys, values = keys[::-1], values[::-1]
        keys, first = np.unique(keys, return_index=True)
        self._ratios[keys] = values[first]
        flipped = self.keys(c, log.path[t, c])
        np.bitwise_xor.at(self._bits, flipped, 1)
        return np.concatenate([keys, flipped])

    def set_barred(self, keys: np.ndarray, barred: bool) -> None:
        """Bar (or free) the bits ``keys`` from being flipped (not refreshed)."""
        self._bars[keys] = barred

    def set_gamma(self, gamma: np.ndarray) -> None:
        """Use the step bias γ_c per chain from now on."""
        self.gamma = np.asarray(gamma, dtype=np.float64)

    def refresh(self, keys: np.ndarray) -> None:
        """Bring derived structures up to date after bits, Δ or bars changed at ``keys``."""

    def choose(self, toward, rows, rng):
        """Draw each chain's next bit by Eq. 2; returns ``(idx, log Z_F)``."""
        raise TypeError(f"{type(self).__name__} must implement choose")

    def step(self, log: MoveLog, t: int, toward, rows, rng, reverse_now) -> None:
        """Walk step t of the chains ``rows`` (Eq. 2): choose, flip, and log the bit, Δ, Z_F and the changed ratios;
        then Z_R where ``reverse_now`` (R_t known: it does not depend on the rest of the walk)."""
        idx, log.log_z_forward[t - 1, rows] = self.choose(toward, rows, rng)
        log.ratio[t - 1, rows] = self.ratio(rows, idx)
        log.record(t, rows, idx, *self.flip(rows, idx))
        known = rows[reverse_now]
        if known.size:
            log.log_z_reverse[t - 1, known] = self.log_z(~toward[reverse_now], known)

    def unstep(self, log: MoveLog, t: int, toward, rows) -> None:
        """Log Z_R at s_t, then undo step t of the chains ``rows`` (no evaluation)."""
        log.log_z_reverse[t - 1, rows] = self.log_z(~toward, rows)
        self.undo(rows, log.path[t - 1, rows], log.sites[t - 1, rows], log.before[t - 1, rows])

    def log_z(self, toward, rows) -> np.ndarray:
        """log Z_A(s) of Eq. 2 for the chains ``rows``, A = their allowed bits of kind ``toward``."""
        raise TypeError(f"{type(self).__name__} must implement log_z")


#: The two kinds of walk step, as a column to broadcast against bits: toward c, away from c.
KINDS = np.array([[True], [False]])


class TreeWalks(Walks):
    """Sum-trees of γΔ over the differing bits and over the agreeing bits: O(log d) sampling and Z.

    One ``LogSumTree`` holds both: row c is chain c's tree for steps toward c
    (leaves γ_c Δ_i on its allowed differing bits, −∞ elsewhere), row n + c
    its tree for steps away (the allowed agreeing bits), so one compiled call
    (``refresh_walk_leaves``) refreshes both trees of every changed bit.
    """

    def __init__(self, target, states, log_p, reference, gamma):
        super().__init__(target, states, log_p, reference, gamma)
        self.trees = LogSumTree(self._all_leaves())

    @property
    def _tables(self):
        """The target's (nbr, w, degree, β) on a sparse pairwise model, else None (read, not held: they are the
        target's)."""
        return self.target.flip_tables

    @property
    def _kernel_arrays(self) -> tuple:
        """What the compiled walk steps read and write: the trees, the chains' arrays and flat views, c and γ."""
        return (*self.trees.arrays, self.states, self.delta, self._bits, self._ratios, self._bars, self.reference,
                self.gamma)

    def _all_leaves(self):
        allowed = allowed_bits(self.states, self.reference, KINDS[:, :, None], self.barred)
        return masked_log_weights(self.delta, allowed, self.gamma[:, None]).reshape(-1, self.dim)

    def set_gamma(self, gamma):
        super().set_gamma(gamma)
        self.trees.rebuild(self._all_leaves())

    def refresh(self, keys):
        refresh_walk_leaves(*self.trees.arrays, self._bits, self._ratios, self._bars, self.reference, self.gamma,
                            keys.astype(np.int64, copy=False))

    def _tree_rows(self, toward, rows):
        return rows + self.states.shape[0] * ~toward

    def log_z(self, toward, rows):
        return self.trees.log_totals(self._tree_rows(toward, rows))

    def choose(self, toward, rows, rng):
        tree_rows = self._tree_rows(toward, rows)
        return self.trees.sample(rng, tree_rows), self.trees.log_totals(tree_rows)

    def step(self, log, t, toward, rows, rng, reverse_now):
        """On a sparse pairwise model one compiled call (``tree_walk_steps``); otherwise the generic step."""
        if self._tables is None:
            return super().step(log, t, toward, rows, rng, reverse_now)
        nbr, w, degree, beta = self._tables
        log.allocate_flips(1 + nbr.shape[1])
        self.target.count_evaluations(tree_walk_steps(
            *self._kernel_arrays, nbr, w, degree, beta, rows, toward, reverse_now,
            rng.random((rows.size, self.trees.depth)), t - 1, log.path, log.ratio, log.log_z_forward,
            log.log_z_reverse, log.sites, log.before, log.after))

    def unstep(self, log, t, toward, rows):
        """On a sparse pairwise model one compiled call (``tree_unwalk_steps``); otherwise the generic one."""
        if self._tables is None:
            return super().unstep(log, t, toward, rows)
        tree_unwalk_steps(*self._kernel_arrays, rows, toward, t - 1, log.path, log.log_z_reverse, log.sites,
                          log.before)


class DenseWalks(Walks):
    """Masked weights of all d bits per step: O(d), cheaper when a flip changes O(d) ratios anyway."""

    def _log_weights(self, toward, rows):
        allowed = allowed_bits(self.states[rows], self.reference, toward[:, None], self.barred[rows])
        return masked_log_weights(self.delta[rows], allowed, self.gamma[rows, None])

    def log_z(self, toward, rows):
        return log_normaliser(self._log_weights(toward, rows))

    def choose(self, toward, rows, rng):
        log_weights = self._log_weights(toward, rows)
        return sample_categorical(log_weights, rng), log_normaliser(log_weights)


# -- the sampler ------------------------------------------------------------------------------------------
