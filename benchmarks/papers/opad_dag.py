"""OPAD paper Figs. 3–4: KL(P‖π) of MCMC, OPAD and OPAD+ over DAGs, with structure and partition MCMC.

Targets: the BGe posterior over the 29,281 DAGs on n = 5 nodes given 200
samples of a linear-Gaussian model on an Erdős–Rényi DAG ER(5, d), expected
degree d = 1, 2, 3 (data seeds ``DATA_SEEDS``; exact π by enumerating every
DAG). ``--seed`` seeds the chains. 20 chains of
``structure_mcmc`` (single-edge addition, deletion, reversal), of
``partition_mcmc`` (Kuipers & Moffa 2017; its chains' DAGs are what OPAD
reweights), and, beyond the paper, of a locally balanced t/(1+t) chain on the
adjacency bits (cyclic graphs have p̃ = 0 and are never proposed) with and
without every scored neighbour in OPAD+. Prints the KL table per target and
the store's cost relative to each sampler's step.

Run:  python -m benchmarks opad_dag [--steps 10000 --chains 20]
"""

from __future__ import annotations

import targets
from benchmarks import OPAD_HELPS, SWEEP_DEFAULTS, SWEEP_HELPS, arguments
from benchmarks.papers.opad_runs import cost_table, opad_run, stored, sweep_curves, table

#: Seed of each ER(5, d) data set: one whose graph has about its expected n·d/2 = 2.5, 5, 7.5 edges (it has 3, 5
#: and 8), so the three posteriors differ as the paper's do (seed 0 gives ER(5, 1) and ER(5, 2) one same 1-edge graph).
DATA_SEEDS = {1.0: 2, 2.0: 13, 3.0: 1}
SAMPLERS = {
    "structure MCMC": ("structure_mcmc", {}, False),
    "partition MCMC": ("partition_mcmc", {}, False),
    "locally balanced t/(1+t)": ("locally_balanced", {"balancing": "barker"}, False),
    "locally balanced t/(1+t), all scored": ("locally_balanced", {"balancing": "barker"}, True),
}


def dag_params(degree: float) -> dict:
    """The target parameters of the ER(5, ``degree``) data set."""
    return {"n_nodes": 5, "expected_degree": degree, "n_samples": 200, "seed": DATA_SEEDS.get(degree, 0)}


def main(argv=None) -> None:
    args = arguments("opad_dag", argv, steps=10_000, chains=20, degrees="1,2,3", **SWEEP_DEFAULTS,
                     helps=OPAD_HELPS | SWEEP_HELPS | {
                         "degrees": "comma-separated expected degrees of the ER(5, degree) data-generating DAGs"})
    degrees = [float(d) for d in args.degrees.split(",")]
    runs = {degree: [opad_run(label, "dag", dag_params(degree), name, params, args.steps, args.chains, scored)
                     for label, (name, params, scored) in SAMPLERS.items()] for degree in degrees}
    curves = sweep_curves("opad_dag", [run for group in runs.values() for run in group], args)
    for degree, group in runs.items():
        edges = int(targets.make("dag", **dag_params(degree)).true_adjacency.sum())
        print(f"\nDAGs on 5 nodes, BGe, data from ER(5, {degree:g}) with {edges} edges; {args.chains} chains")
        shown = stored(curves, group)
        table(shown)
        print()
        cost_table(shown)
