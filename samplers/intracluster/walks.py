"""Intracluster moves (Hamze & de Freitas, "Intracluster moves for constrained discrete-space MCMC",
UAI 2010): biased self-avoiding walks out of S_n(c) and back.

Notation as in ``samplers.intracluster.fixed_distance``: c is the reference state, S_n(c)
the states at Hamming distance n from it, π_n the target on it (Eq. 1). We
write E = −log p̃ (the paper's β is part of p̃, so its choice γ = β is our
γ = 1) and Δ_i(s) = log p̃(s^(i)) − log p̃(s) for the flip log-ratios.

Walk steps (Eq. 2). A step *toward* c (the paper's upward SAW, S_m → S_{m−1})
flips a bit that differs from c; a step *away* from c (downward SAW,
S_m → S_{m+1}) flips a bit that agrees with c. Among the allowed bits A(s) it
picks i with probability

    f(i | s) = exp(−γ E(s^(i))) / Σ_{j∈A(s)} exp(−γ E(s^(j))) = exp(γ Δ_i(s)) / Z_A(s),     (Eq. 2)

Z_A(s) = Σ_{j∈A(s)} exp(γ Δ_j(s)). Eq. 2 is the upward f_up; the downward
f_down after it is the same formula, unnumbered. (The paper draws the upward
step from P(x₀) and the downward one from N(y), which swaps the sets it
defines in §2: an upward step goes to S_{n−1}, and Fig. 1 flips bits that
differ from c. Here the sets follow Fig. 1.) A flipped bit changes sides, so
no walk can flip a bit twice: every walk is self-avoiding.

A move of length k (Fig. 1). ``order="up_first"``: a walk σ of k steps
toward c, down to a bridge point y ∈ S_{n−k}, then a walk ρ of k steps away
from c, back to x' ∈ S_n. ``"down_first"``: away first (through S_{n+k}),
then toward. ``"random"``: a fair coin per move and chain; each order is a
reversible kernel, so their mixture is one too. ``walk_length=(k_min, k_max)``
draws k uniformly per move and chain (again a mixture). With
``reflip=False`` (the default) the second walk may not flip a bit of the
first, so a move changes 2k distinct bits; ``reflip=True`` lets it, as the
paper's Fig. 1 does (σ = [4, 2, 5], ρ = [5, 7, 2]).

Acceptance (Eq. 3 and 6; pathwise detailed balance, Definition 1 and
Proposition 1). Let s_0 = x, …, s_{2k} = x' be the states of the move and
b_1 … b_{2k} its flipped bits (σ then ρ). Step t starts at s_{t−1} and
chooses among F_t, the bits of its kind (differing from c for a step toward
c, agreeing for one away), minus σ when t > k and not reflip. The reverse
path (R(ρ), R(σ)) from x' has the same order (undoing a step away from c is a
step toward it), and its step undoing b_t starts at s_t and chooses among
R_t, the bits of s_t of the *opposite* kind to step t, minus ρ when t ≤ k
(its second walk) and not reflip. The path probability (Eq. 3, the product of
the step probabilities) and the acceptance (Eq. 6) are

    log f(x', σ, ρ | x)       = Σ_t [ γ Δ_{b_t}(s_{t−1}) − log Z_{F_t}(s_{t−1}) ],            (Eq. 3)
    log f(x, R(ρ), R(σ) | x') = Σ_t [ γ Δ_{b_t}(s_t)     − log Z_{R_t}(s_t) ],
                                                       with Δ_{b_t}(s_t) = −Δ_{b_t}(s_{t−1}),

    α = min{1, p̃(x') f(x, R(ρ), R(σ) | x') / (p̃(x) f(x', σ, ρ | x))}.                          (Eq. 6)

(The Δ terms telescope: log α = (1 − 2γ) log p̃(x')/p̃(x) + Σ_t log Z_{F_t}(s_{t−1})
− Σ_t log Z_{R_t}(s_t); at γ = 1/2 only the normalisers remain.)

Adaptation (``adapt=True``, beyond the paper, which tunes γ and k by hand in
§4 and asks for adaptive MCMC in §5). For the first ``burn_in`` steps γ and
the walk length are tuned on the batch of chains by stochastic approximation:
the walk length towards ``target_acceptance``, γ towards the largest
acceptance; the rule and its criterion (the squared jump per unit of compute)
are in ``samplers.intracluster.walk_adaptation``. Meanwhile the chain is
adaptive MCMC (each chain moves with its own perturbed γ). Then the tuned
values are frozen (``samplers.common.adaptive``: ``frozen_at`` records the
step) and the chain is exact MCMC with the plain kernel at those values. The
parameters stay as requested (``config()`` replays the whole run, tuning
included), and ``frozen_params()`` gives the tuned ``{"gamma",
"walk_length", "adapt": False}``: merged over the requested parameters they
make the frozen kernel from step 0.

``last_walk`` (a ``WalkRecord``) holds every state the last move scored, for
estimators that reuse all scored states.

Cost: every chain caches Δ(x) for all bits; a walk step updates it with
``delta_after_flip`` (1 + deg ratios on a sparse pairwise model, d on a black
box) and logs the changed values, so undoing or redoing any run of steps
costs no evaluation. ``backend="tree"`` keeps, per chain, a log-space
sum-tree over the differing bits and one over the agreeing bits (leaves γΔ_i,
−∞ for bits not allowed), all in one ``LogSumTree``, like the paper's binary
heap (§3): sampling a step and reading any Z is O(log d), a step
O(deg·log d); on a sparse pairwise model a walk step of all chains is one
compiled call (``tree_walk_steps``, and ``tree_unwalk_steps`` to rewind), on
other targets a few numpy calls. ``"dense"`` recomputes the masked weights of
all d bits per step, O(d), the cheaper choice when a flip changes O(d) ratios
(as §3 notes for dense models); ``"auto"`` picks by the target's sparsity
(``active_backend``). Z_{F_t} is read before step t and Z_{R_t} right after
it, except Z_{R_t} for t ≤ k without reflip, which needs ρ: every chain jumps
back to its bridge point s_k in one batch (ρ barred), σ is undone step by
step reading those Z_{R_t}, and the accepted moves jump forward to x' in one
batch; with reflip only the rejected moves jump back, in one batch. A move
thus costs 3k (reflip: 2k) single-step tree updates and two batch updates,
and Σ over its 2k steps of ``delta_after_flip``'s evaluations per chain
(2k(1 + deg) on a lattice, 2k·d on a black box), plus d + 1 per chain at a
reset. While adapting, the trees are rebuilt, O(d), whenever γ changes.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np
import param
from numba import njit, vectorize

from samplers.balanced.sumtree import LogSumTree, log_total_of, sample_rows, set_leaf
from samplers.base import ExactCase, Move, SamplerFacts, acceptance_probability, metropolis_accept, sample_categorical
from samplers.common.adaptive import Adaptive
from samplers.common.history import BoundedHistory
from samplers.diagnostics.inspection import ProposalInspection
from samplers.intracluster.fixed_distance import FixedDistanceSampler
from samplers.intracluster.walk_adaptation import HISTORY_COLUMNS, WalkAdaptation
from targets.base import flip
from targets.compiled import helper
from targets.pairwise import PairwiseBinaryModel, flip_ratio_update

ORDERS = ("up_first", "down_first", "random")


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
    tree for steps away (``_TreeWalks``); ``bits``, ``ratios``, ``bars`` are
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


def _bit_mask(bits: np.ndarray, dim: int) -> np.ndarray:
    """``(m, dim)`` boolean mask with the ``bits`` of each row (``(m, j)``) set."""
    mask = np.zeros((bits.shape[0], dim), dtype=bool)
    mask[np.arange(bits.shape[0])[:, None], bits] = True
    return mask


def _prefixes(path: np.ndarray, stop: np.ndarray) -> np.ndarray:
    """``path[c, :stop_c]`` per row, padded to the longest by repeating the row's last entry (none empty)."""
    columns = np.minimum(np.arange(int(stop.max())), stop[:, None] - 1)
    return np.take_along_axis(path, columns, axis=1)


