"""Intracluster moves (Hamze & de Freitas, UAI 2010): biased self-avoiding walks out of S_n(c) and back.

Notation as in ``samplers.fixed_distance``: c is the reference state, S_n(c)
the states at Hamming distance n from it, π_n the target on it (Eq. 1). We
write E = −log p̃ (the paper's β is part of p̃, so its choice γ = β is our
γ = 1) and Δ_i(s) = log p̃(s^(i)) − log p̃(s) for the flip log-ratios.

Walk steps (Eq. 2). A step *toward* c (the paper's upward SAW, S_m → S_{m−1})
flips a bit that differs from c; a step *away* from c (downward SAW,
S_m → S_{m+1}) flips a bit that agrees with c. Among the allowed bits A(s) it
picks i with probability

    f(i | s) = exp(−γ E(s^(i))) / Σ_{j∈A(s)} exp(−γ E(s^(j))) = exp(γ Δ_i(s)) / Z_A(s),     (Eq. 2)

Z_A(s) = Σ_{j∈A(s)} exp(γ Δ_j(s)). A flipped bit changes sides, so no walk
can flip a bit twice: every walk is self-avoiding.

A move of length k (Fig. 1). ``order="up_first"``: a walk σ of k steps
toward c, down to a bridge point y ∈ S_{n−k}, then a walk ρ of k steps away
from c, back to x' ∈ S_n. ``"down_first"``: away first (through S_{n+k}),
then toward. ``"random"``: a fair coin per move and chain; each order is a
reversible kernel, so their mixture is one too. ``walk_length=(k_min, k_max)``
draws k uniformly per move and chain (again a mixture). With
``reflip=False`` (the default) the second walk may not flip a bit of the
first, so a move changes 2k distinct bits; ``reflip=True`` lets it, as the
paper's Fig. 1 does (σ = [4, 2, 5], ρ = [5, 7, 2]).

Acceptance (Eq. 3, 6; pathwise detailed balance, Definition 1). Let
s_0 = x, …, s_{2k} = x' be the states of the move and b_1 … b_{2k} its flipped
bits (σ then ρ). Step t starts at s_{t−1} and chooses among F_t, the bits of
its kind (differing from c for a step toward c, agreeing for one away),
minus σ when t > k and not reflip. The reverse path (R(ρ), R(σ)) from x' has
the same order (undoing a step away from c is a step toward it), and its step
undoing b_t starts at s_t and chooses among R_t, the bits of s_t of the
*opposite* kind to step t, minus ρ when t ≤ k (its second walk) and not
reflip. Then

    log f(x', σ, ρ | x)       = Σ_t [ γ Δ_{b_t}(s_{t−1}) − log Z_{F_t}(s_{t−1}) ],            (Eq. 3)
    log f(x, R(ρ), R(σ) | x') = Σ_t [ γ Δ_{b_t}(s_t)     − log Z_{R_t}(s_t) ],
                                                       with Δ_{b_t}(s_t) = −Δ_{b_t}(s_{t−1}),

    α = min{1, p̃(x') f(x, R(ρ), R(σ) | x') / (p̃(x) f(x', σ, ρ | x))}.                          (Eq. 6)

(The Δ terms telescope: log α = (1 − 2γ) log p̃(x')/p̃(x) + Σ_t log Z_{F_t}(s_{t−1})
− Σ_t log Z_{R_t}(s_t); at γ = 1/2 only the normalisers remain.)

Implementation. Every chain caches Δ(x) for all bits; a walk step updates it
with ``delta_after_flip`` (1 + deg ratios on a sparse pairwise model, d on a
black box) and logs the changed values, so undoing or redoing a walk costs no
evaluation. ``backend="tree"`` keeps, per chain, a log-space sum-tree over the
differing bits and one over the agreeing bits (leaves γΔ_i, −∞ for bits not
allowed): sampling a step and reading any Z is O(log d), a step O(deg·log d).
``"dense"`` recomputes the masked weights of all d bits per step (O(d), the
cheaper choice when a flip changes O(d) ratios); ``"auto"`` picks by the
target's sparsity (``active_backend``). Z_{F_t} is read before step t and
Z_{R_t} right after it — except Z_{R_t} for t ≤ k without reflip, which
needs ρ: those are read while rewinding every move from the log with ρ
barred, and accepted moves are then replayed; with reflip only rejected moves
are rewound. Evaluations: Σ over the 2k steps of
``delta_after_flip``'s cost per chain and move (2k(1 + deg) on a lattice,
2k·d on a black box), plus d + 1 per chain at a reset.

``last_walk`` (a ``WalkRecord``) holds every state the last move scored, for
estimators that reuse all scored states.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import param

from targets.base import flip
from targets.pairwise import PairwiseBinaryModel

from .base import acceptance_probability, metropolis_accept, sample_categorical
from .fixed_distance import FixedDistanceSampler
from .sumtree import LogSumTree

ORDERS = ("up_first", "down_first", "random")


# -- the kernel's functions, shared by step() and transition_row() --------------------------------------
def step_toward(t, k, toward_first):
    """Whether step t (1-based) of a move of walk length k flips toward c: the first walk's kind for t ≤ k."""
    return (t <= k) == toward_first


