"""DISCS's findings on the 2-D Ising model, measured with the samplers here and DISCS's protocol.

DISCS (Goshvadi et al., NeurIPS 2023 Datasets & Benchmarks) measures a sampler
by the ESS of the Hamming distance to a fixed random reference state, each
chain on its own over its second half, mean ± std over chains, per step, per
second and per target evaluation (``samplers.diagnostics.ess.discs_ess``). Two of
its findings on the Ising model are checked here:

1. **The winning balancing function depends on the temperature**: √t above the
   critical temperature (β < β_c = ln(1 + √2)/2 ≈ 0.4407), t/(1+t) below it.
   Measured as DISCS's temperature sweep does (its ``lamdasweep`` configs: the
   zero-field open lattice, coupling λ = β around β_c, gradient samplers with
   g = √t and g = t/(1+t)) with the locally balanced sampler, PAS and DMALA
   (``--samplers``) at two β on each side of β_c.
2. **ESS per step falls with the dimension, faster for Metropolis than for PAS**
   (path length tuned toward 57.4 % acceptance in a burn-in, then frozen), on
   DISCS's own Ising model: an open L×L lattice with log p̃ = λ Σ s_i s_j − Σ b_i s_i,
   λ = 0.5, b_i = U(−σ, σ) + μ·(+1 inside the disc of area 1/2 centred on the
   lattice, −1 outside), μ = 0.5, σ = 1.5 (DISCS's ``models/ising.py``).

Each finding gets a verdict in the project's vocabulary (``samplers.diagnostics.verdicts``):
reproduced when every comparison goes the claimed way with 95 % intervals
(over chains) that do not overlap, not reproduced when one goes the other way
so, inconclusive otherwise. The sizes and lengths are
smaller than DISCS's (50×50 and 10⁵–10⁶ steps; ``--size``, ``--steps``). Every
run (a sampler on one model, the Hamming distance of every chain traced at
every step) is one run of a sweep, executed on Dask and stored (``--workers``,
``--scheduler``, ``--results``; a re-run computes only what is not stored and
prints the findings from the stored runs). The model is the ``discs_ising``
target; its field is drawn with DISCS's seed 0.

Run:  python -m benchmarks discs_ising [--size 20 --steps 20000 --chains 16 --sizes 10,20,30,40 --seed 0
                                         --samplers locally_balanced,pas,dmala --workers 2]
"""

from __future__ import annotations

import json

import numpy as np

import samplers
from benchmarks import SWEEP_DEFAULTS, SWEEP_HELPS, arguments, sweep_store
from engine.config import RunConfig
from samplers.diagnostics.convergence import Interval, interval
from samplers.diagnostics.ess import discs_ess
from samplers.diagnostics.verdicts import INCONCLUSIVE, NOT_REPRODUCED, REPRODUCED, weakest
from sweeps import RunSpec

BETA_CRITICAL = float(np.log(1 + np.sqrt(2)) / 2)
#: β on either side of β_c for finding 1.
BETAS = (0.3, 0.38, 0.5, 0.6)
BALANCINGS = {"√t": "sqrt", "t/(1+t)": "barker"}


def discs_run(model: dict, name: str, params: dict, steps: int, chains: int) -> RunSpec:
    """``chains`` chains of sampler ``name`` on the ``discs_ising`` model ``model`` for ``steps`` steps, the Hamming
    distance to DISCS's fixed random reference state traced at every step."""
    config = RunConfig(target="discs_ising", target_params=model, sampler=name, sampler_params=params,
                       n_chains=chains, statistic="hamming")
    return RunSpec(config, steps, trace_points=steps + 1, traced=("statistic",), label=f"{name} {params} {model}")


def measure(result: dict) -> dict:
    """DISCS ESS of one stored run: per chain over the second half, with its rates per step, 1000 evaluations and
    CPU second of the sampler's steps, and the kernel a tuned sampler froze to."""
    trace, evals, seconds = result["trace_statistic"], result["trace_evals"], result["trace_seconds"]
    steps = len(trace) - 1
    per_chain = discs_ess(trace.T)
    half = steps // 2
    frozen = json.loads(result["frozen"])["sampler_params"] if "frozen" in result else {}
    return {"ess": interval(per_chain), "per step": interval(per_chain / (steps - half)),
            "per 1k evals": interval(1000 * per_chain / (evals[-1] - evals[half])),
            "per second": interval(per_chain / (seconds[-1] - seconds[half])), "std": float(per_chain.std()),
            "frozen": frozen}


