"""Intracluster moves paper, Figs. 2–4: energy and energy autocorrelation against COMPUTE TIME.

Hamze & de Freitas (UAI 2010), §4: three Boltzmann machines with a fixed
number n of active units (S_n, reference all zeros), intracluster moves (IM)
against Kawasaki exchange (the paper's constant-set Metropolis):

* ferromagnet: periodic 60×60 Ising lattice, J = 1, h = 0, β = 1/2.27, half
  the spins up; IM with k = 90 and γ = β (``gamma=1`` here);
* spin glass: 9×9×9 ±J cube, β = 1, 364 of 729 spins up; IM with
  k ~ U[1, 25] and γ = 0.8β;
* Gabor RBM: ``gabor_rbm`` (784 visible + 500 hidden units), β = 1, a third of
  the units on; IM with k ~ U[1, 20] and γ = 0.8.

``--scale s`` keeps about a fraction s of the units: lattice sides × s^(1/dim),
the Gabor grid side × √s and hidden units × s (window ≤ 11), walk lengths
capped at min(n, d − n)/2 (at k = n a move could only propose the state with
every bit flipped); s = 0.25 gives 30×30, 6×6×6 and 14×14 + 125.

Protocol (the paper's): in a trial one chain of each sampler starts from the
same uniform state of S_n (the trial's seed) and runs for the same compute budget
``--seconds``, measured as the CPU time of its process (the paper's
"computational time"; a worker runs one task on one thread, so other work on
the machine does not count); E = −log p̃ is recorded after every move with the
cumulative sampling time and the target evaluations made by then. Each
target's traces are then read on one time grid spaced by the slowest
sampler's mean time per move — so IM keeps about one point per move and
Kawasaki is subsampled, as the paper took every r-th Metropolis sample — the
value at t being the chain's energy at time t (fewer than 16 points, too
short a budget for the slowest sampler, is refused). After the first
``--burn-in`` fraction of the grid: each trial's normalised energy ACF against
the time lag (then mean ± sd over trials), the bulk ESS of its grid series
(``samplers.diagnostics.ess.ess``), τ_int = window / ESS in seconds, and ESS per
second. A chain that has not mixed within the window has an ESS of a few, so
its τ_int is about the window: a lower bound, not a measurement (a chain that
never moved, or whose ESS is below 1, is censored at the window:
``samplers.diagnostics.verdicts.censored``). Each trial's energy also gets its Monte Carlo
standard error sd / √ESS over the same stretch.

``--moves N`` (N ≥ 15) fixes the WORK instead of the budget, so that what a
run prints does not depend on the machine's speed (the tests use it): in each
trial the reference setting — the paper's IM, first in every table — runs
exactly N moves, and every other setting then runs for the sampling time that
took, measured on the fly (still equal compute time within a trial;
``--seconds`` is ignored). The time grid then has N + 1 points over the
shortest trial's reference time, so the reference keeps about one point per
move whatever the machine's speed or load.

Besides the paper's settings each target has an IM row with γ = 0.5 and the
same k: for γ > 1/2, Eq. 6 keeps a factor (p̃(x')/p̃(x))^(1−2γ) (see
``samplers.intracluster.walks``) that rejects the downhill moves the biased walks
find, and long walks at γ = β are hardly ever accepted.

Printed per target: moves per second, acceptance, mean post-burn-in energy,
τ_int (s), ESS/s and τ_int(Kawasaki) / τ_int (the compute-time mixing ratio);
then the ACF at the lags ``--lags`` (seconds; "—" beyond half the window or
where no chain moved, "(m of N trials)" when only m chains moved). Tables and
an HTML page of energy-vs-time and ACF-vs-lag curves (mean and ±1 sd band
over trials) are written to intracluster_paper.{md,html} beside the sweep's
directory. CPU timings still vary a few per cent with the machine's caches and clock.

Each trial of each target is one task of a sweep (``Trial``: its samplers run
one after the other in one worker process, so they share its core alike),
executed on Dask and stored (``--workers``, ``--scheduler``, ``--results``; a
re-run computes only the trials not stored and redraws the tables and figures
from the stored ones). A trial's seed comes from the sweep's ``--seed`` and its
hash. What a trial measures is compute time, so a rerun on another machine (or
beside other work) stores other numbers; ``--workers N`` runs N trials at once,
each on its own core.

Run:  python -m benchmarks intracluster_paper [--scale 0.25 --seconds 5 --trials 10 --lags 0.05,0.1,0.5,1]
      (the paper's sizes are --scale 1; --moves 2000 instead of --seconds fixes the work; --workers 2)
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass

import holoviews as hv
import numpy as np
from bokeh.palettes import Category10_10

import samplers
import targets
from benchmarks import SWEEP_DEFAULTS, SWEEP_HELPS, arguments, sweep_store
from benchmarks.papers.lsb_runs import mean_std, save
from samplers.diagnostics.ess import autocorrelation, ess_per_chain, on_time_grid
from samplers.diagnostics.verdicts import censored
from sweeps import Task, run_seed
from targets.base import Target

KAWASAKI = "Kawasaki"
#: Index in ``Experiment.settings`` of the setting whose move count ``--moves`` fixes (the paper's IM).
REFERENCE = 0
#: Fewest points of a time grid.
MIN_POINTS = 16


@dataclass(frozen=True)
class Setting:
    """One row of a table: a sampler and its parameters."""

    label: str
    sampler: str
    params: dict


@dataclass(frozen=True)
class Experiment:
    """One of the paper's targets with its constraint and the samplers compared on it."""

    title: str
    target: Target
    n_active: int
    settings: tuple[Setting, ...]