def _by_chain(table: np.ndarray) -> np.ndarray:
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
class _MoveLog:
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
    def empty(cls, k: np.ndarray, toward_first: np.ndarray) -> _MoveLog:
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
class _Walks:
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

    def restore(self, log: _MoveLog, steps: np.ndarray, undo: bool) -> np.ndarray:
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

    def step(self, log: _MoveLog, t: int, toward, rows, rng, reverse_now) -> None:
        """Walk step t of the chains ``rows`` (Eq. 2): choose, flip, and log the bit, Δ, Z_F and the changed ratios;
        then Z_R where ``reverse_now`` (R_t known: it does not depend on the rest of the walk)."""
        idx, log.log_z_forward[t - 1, rows] = self.choose(toward, rows, rng)
        log.ratio[t - 1, rows] = self.ratio(rows, idx)
        log.record(t, rows, idx, *self.flip(rows, idx))
        known = rows[reverse_now]
        if known.size:
            log.log_z_reverse[t - 1, known] = self.log_z(~toward[reverse_now], known)

    def unstep(self, log: _MoveLog, t: int, toward, rows) -> None:
        """Log Z_R at s_t, then undo step t of the chains ``rows`` (no evaluation)."""
        log.log_z_reverse[t - 1, rows] = self.log_z(~toward, rows)
        self.undo(rows, log.path[t - 1, rows], log.sites[t - 1, rows], log.before[t - 1, rows])

    def log_z(self, toward, rows) -> np.ndarray:
        """log Z_A(s) of Eq. 2 for the chains ``rows``, A = their allowed bits of kind ``toward``."""
        raise TypeError(f"{type(self).__name__} must implement log_z")


