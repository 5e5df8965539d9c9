"""Throughput of every sampler on the 30×30 segmentation target, and its scaling with d.

Prints, measured in this one run:

* steps/s and single-site updates/s of each sampler (30 chains, 30×30 target,
  the paper's dependent-noisy case λ = 1, μ = 1, σ = 3), for ``step()`` with
  its record and for the bare move (``step(record=False)``);
* the per-step cost ratio between 120×120 and 30×30 lattices (16× the sites).
  Local updates keep it near 1 for metropolis, gibbs and locally_balanced (the
  latter grows like log d through its sum-tree); gwg and the record snapshot
  are O(d) by construction.

Each figure is the best of several timed repeats in CPU time, to damp noise from a shared machine.

Run:  python -m benchmarks core_throughput
"""

from __future__ import annotations

import time

import samplers
import targets
from benchmarks import arguments, cpu_seconds_per_step

SETTINGS = [
    ("metropolis", {}),
    ("gibbs", {}),
    ("block_gibbs", {"block_size": 2}),
    ("hamming_ball", {"block_size": 10, "radius": 1}),
    ("locally_balanced", {"balancing": "barker"}),
    ("locally_balanced", {"balancing": "sqrt"}),
    ("locally_balanced", {"balancing": "min"}),
    ("locally_balanced", {"balancing": "max"}),
    ("gwg", {}),
]
N_CHAINS = 30


def seconds_per_step(sampler, record: bool, budget: float = 0.4, repeats: int = 5) -> float:
    """Best-of-``repeats`` CPU seconds per step, each repeat about ``budget`` / ``repeats`` CPU seconds long."""
    start = time.process_time()
    calls = 0
    while time.process_time() - start < budget / repeats:
        sampler.step(record)
        calls += 1
    return cpu_seconds_per_step(sampler, calls, repeats, record)


def sites_per_step(name: str, params: dict) -> int:
    return params.get("block_size", 1) if name in ("block_gibbs", "hamming_ball") else 1


def main(argv: list[str] | None = None) -> None:
    arguments("core_throughput", argv)  # no options: refuse unknown ones
    small = targets.make("ising_segmentation", size=30, lam=1.0, mu=1.0, sigma=3.0, seed=0)
    large = targets.make("ising_segmentation", size=120, lam=1.0, mu=1.0, sigma=3.0, seed=0)
    header = (f"{'sampler':34s} {'steps/s':>9s} {'site upd/s':>11s} {'bare steps/s':>12s} "
              f"{'ratio 120/30':>12s} {'bare ratio':>10s} {'evals/step':>10s}")
    print(f"30 chains; target ising_segmentation (λ=1, μ=1, σ=3); d = {small.dim} vs {large.dim}")
    print(header)
    print("-" * len(header))
    for name, params in SETTINGS:
        times = {}
        for label, target in (("small", small), ("large", large)):
            for record in (True, False):
                sampler = samplers.make(name, target, n_chains=N_CHAINS, seed=0, **params)
                times[label, record] = seconds_per_step(sampler, record)
        probe = samplers.make(name, small, n_chains=N_CHAINS, seed=0, **params)
        start_evals = probe.n_evals
        for _ in range(100):
            probe.step(record=False)
        evals_per_step = (probe.n_evals - start_evals) / (100 * N_CHAINS)
        label = name + "".join(f" {k}={v}" for k, v in params.items())
        steps = 1.0 / times["small", True]
        print(
            f"{label:34s} {steps:9.0f} {steps * N_CHAINS * sites_per_step(name, params):11.0f} "
            f"{1.0 / times['small', False]:12.0f} {times['large', True] / times['small', True]:12.2f} "
            f"{times['large', False] / times['small', False]:10.2f} {evals_per_step:10.1f}"
        )


if __name__ == "__main__":
    main()
