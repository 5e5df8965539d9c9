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

import numpy as np
import param

from samplers.balanced.sumtree import LogSumTree
from samplers.base import ExactCase, Move, SamplerFacts, acceptance_probability, metropolis_accept
from samplers.common.adaptive import Adaptive
from samplers.common.history import BoundedHistory
from samplers.diagnostics.inspection import ProposalInspection
from samplers.intracluster.fixed_distance import FixedDistanceSampler
from samplers.intracluster.walk_adaptation import HISTORY_COLUMNS, WalkAdaptation
from samplers.intracluster.walk_steps import (DenseWalks, MoveLog, TreeWalks, WalkRecord, allowed_bits, bit_mask,
                                              by_chain, flip_update_width, log_normaliser, masked_log_weights,
                                              path_log_acceptance, prefixes, step_toward, walk_length_range)
from targets.base import flip

ORDERS = ("up_first", "down_first", "random")


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
        walks = TreeWalks if self._backend == "tree" else DenseWalks
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
        path = by_chain(log.path)
        sites = prefixes(path, length)
        values = self.states[np.arange(n)[:, None], sites]
        path_log_p = np.cumsum(np.column_stack([self.log_p, by_chain(log.ratio)]), axis=1)[:, 1:]
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

    def _walk(self, k, toward_first) -> MoveLog:
        """The forward walks σ then ρ of every chain (Eq. 2 steps), logged; the chains end at x' = s_{2k}.

        Z_{F_t} is read before step t, Z_{R_t} right after it when R_t does
        not depend on ρ (t > k, or reflip). Without reflip the second walk's
        F_t excludes σ: σ is barred at the bridge point s_k.
        """
        walks, log, reflip = self._walks, MoveLog.empty(k, toward_first), self.reflip
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

    def _rewind(self, log: MoveLog) -> np.ndarray:
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

    def _finish(self, log: MoveLog, accepted: np.ndarray, rho: np.ndarray | None) -> None:
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
            barred = bit_mask(bits[:, :k] if t > k and not self.reflip else bits[:, :0], d)
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
            barred = bit_mask(bits[:, k:] if t <= k and not self.reflip else bits[:, :0], d)
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
