"""A sampler bake-off: every applicable sampler on the user's target, equal budgets, one strict verdict.

    result = bakeoff(targets.from_log_prob(fn, dim, autograd=True), budget=1e5)
    print(result)            # the ranked table with intervals, the verdict, the frozen kernels, what was skipped
    result.table             # pandas: one row per sampler kernel, each measure with "<measure> low/high"
    result.winner            # a name, or None for a tie
    result.skipped           # sampler → why it does not apply

The target is anything ``source.as_source`` reads (a ``Target``, a registered
name, couplings, a ``.uai``/``.npz``/``.csv`` file). Samplers are taken from
the registry (``samplers="all"``) and each is tried on the target: one that
raises ``ValueError`` (gradients needed, ferromagnets only, pairwise models
only, DAGs only) is skipped with its reason; the fixed-Hamming-weight samplers
(those with an ``n_active`` parameter: intracluster, Kawasaki) sample a
subspace, not π, and are skipped unless named in ``samplers``. Every kernel
(``task.variants``: a tuned sampler both efficiency- and acceptance-tuned)
runs ``seeds`` times with ``budget`` on ``axis`` after its tuning (``phases``),
as one sweep (``sweeps.run_sweep``: serial with ``workers=0``, a local Dask
cluster, or ``scheduler``; stored under ``results``, resumable, the same
numbers at any scale on the evaluations and steps axes). ``on_result(result)``
is called with the bake-off so far after each run is stored: a page can show
the ranking as the runs come back (an exception it raises ends the bake-off;
the runs stored so far are kept, and a later call resumes from them). The measures, ranking and verdict are
``summary``'s; ``result.save(directory)`` writes the report (``report``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

import samplers as registry
from engine.statistics import available_statistics
from samplers.diagnostics.convergence import Reference

from ..runner import DEFAULT_RESULTS, run_sweep
from ..spec import Sweep
from ..store import ResultStore
from . import report
from .phases import AXES
from .source import TargetSource, as_source
from .summary import RunMeasures, Verdict, exact_equilibrium, pooled_reference, run_measures, table, tuning_gain, \
    verdict, with_equilibrium
from .task import TUNING_SHARE, BakeoffRun, label, variants

__all__ = ["SUBSPACE", "BakeoffResult", "BakeoffRun", "TargetSource", "applicable", "as_source", "bakeoff",
           "fixed_weight"]


#: Why a fixed-Hamming-weight sampler is skipped (``fixed_weight``), and how a caller races it anyway.
SUBSPACE = "samples only the fixed-Hamming-weight subspace {x : |x| = k} (k ones), not π"
SUBSPACE_ADVICE = "name it in samplers= if your target is such a subspace"


def fixed_weight(name: str) -> bool:
    """Whether a registered sampler keeps the number of ones fixed (it has an ``n_active`` parameter)."""
    return "n_active" in registry.sampler_class(name).param


def applicable(target, names, params: dict | None = None, explicit: bool = False) -> tuple[list[str], dict]:
    """The samplers of ``names`` that apply to ``target`` and sampler → reason for the others (module docstring);
    ``explicit``: the user named them, so fixed-Hamming-weight samplers are kept."""
    kept, skipped = [], {}
    for name in names:
        if fixed_weight(name) and not explicit:
            skipped[name] = f"{SUBSPACE}; {SUBSPACE_ADVICE}"
            continue
        try:
            registry.make(name, target, n_chains=1, **(params or {}).get(name, {}))
        except (ValueError, TypeError) as error:
            skipped[name] = str(error)
        else:
            kept.append(name)
    return kept, skipped


@dataclass
class BakeoffResult:
    """A bake-off's outcome (module docstring); ``str(result)`` is its text report."""

    table: pd.DataFrame
    winner: str | None
    verdict: Verdict | None
    skipped: dict[str, str]
    runs: dict[str, list[RunMeasures]]
    reference: Reference | None
    target_name: str
    dim: int
    axis: str
    budget: float
    seeds: int
    chains: int
    statistic: str
    store: ResultStore
    failed: dict[str, str] = field(default_factory=dict)
    tuning_share: float = TUNING_SHARE

    def tuning_gain(self) -> dict:
        """Tuned sampler → (acceptance-tuned value, efficiency-tuned value, evidence of their ESS-rate ratio)."""
        return tuning_gain(self.runs, self.axis)

    def kernels(self) -> dict[str, dict[int, dict]]:
        """Label → replicate → the frozen kernel measured (replay: ``samplers.make(sampler, target, **kernel)``)."""
        return {name: {run.replicate: run.kernel for run in runs} for name, runs in self.runs.items()}

    def save(self, directory: str | Path | None = None) -> Path:
        """Write the report (``bakeoff.md``, ``bakeoff.html``) in ``directory`` (default: beside the runs)."""
        return report.save(self, directory or self.store.directory)

    def __str__(self) -> str:
        return report.text(self)


