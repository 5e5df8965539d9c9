"""Exact transition matrices of samplers on enumerable targets (the exactness harness).

``transition_matrix(sampler)`` stacks ``sampler.transition_row(x)`` over all
2^d states x; rows index states in ``targets.all_states`` order. With π the
normalised target (``stationary_distribution``), a correct sampler satisfies
π T = π, and a reversible one π_x T_xy = π_y T_yx.
"""

from __future__ import annotations

import numpy as np
from scipy.special import logsumexp

from targets.base import Target, state_codes

from .base import Sampler

#: Largest dimension for which the 2^d × 2^d matrix is built.
MAX_EXACT_DIM = 12


def stationary_distribution(target: Target) -> np.ndarray:
    """π over all 2^d states (``all_states`` order)."""
    _, log_p = target.enumerate()
    return np.exp(log_p - logsumexp(log_p))


def transition_matrix(sampler: Sampler) -> np.ndarray:
    """The exact one-step kernel T[x, y] of ``sampler``, from its own proposal/acceptance code."""
    d = sampler.target.dim
    if d > MAX_EXACT_DIM:
        raise ValueError(f"transition_matrix needs dim <= {MAX_EXACT_DIM}; got {d}")
    states, _ = sampler.target.enumerate()
    matrix = np.zeros((len(states), len(states)))
    for row, x in enumerate(states):
        next_states, probs = sampler.transition_row(x)
        np.add.at(matrix[row], state_codes(next_states), probs)
    return matrix
