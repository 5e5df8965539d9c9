"""Execute a sweep: the runs its results directory lacks, serially or on dask.distributed, with a progress bar.

``run_sweep(sweep, results)`` runs every run here, one after the other;
``workers=N`` starts a local cluster of ``N`` worker processes (one thread each;
``workers=None``: one per core), whose processes start by importing the
calling script again (the spawn start method): a script that asks for workers
puts its call under ``if __name__ == "__main__":``, and one without is told so;
``scheduler="tcp://host:port"``
uses an existing cluster instead (its workers must have this package installed
and see the results directory's files only through this process: results
come back to the submitting process, which writes them). Run here (the default,
``workers=0``), every run goes one after the other, without Dask, with one thread per numeric
library as on a Dask worker (whose nanny sets ``OMP_NUM_THREADS`` and the like
to 1): an OpenBLAS pool keeps its threads spinning for a while after each call,
which counted in a run's CPU time (+40 % on a 15 µs Metropolis step after one
enumeration) and took a core from the sampler. Only runs without a stored
result are computed, so an interrupted sweep resumes where it stopped. Each run
is one Dask task (its ``perform``; ``sweeps.perform`` for a ``RunSpec``); a task on a worker that dies is
rescheduled by Dask's scheduler, and its result is written once, by run id. A
run that raises records its error (``ResultStore.write_failure``) and the sweep
goes on; the report lists the failures.
"""

from __future__ import annotations

import logging
import os
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from threadpoolctl import threadpool_limits
from tqdm import tqdm

from .perform import perform
from .spec import RunSpec, Sweep, Task
from .store import ResultStore

#: Dask settings of the local clusters started here: the workers' statistical profiler off and their periodic
#: housekeeping (event-loop ticks, system and memory monitors) slowed down, which otherwise takes 5–15 % of a
#: compute-bound run's time (measured by ``python -m benchmarks sweep_scaling``).
QUIET_WORKERS = {"distributed.worker.profile.enabled": False, "distributed.admin.tick.interval": "1s",
                 "distributed.admin.system-monitor.interval": "5s", "distributed.worker.memory.monitor-interval": "1s"}
#: Where sweeps store their runs unless told otherwise: one directory per sweep below it.
DEFAULT_RESULTS = Path(__file__).resolve().parents[1] / "benchmarks" / "results"


@dataclass
class SweepReport:
    """What one call of ``run_sweep`` did."""

    store: ResultStore
    computed: list[str] = field(default_factory=list)  # run ids computed now
    skipped: int = 0  # runs already stored
    failed: dict[str, str] = field(default_factory=dict)  # run id → error, of the runs that failed now
    seconds: float = 0.0

    def summary(self) -> str:
        lines = [f"{len(self.computed)} runs computed, {self.skipped} already stored, {len(self.failed)} failed "
                 f"({self.seconds:.1f} s); results in {self.store.directory}"]
        lines += [f"  failed {run_id}: {error}" for run_id, error in self.failed.items()]
        return "\n".join(lines)


def _bar(total: int, show: bool):
    return tqdm(total=total, desc="runs", unit="run", file=sys.stderr, mininterval=1.0, dynamic_ncols=True,
                disable=None if show else True, leave=False)


def run_sweep(sweep: Sweep, results: str | os.PathLike | None = None, workers: int | None = 0,
              scheduler: str | None = None, client=None, progress: bool = True,
              on_result: Callable[[str], None] | None = None) -> SweepReport:
    """Compute and store the runs of ``sweep`` missing under ``results``/``sweep.name`` (see the module docstring).

    ``client``: an existing ``distributed.Client`` (then ``workers`` and ``scheduler`` are ignored);
    ``on_result(run_id)`` is called after each run is stored or has failed.
    """
    started = time.perf_counter()
    store = ResultStore(Path(results or DEFAULT_RESULTS) / sweep.name)
    store.write_description(sweep.to_dict())
    missing = [run for run in sweep.runs if not store.has(run.run_id)]
    report = SweepReport(store, skipped=len(sweep.runs) - len(missing))
    bar = _bar(len(missing), progress)

    def finished(run_id: str, result: dict | None, error: BaseException | None, trace: str = "") -> None:
        if error is None:
            store.write(run_id, result)
            report.computed.append(run_id)
        else:
            report.failed[run_id] = f"{type(error).__name__}: {error}"
            store.write_failure(run_id, report.failed[run_id], trace)
        bar.update()
        bar.set_postfix(failed=len(report.failed), refresh=False)
        if on_result is not None:
            on_result(run_id)

    try:
        if workers == 0 and client is None and scheduler is None:
            with threadpool_limits(limits=1):  # one thread per numeric library, as Dask's nanny gives its workers
                for run in missing:
                    try:
                        result = perform_task(run, sweep.seed)
                    except Exception as error:  # a failed run is recorded; the sweep goes on
                        finished(run.run_id, None, error, traceback.format_exc())
                    else:
                        finished(run.run_id, result, None)
        elif missing:
            _on_dask(sweep, missing, client, workers, scheduler, finished)
    finally:
        bar.close()
        report.seconds = time.perf_counter() - started
    return report


def perform_task(task: Task, sweep_seed: int) -> dict:
    """What a worker runs: a ``RunSpec`` by ``sweeps.perform`` (a configuration is data), any other task by its
    own ``perform(sweep_seed)``."""
    return perform(task, sweep_seed) if isinstance(task, RunSpec) else task.perform(sweep_seed)


def local_cluster(workers: int | None = None):
    """A local Dask cluster of ``workers`` processes (default one per core), one thread each, ``QUIET_WORKERS``."""
    import dask
    from distributed import LocalCluster

    with dask.config.set(QUIET_WORKERS):
        try:
            return LocalCluster(n_workers=workers or os.cpu_count() or 1, threads_per_worker=1, processes=True,
                                dashboard_address=None, silence_logs=logging.WARNING)
        except RuntimeError as error:
            script = getattr(sys.modules["__main__"], "__file__", None)
            if script is None or "failed to start" not in str(error):
                raise
            raise RuntimeError(
                f"Dask's worker processes could not start: each starts by importing {script} again, and a script "
                f"that starts a sweep when imported starts it in every worker. Put the call under "
                f"`if __name__ == \"__main__\":`, or pass workers=0 to run here, one run after the other.") from error


def _on_dask(sweep: Sweep, runs: list, client, workers: int | None, scheduler: str | None, finished) -> None:
    """Submit every run as a task and store each result as it comes (``distributed.as_completed``)."""
    from distributed import Client, as_completed

    own = client is None
    cluster = None
    if own and scheduler is None:
        cluster = local_cluster(workers)
    if own:
        client = Client(cluster if cluster is not None else scheduler)
    try:
        futures = {client.submit(perform_task, run, sweep.seed, key=f"{sweep.name}-{run.run_id}", pure=False):
                   run.run_id for run in runs}
        for future in as_completed(futures):
            run_id = futures.pop(future)
            if future.status == "error":
                error, trace = future.exception(), "".join(traceback.format_tb(future.traceback()))
                finished(run_id, None, error, trace)
            else:
                finished(run_id, future.result(), None)
            future.release()
    finally:
        if own:
            client.close()
            if cluster is not None:
                cluster.close()
