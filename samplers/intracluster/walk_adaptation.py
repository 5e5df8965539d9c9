"""Tuning the intracluster walks during burn-in: γ and the walk length by stochastic approximation.

Hamze & de Freitas (2010, §4–5) tune the walk bias γ and the walk length k by
hand and ask for "standard adaptive MCMC tools" instead. This module adapts
both on the batch of chains for a burn-in, after which they are frozen and
the chain is exact MCMC (``samplers.intracluster.walks``).

Criterion. A move of walk length k changes 2k bits and costs O(k) (2k walk
steps and k rewound ones). Long walks mix faster *if they are accepted*: we
want the expected squared jump (2k)²·E[α] per unit of compute 2k, i.e. to
maximise J = k·E[α(γ, k)] over (γ, k).

* For a fixed k, the cost does not depend on γ, so the best γ maximises the
  acceptance E[α]. It is interior: a small γ proposes high-energy states,
  a large γ makes the reverse walk improbable (§4), both rejected.
* For k, ∂ log J / ∂ log k = 0 reads: the acceptance falls by 1 % per 1 %
  of walk length. If the log acceptance ratio of a move is a sum of 2k
  weakly dependent terms, log r ~ N(−σ²/2, σ²) with σ² ∝ k, E[α] = 2Φ(−σ/2)
  and J ∝ σ²Φ(−σ/2) peaks at σ = 2.38, E[α] = 0.234 — the Roberts, Gelman &
  Gilks (1997) computation with k in the place of the squared step size. If
  the terms are strongly correlated along the walk, σ ∝ k, J ∝ σΦ(−σ/2)
  peaks at σ = 1.50, E[α] = 0.45. The default target α* = 0.3 lies between;
  a target replaces the unobservable elasticity condition by an observable
  acceptance rate and makes k the *longest* walk that still gets accepted
  that often.

Update rule. The adaptation steps t = 0, 1, …, burn_in − 1 alternate: on
even t all chains move with (γ, κ) and the walk-length rule updates κ; on odd
t they explore γ ± h and the γ rule updates γ (so the acceptance the walk
length is tuned by is that of the kernel to be frozen, not of perturbed
ones — at a sharp optimum in γ these differ by much). Rule updates number
j = ⌊t/2⌋ use the gain

    a_j = (1 + j / j₀)^(−λ),   j₀ = 10, λ = 0.6   (Σ a_j = ∞, Σ a_j² < ∞: Robbins & Monro 1951),

the acceptance probabilities ᾱ_c = min(1, r_c) of the n chains' moves
(Rao-Blackwellised: not the 0/1 outcomes) and their logs ℓ_c = min(0, log r_c).
With κ the continuous walk length, on even t:

    log κ ← clip( log κ + a_j (mean_c ᾱ_c − α*),  0,  log k_limit ),

a Robbins–Monro recursion for mean ᾱ = α*: κ shrinks while moves are
rejected more often than α* and grows otherwise. Each chain draws its k by
stochastic rounding, k_c = ⌊κ⌋ + 1[U_c < κ − ⌊κ⌋], so E[k_c] = κ (with a
range (k_min, k_max), κ is its upper end and k_c is uniform on
{min(k_min, K_c), …, K_c}, K_c the rounded κ). γ follows a sign
simultaneous-perturbation ascent (SPSA, Spall 1992) of the log acceptance:
on odd t chain c moves with

    γ_c = max(0, γ + h s_{c,j}),   s_{c,j} = (−1)^{c + j},   h = 0.05,

so every chain alternates between a larger and a smaller bias from one
exploring step to the next (and half the chains do the opposite of the other
half), and with ℓ_{c,j} its log acceptance at exploring step j,

    ĝ_j = mean_c s_{c,j} (ℓ_{c,j} − ℓ_{c,j−1})     (ĝ_0 = 0),
    γ ← clip( γ + c_γ a_j sign(ĝ_j),  0,  10 ),   c_γ = 0.1.

Each term pairs a chain's consecutive exploring moves, mostly made from the
same state, so E[ĝ_j] ≈ 2h ∂E[ℓ]/∂γ without the spread between chains; the
alternation across chains cancels what all chains share (κ changing). At
the fixed point walks biased by γ + h and γ − h are equally often the better
accepted: near the γ of largest acceptance, as the criterion asks. The log
acceptance, unlike ᾱ, still points the way when hardly any move is accepted
(e.g. γ = 3, where E[ᾱ] is flat at 0 for every k), and the sign makes the
step independent of its scale (ℓ reaches −10³ on a large lattice). γ is in
units of the target's β (γ = 1 is the paper's γ = β) and its good values are
O(1) — about 0.5–0.8 on the lattices and spin glasses we measured — so it is
tuned on a linear scale: on a log scale the walks' response to γ vanishes as
γ → 0 and a start near 0 stalls.

The two recursions settle where γ maximises the acceptance at the current
walk length and the walk length brings that maximum down to α*. After
burn_in steps γ and k = round(κ) are frozen.
"""

