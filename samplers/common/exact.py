"""Exact transition matrices of samplers on enumerable targets (the exactness harness).

``transition_matrix(sampler)`` stacks ``sampler.transition_row(x)`` over all
2^d states x; rows index states in ``targets.all_states`` order. With π the
normalised target (``stationary_distribution``), a correct sampler satisfies
π T = π, and a reversible one π_x T_xy = π_y T_yx. ``transition_matrix(sampler,
states)`` restricts rows and columns to the given states (e.g. the DAGs of a
``dag`` target, whose other states have p̃ = 0 and are never visited).
``integrated_time(T, π, f)`` is a function's exact integrated autocorrelation
time under T (the ESS of n steps is n/τ), what tuners are checked against.
"""

from __future__ import annotations

import numpy as np
from scipy.special import logsumexp

from samplers.base import Sampler
from targets.base import Target, state_codes

#: Largest dimension for which the 2^d × 2^d matrix is built.
MAX_EXACT_DIM = 12


def stationary_distribution(target: Target) -> np.ndarray:
    """π over all 2^d states (``all_states`` order)."""
    _, log_p = target.enumerate()
    return np.exp(log_p - logsumexp(log_p))


def transition_matrix(sampler: Sampler, states: np.ndarray | None = None) -> np.ndarray:
    """The exact one-step kernel T[x, y] of ``sampler``, from its own proposal/acceptance code.

    Rows and columns index ``states`` (default: all 2^d states in ``all_states``
    order, d ≤ ``MAX_EXACT_DIM``); a transition to a state outside ``states``
    raises ``ValueError``.
    """
    if states is None:
        d = sampler.target.dim
        if d > MAX_EXACT_DIM:
            raise ValueError(f"transition_matrix needs dim <= {MAX_EXACT_DIM}; got {d}")
        states, _ = sampler.target.enumerate()
    codes = state_codes(states)
    order = np.argsort(codes)
    matrix = np.zeros((len(states), len(states)))
    for row, x in enumerate(states):
        next_states, probs = sampler.transition_row(x)
        next_codes = state_codes(next_states)
        found = np.minimum(np.searchsorted(codes, next_codes, sorter=order), len(codes) - 1)
        if np.any(codes[order[found]] != next_codes):
            raise ValueError(f"the kernel moves from state {row} to a state outside the given states")
        np.add.at(matrix[row], order[found], probs)
    return matrix


def integrated_time(kernel: np.ndarray, pi: np.ndarray, f: np.ndarray) -> float:
    """Integrated autocorrelation time τ_f of f under the kernel T = ``kernel`` with stationary π, exactly.

    With f̄ = f − π f, the asymptotic variance of the ergodic average is
    σ²_f = 2⟨f̄, Z f̄⟩_π − ⟨f̄, f̄⟩_π, Z = (I − T + 1πᵀ)⁻¹ the fundamental matrix
    (Kemeny & Snell 1960), and τ_f = σ²_f / Var_π f = 1 + 2 Σ_{k≥1} ρ_k: the ESS of
    n steps is n/τ_f. Needs T irreducible (else I − T + 1πᵀ is singular).
    """
    centred = f - pi @ f
    variance = pi @ centred**2
    if not variance > (1e-12 * np.abs(f).max()) ** 2:  # f constant, up to rounding
        raise ValueError("f is constant under π: its integrated time is undefined")
    solved = np.linalg.solve(np.eye(len(pi)) - kernel + np.outer(np.ones(len(pi)), pi), centred)
    return float((2 * pi @ (centred * solved) - variance) / variance)
