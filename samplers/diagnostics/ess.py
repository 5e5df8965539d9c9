"""Mixing diagnostics: autocorrelation, effective sample size, exact distances.

ESS and R̂ follow Vehtari, Gelman, Simpson, Carpenter & Bürkner (2021,
"Rank-normalization, folding, and localization"), computed by ``arviz-stats``
over all chains jointly: ESS is the bulk ESS of the split, rank-normalised
chains (Geyer's 1992 initial monotone sequence on their combined
autocorrelation); R̂ is the larger of the split-R̂ of the rank-normalised
draws (bulk) and of their folded |x − median| (tail). ``ess_per_chain``
treats every chain as its own sample (what the LSB paper's tables average);
``lsb_authors_ess`` is the windowed quantity the LSB authors' code reports
under that name.

For enumerable targets, ``exact_distances`` gives the total-variation distance
and KL(P̂ ‖ π) of an empirical distribution of states from the exact target.
"""

from __future__ import annotations

import functools

import numpy as np
from scipy.special import logsumexp, xlogy

from targets.base import Target, state_codes


@functools.cache
def _array_stats():
    """arviz-stats' array functions, imported on first use: they load scipy.signal, half a second that a process
    which only configures runs (the dashboard's server) need not spend."""
    from arviz_stats.base import array_stats

    return array_stats


def autocorrelation(samples: np.ndarray) -> np.ndarray:
    """Autocorrelation of each chain (rows) at lags 0 … n_draws − 1 (FFT-based)."""
    return np.asarray(_array_stats().autocorr(np.asarray(samples, dtype=np.float64), axis=-1))


