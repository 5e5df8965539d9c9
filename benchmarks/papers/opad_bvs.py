"""OPAD paper Fig. 2: KL(P‖π) of MCMC, OPAD and OPAD+ for Bayesian variable selection.

Two data sets: the paper's synthetic generator (m = 20 predictors, n = 200,
seeded) and the diabetes data of Efron et al. (2004; 10 predictors, 442
patients) standing in for the paper's mouse data, which cannot be
redistributed. g = n, a = 3, b = 1, ρ = 0.5. 20 chains of single-flip
Metropolis (the paper's sampler), locally balanced t/(1+t) with and without
every scored neighbour in OPAD+, and LSB1. (Not √t: on this posterior single
flips change log p̃ by up to ±100, and an unbounded g then proposes the
steepest flip, whose reverse is rarely proposed from the new state, so √t
chains stall — the failure the LSB paper's bounded functions avoid.) Exact π by enumerating all 2^m
inclusion vectors. Prints the KL table and the store's cost relative to the
sampler's step (the goal: ≤ 10 % on this target).

Run:  python -m benchmarks opad_bvs [--steps 10000 --chains 20]
"""

from __future__ import annotations

from benchmarks import OPAD_HELPS, SWEEP_DEFAULTS, SWEEP_HELPS, arguments
from benchmarks.papers.opad_ising import sampler_set
from benchmarks.papers.opad_runs import cost_table, opad_run, stored, sweep_curves, table

DATASETS = {
    "synthetic (m = 20, n = 200)": {"dataset": "synthetic", "n_predictors": 20, "n_samples": 200, "seed": 0},
    "diabetes (m = 10, n = 442)": {"dataset": "diabetes"},
}


def main(argv=None) -> None:
    args = arguments("opad_bvs", argv, steps=10_000, chains=20, **SWEEP_DEFAULTS,
                     helps=OPAD_HELPS | SWEEP_HELPS)
    samplers = sampler_set("barker", "t/(1+t)")
    runs = {title: [opad_run(label, "bvs", params, name, sampler_params, args.steps, args.chains, scored)
                    for label, (name, sampler_params, scored) in samplers.items()]
            for title, params in DATASETS.items()}
    curves = sweep_curves("opad_bvs", [run for group in runs.values() for run in group], args)
    for title, group in runs.items():
        print(f"\nBVS, {title}; {args.chains} chains")
        shown = stored(curves, group)
        table(shown)
        print()
        cost_table(shown)