def bakeoff(target, samplers="all", budget: float = 1e5, axis: str = "evaluations", seeds: int = 5, *,
            chains: int = 12, statistic: str = "log_prob", target_params: dict | None = None,
            sampler_params: dict[str, dict] | None = None, seed: int = 0, results=None, workers: int | None = 0,
            scheduler: str | None = None, client=None, progress: bool = True,
            on_result: Callable[[BakeoffResult], None] | None = None) -> BakeoffResult:
    """Run the bake-off (module docstring). ``sampler_params``: sampler → its requested parameters;
    ``seed``: the sweep's seed; ``results``: the directory its runs are stored under (default
    ``benchmarks/results``)."""
    if axis not in AXES:
        raise ValueError(f"axis must be one of {AXES}; got {axis!r}")
    if budget <= 0 or seeds < 1 or chains < 3:
        raise ValueError(f"a bake-off needs budget > 0, seeds ≥ 1 and chains ≥ 3; got {budget}, {seeds}, {chains}")
    source = as_source(target, target_params)
    built = source.build()
    if statistic not in available_statistics(built):
        raise ValueError(f"statistic {statistic!r} does not apply; choose one of {list(available_statistics(built))}")
    explicit = samplers != "all"
    names, skipped = applicable(built, registry.available() if not explicit else list(samplers), sampler_params,
                                explicit)
    target_id = source.description()
    runs = [BakeoffRun(source, target_id, name, variant, replicate, float(budget), axis, chains, statistic,
                       (sampler_params or {}).get(name, {}), label=f"{label(name, variant)} #{replicate}")
            for name in names for variant in variants(name) for replicate in range(seeds)]
    digest = hashlib.sha256(json.dumps(target_id, sort_keys=True).encode()).hexdigest()[:12]
    sweep = Sweep(f"bakeoff-{source.name}-{digest}", seed, tuple(runs))
    store = ResultStore(Path(results or DEFAULT_RESULTS) / sweep.name)
    measured: dict[str, RunMeasures] = {}  # run id → its measures, read once
    exact = exact_equilibrium(built, statistic)

    def collect(failed: dict[str, str]) -> BakeoffResult:
        for run in runs:
            if run.run_id not in measured and store.has(run.run_id):
                measured[run.run_id] = run_measures(store.read(run.run_id), axis)
        by_label: dict[str, list[RunMeasures]] = {}
        for run in runs:
            if run.run_id in measured:
                by_label.setdefault(label(run.sampler, run.variant), []).append(measured[run.run_id])
        done = [m for ms in by_label.values() for m in ms]
        reference = exact or (pooled_reference(done) if done else None)
        for m in done:
            with_equilibrium(m, reference, chains)
        ranked = table(by_label, axis)
        judged = verdict(ranked, by_label, axis)
        return BakeoffResult(ranked, judged.winner if judged else None, judged, skipped, by_label, reference,
                             source.name, built.dim, axis, float(budget), seeds, chains, statistic, store, failed)

    def named(failures: dict[str, str]) -> dict[str, str]:
        """Run label → error of this bake-off's failed runs."""
        return {run.label: failures[run.run_id] for run in runs if run.run_id in failures}

    def stored(run_id: str) -> None:
        if on_result is not None:
            on_result(collect(named(store.failures())))

    report_ = run_sweep(sweep, results, workers=workers, scheduler=scheduler, client=client, progress=progress,
                        on_result=stored)
    return collect(named(report_.failed))