@dataclass(frozen=True)
class Trace:
    """One chain's energy E = −log p̃ after every move, and the sampling CPU seconds spent and target evaluations
    made by then (index 0: start)."""

    times: np.ndarray
    energy: np.ndarray
    acceptance: float
    evaluations: np.ndarray

    @property
    def moves_per_second(self) -> float:
        return (len(self.times) - 1) / self.times[-1]

    @property
    def evaluations_per_second(self) -> float:
        return float(self.evaluations[-1] - self.evaluations[0]) / self.times[-1]

    def on_grid(self, grid: np.ndarray) -> np.ndarray:
        """The chain's energy at each time of ``grid`` (the last move completed by then)."""
        return on_time_grid(self.times, self.energy, grid)


@dataclass(frozen=True)
class Summary:
    """A setting's numbers per trial, and its energy and ACF curves on the time grid (trials × points)."""

    label: str
    moves_per_second: np.ndarray
    evaluations_per_second: np.ndarray
    acceptance: np.ndarray
    mean_energy: np.ndarray
    standard_error: np.ndarray
    tau: np.ndarray
    #: Per trial whether the chain mixed in the window (ESS ≥ 1); ``tau`` is the window where it did not.
    mixed: np.ndarray
    ess_per_second: np.ndarray
    energy: np.ndarray
    acf: np.ndarray


# -- the experiments -------------------------------------------------------------------------------------
def capped(walk_length, limit: int):
    """A walk length k or range (k_min, k_max) with every k capped at ``limit``."""
    return tuple(min(k, limit) for k in walk_length) if isinstance(walk_length, tuple) else min(walk_length, limit)


