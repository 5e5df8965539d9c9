"""Mixing diagnostics: autocorrelation, effective sample size, exact distances.

ESS (and R̂) are the rank-normalised bulk ESS (split-R̂) of Vehtari, Gelman, Simpson, Carpenter &
Bürkner (2021, "Rank-normalization, folding, and localization"), computed by
``arviz-stats`` over all chains jointly (Geyer's initial monotone sequence on
the split chains' combined autocorrelation). ``ess_per_chain`` treats every
chain as its own sample (what the LSB paper's tables average).

For enumerable targets, ``exact_distances`` gives the total-variation distance
and KL(P̂ ‖ π) of an empirical distribution of states from the exact target.
"""

from __future__ import annotations

import numpy as np
from arviz_stats.base import array_stats
from scipy.special import logsumexp, xlogy

from targets.base import Target, state_codes


def autocorrelation(samples: np.ndarray) -> np.ndarray:
    """Autocorrelation of each chain (rows) at lags 0 … n_draws − 1 (FFT-based)."""
    return np.asarray(array_stats.autocorr(np.asarray(samples, dtype=np.float64), axis=-1))


def ess(samples: np.ndarray) -> float:
    """Rank-normalised bulk ESS of ``(n_chains, n_draws)`` samples (0 for a constant trace)."""
    samples = np.atleast_2d(np.asarray(samples, dtype=np.float64))
    if samples.shape[1] < 4:
        raise ValueError(f"ESS needs at least 4 draws per chain; got {samples.shape[1]}")
    if np.ptp(samples) == 0:
        return 0.0
    return float(array_stats.ess(samples, chain_axis=0, draw_axis=1, method="bulk"))


def rhat(samples: np.ndarray) -> float:
    """Rank-normalised split-R̂ (Vehtari et al. 2021) of ``(n_chains, n_draws)`` samples."""
    samples = np.atleast_2d(np.asarray(samples, dtype=np.float64))
    if samples.shape[1] < 4:
        raise ValueError(f"R-hat needs at least 4 draws per chain; got {samples.shape[1]}")
    if np.ptp(samples) == 0:
        return float("nan")
    return float(array_stats.rhat(samples, chain_axis=0, draw_axis=1, method="rank"))


def ess_per_chain(samples: np.ndarray) -> np.ndarray:
    """Bulk ESS of every chain on its own, ``(n_chains,)``."""
    return np.array([ess(row[None, :]) for row in np.atleast_2d(samples)])


def exact_distances(states: np.ndarray, target: Target, weights: np.ndarray | None = None) -> dict:
    """TV distance and KL(P̂ ‖ π) of the (weighted) empirical distribution of ``states``.

    ``states`` is ``(N, d)``; ``weights`` (default uniform) need not be normalised.
    """
    all_states, log_p = target.enumerate()
    log_pi = log_p - logsumexp(log_p)
    counts = np.bincount(state_codes(states), weights=weights, minlength=len(all_states))
    p_hat = counts / counts.sum()
    pi = np.exp(log_pi)
    support = p_hat > 0
    kl = float(np.sum(xlogy(p_hat[support], p_hat[support]) - p_hat[support] * log_pi[support]))
    return {"tv": 0.5 * float(np.abs(p_hat - pi).sum()), "kl": kl}