from __future__ import annotations

import numpy as np

from samplers.common.history import BoundedHistory

#: Gain schedule a_j = (1 + j / GAIN_OFFSET)^(−GAIN_DECAY).
GAIN_OFFSET, GAIN_DECAY = 10.0, 0.6
#: Perturbation h of γ for the SPSA gradient, and the step c_γ of γ per unit gain.
PERTURBATION, GAMMA_STEP = 0.05, 0.1
#: γ stays within [0, GAMMA_MAX].
GAMMA_MAX = 10.0


def gain(j: int) -> float:
    """The Robbins–Monro gain a_j = (1 + j/j₀)^(−λ) of a rule's update number j (j = 0, 1, …)."""
    return (1.0 + j / GAIN_OFFSET) ** -GAIN_DECAY


def stochastic_round(value: float, size: int, rng: np.random.Generator) -> np.ndarray:
    """``size`` integers ⌊value⌋ + 1[U < value − ⌊value⌋], whose mean is ``value``."""
    floor = np.floor(value)
    return (floor + (rng.random(size) < value - floor)).astype(np.int64)


#: Columns of the adaptation's history (after "step"), one row per adaptation step that tuned κ.
HISTORY_COLUMNS = ["gamma", "walk_length", "acceptance"]


class WalkAdaptation:
    """The state of the tuning of (γ, κ) and its update (see the module docstring for the rule)."""

    def __init__(self, gamma: float, lengths: tuple[int, int], limit: int, target_acceptance: float,
                 n_chains: int):
        self.k_min, k_max = lengths
        self.fixed_length = self.k_min == k_max
        self.limit = limit
        self.target_acceptance = target_acceptance
        self.gamma = float(gamma)
        self.log_length = float(np.log(k_max))
        self.signs = (-1.0) ** np.arange(n_chains)
        self.steps = 0
        self._explored: np.ndarray | None = None  # ℓ_c of the last exploring step
        self.history = BoundedHistory(HISTORY_COLUMNS)

    @property
    def length(self) -> float:
        """The continuous walk length κ (the upper end of the range)."""
        return float(np.exp(self.log_length))

    def walk_length(self):
        """The walk length to freeze: round(κ), or the range (min(k_min, round κ), round κ)."""
        k = int(np.clip(round(self.length), 1, self.limit))
        return k if self.fixed_length else (min(self.k_min, k), k)

    @property
    def exploring(self) -> bool:
        """Whether this step explores γ ± h for the γ rule (odd t) rather than moving at (γ, κ) (even t)."""
        return self.steps % 2 == 1

    def chain_gammas(self) -> np.ndarray:
        """Each chain's γ for this step: γ_c = max(0, γ + h s_{c,j}) when exploring, else γ."""
        if not self.exploring:
            return np.full(self.signs.size, self.gamma)
        return np.maximum(0.0, self.gamma + PERTURBATION * self._signs())

    def draw_lengths(self, rng: np.random.Generator) -> np.ndarray:
        """Each chain's k for this step: κ rounded stochastically, then uniform on the range below it."""
        top = np.clip(stochastic_round(self.length, self.signs.size, rng), 1, self.limit)
        if self.fixed_length:
            return top
        return rng.integers(np.minimum(self.k_min, top), top + 1)

    def update(self, log_acceptance: np.ndarray) -> None:
        """One step of the γ rule (exploring steps) or the walk-length rule (the others) from the log r_c."""
        a = gain(self.steps // 2)
        log_alpha = np.clip(log_acceptance, -1e300, 0.0)  # a zero-probability proposal's −∞ floored: ĝ stays defined
        if self.exploring:
            if self._explored is not None:
                direction = np.sign(np.mean(self._signs() * (log_alpha - self._explored)))
                self.gamma = float(np.clip(self.gamma + GAMMA_STEP * a * direction, 0.0, GAMMA_MAX))
            self._explored = log_alpha
        else:
            acceptance = float(np.exp(log_alpha).mean())
            self.history.append(self.steps, [self.gamma, self.length, acceptance])
            self.log_length = float(np.clip(self.log_length + a * (acceptance - self.target_acceptance), 0.0,
                                            np.log(self.limit)))
        self.steps += 1

    def _signs(self) -> np.ndarray:
        """s_{c,j} = (−1)^{c + j} of exploring step j = ⌊t/2⌋."""
        return self.signs * (-1.0) ** (self.steps // 2)
