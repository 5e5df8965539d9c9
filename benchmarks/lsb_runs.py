"""Shared machinery of the LSB paper experiments: one run, its summary, tables and figures.

A run is a sampler advanced for ``burn_in`` + ``steps`` steps. For LSB/FLSB the
balancing function is learned during the first ``burn_in`` steps and frozen
after; fixed-function samplers run the same number of steps, so every row of
a table spends its burn-in the same way. Reported per run:

* the burn-in trace: the chain-averaged statistic against target evaluations;
* ``evals_to_converge``: evaluations until the chain-averaged statistic first
  comes within 1 % (of its starting distance) of the *equilibrium* value
  (``samplers.convergence.first_hit``), given a reference known to be reached
  — exact, from exact samples, or a long run that passed split-R̂
  (``equilibrium``). Without one the column is "—": the run's own later mean
  is no equilibrium when chains still drift;
* post-burn-in bulk ESS of the statistic (rank-normalised, all chains), and
  ESS per 1,000 evaluations and per second.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

import holoviews as hv
import holoviews.plotting.bokeh  # noqa: F401  (registers the Bokeh backend used by .opts and hv.save)
import numpy as np

import samplers
from samplers.balancing import FORMULAS
from samplers.convergence import Reference, first_hit, long_run_reference, over_dispersed_starts
from samplers.diagnostics import ess

from . import progress

RESULTS = Path(__file__).parent / "results"
#: ``locally_balanced`` with each fixed balancing function, labelled by its formula.
FIXED_FUNCTIONS = {formula.replace(" ", ""): ("locally_balanced", {"balancing": name})
                   for name, formula in FORMULAS.items()}
#: The columns of a mixing table (RunResult attributes → headers).
MIXING_COLUMNS = {"evals_to_converge": "evals to equilibrium", "ess": "ESS", "ess_per_kilo_eval": "ESS / 1k evals",
                  "ess_per_second": "ESS / s"}


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


def log_p_statistic(states, log_p):
    """log p̃ as a run's statistic (the Markov-network experiments')."""
    return log_p


def equilibrium(target, statistic, chains: int, steps: int) -> Reference:
    """E_π[statistic] from a long √t run of ``chains`` chains from over-dispersed starts
    (``samplers.convergence.long_run_reference``; ``reached`` says whether its split-R̂ passed)."""
    sampler = samplers.make("locally_balanced", target, n_chains=chains, seed=10_000, balancing="sqrt",
                            init=over_dispersed_starts(target.dim, chains, np.random.default_rng(0)))
    return long_run_reference(sampler, statistic, steps, thin=max(1, steps // 2000))


def run_one(label: str, name: str, target, statistic, *, n_chains: int, seed: int, burn_in: int, steps: int,
            reference: Reference | None = None, on_burn_in=None, **params) -> RunResult:
    """Run ``burn_in`` + ``steps`` steps of sampler ``name`` and summarise (``on_burn_in(sampler, step)`` is a hook);
    convergence is measured against ``reference`` when it was reached."""
    if name in ("lsb", "flsb"):
        params.setdefault("burn_in", burn_in)
    sampler = samplers.make(name, target, n_chains=n_chains, seed=seed, **params)
    values = np.empty((burn_in + steps + 1, n_chains))
    evals = np.empty(burn_in + steps + 1)
    values[0], evals[0] = statistic(sampler.states, sampler.log_p), sampler.n_evals
    extra = {}
    for k in range(1, burn_in + 1):
        sampler.step(record=False)
        values[k], evals[k] = statistic(sampler.states, sampler.log_p), sampler.n_evals
        if on_burn_in is not None:
            on_burn_in(sampler, k, extra)
    start = time.perf_counter()
    for k in range(burn_in + 1, burn_in + steps + 1):
        sampler.step(record=False)
        values[k], evals[k] = statistic(sampler.states, sampler.log_p), sampler.n_evals
    seconds = time.perf_counter() - start
    mixing = values[burn_in + 1:].T
    value = ess(mixing)
    mean_trace = values[: burn_in + 1].mean(axis=1)
    return RunResult(
        label=label, seed=seed, evals=evals[: burn_in + 1], burn_in_trace=mean_trace,
        evals_to_converge=(first_hit(evals, values.mean(axis=1), reference.value)
                           if reference is not None and reference.reached else float("nan")),
        ess=value, ess_per_kilo_eval=1e3 * value / (evals[-1] - evals[burn_in]),
        ess_per_second=value / seconds, extra=extra,
    )


def compare(samplers_by_label: dict, target, statistic, args, **run_params) -> dict[str, list[RunResult]]:
    """``run_one`` for every labelled (sampler name, params) and every seed in ``range(args.seeds)``."""
    runs = [(label, name, params, seed) for label, (name, params) in samplers_by_label.items()
            for seed in range(args.seeds)]
    results = {label: [] for label in samplers_by_label}
    for label, name, params, seed in progress(runs, "runs"):
        results[label].append(run_one(label, name, target, statistic, n_chains=args.chains, seed=seed,
                                      burn_in=args.burn_in, steps=args.steps, **run_params, **params))
    return results


class Report:
    """Tables (printed as they are made) and burn-in figures of one benchmark, saved together."""

    def __init__(self, name: str, header: str):
        self.name, self.header = name, header
        self.sections: list[str] = []
        self.figures: list = []

    def add(self, title: str, rows: dict[str, list[RunResult]], columns: dict[str, str], ylabel: str,
            figure_title: str | None = None, logy: bool = False, reference: Reference | None = None) -> None:
        """A table of ``rows`` (and its burn-in figure); ``reference`` is said under the title."""
        section = table(title, rows, columns, "" if reference is None else reference_note(reference))
        print(section + "\n", flush=True)
        self.sections.append(section)
        self.figures.append(burn_in_figure(figure_title or title, rows, ylabel, logy=logy))

    def save(self) -> None:
        print("written:", save(self.name, self.header + "\n\n" + "\n\n".join(self.sections), self.figures))


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
        evals = np.mean([r.evals for r in results], axis=0)
        trace = np.mean([r.burn_in_trace for r in results], axis=0)
        curves.append(hv.Curve((evals, trace), "target evaluations", ylabel, label=label))
    return hv.Overlay(curves).opts(title=title, width=520, height=360, logx=True, logy=logy,
                                   legend_position="bottom_right")


def save(name: str, text: str, figures: list) -> Path:
    """Write the tables (markdown) and figures (one HTML page) under benchmarks/results/."""
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{name}.md").write_text(text + "\n")
    if figures:
        hv.save(hv.Layout(figures).cols(2), RESULTS / f"{name}.html")
    return RESULTS / f"{name}.md"