def experiment(title: str, target: Target, n_active: int, walk_length, gamma: float) -> Experiment:
    """The paper's IM setting, IM at γ = 0.5 with the same walks, and Kawasaki on ``target`` with n active."""
    k = capped(walk_length, max(1, min(n_active, target.dim - n_active) // 2))
    shown = f"U{list(k)}" if isinstance(k, tuple) else k
    settings = (Setting(f"IM (paper) k = {shown}, γ = {gamma}", "intracluster", {"walk_length": k, "gamma": gamma}),
                Setting(f"IM k = {shown}, γ = 0.5", "intracluster", {"walk_length": k, "gamma": 0.5}),
                Setting(KAWASAKI, "kawasaki", {}))
    return Experiment(f"{title}, n = {n_active} of {target.dim} on", target, n_active, settings)


def gabor_size(scale: float) -> dict:
    """Grid side, hidden units and window of the Gabor RBM keeping about ``scale`` of the paper's 784 + 500 units."""
    side = max(3, round(28 * scale**0.5))
    return dict(side=side, n_hidden=max(1, round(500 * scale)), patch=min(11, side - 1 + side % 2))


def ferromagnet(scale: float) -> Experiment:
    side = max(2, round(60 * scale**0.5))
    ferro = targets.make("ising_lattice", size=side, beta=1 / 2.27)
    return experiment(f"Ferromagnet {side}×{side}, β = 1/2.27", ferro, ferro.dim // 2, 90, 1.0)


def spin_glass(scale: float) -> Experiment:
    cube = max(2, round(9 * scale ** (1 / 3)))
    glass = targets.make("spin_glass_3d", size=cube, beta=1.0)
    return experiment(f"±J spin glass {cube}×{cube}×{cube}, β = 1", glass, glass.dim // 2, (1, 25), 0.8)


def gabor(scale: float) -> Experiment:
    rbm = targets.make("gabor_rbm", **gabor_size(scale))
    return experiment(f"Gabor RBM {rbm.side}×{rbm.side} + {rbm.n_hidden}, β = 1", rbm, rbm.dim // 3, (1, 20), 0.8)


#: The paper's three experiments, each built at a scale (a fraction of the paper's units).
EXPERIMENTS = (ferromagnet, spin_glass, gabor)


def experiments(scale: float) -> list[Experiment]:
    """The paper's three targets, shrunk to about ``scale`` of their units."""
    return [build(scale) for build in EXPERIMENTS]


# -- runs ------------------------------------------------------------------------------------------------
def timed_trace(experiment: Experiment, setting: Setting, seed: int, seconds: float = math.inf,
                moves: float = math.inf) -> Trace:
    """One chain of ``setting`` from the uniform start ``seed`` of S_n, run until ``seconds`` of this process's CPU
    time have passed or ``moves`` moves are made, whichever comes first (at least one move)."""
    if math.isinf(seconds) and math.isinf(moves):
        raise ValueError("give a time budget (seconds) or a number of moves")
    sampler = samplers.make(setting.sampler, experiment.target, n_chains=1, seed=seed,
                            n_active=experiment.n_active, **setting.params)
    times, energy, evaluations, accepted = [0.0], [-float(sampler.log_p[0])], [sampler.n_evals], 0
    start = time.process_time()
    while times[-1] < seconds and len(times) - 1 < moves:
        sampler.step(record=False)
        times.append(time.process_time() - start)
        energy.append(-float(sampler.log_p[0]))
        evaluations.append(sampler.n_evals)
        accepted += int(sampler.last_accepted[0])
    return Trace(np.array(times), np.array(energy), accepted / (len(times) - 1), np.array(evaluations))


def run_trial(experiment: Experiment, seed: int, seconds: float, moves: int = 0) -> tuple[list[Trace], float]:
    """One trial: each setting's trace (in ``experiment.settings``' order) from the start ``seed``, one after the
    other in this process, and the sampling time each covers.

    Each setting runs ``seconds``; or, with ``moves`` > 0, the ``REFERENCE`` setting runs exactly ``moves``
    moves and every other setting then runs for the time those took.
    """
    reference = experiment.settings[REFERENCE]
    order = [reference] + [s for s in experiment.settings if s is not reference] if moves else experiment.settings
    traces, budget = {}, seconds
    for setting in order:
        if moves and setting is reference:
            traces[setting.label] = timed_trace(experiment, setting, seed, moves=moves)
            budget = float(traces[setting.label].times[-1])
        else:
            traces[setting.label] = timed_trace(experiment, setting, seed, seconds=budget)
    return [traces[setting.label] for setting in experiment.settings], budget


@dataclass(frozen=True, eq=False)
class Trial(Task):
    """One trial of one experiment as a sweep's task (``sweeps.Task``): ``run_trial`` in one process, so its
    settings share the machine alike and get equal compute time, from the start ``run_seed(sweep seed, run
    id)``. Its result holds each setting's move times, energies and acceptance (the times are wall-clock
    measurements of CPU time: a rerun gives other ones) and the time every trace covers."""

    scale: float
    experiment: int  # index in EXPERIMENTS
    trial: int
    seconds: float
    moves: int
    label: str = ""

    def description(self) -> dict:
        return {"kind": "intracluster_trial", "scale": self.scale, "experiment": EXPERIMENTS[self.experiment].__name__,
                "trial": self.trial, "seconds": self.seconds if not self.moves else None, "moves": self.moves,
                "clock": "process CPU time"}

    def perform(self, sweep_seed: int) -> dict:
        traces, budget = run_trial(EXPERIMENTS[self.experiment](self.scale), run_seed(sweep_seed, self.run_id),
                                   self.seconds, self.moves)
        result = {"spec": json.dumps(self.to_dict()), "budget": budget}
        for j, trace in enumerate(traces):
            result |= {f"times_{j}": trace.times, f"energy_{j}": trace.energy, f"acceptance_{j}": trace.acceptance,
                       f"evaluations_{j}": trace.evaluations}
        return result


def stored_trials(experiment: Experiment, trials: list[Trial], store) -> tuple[dict[str, list[Trace]], float]:
    """Every setting's traces over the stored ``trials`` of ``experiment`` (a failed trial is missing), and the
    sampling time every trace covers (with ``--moves``, that of the shortest trial)."""
    traces = {setting.label: [] for setting in experiment.settings}
    budgets = []
    for trial in trials:
        if not store.has(trial.run_id):
            continue
        result = store.read(trial.run_id)
        for j, setting in enumerate(experiment.settings):
            traces[setting.label].append(Trace(result[f"times_{j}"], result[f"energy_{j}"], result[f"acceptance_{j}"],
                                               result[f"evaluations_{j}"]))
        budgets.append(result["budget"])
    if not budgets:
        raise SystemExit(f"every trial of {experiment.title} failed (the sweep's summary says why)")
    return traces, min(budgets)


def time_grid(traces: dict[str, list[Trace]], seconds: float, points: int | None = None) -> np.ndarray:
    """Times 0, Δt, 2Δt, … ≤ ``seconds``: Δt = the slowest setting's mean seconds per move, or, given
    ``points``, that many times from 0 to ``seconds`` (a count fixed in advance, whatever the machine's speed)."""
    if points is not None:
        if points < MIN_POINTS:
            raise ValueError(f"a time grid needs at least {MIN_POINTS} points; got {points}")
        return np.linspace(0.0, seconds, points)
    step = max(np.mean([1.0 / trace.moves_per_second for trace in runs]) for runs in traces.values())
    grid = step * np.arange(int(seconds / step) + 1)
    if len(grid) < MIN_POINTS:
        raise ValueError(f"only {len(grid)} moves of the slowest sampler fit in {seconds} s: raise --seconds "
                         f"(or fix the work with --moves)")
    return grid


def summarise(label: str, traces: list[Trace], grid: np.ndarray, burn_in: float) -> Summary:
    """Per-trial speed, acceptance, mean energy with its standard error sd / √ESS, τ_int = window / ESS (censored at
    the window when ESS < 1) and ESS/s after burn-in, and the curves on ``grid``."""
    # Rounded, so that the float drift of log p̃ along moves between states of equal energy is no motion.
    energy = np.round([trace.on_grid(grid) for trace in traces], 9)
    first = int(burn_in * len(grid))
    kept = energy[:, first:]
    window = grid[-1] - grid[first]
    ess = ess_per_chain(kept)
    with np.errstate(invalid="ignore"):
        acf = autocorrelation(kept)[:, : kept.shape[1] // 2]
    acf[np.ptp(kept, axis=1) == 0] = np.nan  # a chain that never moved has no ACF (not the FFT's rounding noise)
    with np.errstate(divide="ignore"):  # a chain that never moved (ESS 0) is censored, as one that never mixed
        tau = censored(np.where(ess >= 1.0, window / ess, np.inf), window)
    standard_error = kept.std(axis=1) / np.sqrt(np.maximum(ess, 1.0))
    return Summary(label, np.array([trace.moves_per_second for trace in traces]),
                   np.array([trace.evaluations_per_second for trace in traces]),
                   np.array([trace.acceptance for trace in traces]), kept.mean(axis=1), standard_error, tau,
                   ess >= 1.0, ess / window, energy, acf)


# -- tables and figures -----------------------------------------------------------------------------------
def ratio(numerator: np.ndarray, denominator: np.ndarray) -> str:
    """Ratio of the means over trials ("—" when either is not finite)."""
    value = numerator.mean() / denominator.mean()
    return f"{value:.3g}×" if np.isfinite(value) else "—"


def mixing_table(summaries: list[Summary], ratios: bool = True) -> str:
    """Markdown: speed, acceptance, energy and compute-time mixing of every setting (mean ± sd over trials), and with
    ``ratios`` the ratio of Kawasaki's mean τ_int to each setting's (the claims audit gives per-seed ratios instead,
    where a seed whose chain accepted no move — τ_int censored, no measurement — gives none)."""
    kawasaki = next(s for s in summaries if s.label == KAWASAKI)
    head = ["sampler", "moves / s", "acceptance", "mean E", "τ_int (s)", "ESS / s"] + (
        ["τ_int Kawasaki / τ_int"] if ratios else [])
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for s in summaries:
        cells = [mean_std(values) for values in (s.moves_per_second, s.acceptance, s.mean_energy, s.tau,
                                                 s.ess_per_second)] + ([ratio(kawasaki.tau, s.tau)] if ratios else [])
        lines.append(f"| {s.label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def acf_cell(values: np.ndarray) -> str:
    """Mean ± sd over the trials whose chain moved, and how many those are when not all."""
    moved = np.count_nonzero(~np.isnan(values))
    return mean_std(values) + (f" ({moved} of {len(values)} trials)" if 0 < moved < len(values) else "")


def acf_table(summaries: list[Summary], lags: list[float], step: float) -> str:
    """Markdown: the energy ACF at time lags ``lags`` (seconds), mean ± sd over trials."""
    index = [int(round(lag / step)) for lag in lags]
    lines = ["| sampler | " + " | ".join(f"ACF({lag:g} s)" for lag in lags) + " |", "|---|" + "---|" * len(lags)]
    for s in summaries:
        cells = [acf_cell(s.acf[:, i]) if i < s.acf.shape[1] else "—" for i in index]
        lines.append(f"| {s.label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def band_figure(title: str, x: np.ndarray, curves: dict[str, np.ndarray], xlabel: str, ylabel: str):
    """HoloViews overlay: the mean over trials of each (trials × points) array, with a ±1 sd band.

    NaN rows (the ACF of a chain that never moved) are left out; a setting with no other row has no curve.
    Every figure keeps its own ranges (axiswise, not shared): the targets' energies differ in scale.
    """
    elements = []
    for colour, (label, values) in zip(Category10_10, curves.items()):
        values = values[~np.isnan(values).all(axis=1)]
        if not len(values):
            continue
        mean, sd = np.nanmean(values, axis=0), np.nanstd(values, axis=0)
        elements += [hv.Spread((x, mean, sd), xlabel, [ylabel, "sd"]).opts(color=colour, alpha=0.2, axiswise=True),
                     hv.Curve((x, mean), xlabel, ylabel, label=label).opts(color=colour, axiswise=True)]
    return hv.Overlay(elements).opts(title=title, width=560, height=360, legend_position="top_right",
                                      shared_axes=False)


def figures(experiment: Experiment, grid: np.ndarray, summaries: list[Summary]) -> list:
    """The energy against sampling time and its ACF against time lag (``band_figure``: mean ± sd over trials)."""
    lag_seconds = grid[: summaries[0].acf.shape[1]]
    return [band_figure(f"{experiment.title}: energy", grid, {s.label: s.energy for s in summaries},
                        "sampling time (CPU s)", "E = −log p̃"),
            band_figure(f"{experiment.title}: energy ACF", lag_seconds, {s.label: s.acf for s in summaries},
                        "time lag (CPU s)", "autocorrelation")]


HELPS = {
    "scale": "fraction of the paper's units kept, 0 < s ≤ 1 (1: the paper's sizes)",
    "seconds": "sampling budget (CPU seconds) of every chain in every trial (ignored when --moves > 0)",
    "moves": "fix the work instead of the time: in each trial the paper's IM runs exactly this many moves and "
             "every other sampler for the compute time those took, measured on the fly; the time grid has "
             "moves + 1 points, so what is printed does not depend on the machine's speed (≥ 15; 0: use --seconds)",
    "trials": "independent trials (seeds), one chain per sampler each",
    "burn_in": "fraction of the time grid left out of the statistics, 0 ≤ b < 1",
    "lags": "comma-separated time lags (seconds) of the ACF table",
}


def main(argv=None) -> None:
    args = arguments("intracluster_paper", argv, scale=0.25, seconds=5.0, moves=0, trials=10, burn_in=0.5,
                     lags="0.05,0.1,0.5,1", **SWEEP_DEFAULTS, helps=HELPS | SWEEP_HELPS)
    if not (0 < args.scale <= 1 and args.seconds > 0 and args.trials >= 1 and 0 <= args.burn_in < 1):
        raise SystemExit("need 0 < --scale ≤ 1, --seconds > 0, --trials ≥ 1 and 0 ≤ --burn-in < 1")
    if args.moves < 0 or 0 < args.moves < MIN_POINTS - 1:
        raise SystemExit(f"need --moves ≥ {MIN_POINTS - 1} (a time grid of at least {MIN_POINTS} points), "
                         f"or --moves 0 for the --seconds budget")
    lags = [float(lag) for lag in args.lags.split(",")]
    budget = f"the compute time of {args.moves} moves of the paper's IM" if args.moves else f"{args.seconds:g} s"
    header = (f"## Intracluster moves vs Kawasaki in compute time: {args.trials} trials × {budget} per "
              f"sampler, one chain each, burn-in {args.burn_in:.0%} of the time grid")
    built = experiments(args.scale)
    trials = [[Trial(args.scale, index, trial, args.seconds, args.moves, f"{exp.title} trial {trial}")
               for trial in range(args.trials)] for index, exp in enumerate(built)]
    store = sweep_store("intracluster_paper", [trial for runs in trials for trial in runs], args)
    print(header + "\n")
    sections, drawn = [], []
    for exp, runs in zip(built, trials):
        traces, window = stored_trials(exp, runs, store)
        grid = time_grid(traces, window, args.moves + 1 if args.moves else None)
        summaries = [summarise(label, runs, grid, args.burn_in) for label, runs in traces.items()]
        section = "\n\n".join([
            f"### {exp.title}\n\ntime grid Δt = {1e3 * grid[1]:.3g} ms ({len(grid)} points)",
            mixing_table(summaries), acf_table(summaries, lags, grid[1])])
        print(section + "\n", flush=True)
        sections.append(section)
        drawn += figures(exp, grid, summaries)
    print("written:", save("intracluster_paper", header + "\n\n" + "\n\n".join(sections), drawn,
                           store.directory.parent))