#: The two kinds of walk step, as a column to broadcast against bits: toward c, away from c.
_KINDS = np.array([[True], [False]])


class _TreeWalks(_Walks):
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
        allowed = allowed_bits(self.states, self.reference, _KINDS[:, :, None], self.barred)
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


class _DenseWalks(_Walks):
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
class Intracluster(Adaptive, FixedDistanceSampler):
    """Intracluster moves: energy-biased self-avoiding walks out of S_n(c) and back (Hamze & de Freitas 2010).

    With ``adapt`` the first ``burn_in`` steps tune γ and the walk length
    (``samplers.intracluster.walk_adaptation``); then ``freeze()`` fixes the tuned values
    (``frozen_params()``) and the chain is the plain, exact kernel with them.
    """

    registry_name = "intracluster"
    facts = SamplerFacts(
        example={"n_active": 18, "walk_length": (1, 3), "gamma": 0.5},
        exact=(ExactCase({"n_active": 3, "walk_length": (1, 2), "gamma": 0.5}),
               ExactCase({"n_active": 3, "walk_length": 2, "gamma": 1.0, "order": "random", "reflip": True},
                         "boltzmann", {})),
        warm_up=({"backend": "dense"}, {"backend": "tree"}), inspection="walk")
    bytes_per_site = FixedDistanceSampler.bytes_per_site + 9  # the walks' flip log-ratios Δ and barred bits
    walk_length = param.Parameter(1, doc="Walk length k, or (k_min, k_max) to draw k uniformly per move and chain; "
                                         "1 ≤ k ≤ min(n, d − n).")
    gamma = param.Number(1.0, bounds=(0.0, None),
                         doc="Bias γ of the walk steps, P(i) ∝ exp(γ Δ_i) (Eq. 2); γ = 1 is the paper's γ = β, "
                             "0 picks uniformly.")
    order = param.Selector(default="up_first", objects=list(ORDERS),
                           doc="Walk toward the reference first (up_first), away first (down_first), or a fair "
                               "coin per move (random).")
    reflip = param.Boolean(False, doc="Let the second walk flip bits back that the first flipped (the paper's "
                                      "Fig. 1); off: every move changes 2k distinct bits.")
    backend = param.Selector(default="auto", objects=["auto", "tree", "dense"],
                             doc="Walk steps by sum-trees, O(log d) (sparse models), or dense O(d) updates; auto "
                                 "chooses by the target's sparsity.")
    adapt = param.Boolean(False, doc="Tune γ and the walk length during the first burn_in steps (stochastic "
                                     "approximation, samplers.intracluster.walk_adaptation), then freeze them: gamma "
                                     "and walk_length are the starting values, frozen_params() the tuned ones.")
    burn_in = param.Integer(1000, bounds=(0, None), doc="With adapt: the steps during which γ and k are tuned.")
    target_acceptance = param.Number(0.3, bounds=(0.0, 1.0), inclusive_bounds=(False, False),
                                     doc="With adapt: the acceptance rate the walk length is tuned to (the longest "
                                         "walks still accepted this often).")

    @classmethod
    def estimated_bytes(cls, n_chains, dim, params=None):
        """The default plus the walks' caches and records, the sum-trees and the tuning.

        Per chain: γ and its index, the last move's ``WalkRecord`` and the
        record's sites and values for walks of up to 2K steps (K the longest
        walk length; with adapt min(n, d − n), which the tuning may reach).
        The two sum-trees per chain unless ``backend="dense"`` (``"auto"``
        may choose them). With adapt, the tuning's per-chain signs and last
        log acceptances, and its history.
        """
        n_active = cls._requested(params, "n_active") or dim // 2
        limit = min(n_active, dim - n_active)
        adapt = cls._requested(params, "adapt")
        longest = limit if adapt else walk_length_range(cls._requested(params, "walk_length"), limit)[1]
        per_chain = 16 + 2 * longest * (16 + 9) + 16 + (16 if adapt else 0)
        trees = 0 if cls._requested(params, "backend") == "dense" else LogSumTree.estimated_bytes(2 * n_chains, dim)
        history = BoundedHistory.estimated_bytes(len(HISTORY_COLUMNS)) if adapt else 0
        return super().estimated_bytes(n_chains, dim, params) + n_chains * per_chain + trees + history

    def _validate(self):
        super()._validate()
        self._limit = min(self.distance, self.target.dim - self.distance)
        walk_length_range(self.walk_length, self._limit)

    @property
    def active_backend(self) -> str:
        """The backend in use, "tree" or "dense" (``backend="auto"`` resolved by sparsity)."""
        return self._backend

    def _prepare(self):
        d = self.target.dim
        sparse = flip_update_width(self.target) * max(1, (d - 1).bit_length()) < d
        self._backend = ("tree" if sparse else "dense") if self.backend == "auto" else self.backend
        walks = _TreeWalks if self._backend == "tree" else _DenseWalks
        # The kernel's γ and (k_min, k_max): the requested ones, the tuned ones once frozen.
        self._gamma, self._lengths = float(self.gamma), walk_length_range(self.walk_length, self._limit)
        self._walks = walks(self.target, self.states, self.log_p, self.reference_state, self._gamma)
        self._everyone = np.arange(self.n_chains)
        self.last_walk: WalkRecord | None = None
        self.adaptation = (WalkAdaptation(self._gamma, self._lengths, self._limit, self.target_acceptance,
                                          self.n_chains) if self.adapt else None)
        self._start_adaptation(self.adapt)

    # -- adaptation (the Adaptive hooks) --------------------------------------------------------------------
    def _fix_kernel(self) -> None:
        """The tuned γ and walk length become the kernel's (the parameters keep the requested values)."""
        self._gamma = self.adaptation.gamma
        self._lengths = walk_length_range(self.adaptation.walk_length(), self._limit)
        self._walks.set_gamma(np.full(self.n_chains, self._gamma))

    def _kernel_params(self) -> dict:
        k_min, k_max = self._lengths
        return {"gamma": self._gamma, "walk_length": k_min if k_min == k_max else (k_min, k_max), "adapt": False}

    def adaptation_history(self) -> dict[str, np.ndarray] | None:
        """The tuning so far, per adaptation step: step, gamma, walk_length (κ), acceptance (mean ᾱ); bounded."""
        return None if self.adaptation is None else self.adaptation.history.snapshot()

    # -- the move mixture ------------------------------------------------------------------------------
    def _draw_moves(self):
        """Each chain's walk length k (uniform on the range, or the adaptation's) and whether it goes toward c first."""
        n = self.n_chains
        k_min, k_max = self._lengths
        if self.adapting:
            k = self.adaptation.draw_lengths(self.rng)
        elif k_min == k_max:
            k = np.full(n, k_min)
        else:
            k = self.rng.integers(k_min, k_max + 1, size=n)
        toward_first = self.rng.random(n) < 0.5 if self.order == "random" else np.full(n, self.order == "up_first")
        return k, toward_first

    def _move_mixture(self):
        """The ``(k, toward_first, probability)`` that ``_draw_moves`` draws from."""
        k_min, k_max = self._lengths
        firsts = (True, False) if self.order == "random" else (self.order == "up_first",)
        weight = 1.0 / ((k_max - k_min + 1) * len(firsts))
        return [(k, first, weight) for k in range(k_min, k_max + 1) for first in firsts]

    # -- the vectorised move -----------------------------------------------------------------------------
    def _step(self):
        if not self._adapts_this_step():
            return self._move()
        self._walks.set_gamma(self.adaptation.chain_gammas())
        moved = self._move()
        self.adaptation.update(self.last_walk.log_acceptance)
        return moved

    def _move(self):
        """One intracluster move of every chain (Eq. 2, 3, 6) with the walks' current γ per chain."""
        n = self.n_chains
        log = self._walk(*self._draw_moves())
        length = 2 * log.k
        path = _by_chain(log.path)
        sites = _prefixes(path, length)
        values = self.states[np.arange(n)[:, None], sites]
        path_log_p = np.cumsum(np.column_stack([self.log_p, _by_chain(log.ratio)]), axis=1)[:, 1:]
        path_log_p[path < 0] = np.nan
        proposed_log_p = path_log_p[np.arange(n), length - 1]
        rho = None if self.reflip else self._rewind(log)
        log_forward, log_reverse = log.path_log_probabilities(self._walks.gamma)
        log_alpha = path_log_acceptance(log.ratio.sum(axis=0), log_forward, log_reverse)
        accepted = metropolis_accept(log_alpha, self.rng)
        self._finish(log, accepted, rho)
        self.log_p[accepted] = proposed_log_p[accepted]
        self.last_walk = WalkRecord(path, path_log_p, length, log_alpha, log_forward, log_reverse)
        return Move(accepted=accepted, proposed_sites=sites, proposed_values=values, proposed_log_prob=proposed_log_p)

    def _active(self, t: int, last: np.ndarray, shortest: int) -> np.ndarray:
        """The chains whose move has a step t (t ≤ last_c; ``shortest`` = min last)."""
        return self._everyone if t <= shortest else np.flatnonzero(last >= t)

    def _walk(self, k, toward_first) -> _MoveLog:
        """The forward walks σ then ρ of every chain (Eq. 2 steps), logged; the chains end at x' = s_{2k}.

        Z_{F_t} is read before step t, Z_{R_t} right after it when R_t does
        not depend on ρ (t > k, or reflip). Without reflip the second walk's
        F_t excludes σ: σ is barred at the bridge point s_k.
        """
        walks, log, reflip = self._walks, _MoveLog.empty(k, toward_first), self.reflip
        walks.begin(self.log_p)
        bridges = {} if reflip else {int(length): np.flatnonzero(k == length) for length in np.unique(k)}
        length, shortest = 2 * k, 2 * int(k.min())
        for t in range(1, log.path.shape[0] + 1):
            if t - 1 in bridges:
                sigma = walks.keys(bridges[t - 1], log.path[: t - 1, bridges[t - 1]]).ravel()
                walks.set_barred(sigma, True)
                walks.refresh(sigma)
            rows = self._active(t, length, shortest)
            reverse_now = np.full(rows.size, True) if reflip else k[rows] < t  # R_t does not depend on ρ
            walks.step(log, t, log.toward[t - 1, rows], rows, self.rng, reverse_now)
        return log

    def _rewind(self, log: _MoveLog) -> np.ndarray:
        """Rewind every chain to x, reading log Z_{R_t}(s_t) for t ≤ k; returns the keys of ρ, left barred.

        R(σ), the reverse path's second walk, starts at the bridge point s_k
        with ρ barred and σ free. One batch restores s_k (the Δ of steps
        k+1 … 2k, σ freed, ρ barred); then σ is undone step by step, Z_{R_t}
        read at each s_t before undoing b_t.
        """
        walks, k = self._walks, log.k
        first, second = log.steps(1, k), log.steps(k + 1, 2 * k)
        sigma, rho = (walks.keys(np.nonzero(mask)[1], log.path[mask]) for mask in (first, second))
        touched = walks.restore(log, second, undo=True)
        walks.set_barred(sigma, False)
        walks.set_barred(rho, True)
        walks.refresh(np.concatenate([touched, sigma]))
        shortest = int(k.min())
        for t in range(int(k.max()), 0, -1):
            rows = self._active(t, k, shortest)
            walks.unstep(log, t, log.toward[t - 1, rows], rows)
        return rho

    def _finish(self, log: _MoveLog, accepted: np.ndarray, rho: np.ndarray | None) -> None:
        """Leave accepted chains at x' and the others at x, with nothing barred.

        Without reflip every chain is at x with ρ barred (``_rewind``): free ρ
        and redo the accepted moves in one batch. With reflip every chain is
        at x': undo the rejected moves in one batch.
        """
        walks, every_step = self._walks, log.steps(1, 2 * log.k)
        if rho is None:
            walks.refresh(walks.restore(log, every_step & ~accepted, undo=True))
        else:
            walks.set_barred(rho, False)
            walks.refresh(np.concatenate([rho, walks.restore(log, every_step & accepted, undo=False)]))

    # -- the exact kernel --------------------------------------------------------------------------------
    def _enumerate_moves(self, x: np.ndarray, k: int, toward_first: bool):
        """Every move of walk length k from x: final states, log f(x', σ, ρ | x) (Eq. 3) and log α (Eq. 6).

        The paths are grown breadth-first with the flip ratios of every state
        they visit; then each path's reverse (R(ρ), R(σ)) is scored step by step.
        """
        d, c, gamma = x.size, self.reference_state, self._gamma
        states, deltas = [x[None, :]], [self.target.delta_log_prob(x[None, :])]  # s_t and Δ(s_t) of every path
        bits = np.zeros((1, 0), dtype=np.int64)
        log_forward = np.zeros(1)
        for t in range(1, 2 * k + 1):
            barred = _bit_mask(bits[:, :k] if t > k and not self.reflip else bits[:, :0], d)
            allowed = allowed_bits(states[-1], c, step_toward(t, k, toward_first), barred)
            log_w = masked_log_weights(deltas[-1], allowed, gamma)
            parent, bit = np.nonzero(allowed)
            log_forward = log_forward[parent] + log_w[parent, bit] - log_normaliser(log_w)[parent]
            states, deltas = [s[parent] for s in states], [delta[parent] for delta in deltas]
            bits = np.column_stack([bits[parent], bit])
            states.append(flip(states[-1], bit))
            deltas.append(self.target.delta_log_prob(states[-1]))
        paths = np.arange(len(bits))
        log_reverse = np.zeros(len(bits))
        for t in range(1, 2 * k + 1):
            barred = _bit_mask(bits[:, k:] if t <= k and not self.reflip else bits[:, :0], d)
            log_w = masked_log_weights(deltas[t], allowed_bits(states[t], c, not step_toward(t, k, toward_first),
                                                               barred), gamma)
            log_reverse += log_w[paths, bits[:, t - 1]] - log_normaliser(log_w)
        log_ratio = self.target.log_prob(states[-1]) - self.target.log_prob(x[None, :])
        return states[-1], log_forward, path_log_acceptance(log_ratio, log_forward, log_reverse)

    def transition_row(self, x):
        if self.adapting:
            raise ValueError("the kernel changes while adapting; freeze() it (or let burn_in pass) first")
        x = self.check_support(x)[0]
        finals, probs = [], []
        for k, toward_first, weight in self._move_mixture():
            states, log_forward, log_alpha = self._enumerate_moves(x, k, toward_first)
            finals.append(states)
            probs.append(weight * np.exp(log_forward) * acceptance_probability(log_alpha))
        return self._with_stay(x, np.vstack(finals), np.concatenate(probs))

    def describe_move(self, x, proposal, record, chain, common):
        """The last move's walk (kept in ``last_walk``): its 2k flips in order, log f of the forward and reverse
        paths (Eq. 3) and Eq. 6's acceptance; None for an earlier step's record."""
        walk = self.last_walk
        if walk is None or record.step != self.n_steps:
            return None
        return ProposalInspection(kind="walk", path=walk.sites[chain, :walk.length[chain]],
                                  log_q_forward=float(walk.log_forward[chain]),
                                  log_q_reverse=float(walk.log_reverse[chain]),
                                  acceptance=float(acceptance_probability(walk.log_acceptance[chain:chain + 1])[0]),
                                  **common)