def allowed_bits(bits, reference_bits, toward, barred):
    """The bits a step may flip (Eq. 2's sets): not barred, and differing from c (toward) or agreeing (away)."""
    return ((bits != reference_bits) == toward) & ~barred


def masked_log_weights(delta, allowed, gamma: float):
    """log of Eq. 2's unnormalised step probabilities: γ Δ_i on allowed bits, −∞ elsewhere."""
    return np.where(allowed, gamma * delta, -np.inf)


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


def _segments(path: np.ndarray, start: np.ndarray, stop: np.ndarray) -> np.ndarray:
    """``path[c, start_c:stop_c]`` per row, padded to the longest by repeating the row's last entry (none empty)."""
    width = int((stop - start).max())
    columns = np.minimum(start[:, None] + np.arange(width), stop[:, None] - 1)
    return np.take_along_axis(path, columns, axis=1)


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

    def states(self, start: np.ndarray) -> np.ndarray:
        """The walk states s_1 … s_{2K} of the moves begun at ``start``, ``(n_chains, 2K, d)`` (padding: s_{2k})."""
        chain, step = np.nonzero(self.sites >= 0)
        flips = np.zeros(self.sites.shape + (start.shape[1],), dtype=np.uint8)
        flips[chain, step, self.sites[chain, step]] = 1
        return start[:, None, :] ^ np.bitwise_xor.accumulate(flips, axis=1)


class _Flips(NamedTuple):
    """One walk step of the chains ``rows``: the flipped bits and the flip ratios it changed, before and after."""

    rows: np.ndarray
    idx: np.ndarray
    sites: np.ndarray
    before: np.ndarray
    after: np.ndarray

    def select(self, chains: np.ndarray, undo: bool):
        """``(rows, idx, sites, values)`` to undo or redo this step for the chains marked in ``chains``."""
        keep = chains[self.rows]
        return self.rows[keep], self.idx[keep], self.sites[keep], (self.before if undo else self.after)[keep]


# -- the walks' caches: two backends -----------------------------------------------------------------------
class _Walks:
    """The chains' states (flipped in place), flip log-ratios Δ and barred bits, and the Z of Eq. 2."""

    def __init__(self, target, states: np.ndarray, reference: np.ndarray, gamma: float):
        self.target = target
        self.states = states
        self.reference = reference
        self.gamma = gamma
        self.delta = target.delta_log_prob(states)
        self.barred = np.zeros(states.shape, dtype=bool)

    def flip(self, rows: np.ndarray, idx: np.ndarray) -> _Flips:
        """Flip bit ``idx`` of each chain in ``rows``, updating Δ with ``delta_after_flip`` (counted)."""
        sites, values = self.target.delta_after_flip(self.states[rows], self.delta[rows], idx)
        step = _Flips(rows, idx, sites, self.delta[rows[:, None], sites], values)
        self.apply(rows, idx, sites, values)
        return step

    def apply(self, rows, idx, sites, values) -> None:
        """Toggle bit ``idx`` of each row and set its Δ at ``sites`` to ``values`` (a logged flip or its undo)."""
        if rows.size:
            self.states[rows, idx] ^= 1
            self.delta[rows[:, None], sites] = values
            self._refresh(rows, np.concatenate([idx[:, None], sites], axis=1))

    def bar(self, rows, sites, barred: bool) -> None:
        """Bar (or free) ``sites`` (``(r, j)``) of the chains ``rows`` from being flipped."""
        if rows.size:
            self.barred[rows[:, None], sites] = barred
            self._refresh(rows, sites)

    def _refresh(self, rows, sites) -> None:
        """Bring derived structures up to date after Δ, a bit or a bar changed at ``sites``."""

    def choose(self, toward, rows, rng):
        """Draw each chain's next bit by Eq. 2; returns ``(idx, log Z_F)``."""
        raise NotImplementedError

    def log_z(self, toward, rows) -> np.ndarray:
        """log Z_A(s) of Eq. 2 for the chains ``rows``, A = their allowed bits of kind ``toward``."""
        raise NotImplementedError


