"""Shared machinery of the OPAD paper's experiments: exact KL curves of MCMC, OPAD and OPAD+ per chain.

``kl_curves`` runs one sampler's chains on an enumerable target, feeds every
step record to a ``ParticleStore`` and reads the exact KL(P‖π) of each chain's
three approximations at log-spaced checkpoints (O(1) each). It also times the
store's bookkeeping against the sampler's own steps and measures the store's
memory per particle. ``table`` prints the curves as a Markdown table: mean
over chains with the 2.5–97.5 % range, and the ratios of the means
MCMC/OPAD and MCMC/OPAD+ (the paper reports one to three orders of magnitude).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
from scipy.special import logsumexp

import samplers
from samplers.opad import KINDS, ParticleStore
from samplers.warmup import kernels_ready, warm_up
from targets.base import Target


@dataclass(frozen=True)
class Curves:
    """One sampler's KL curves and the store's costs."""

    label: str
    steps: list[int]
    kl: dict  # kind → (checkpoints, chains)
    step_seconds: float
    store_seconds: float
    n_particles: int
    nbytes: int

    @property
    def overhead(self) -> float:
        """Store bookkeeping time as a fraction of the sampler's step time."""
        return self.store_seconds / self.step_seconds


def checkpoints(steps: int, count: int = 7) -> list[int]:
    """Log-spaced checkpoints from 10 to ``steps``."""
    return sorted({int(round(v)) for v in np.geomspace(min(10, steps), steps, count)})


def log_normaliser(target: Target) -> float:
    """log Z by enumeration (once per target, shared by every sampler's store)."""
    return float(logsumexp(target.enumerate()[1]))


def kl_curves(label: str, target: Target, log_z: float, name: str, params: dict, steps: int, chains: int,
              seed: int, scored_neighbours: bool = False) -> Curves:
    """Run ``name`` for ``steps`` steps and read every chain's exact KL at the checkpoints."""
    if not kernels_ready():
        warm_up()  # load the compiled kernels before anything is timed
    extra = {"record_neighbours": True} if scored_neighbours else {}
    sampler = samplers.make(name, target, n_chains=chains, seed=seed, **params, **extra)
    store = ParticleStore(target, scored_neighbours=scored_neighbours)
    store.log_z = log_z
    marks = set(checkpoints(steps))
    step_seconds = store_seconds = 0.0
    rows = []
    for k in range(1, steps + 1):
        started = time.perf_counter()
        record = sampler.step()
        stepped = time.perf_counter()
        store.update(record)
        if k in marks:
            store.flush()
        store_seconds += time.perf_counter() - stepped
        step_seconds += stepped - started
        if k in marks:
            rows.append([[store.kl(i)[kind] for i in range(chains)] for kind in KINDS])
    table = np.array(rows)  # (checkpoints, kinds, chains)
    return Curves(label, sorted(marks), {kind: table[:, j] for j, kind in enumerate(KINDS)}, step_seconds,
                  store_seconds, store.n_particles, store.nbytes)


def _cell(values: np.ndarray) -> str:
    low, high = np.quantile(values, [0.025, 0.975])
    return f"{values.mean():.3g} [{low:.2g}, {high:.2g}]"


def _ratio(numerator: np.ndarray, denominator: np.ndarray) -> str:
    return f"{numerator.mean() / denominator.mean():.3g}×" if denominator.mean() > 0 else "∞ (exact)"


def table(all_curves: list[Curves]) -> None:
    """Print KL means and 95 % ranges over chains at each checkpoint, and the MCMC/OPAD(+) ratios."""
    print("| sampler | steps | KL MCMC mean [2.5%, 97.5%] | KL OPAD | KL OPAD+ | MCMC/OPAD | MCMC/OPAD+ |")
    print("|---|---|---|---|---|---|---|")
    for curves in all_curves:
        for i, k in enumerate(curves.steps):
            mcmc, opad, plus = (curves.kl[kind][i] for kind in KINDS)
            print(f"| {curves.label} | {k:,} | {_cell(mcmc)} | {_cell(opad)} | {_cell(plus)} | "
                  f"{_ratio(mcmc, opad)} | {_ratio(mcmc, plus)} |")


def cost_table(all_curves: list[Curves]) -> None:
    """Print the store's bookkeeping time relative to the sampler's step and its bytes per particle."""
    print("| sampler | sampler µs/step | store µs/step | store / step | particles | bytes per particle |")
    print("|---|---|---|---|---|---|")
    for curves in all_curves:
        steps = curves.steps[-1]
        print(f"| {curves.label} | {1e6 * curves.step_seconds / steps:.1f} | "
              f"{1e6 * curves.store_seconds / steps:.1f} | {curves.overhead:.3f} | {curves.n_particles:,} | "
              f"{curves.nbytes / max(curves.n_particles, 1):.0f} |")
