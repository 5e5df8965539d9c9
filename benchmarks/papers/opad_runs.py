"""Shared machinery of the OPAD paper's experiments: exact KL curves of MCMC, OPAD and OPAD+ per chain, as sweeps.

Each sampler's chains on an enumerable target are one run of a sweep
(``opad_run``: a ``RunSpec`` with KL checkpoints): ``sweeps.perform`` feeds
every step record to a ``ParticleStore`` and reads the exact KL(P‖π) of each
chain's three approximations at log-spaced checkpoints (O(1) each), timing the
store's bookkeeping against the sampler's own steps and measuring its memory
per particle. ``sweep_curves`` runs a benchmark's sweep on Dask (``--workers``,
``--scheduler``, ``--results``: see ``benchmarks.SWEEP_HELPS``), resuming from
the runs already stored, and reads the curves back from the stored results.
``table`` prints them as a Markdown table: mean over chains with the
2.5–97.5 % range, and the ratios of the means MCMC/OPAD and MCMC/OPAD+ (the
paper reports one to three orders of magnitude).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from benchmarks import sweep_store
from engine.config import RunConfig
from samplers.opad.store import KINDS
from sweeps import RunSpec

#: KL checkpoints of each run (log-spaced from 10 to the last step).
CHECKPOINTS = 7


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

    @classmethod
    def from_result(cls, label: str, result: dict) -> Curves:
        """The curves of one stored (or freshly performed) run."""
        return cls(label, [int(step) for step in result["kl_step"]], {kind: result[f"kl_{kind}"] for kind in KINDS},
                   result["step_seconds"], result["store_seconds"], result["n_particles"], result["store_bytes"])


def opad_run(label: str, target: str, target_params: dict, sampler: str, sampler_params: dict, steps: int,
             chains: int, scored_neighbours: bool = False, replicate: int = 0,
             checkpoints: int = CHECKPOINTS) -> RunSpec:
    """Replicate ``replicate`` (its own random stream: ``sweeps.spec.run_seed``) of ``chains`` chains of ``sampler``
    for ``steps`` steps with ``checkpoints`` log-spaced exact KL checkpoints (``sweeps.perform.checkpoints``; OPAD+
    with every scored neighbour when ``scored_neighbours``)."""
    config = RunConfig(target=target, target_params=target_params, sampler=sampler, sampler_params=sampler_params,
                       n_chains=chains, seed=replicate, statistic="log_prob", opad_neighbours=scored_neighbours)
    return RunSpec(config, steps, trace_points=2, kl_checkpoints=checkpoints, label=label)


def sweep_curves(name: str, runs: list[RunSpec], args) -> dict[str, Curves]:
    """Run the sweep ``name`` of ``runs`` as ``args`` say (``benchmarks.sweep_store``) and read back each stored
    run's curves by run id (a failed run is reported, and missing here)."""
    store = sweep_store(name, runs, args)
    return {run.run_id: Curves.from_result(run.label, store.read(run.run_id)) for run in runs
            if store.has(run.run_id)}


def stored(curves: dict[str, Curves], runs: list[RunSpec]) -> list[Curves]:
    """The curves of ``runs`` that are stored, in their order."""
    return [curves[run.run_id] for run in runs if run.run_id in curves]


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