class _TreeWalks(_Walks):
    """Sum-trees of γΔ over the differing bits and over the agreeing bits: O(log d) sampling and Z."""

    def __init__(self, target, states, reference, gamma):
        super().__init__(target, states, reference, gamma)
        n, d = states.shape
        rows = np.arange(n)
        sites = np.broadcast_to(np.arange(d), (n, d))
        # Rows 0..n−1 hold each chain's tree for steps toward c, rows n..2n−1 its tree for steps away.
        self.trees = LogSumTree(np.vstack([self._leaves(rows, sites, True), self._leaves(rows, sites, False)]))

    def _leaves(self, rows, sites, toward: bool):
        allowed = allowed_bits(self.states[rows[:, None], sites], self.reference[sites], toward,
                               self.barred[rows[:, None], sites])
        return masked_log_weights(self.delta[rows[:, None], sites], allowed, self.gamma)

    def _tree_rows(self, toward, rows):
        return rows + len(self.states) * ~toward

    def _refresh(self, rows, sites):
        self.trees.update(np.concatenate([rows, rows + len(self.states)]), np.vstack([sites, sites]),
                          np.vstack([self._leaves(rows, sites, True), self._leaves(rows, sites, False)]))

    def log_z(self, toward, rows):
        return self.trees.log_total[self._tree_rows(toward, rows)]

    def choose(self, toward, rows, rng):
        with np.errstate(invalid="ignore"):  # a chain's unused tree may be empty (−∞ root) at a bridge point
            leaves = self.trees.sample(rng)
        return leaves[self._tree_rows(toward, rows)], self.log_z(toward, rows)


class _DenseWalks(_Walks):
    """Masked weights of all d bits per step: O(d), cheaper when a flip changes O(d) ratios anyway."""

    def _log_weights(self, toward, rows):
        allowed = allowed_bits(self.states[rows], self.reference, toward[:, None], self.barred[rows])
        return masked_log_weights(self.delta[rows], allowed, self.gamma)

    def log_z(self, toward, rows):
        return log_normaliser(self._log_weights(toward, rows))

    def choose(self, toward, rows, rng):
        log_weights = self._log_weights(toward, rows)
        return sample_categorical(log_weights, rng), log_normaliser(log_weights)