def tuning(name: str, steps: int) -> dict:
    """The burn-in of a sampler that tunes itself (the first tenth of the run), else nothing."""
    return {"burn_in": steps // 10} if "burn_in" in samplers.sampler_class(name).param else {}


def finding_1_runs(args) -> dict[tuple[str, float, str], RunSpec]:
    """(sampler, β, balancing label) → its run on the zero-field open lattice with coupling β."""
    return {(name, beta, label): discs_run({"size": args.size, "lam": beta, "mu": 0.0, "sigma": 0.0}, name,
                                           {**tuning(name, args.steps), "balancing": g}, args.steps, args.chains)
            for name in args.samplers.split(",") for beta in BETAS for label, g in BALANCINGS.items()}


def finding_2_runs(args) -> dict[tuple[int, str], RunSpec]:
    """(L, sampler) → its run on DISCS's model of side L (Metropolis, and PAS tuning its path length)."""
    return {(size, name): discs_run({"size": size}, name, tuning(name, args.steps), args.steps, args.chains)
            for size in (int(size) for size in args.sizes.split(",")) for name in ("metropolis", "pas")}


def separated(better: Interval, worse: Interval) -> bool | None:
    """True if ``better`` lies above ``worse`` (95 % intervals apart), False if below, None if they overlap."""
    if better.low > worse.high:
        return True
    if better.high < worse.low:
        return False
    return None


def finding_verdict(outcomes: list[bool | None]) -> str:
    """The weakest (``samplers.diagnostics.verdicts``) of the comparisons: reproduced if every one goes DISCS's way, not
    reproduced if one goes the other way, inconclusive otherwise (and with none)."""
    judged = {True: REPRODUCED, False: NOT_REPRODUCED, None: INCONCLUSIVE}
    return weakest(*(judged[outcome] for outcome in outcomes)) if outcomes else INCONCLUSIVE


def balancing_against_temperature(args, runs: dict, store) -> str:
    names = args.samplers.split(",")
    print(f"Finding 1 · zero-field open Ising {args.size}×{args.size} (DISCS's temperature sweep: μ = σ = 0), "
          f"{args.chains} chains × {args.steps} steps, β_c = {BETA_CRITICAL:.4f}; ESS per step (DISCS), "
          f"tuned samplers tune for the first {args.steps // 10} steps")
    print(f"{'sampler':>18} {'β':>6} {'side':>10} " + " ".join(f"{label:>26}" for label in BALANCINGS)
          + f" {'winner':>8} {'expected':>9}")
    outcomes = []
    for name, beta in [(name, beta) for name in names for beta in BETAS]:
        if not all(store.has(runs[name, beta, label].run_id) for label in BALANCINGS):
            print(f"{name:>18} {beta:>6.3f} a run failed (the sweep's summary says why)")
            continue
        results = {label: measure(store.read(runs[name, beta, label].run_id)) for label in BALANCINGS}
        expected = "√t" if beta < BETA_CRITICAL else "t/(1+t)"
        other = "t/(1+t)" if expected == "√t" else "√t"
        outcome = separated(results[expected]["per step"], results[other]["per step"])
        outcomes.append(outcome)
        winner = {True: expected, False: other, None: "tie"}[outcome]
        side = "above T_c" if beta < BETA_CRITICAL else "below T_c"
        print(f"{name:>18} {beta:>6.3f} {side:>10} "
              + " ".join(f"{str(results[label]['per step']):>26}" for label in BALANCINGS)
              + f" {winner:>8} {expected:>9}")
    verdict = finding_verdict(outcomes)
    print(f"verdict: {verdict} ({sum(o is True for o in outcomes)} comparisons as DISCS found, "
          f"{sum(o is False for o in outcomes)} against, {sum(o is None for o in outcomes)} ties of {len(outcomes)})\n")
    return verdict


def dimension_scaling(args, runs: dict, store) -> str:
    sizes = [size for size in (int(size) for size in args.sizes.split(","))
             if store.has(runs[size, "metropolis"].run_id) and store.has(runs[size, "pas"].run_id)]
    if not sizes:
        print("Finding 2 · every size has a failed run (the sweep's summary says why)\n")
        return INCONCLUSIVE
    print(f"Finding 2 · DISCS's Ising model (λ = 0.5, μ = 0.5, σ = 1.5, open lattice), {args.chains} chains × "
          f"{args.steps} steps; PAS tunes its path length for the first {args.steps // 10} steps")
    print(f"{'L':>4} {'d':>6} {'Metropolis ESS/step':>26} {'PAS ESS/step':>26} {'PAS L':>6} {'PAS/Metropolis':>15} "
          f"{'per 1k evals (M, PAS)':>24} {'per second (M, PAS)':>24}")
    rows = []
    for size in sizes:
        metropolis, pas = (measure(store.read(runs[size, name].run_id)) for name in ("metropolis", "pas"))
        ratio = pas["per step"].mean / metropolis["per step"].mean
        rows.append((metropolis["per step"], pas["per step"]))
        print(f"{size:>4} {size * size:>6} {str(metropolis['per step']):>26} {str(pas['per step']):>26} "
              f"{pas['frozen'].get('path_length', '—'):>6} {ratio:>15.3g} "
              f"{metropolis['per 1k evals'].mean:>11.3g} {pas['per 1k evals'].mean:>12.3g} "
              f"{metropolis['per second'].mean:>11.3g} {pas['per second'].mean:>12.3g}")
    falls = {name: rows[0][k].mean / rows[-1][k].mean for k, name in enumerate(("Metropolis", "PAS"))}
    print(f"ESS per step from L = {sizes[0]} to L = {sizes[-1]} falls {falls['Metropolis']:.3g}× for Metropolis, "
          f"{falls['PAS']:.3g}× for PAS")
    outcomes = [separated(pas_row, metropolis_row) for metropolis_row, pas_row in rows[1:]]
    outcomes.append(bool(falls["Metropolis"] > falls["PAS"]))
    verdict = finding_verdict(outcomes)
    print(f"verdict: {verdict} (PAS ahead per step at every size past the first, and Metropolis falling faster)\n")
    return verdict


def main(argv=None) -> None:
    args = arguments("discs_ising", argv, size=20, steps=20_000, chains=16, sizes="10,20,30,40",
                     samplers="locally_balanced,pas,dmala", **SWEEP_DEFAULTS, helps=SWEEP_HELPS | {
                         "size": "side L of the L×L lattice of finding 1",
                         "steps": "steps per chain of every run (the tuned samplers tune for the first tenth)",
                         "chains": "chains per run (the intervals are over chains)",
                         "sizes": "comma-separated lattice sides L of finding 2",
                         "samplers": "comma-separated samplers of finding 1, each with g = √t and g = t/(1+t)"})
    first, second = finding_1_runs(args), finding_2_runs(args)
    store = sweep_store("discs_ising", [*first.values(), *second.values()], args)
    balancing_against_temperature(args, first, store)
    dimension_scaling(args, second, store)
