"""Shared machinery of the LSB paper experiments: their runs as sweeps, each run's summary, tables and figures.

A run (``mixing_run``) is a sampler advanced for ``burn_in`` + ``steps`` steps,
its statistic traced for every chain at every step and stored by a sweep
(``benchmarks.sweep_store``: on Dask, resumable, ``--workers``, ``--scheduler``,
``--results``). For LSB/FLSB the balancing function is learned during the
first ``burn_in`` steps and frozen after; fixed-function samplers run the same
number of steps, so every row of a table spends its burn-in the same way. The
equilibrium reference of a case is a run of the same sweep (``reference_run``:
a long √t run from over-dispersed starts). Tables and figures are made from
the stored results (``summarise``), so they can be redrawn without sampling.
Reported per run:

* the burn-in trace: the chain-averaged statistic against target evaluations;
* ``evals_to_converge``: evaluations until the chain-averaged statistic first
  comes within 1 % (of its starting distance) of the *equilibrium* value
  (``samplers.diagnostics.convergence.first_hit``), given a reference known to be reached
  — exact, from exact samples, or a long run that passed split-R̂
  (``samplers.diagnostics.convergence.thinned_run_reference``). Without one the column is
  "—": the run's own later mean is no equilibrium when chains still drift;
* post-burn-in bulk ESS of the statistic (rank-normalised, all chains), and
  ESS per 1,000 evaluations and per CPU second of the sampler's steps.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import holoviews as hv
import holoviews.plotting.bokeh  # noqa: F401  (registers the Bokeh backend used by .opts and hv.save)
import numpy as np

from benchmarks import sweep_store
from engine.config import RunConfig
from samplers.diagnostics.convergence import Reference, first_hit, thinned_run_reference
from samplers.diagnostics.ess import ess
from samplers.lsb.balancing import FORMULAS
from sweeps import RunSpec

#: ``locally_balanced`` with each fixed balancing function, labelled by its formula.
FIXED_FUNCTIONS = {formula.replace(" ", ""): ("locally_balanced", {"balancing": name})
                   for name, formula in FORMULAS.items()}
#: The columns of a mixing table (RunResult attributes → headers).
MIXING_COLUMNS = {"evals_to_converge": "evals to equilibrium", "ess": "ESS", "ess_per_kilo_eval": "ESS / 1k evals",
                  "ess_per_second": "ESS / CPU s"}
#: Thinned draws a long reference run keeps (about; its second half gives the reference).
REFERENCE_DRAWS = 2000


@dataclass
class RunResult:
    label: str
    seed: int
    evals: np.ndarray  # cumulative evaluations at every step (burn-in part)
    burn_in_trace: np.ndarray  # chain-averaged statistic during burn-in
    evals_to_converge: float
    ess: float
    ess_per_kilo_eval: float
    ess_per_second: float
    extra: dict = field(default_factory=dict)


def mixing_run(label: str, target: str, target_params: dict, sampler: str, params: dict, statistic: str, *,
               chains: int, replicate: int, burn_in: int, steps: int, state_every: int = 0,
               traced: tuple[str, ...] = ("statistic",)) -> RunSpec:
    """Replicate ``replicate`` of ``burn_in`` + ``steps`` steps of ``sampler`` (LSB/FLSB learn during the burn-in),
    what ``traced`` names (the statistic, a ``engine.statistics`` name; an LSB's θ) at every step, and every
    chain's state every ``state_every`` steps when > 0."""
    if sampler in ("lsb", "flsb"):
        params = {"burn_in": burn_in, **params}
    config = RunConfig(target=target, target_params=target_params, sampler=sampler, sampler_params=params,
                       n_chains=chains, seed=replicate, statistic=statistic)
    return RunSpec(config, burn_in + steps, trace_points=burn_in + steps + 1, traced=traced,
                   state_every=state_every, label=label)


def reference_run(target: str, target_params: dict, statistic: str, chains: int, steps: int) -> RunSpec:
    """The long √t run from over-dispersed starts whose second half gives a case's equilibrium reference
    (``reference``), with about ``REFERENCE_DRAWS`` thinned draws."""
    config = RunConfig(target=target, target_params=target_params, sampler="locally_balanced",
                       sampler_params={"balancing": "sqrt"}, n_chains=chains, statistic=statistic)
    return RunSpec(config, steps, trace_points=min(steps, REFERENCE_DRAWS) + 1, traced=("statistic",),
                   start="over_dispersed", label="equilibrium reference")


def reference(result: dict) -> Reference:
    """A stored ``reference_run``'s equilibrium reference (its draws after step 0)."""
    spec = RunSpec.from_dict(json.loads(result["spec"]))
    run = f"{spec.config.sampler} ({spec.config.n_chains} chains × {spec.steps:,} steps)"
    return thinned_run_reference(result["trace_statistic"][1:], run)


def mixing_runs(samplers_by_label: dict, target: str, target_params: dict, statistic: str, args,
                state_every: int = 0) -> dict[str, list[RunSpec]]:
    """label → the ``mixing_run`` of every labelled (sampler name, params), replicates ``range(args.seeds)``."""
    return {label: [mixing_run(label, target, target_params, name, params, statistic, chains=args.chains,
                               replicate=seed, burn_in=args.burn_in, steps=args.steps, state_every=state_every)
                    for seed in range(args.seeds)]
            for label, (name, params) in samplers_by_label.items()}


def summarise(label: str, result: dict, burn_in: int, reference: Reference | None = None) -> RunResult:
    """A stored ``mixing_run``'s summary (see the module docstring); convergence is measured against
    ``reference`` only when it was reached."""
    values, evals, seconds = result["trace_statistic"], result["trace_evals"], result["trace_seconds"]
    spec = RunSpec.from_dict(json.loads(result["spec"]))
    if len(values) != spec.steps + 1:
        raise ValueError("a mixing run's summary needs its statistic at every step")
    value = ess(values[burn_in + 1:].T)
    return RunResult(
        label=label, seed=spec.config.seed, evals=evals[: burn_in + 1],
        burn_in_trace=values[: burn_in + 1].mean(axis=1),
        evals_to_converge=(first_hit(evals, values.mean(axis=1), reference.value)
                           if reference is not None and reference.reached else float("nan")),
        ess=value, ess_per_kilo_eval=1e3 * value / (evals[-1] - evals[burn_in]),
        ess_per_second=value / (seconds[-1] - seconds[burn_in]),
    )


@dataclass(frozen=True)
class Case:
    """One table of a benchmark: its runs by label, and the run giving its equilibrium reference (if any)."""

    title: str
    figure_title: str
    runs: dict[str, list[RunSpec]]
    reference: RunSpec | None = None

    def all_runs(self) -> list[RunSpec]:
        return [run for runs in self.runs.values() for run in runs] + ([self.reference] if self.reference else [])


def run_cases(name: str, cases: list[Case], args):
    """Every case's runs as one sweep ``name`` (``benchmarks.sweep_store``, as ``args`` say); its store (whose
    parent directory is where the benchmark's tables and figures go)."""
    return sweep_store(name, [run for case in cases for run in case.all_runs()], args)


def stored_reference(store, case: Case) -> Reference | None:
    """The case's equilibrium reference from its stored run (None if it has none, or it failed)."""
    if case.reference is None or not store.has(case.reference.run_id):
        return None
    return reference(store.read(case.reference.run_id))


def stored_rows(store, case: Case, burn_in: int, reference: Reference | None) -> dict[str, list[RunResult]]:
    """label → the summaries of the case's stored runs (a failed run is missing)."""
    return {label: [summarise(label, store.read(run.run_id), burn_in, reference) for run in runs
                    if store.has(run.run_id)]
            for label, runs in case.runs.items()}


def report_cases(name: str, header: str, cases: list[Case], args, ylabel: str) -> None:
    """Run every case's runs as the sweep ``name`` (``run_cases``), then print and write the report ``name``: a table
    and burn-in figure per case (``report_case``), beside the sweep's directory."""
    store = run_cases(name, cases, args)
    report = Report(name, header)
    for case in cases:
        report_case(report, store, case, args.burn_in, ylabel)
    report.save(store.directory.parent)


def report_case(report: Report, store, case: Case, burn_in: int, ylabel: str) -> None:
    """Add the case's table and burn-in figure to ``report``, from its stored runs and reference."""
    reference = stored_reference(store, case)
    note = ("The equilibrium reference run failed (the sweep's summary says why), so no convergence is measured."
            if reference is None and case.reference is not None else "")
    report.add(case.title, stored_rows(store, case, burn_in, reference), MIXING_COLUMNS, ylabel,
               figure_title=case.figure_title, reference=reference, note=note)


class Report:
    """Tables (printed as they are made) and burn-in figures of one benchmark, saved together."""

    def __init__(self, name: str, header: str):
        self.name, self.header = name, header
        self.sections: list[str] = []
        self.figures: list = []

    def add(self, title: str, rows: dict[str, list[RunResult]], columns: dict[str, str], ylabel: str,
            figure_title: str | None = None, logy: bool = False, reference: Reference | None = None,
            note: str = "") -> None:
        """A table of ``rows`` (and its burn-in figure); ``reference`` (or ``note``) is said under the title."""
        section = table(title, rows, columns, note or ("" if reference is None else reference_note(reference)))
        print(section + "\n", flush=True)
        self.sections.append(section)
        self.figures.append(burn_in_figure(figure_title or title, rows, ylabel, logy=logy))

    def save(self, directory: Path) -> None:
        print("written:", save(self.name, self.header + "\n\n" + "\n\n".join(self.sections), self.figures,
                               directory))


def mean_std(values) -> str:
    values = np.asarray(values, dtype=float)
    values = values[np.isfinite(values)]
    if values.size == 0:
        return "—"
    return f"{values.mean():.3g} ± {values.std(ddof=1) if values.size > 1 else 0.0:.2g}"


def reference_note(reference: Reference) -> str:
    """What the "evals to equilibrium" column was measured against, or why it is empty."""
    said = f"Equilibrium reference {reference.value:.4g} ± {reference.standard_error:.2g}: {reference.method}"
    return said + ("." if reference.reached else " — not reached (split-R̂ ≥ 1.01), so no convergence is measured.")


def table(title: str, rows: dict[str, list[RunResult]], columns: dict[str, str], note: str = "") -> str:
    """Markdown table: one row per sampler, mean ± std over seeds of each RunResult attribute in ``columns``."""
    lines = [f"### {title}", "", *([note, ""] if note else []), "| sampler | " + " | ".join(columns.values()) + " |",
             "|---|" + "---|" * len(columns)]
    for label, results in rows.items():
        cells = [mean_std([getattr(r, attr) if hasattr(r, attr) else r.extra.get(attr, np.nan) for r in results])
                 for attr in columns]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def burn_in_figure(title: str, rows: dict[str, list[RunResult]], ylabel: str, logy: bool = False):
    """HoloViews overlay: the seed-averaged burn-in trace of every sampler against evaluations."""
    curves = []
    for label, results in rows.items():
        if not results:  # every run of this sampler failed
            continue
        evals = np.mean([r.evals for r in results], axis=0)
        trace = np.mean([r.burn_in_trace for r in results], axis=0)
        curves.append(hv.Curve((evals, trace), "target evaluations", ylabel, label=label))
    return hv.Overlay(curves).opts(title=title, width=520, height=360, logx=True, logy=logy,
                                   legend_position="bottom_right")


def save(name: str, text: str, figures: list, directory: Path) -> Path:
    """Write the tables (markdown) and figures (one HTML page) in ``directory`` (a sweep's results directory)."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / f"{name}.md").write_text(text + "\n")
    if figures:
        hv.save(hv.Layout(figures).cols(2), directory / f"{name}.html")
    return directory / f"{name}.md"