# -- the sampler ------------------------------------------------------------------------------------------
class Intracluster(FixedDistanceSampler):
    """Intracluster moves: energy-biased self-avoiding walks out of S_n(c) and back (Hamze & de Freitas 2010)."""

    registry_name = "intracluster"
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

    def _validate(self):
        super()._validate()
        self._lengths = walk_length_range(self.walk_length, min(self.distance, self.target.dim - self.distance))

    @property
    def active_backend(self) -> str:
        """The backend in use, "tree" or "dense" (``backend="auto"`` resolved by sparsity)."""
        return self._backend

    def _prepare(self):
        d = self.target.dim
        sparse = flip_update_width(self.target) * max(1, (d - 1).bit_length()) < d
        self._backend = ("tree" if sparse else "dense") if self.backend == "auto" else self.backend
        walks = _TreeWalks if self._backend == "tree" else _DenseWalks
        self._walks = walks(self.target, self.states, self.reference_state, self.gamma)
        self.last_walk: WalkRecord | None = None

    # -- the move mixture ------------------------------------------------------------------------------
    def _draw_moves(self):
        """Each chain's walk length k (uniform on the range) and whether its first walk goes toward c."""
        n = self.n_chains
        k_min, k_max = self._lengths
        k = np.full(n, k_min) if k_min == k_max else self.rng.integers(k_min, k_max + 1, size=n)
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
        n = self.n_chains
        k, toward_first = self._draw_moves()
        walks = self._walks
        path = np.full((n, 2 * int(k.max())), -1)
        path_log_p = np.full(path.shape, np.nan)
        log_p = self.log_p.copy()
        log_forward, log_reverse = np.zeros(n), np.zeros(n)
        flips = []
        for t in range(1, path.shape[1] + 1):
            if not self.reflip:
                bridge = np.flatnonzero(k == t - 1)
                walks.bar(bridge, path[bridge, : t - 1], True)  # F_t of the second walk excludes σ
            rows = np.flatnonzero(2 * k >= t)
            toward = step_toward(t, k[rows], toward_first[rows])
            idx, log_z_forward = walks.choose(toward, rows, self.rng)
            ratio = walks.delta[rows, idx]
            flips.append(walks.flip(rows, idx))
            log_p[rows] += ratio
            path[rows, t - 1] = idx
            path_log_p[rows, t - 1] = log_p[rows]
            log_forward[rows] += self.gamma * ratio - log_z_forward
            log_reverse[rows] -= self.gamma * ratio
            known = self.reflip | (t > k[rows])  # R_t does not depend on ρ
            log_reverse[rows[known]] -= walks.log_z(~toward[known], rows[known])
        sites = _segments(path, np.zeros(n, dtype=np.int64), 2 * k)
        values = self.states[np.arange(n)[:, None], sites]
        if not self.reflip:
            log_reverse -= self._rewind_through_reverse_second_walk(flips, path, k, toward_first)
        log_alpha = path_log_acceptance(log_p - self.log_p, log_forward, log_reverse)
        accepted = metropolis_accept(log_alpha, self.rng)
        if self.reflip:
            self._replay(flips, ~accepted, undo=True)
        else:
            self._replay(flips, accepted, undo=False)
        self.log_p[accepted] = log_p[accepted]
        self.last_walk = WalkRecord(path, path_log_p, 2 * k, log_alpha)
        return dict(accepted=accepted, proposed_sites=sites, proposed_values=values, proposed_log_prob=log_p)

    def _replay(self, flips: list[_Flips], chains: np.ndarray, undo: bool) -> None:
        """Undo (newest first) or redo (oldest first) the logged steps of the marked chains: no evaluations."""
        for step in reversed(flips) if undo else flips:
            self._walks.apply(*step.select(chains, undo))

    def _rewind_through_reverse_second_walk(self, flips, path, k, toward_first) -> np.ndarray:
        """Rewind every chain to x; return Σ_{t≤k} log Z_{R_t}(s_t), the reverse second walk's normalisers.

        R(σ) starts at the bridge point s_k with ρ barred: while undoing ρ the
        chain passes s_{2k} … s_k, where σ is freed and ρ barred; Z_{R_t} is
        read at each s_t, t ≤ k, before undoing b_t. At x, ρ is freed again.
        """
        walks = self._walks
        everyone = np.ones(self.n_chains, dtype=bool)
        log_z = np.zeros(self.n_chains)
        for t in range(len(flips), 0, -1):
            bridge = np.flatnonzero(k == t)
            walks.bar(bridge, path[bridge, :t], False)
            walks.bar(bridge, path[bridge, t : 2 * t], True)
            rows = np.flatnonzero(k >= t)
            log_z[rows] += walks.log_z(~step_toward(t, k[rows], toward_first[rows]), rows)
            walks.apply(*flips[t - 1].select(everyone, undo=True))
        walks.bar(np.arange(self.n_chains), _segments(path, k, 2 * k), False)
        return log_z

    # -- the exact kernel --------------------------------------------------------------------------------
    def _enumerate_moves(self, x: np.ndarray, k: int, toward_first: bool):
        """Every move of walk length k from x: final states, log f(x', σ, ρ | x) (Eq. 3) and log α (Eq. 6).

        The paths are grown breadth-first with the flip ratios of every state
        they visit; then each path's reverse (R(ρ), R(σ)) is scored step by step.
        """
        d, c, gamma = x.size, self.reference_state, self.gamma
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
        x = self.check_support(x)[0]
        finals, probs = [], []
        for k, toward_first, weight in self._move_mixture():
            states, log_forward, log_alpha = self._enumerate_moves(x, k, toward_first)
            finals.append(states)
            probs.append(weight * np.exp(log_forward) * acceptance_probability(log_alpha))
        return self._with_stay(x, np.vstack(finals), np.concatenate(probs))