def on_time_grid(seconds: np.ndarray, values: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """The chain's value at each grid time: the state it held then (the last draw at or before it).

    ``seconds`` (n_draws,) are the increasing compute times of the draws,
    ``values`` (n_draws, ...) their values; a grid time before the first draw
    takes the first value.
    """
    index = np.searchsorted(seconds, grid, side="right") - 1
    return values[np.clip(index, 0, len(seconds) - 1)]


def autocorrelation_in_time(seconds: np.ndarray, values: np.ndarray, grid_step: float) -> tuple[np.ndarray, np.ndarray]:
    """Autocorrelation against compute-time lag, averaged over chains (Hamze & de Freitas, Figs. 2–4).

    Samplers whose steps cost different times are compared per unit of
    compute: the trace ``values`` (n_draws, n_chains) at compute times
    ``seconds`` is read on a uniform grid of spacing ``grid_step`` seconds
    (``on_time_grid``) and its autocorrelation taken there. Returns
    ``(lags in seconds, autocorrelation)`` at lags 0, grid_step, 2·grid_step, …
    up to half the traced time.
    """
    if grid_step <= 0:
        raise ValueError(f"grid_step must be > 0; got {grid_step}")
    grid = np.arange(seconds[0], seconds[-1], grid_step)
    if grid.size < 4:
        return np.zeros(0), np.zeros(0)
    resampled = np.atleast_2d(on_time_grid(seconds, np.asarray(values, dtype=np.float64), grid).T)
    if np.ptp(resampled) == 0:
        return np.zeros(0), np.zeros(0)
    constant = np.ptp(resampled, axis=1) == 0
    acf = autocorrelation(resampled[~constant]).mean(axis=0)
    half = grid.size // 2
    return np.arange(half) * grid_step, acf[:half]


def integrated_time(lags: np.ndarray, acf: np.ndarray) -> float:
    """Integrated autocorrelation time τ = Δ(1 + 2 Σ_{k≥1} ρ_k) in the lags' unit (e.g. seconds).

    The sum stops before the first negative autocorrelation (Geyer's initial
    positive sequence, simplified); NaN when the lags do not reach that point.
    """
    if len(lags) < 2:
        return float("nan")
    negative = np.flatnonzero(acf[1:] < 0)
    if not negative.size:
        return float("nan")
    return float((lags[1] - lags[0]) * (1 + 2 * acf[1:1 + negative[0]].sum()))


def ess(samples: np.ndarray, method: str = "bulk") -> float:
    """ESS of ``(n_chains, n_draws)`` samples (0 for a constant trace): rank-normalised bulk ESS, or with
    ``method="mean"`` the ESS of the mean of the raw draws (no rank normalisation: what an average of f is worth,
    and on short traces of a discrete f, log p̃ over few states with many ties, less noisy than the bulk ESS)."""
    samples = np.atleast_2d(np.asarray(samples, dtype=np.float64))
    if samples.shape[1] < 4:
        raise ValueError(f"ESS needs at least 4 draws per chain; got {samples.shape[1]}")
    if np.ptp(samples) == 0:
        return 0.0
    return float(_array_stats().ess(samples, chain_axis=0, draw_axis=1, method=method))


def rhat(samples: np.ndarray) -> float:
    """Rank-normalised split-R̂ (Vehtari et al. 2021; max of bulk and folded) of ``(n_chains, n_draws)`` samples.

    A single chain is split in two halves first (the first half against the
    second: a drifting chain gives R̂ > 1), which ArviZ leaves undefined.
    """
    samples = np.atleast_2d(np.asarray(samples, dtype=np.float64))
    if samples.shape[1] < 4:
        raise ValueError(f"R-hat needs at least 4 draws per chain; got {samples.shape[1]}")
    if samples.shape[0] == 1:
        half = samples.shape[1] // 2
        samples = np.stack([samples[0, :half], samples[0, half:2 * half]])
    if np.ptp(samples) == 0:
        return float("nan")
    with np.errstate(divide="ignore", invalid="ignore"):  # a chain that never moved: R̂ = ∞, not a warning
        return float(_array_stats().rhat(samples, chain_axis=0, draw_axis=1, method="rank"))


def ess_per_chain(samples: np.ndarray) -> np.ndarray:
    """Bulk ESS of every chain on its own, ``(n_chains,)``."""
    return np.array([ess(row[None, :]) for row in np.atleast_2d(samples)])


@functools.lru_cache(maxsize=16)
def hamming_reference(dim: int, seed: int = 0) -> np.ndarray:
    """The fixed random reference state of the DISCS protocol: ``dim`` uniform bits from ``seed`` (made once per
    (dim, seed) and shared, so read-only: a statistic traced every step reads it without redrawing it)."""
    reference = np.random.default_rng(seed).integers(0, 2, size=dim, dtype=np.uint8)
    reference.flags.writeable = False
    return reference


def hamming_distance(states: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """Number of bits of each state (row) that differ from ``reference``."""
    return (states != reference).sum(axis=1)


def discs_ess(samples: np.ndarray) -> np.ndarray:
    """Per chain, the ESS of the DISCS benchmark (Goshvadi et al. 2023): over the second half of each chain.

    DISCS traces the Hamming distance of each state to a fixed random reference
    state (``hamming_distance``, ``hamming_reference``), keeps the second half of
    every chain, estimates each chain's ESS on its own, and reports their mean ±
    std over chains, divided by the steps, seconds or target evaluations of that
    half. Each chain's ESS here is the bulk ESS of ``ess``. Unlike the ESS
    over all chains (``ess``), it never sees that chains disagree: chains stuck
    in different modes each report a high ESS.
    """
    samples = np.atleast_2d(samples)
    return ess_per_chain(samples[:, samples.shape[1] // 2:])


def lsb_authors_ess(samples: np.ndarray, lags: int) -> np.ndarray:
    """Per chain, the "ESS" of the LSB paper's Tables 2–3, as the authors' ``ess.py`` computes it.

    With ρ_j the chain's autocorrelation at lag j ≤ L = ``lags`` and D = L + 1,

        ESS = D / (1 + 2 Σ_{1≤j≤L, ρ_j > 0.05} ρ_j (1 − j/D)).

    It differs from a standard ESS (``ess``) in three ways: it is the ESS of a
    window of D draws, not of the chain (so its scale is set by ``lags``, which
    the authors chose per case: 500, 400, 500, 100); the sum keeps every
    autocorrelation above 0.05 instead of stopping at the first non-positive
    pair (Geyer); and each ρ_j is down-weighted by 1 − j/D. Samplers compared
    with one L keep their order under both, but the numbers are not
    comparable across cases or with a standard ESS.
    """
    if not 1 <= lags:
        raise ValueError(f"lags must be ≥ 1; got {lags}")
    rho = autocorrelation(np.atleast_2d(samples))[:, 1:lags + 1]
    window = lags + 1
    weights = 1.0 - np.arange(1, rho.shape[1] + 1) / window
    return window / (1.0 + 2.0 * np.where(rho > 0.05, rho * weights, 0.0).sum(axis=1))


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
