"""Per-coordinate flip probabilities of DMALA and DLMC from a flip log-ratio (compiled).

Coordinate i, with flip log-ratio u = log t_i (exact or its Taylor estimate)
and balancing function g, flips with probability (``samplers.gradient.factorised``)

    DMALA (Zhang, Liu & Liu 2022):  p_i = σ(log g(t_i) − 1/(2α)),
    DLMC (Sun et al. 2023):         p_i = ν_i (1 − exp(−h (g(t_i) + g(1/t_i)))),   ν_i = t_i / (1 + t_i),

σ the logistic function, α DMALA's step size, h DLMC's time.
``coordinate_flip_logs`` gives (log p_i, log(1 − p_i)), each computed without
cancellation; it is the one definition both the samplers' generic kernels and
their pairwise kernels (``samplers.gradient.pairwise_moves``) read.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from samplers.base import log_add
from samplers.lsb.balancing import NO_TABLE, log_g_scalar
from targets.compiled import helper

#: ``scheme`` codes of the compiled kernels: DMALA's Langevin-like flips, DLMC's two-state jump chains.
LANGEVIN_SCHEME, JUMP_CHAIN_SCHEME = 0, 1


@helper
def log_sigmoids(u):
    """(log σ(u), log σ(−u)) = (−log(1 + e^−u), −log(1 + e^u)) from one exponential and one logarithm
    (l = log(1 + e^−|u|)), without cancellation, exact for u = ±∞."""
    softplus_tail = np.log1p(np.exp(-abs(u)))
    return (-softplus_tail, -u - softplus_tail) if u >= 0.0 else (u - softplus_tail, -softplus_tail)


@helper
def coordinate_flip_logs(scheme, code, u, step):
    """(log p_i, log(1 − p_i)) of one coordinate with flip log-ratio u, for ``scheme`` ``LANGEVIN_SCHEME`` (DMALA,
    ``step`` = α) or ``JUMP_CHAIN_SCHEME`` (DLMC, ``step`` = h) and balancing function ``code``."""
    if scheme == LANGEVIN_SCHEME:
        return log_sigmoids(log_g_scalar(code, u, NO_TABLE, NO_TABLE) - 0.5 / step)
    log_nu, log_not_nu = log_sigmoids(u)
    rate_time = np.exp(log_add(log_g_scalar(code, u, NO_TABLE, NO_TABLE),
                               log_g_scalar(code, -u, NO_TABLE, NO_TABLE))) * step
    return log_nu + np.log(-np.expm1(-rate_time)), log_add(log_not_nu, log_nu - rate_time)
