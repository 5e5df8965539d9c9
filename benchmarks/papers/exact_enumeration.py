"""Exact posteriors by enumeration: BVS with m = 16, 18, 20 predictors and DAGs on n = 3, 4, 5 nodes.

BVS (synthetic data, n = 200): the seconds to score all 2^m inclusion vectors,
the time per state, and whether the posterior mode is the generator's true γ*.
States are scored in batches grouped by |γ| with one stacked linear solve per
group (see ``targets.bvs``).

DAGs (BGe, 200 samples of ER(n, 2)): the seconds to build the local-score
table and to list every DAG (25, 543 and 29,281 of the 2^{n(n−1)} directed
graphs) scored from it (see ``targets.dag``).

Run:  python -m benchmarks exact_enumeration
"""

from __future__ import annotations

import time

import numpy as np

import targets
from benchmarks import arguments


def main(argv=None) -> None:
    arguments("exact_enumeration", argv)
    print("| BVS m | states | seconds | µs per state | mode = γ* |")
    print("|---|---|---|---|---|")
    for m in (16, 18, 20):
        target = targets.make("bvs", n_predictors=m, n_samples=200, seed=0)
        started = time.perf_counter()
        states, log_p = target.enumerate()
        seconds = time.perf_counter() - started
        mode_is_truth = np.array_equal(states[np.argmax(log_p)], target.true_inclusion)
        print(f"| {m} | {len(log_p):,} | {seconds:.2f} | {1e6 * seconds / len(log_p):.2f} | {mode_is_truth} |")
    print("\n| DAG n | directed graphs | DAGs | score table s | enumeration s |")
    print("|---|---|---|---|---|")
    for n in (3, 4, 5):
        started = time.perf_counter()
        target = targets.make("dag", n_nodes=n, expected_degree=2.0, n_samples=200, seed=0)
        built = time.perf_counter()
        states, _ = target.enumerate_dags()
        seconds = time.perf_counter() - built
        print(f"| {n} | {2 ** target.dim:,} | {len(states):,} | {built - started:.4f} | {seconds:.2f} |")
