"""Sweeps on Dask: the same sweep serially, on 1 and on 2 workers (speed-up, and the scheduler's cost per run).

The sweep is ``--runs`` replicates of one run (Metropolis, 16 chains on a
32×32 Ising lattice) whose length is calibrated here to take about
``--run-seconds`` of CPU. It is computed three times into fresh results
directories: in this process, one run after the other (``workers=0``); on a
local cluster of one worker process; on a local cluster of two (the clusters
``run_sweep`` starts, ``sweeps.runner.local_cluster``). Each cluster
is started before its clock starts (its start-up is printed apart). Printed:
wall-clock seconds of each, the speed-up of two workers over one (the goal on
a 2-core machine: at least 1.8 for runs of a second or more) and the
scheduler's overhead per run, (one worker − serial) / runs, as a fraction of a
run (the goal: at most 5 %). Wall-clock time is the point here (two workers
share the machine's cores), so run it on an otherwise idle machine.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from benchmarks import arguments
from engine.config import RunConfig
from sweeps import RunSpec, Sweep, perform, run_sweep
from sweeps.runner import local_cluster

BASE = {"target": "ising_lattice", "target_params": {"size": 32, "beta": 0.4}, "sampler": "metropolis",
        "n_chains": 16, "statistic": "magnetisation"}


def calibrated_steps(seconds: float) -> int:
    """Steps of the benchmark's run that take about ``seconds`` of CPU here."""
    probe = perform(RunSpec(RunConfig.from_dict(BASE), steps=2000), sweep_seed=0)
    return max(100, int(seconds * 2000 / probe["step_seconds"]))


def timed(sweep: Sweep, directory: Path, workers: int) -> tuple[float, float]:
    """(cluster start-up seconds, wall seconds of the sweep) with ``workers`` worker processes (0: serially)."""
    if workers == 0:
        started = time.perf_counter()
        run_sweep(sweep, directory, workers=0, progress=False)
        return 0.0, time.perf_counter() - started
    from distributed import Client

    started = time.perf_counter()
    with local_cluster(workers) as cluster, Client(cluster) as client:
        client.run(perform, sweep.runs[0], sweep.seed)  # every worker loads the kernels before the clock starts
        ready = time.perf_counter()
        report = run_sweep(sweep, directory, client=client, progress=False)
        assert not report.failed, report.summary()
        return ready - started, time.perf_counter() - ready


def main(argv=None) -> None:
    args = arguments("sweep_scaling", argv, runs=8, run_seconds=1.0, helps={
        "runs": "independent runs in the sweep", "run_seconds": "CPU seconds of each run (calibrated here)"})
    steps = calibrated_steps(args.run_seconds)
    sweep = Sweep("scaling", 0, tuple(RunSpec(RunConfig.from_dict({**BASE, "seed": replicate}), steps)
                                      for replicate in range(args.runs)))
    with tempfile.TemporaryDirectory() as scratch:
        serial = timed(sweep, Path(scratch) / "serial", 0)[1]
        startup_1, one = timed(sweep, Path(scratch) / "one", 1)
        startup_2, two = timed(sweep, Path(scratch) / "two", 2)
    per_run = serial / args.runs
    print(f"{args.runs} runs of {steps:,} Metropolis steps (16 chains, 32×32 Ising), about {per_run:.2f} s each")
    print("| execution | wall seconds | cluster start-up s |")
    print("|---|---|---|")
    print(f"| serial, in this process | {serial:.2f} | – |")
    print(f"| 1 worker | {one:.2f} | {startup_1:.1f} |")
    print(f"| 2 workers | {two:.2f} | {startup_2:.1f} |")
    print(f"speed-up 2 workers / 1 worker: {one / two:.2f}× (goal ≥ 1.8)")
    print(f"scheduler overhead per run: {(one - serial) / args.runs:.3f} s = {(one - serial) / serial:.1%} of a run "
          f"(goal ≤ 5 %)")
