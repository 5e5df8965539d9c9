"""Benchmarks: speed and cost measured in one run and printed as tables and ratios."""

from __future__ import annotations

import argparse
import gc
import os
import sys
import time

from threadpoolctl import threadpool_limits

#: The options the LSB paper's benchmarks share.
LSB_HELPS = {
    "seeds": "independent repetitions (seeds) of every run; intervals are over them",
    "burn_in": "steps K during which a learned g is learned (then frozen), as in the paper",
    "steps": "sampling steps after the burn-in",
    "chains": "chains per run",
    "reference_steps": "steps of the long run from over-dispersed starts that gives the equilibrium reference",
}
#: The options of every benchmark that runs as a sweep (``sweeps``), and their defaults.
SWEEP_HELPS = {
    "seed": "seed of the sweep: each run's random stream comes from it and the run's hash (SeedSequence)",
    "workers": "worker processes of a local Dask cluster (0: run here, one run after the other)",
    "scheduler": "address of an existing Dask scheduler, e.g. tcp://host:8786 (then --workers is ignored)",
    "results": "directory of the stored runs (default: benchmarks/results); stored runs are not computed again",
}
SWEEP_DEFAULTS = {"seed": 0, "workers": os.cpu_count() or 1, "scheduler": "", "results": ""}
#: The options the OPAD paper's benchmarks share.
OPAD_HELPS = {
    "steps": "steps per chain (the paper: 10^4 and 10^6)",
    "chains": "independent chains per sampler",
}


def arguments(name: str, argv, *, helps: dict[str, str] | None = None, **defaults) -> argparse.Namespace:
    """Parse ``--option value`` arguments of benchmark ``name``; each keyword is an option and its default.

    ``helps`` maps the keywords to their ``--help`` text; ``--help`` shows every
    option's default.
    """
    parser = argparse.ArgumentParser(prog=f"python -m benchmarks {name}")
    for key, value in defaults.items():
        text = (helps or {}).get(key, "")
        parser.add_argument(f"--{key.replace('_', '-')}", type=type(value), default=value,
                            help=f"{text} (default: %(default)s)".strip())
    return parser.parse_args(argv or [])


def sweep_store(name: str, runs, args):
    """Run the sweep ``name`` of ``runs`` (``sweeps.RunSpec``) as the ``SWEEP_DEFAULTS`` options in ``args`` say —
    only the runs not stored yet — print its summary (failures included) and return its ``ResultStore``."""
    from sweeps import Sweep, run_sweep

    report = run_sweep(Sweep(name, args.seed, tuple(runs)), args.results or None, workers=args.workers,
                       scheduler=args.scheduler or None)
    print(report.summary(), file=sys.stderr)
    return report.store


def cpu_seconds_per_step(sampler, steps: int, repeats: int, record: bool = False) -> float:
    """Best-of-``repeats`` CPU seconds per ``sampler.step(record)`` over ``steps`` steps, after ``steps // 5`` warm-up
    steps.

    CPU time of this process (``time.process_time``): on a shared machine, time spent waiting for a core does not count.
    The numeric libraries run one thread each meanwhile, so that a BLAS pool spinning after an earlier call (a
    target's evaluation at the sampler's reset) is not counted (``sweeps.runner``).
    """
    return interleaved_cpu_seconds_per_step([sampler], steps, repeats, record)[0]


def interleaved_cpu_seconds_per_step(samplers, steps: int, repeats: int, record: bool = False) -> list[float]:
    """``cpu_seconds_per_step`` of each of ``samplers``, their timed repeats taken in turn (A, B, A, B, …).

    A ratio of two samplers' costs is then measured under the same conditions:
    a machine that slows down or speeds up during the run (another tenant, the
    clock) affects both sides' repeats alike, and each side keeps its best.
    Every timed repeat follows ``steps // 5`` untimed steps of the same sampler,
    so that it finds its own data in the caches, as a sampler run alone does,
    not evicted by the sampler timed before it. The garbage left by what ran
    before (the reference's autograd graphs) is collected first: left
    pending, it slowed our steps by 5–10 %.
    """
    gc.collect()
    with threadpool_limits(limits=1):
        best = [float("inf")] * len(samplers)
        for _ in range(repeats):
            for k, sampler in enumerate(samplers):
                for _ in range(max(1, steps // 5)):
                    sampler.step(record)
                start = time.process_time()
                for _ in range(steps):
                    sampler.step(record)
                best[k] = min(best[k], (time.process_time() - start) / steps)
    return best
