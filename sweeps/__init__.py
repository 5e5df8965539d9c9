"""Experiment sweeps: grids of independent runs, executed serially or on dask.distributed, stored and resumable.

A ``Sweep`` is data: a name, a seed and ``RunSpec``s (a dashboard ``RunConfig``
plus how long to run and what to record), each identified by a hash of its
description (``RunSpec.run_id``). ``run_sweep`` computes the runs a results
directory does not hold yet — in this process, on a local cluster of worker
processes, or on an existing Dask cluster — and stores one file per run
(``ResultStore``); tables and figures are then made from the stored results.
A run's random stream comes only from (sweep seed, run hash) through
``numpy.random.SeedSequence`` (``run_seed``), so a sweep gives the same numbers
serially and on any number of workers.

``bakeoff(target, ...)`` runs every applicable sampler on a user's target as
one such sweep and ranks them with intervals and a strict verdict
(``sweeps.bake_off``; ``python -m sweeps bakeoff`` on the command line).
"""

from .perform import perform, run_seed
from .runner import SweepReport, run_sweep
from .spec import RunSpec, Sweep, Task, grid
from .store import ResultStore
from .bake_off import BakeoffResult, bakeoff  # noqa: E402  (after what it builds on)

__all__ = ["BakeoffResult", "ResultStore", "RunSpec", "Sweep", "SweepReport", "Task", "grid", "perform", "run_seed",
           "run_sweep", "bakeoff"]
