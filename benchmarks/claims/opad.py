"""The OPAD paper's headlines (Afshar, Francis & Cripps: §3.1, §4.4, Figs. 1–4), judged as written over seeds.

**The reduction (§4.4, Figs. 1–4).** "OPAD and OPAD+ … consistently … KL
divergence from the target is much lower (from one-tenth to one-thousandth of
the corresponding MCMC)". For each panel the paper plots — Fig. 1(a) (1-D
Ising chain, 10⁴ iterations), 1(b) (the same, 10⁶), 2(a–b) (variable
selection, synthetic data), 2(c–d) (the mouse data: the diabetes data stand in),
3(a–c) and 4(a–c) (DAGs on 5 nodes, ER(5, 1), ER(5, 2), ER(5, 3); structure and
partition MCMC) — each of ``--seeds`` independent seeds is a separate run
(``benchmarks.papers.opad_runs.opad_run``: its own random stream and, where the paper
draws data, its own data set) of ``--opad-chains`` chains of the paper's
reference MCMC, feeding a ``ParticleStore`` that reads the exact KL(P‖π) of each
chain's MCMC, OPAD and OPAD+ approximations at every half decade of iterations
(10, 10^1.5, …, the horizon). The paper plots the mean over its 20 chains, so a
seed's reduction at a checkpoint k is the ratio of those means,

    ρ_s(k) = mean_c KL(MCMC_c, k) / mean_c KL(OPAD_c, k)     (and OPAD+),

and the claim is judged with ``Ratio(10)`` on each (method, checkpoint) from
10³ iterations (the paper's axes) to the horizon — "consistently" is the
weakest of all of them (``samplers.diagnostics.verdicts.weakest``).

**OPAD+ outperforms OPAD (§4.4):** ``Ratio(1)`` on KL(OPAD) / KL(OPAD+), same
cells, weakest over every panel of the paper's own experiments. **"Stable or
improves" (§4.4):** ``NotWorse`` on ρ_s(horizon) / ρ_s(10³) per seed, for
each panel and method, weakest.

**No extra cost (Abstract, §3.1):** the cost the paper names is the target
evaluations ("this evaluation only needs to be done once when the acceptance
probability is computed and then saved"). Per seed and per figure's sampler,
``ExtraEvaluations`` runs the sampler twice from the same seed — once alone,
once recording every step and feeding the OPAD/OPAD+ store — and counts the
target's evaluations (``targets.base``: every state whose p̃ was obtained) of
both: the claim holds in a seed when the difference is 0 on every sampler
(``Always``). The CPU seconds of the store's bookkeeping against the
sampler's own step (``sweeps.perform``'s timers) are shown on the fair axis.

No code of the authors' exists; every run is a run of the audit's sweep
(``audit_runs``; ``benchmarks.claims.paper_claims`` runs it on Dask and stores it).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

import holoviews as hv
import holoviews.plotting.bokeh  # noqa: F401  (registers the Bokeh backend used by .opts)
import numpy as np

from benchmarks.claims.claim import NO_AUTHORS_CODE, Claim, Evidence
from benchmarks.papers.opad_dag import dag_params
from benchmarks.papers.opad_ising import ISING
from benchmarks.papers.opad_runs import Curves, opad_run
from engine.config import RunConfig
from samplers.common.warmup import kernels_ready, warm_up
from samplers.diagnostics.verdicts import (INCONCLUSIVE, REPRODUCED, VERDICTS, Always, NotWorse, Ratio, RatioEvidence,
                                           paired_ratios, ratio_evidence, weakest)
from samplers.opad.store import ParticleStore
from sweeps import RunSpec, Task, run_seed

PAPER = "OPAD"
#: The reduction the paper claims at least ("from one-tenth to one-thousandth").
CLAIMED = 10.0
#: The first iteration the paper's axes show; a shorter run (``--quick``) is judged from a tenth of its horizon.
FIRST_PLOTTED = 1000
#: Data seed of replicate s: the seed-0 data set's seed + s · DATA_STRIDE (disjoint between the ER(5, d) panels).
DATA_STRIDE = 1000
REDUCTION, OUTPERFORMS, STABLE = Ratio(CLAIMED), Ratio(1.0), NotWorse()
NO_EXTRA = Always("the sampler feeding the OPAD/OPAD+ store makes exactly as many target evaluations as the same "
                  "sampler from the same seed without it, on each figure's sampler")
METHODS = {"opad": "OPAD", "opad_plus": "OPAD+"}
AXIS = "KL divergence from the target, KL(MCMC) / KL(OPAD or OPAD+) of the same chains at equal sampling iterations"
PLOTTED = "KL(P‖π) against sampling iterations, mean and 95 % CI of 20 chains"
QUOTES = {
    "reduction": "These experiments indicate that in different models, the proposed OPAD and OPAD+ methods "
                 "consistently and significantly outperform the reference MCMC algorithms in the sense that their KL "
                 "divergence from the target is much lower (from one-tenth to one-thousandth of the corresponding "
                 "MCMC).",
    "outperforms": "Our results also show that OPAD+ consistently outperforms OPAD and in most experiments, the "
                   "difference between these two variants of the algorithm is significant.",
    "stable": "Additionally, our experiments suggest that as sampling continues for more iterations, the relative "
              "performance of OPAD and OPAD+ with respect to the associated MCMC remains stable or improves.",
    "cost": "… As such, with minimal modifications and no extra computational costs, the performance of any "
            "particle-based method can be improved. … Note that evaluating the (unnormalized) target probabilities "
            "is typically costly. However, in practice, for each proposed node, this evaluation only needs to be "
            "done once when the acceptance probability is computed and then saved. This means that OPAD+ does not "
            "introduce any significant computational overhead.",
}
ISING_PRESET = "OPAD Fig. 1 · 1-D Ising chain · Metropolis"


@dataclass(frozen=True)
class Panel:
    """One panel of the paper's figures: its target (the seed-0 parameters), the reference MCMC, which horizon
    option it runs to, the preset that replays it, and what stands in for the paper's data where ours cannot be
    it."""

    where: str
    title: str
    target: str
    params: dict
    sampler: str
    horizon: str  # the option giving its iterations: "opad_steps" or "opad_long_steps"
    replay: str
    claim: str = "OPAD and OPAD+ cut MCMC's KL to 1/10–1/1000, consistently"
    stand_in: str = ""

    def target_params(self, replicate: int) -> dict:
        """The target of replicate ``replicate``: its own data set where the target draws one (``seed``)."""
        if "seed" not in self.params:
            return dict(self.params)
        return {**self.params, "seed": self.params["seed"] + DATA_STRIDE * replicate}

    def runs(self, args) -> list[RunSpec]:
        """One ``opad_run`` per seed, its KL read at every half decade of iterations."""
        steps = getattr(args, self.horizon)
        return [opad_run(f"{self.where} {self.sampler} #{seed}", self.target, self.target_params(seed), self.sampler,
                         {}, steps, args.opad_chains, replicate=seed, checkpoints=half_decades(steps))
                for seed in range(args.seeds)]


def _dag_panel(figure: str, letter: str, degree: int, sampler: str, name: str) -> Panel:
    also = "" if degree == 2 else f", also on ER(5, {degree})"
    return Panel(f"{figure}({letter})", f"DAGs on 5 nodes (BGe), data from ER(5, {degree}), {name}", "dag",
                 dag_params(float(degree)), sampler, "opad_steps",
                 f"OPAD Figs. 3–4 · DAGs ER(5, {degree}) · {name}",
                 claim=f"OPAD and OPAD+ cut {name}'s KL to 1/10–1/1000, consistently{also}")


PANELS = (
    Panel("Fig. 1(a)", "1-D Ising chain, m = 15, to 10⁴ iterations", "ising1d", ISING, "metropolis", "opad_steps",
          ISING_PRESET),
    Panel("Fig. 1(b)", "1-D Ising chain, m = 15, to 10⁶ iterations", "ising1d", ISING, "metropolis",
          "opad_long_steps", ISING_PRESET),
    Panel("Fig. 2(a–b)", "variable selection, synthetic data, m = 20, n = 200", "bvs",
          {"dataset": "synthetic", "n_predictors": 20, "n_samples": 200, "seed": 0}, "metropolis", "opad_steps",
          "OPAD Fig. 2 · variable selection, synthetic data (m = 20) · Metropolis"),
    Panel("Fig. 2(c–d)", "variable selection, real data", "bvs", {"dataset": "diabetes"}, "metropolis",
          "opad_steps", "OPAD Fig. 2 · variable selection, diabetes data (m = 10) · Metropolis",
          stand_in="the diabetes data of Efron et al. (2004; 10 predictors, 442 patients) for the paper's Mice "
                   "Nutrition data (13 predictors with interactions), which cannot be redistributed"),
    *(_dag_panel(figure, letter, degree, sampler, name)
      for figure, sampler, name in (("Fig. 3", "structure_mcmc", "structure MCMC"),
                                    ("Fig. 4", "partition_mcmc", "partition MCMC"))
      for letter, degree in zip("abc", (1, 2, 3))),
)
#: The panels whose samplers the cost claim counts the evaluations of (one per figure's reference MCMC).
COST_PANELS = ("Fig. 1(a)", "Fig. 2(a–b)", "Fig. 3(b)", "Fig. 4(b)")


def half_decades(steps: int) -> int:
    """How many checkpoints ``sweeps.perform.checkpoints(steps, ·)`` needs to read the KL at every half decade
    10, 10^1.5, 10², … up to ``steps`` (exactly, when ``steps`` is a power of ten)."""
    return max(2, 1 + 2 * round(math.log10(max(steps, 10) / 10)))


def judged_steps(steps: list[int]) -> list[int]:
    """The recorded checkpoints the paper's axes show: from 10³ iterations (a tenth of the horizon for a run
    shorter than 10⁴) to the horizon."""
    first = min(FIRST_PLOTTED, steps[-1] / 10)
    return [step for step in steps if step >= first]


# -- the runs ---------------------------------------------------------------------------------------------------
def target_evaluations(config: RunConfig, steps: int, feed: bool) -> int:
    """Target evaluations (``Target.n_evals``: its reset included) of ``config``'s sampler over ``steps`` steps;
    with ``feed``, every step recorded and fed to an OPAD/OPAD+ ``ParticleStore``, whose approximations are then
    read (``log_mass``)."""
    target, sampler = config.build()
    store = ParticleStore(target) if feed else None
    for _ in range(steps):
        record = sampler.step(record=feed)
        if store is not None:
            store.update(record)
    if store is not None:
        store.log_mass()
    return target.n_evals


@dataclass(frozen=True, eq=False)
class ExtraEvaluations(Task):
    """The target evaluations OPAD/OPAD+ add to a sampler: the same sampler and seed (``run_seed``) run ``steps``
    steps alone and feeding the store; the result holds both counts."""

    config: RunConfig
    steps: int
    label: str = ""

    def description(self) -> dict:
        return {"kind": "opad_extra_evaluations", "config": self.config.to_dict(), "steps": self.steps}

    def perform(self, sweep_seed: int) -> dict:
        if not kernels_ready():
            warm_up()
        config = RunConfig.from_dict({**self.config.to_dict(), "seed": run_seed(sweep_seed, self.run_id)})
        return {"spec": json.dumps(self.to_dict(), sort_keys=True), "steps": self.steps,
                "plain_evaluations": target_evaluations(config, self.steps, feed=False),
                "fed_evaluations": target_evaluations(config, self.steps, feed=True)}


def cost_runs(args) -> list[ExtraEvaluations]:
    """Per seed, one ``ExtraEvaluations`` on each figure's sampler (``COST_PANELS``, all to ``--opad-steps``)."""
    return [ExtraEvaluations(run.config, run.steps, f"{run.label}: extra evaluations")
            for panel in PANELS if panel.where in COST_PANELS for run in panel.runs(args)]


def audit_runs(args) -> list[Task]:
    """Every panel's runs (a run two panels share, once) and the cost claim's."""
    runs = {run.run_id: run for panel in PANELS for run in panel.runs(args)}
    return [*runs.values(), *cost_runs(args)]


# -- the evidence ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Cell:
    """One (method, checkpoint) of a panel: its per-seed evidence and verdict."""

    method: str
    step: int
    evidence: RatioEvidence
    verdict: str


def seed_ratios(curves: list[Curves], steps: list[int]) -> dict[str, np.ndarray]:
    """Per method, ``(len(steps), seeds)``: each seed's mean-over-chains KL(MCMC) / KL(method) (the paper's plotted
    means), and under "plus" KL(OPAD) / KL(OPAD+)."""
    means = {kind: np.array([[run.kl[kind][run.steps.index(step)].mean() for run in curves] for step in steps])
             for kind in ("mcmc", *METHODS)}
    return {"opad": paired_ratios(means["mcmc"], means["opad"]),
            "opad_plus": paired_ratios(means["mcmc"], means["opad_plus"]),
            "plus": paired_ratios(means["opad"], means["opad_plus"])}


def cells(ratios: dict[str, np.ndarray], steps: list[int], methods, criterion) -> list[Cell]:
    """The evidence and verdict of every (method in ``methods``, checkpoint)."""
    out = []
    for method in methods:
        for i, step in enumerate(steps):
            evidence = ratio_evidence(ratios[method][i])
            out.append(Cell(method, step, evidence, criterion.judge(evidence)))
    return out


def growth(ratios: dict[str, np.ndarray], method: str) -> RatioEvidence:
    """Per seed, the reduction at the horizon over that at the first judged checkpoint."""
    return ratio_evidence(paired_ratios(ratios[method][-1], ratios[method][0]))


def weakest_cell(found: list[Cell]) -> Cell:
    """The cell deciding a "consistently": the weakest verdict, and among those the smallest reduction."""
    return max(found, key=lambda cell: (VERDICTS.index(cell.verdict), -np.nan_to_num(cell.evidence.centre, nan=0)))


@dataclass(frozen=True)
class Measured:
    """A panel's stored runs, read: the judged checkpoints, the ratios per seed, the store's CPU cost per seed
    (store bookkeeping / sampler step); ``missing`` names the seeds whose run failed."""

    panel: Panel
    steps: list[int]
    ratios: dict[str, np.ndarray]
    overhead: np.ndarray
    missing: list[int]


def measure(panel: Panel, args, store) -> Measured:
    """Read ``panel``'s runs from ``store``."""
    runs = panel.runs(args)
    curves = [Curves.from_result(run.label, store.read(run.run_id)) for run in runs if store.has(run.run_id)]
    missing = [seed for seed, run in enumerate(runs) if not store.has(run.run_id)]
    if not curves:
        return Measured(panel, [], {}, np.array([]), missing)
    steps = judged_steps(curves[0].steps)
    return Measured(panel, steps, seed_ratios(curves, steps), np.array([run.overhead for run in curves]), missing)


def _not_measured(measured: Measured) -> Evidence | None:
    if measured.missing:
        return Evidence(f"not measured: the runs of seed(s) {measured.missing} failed (the sweep's summary says why)",
                        INCONCLUSIVE)
    return None


# -- the claims -----------------------------------------------------------------------------------------------
def reduction_claim(measured: Measured) -> Claim:
    """Figs. 1–4, one panel: ``Ratio(10)`` on every (OPAD and OPAD+, checkpoint from 10³), the weakest."""
    panel = measured.panel
    found = cells(measured.ratios, measured.steps, METHODS, REDUCTION) if measured.steps else []
    ours = _not_measured(measured) or _reduction_evidence(found)
    return Claim(
        paper=PAPER, where=f"§4.4; {panel.where}: {panel.title}", quote=QUOTES["reduction"], claim=panel.claim,
        axis=AXIS, plotted=PLOTTED,
        rule=f"per method (OPAD, OPAD+) and checkpoint from 10³ iterations to the horizon: {REDUCTION.rule()}; "
             "\"consistently\": the weakest of them all",
        papers_number="KL(MCMC) / KL(OPAD, OPAD+) from 10 to 1000 (§4.4), at every iteration plotted",
        authors=Evidence(NO_AUTHORS_CODE), ours=ours, fair=_fair(measured), stand_in=panel.stand_in,
        reason=_reduction_reason(found), replay=panel.replay,
        details=_cell_table(panel, found, "KL(MCMC) / KL(method)") + _data_note(panel),
        figures=[_reduction_figure(measured)] if measured.steps else [])


def _reduction_evidence(found: list[Cell]) -> Evidence:
    worst = weakest_cell(found)
    shown = "; ".join(f"{METHODS[method]} {_iterations(found, method, 0)} → {_iterations(found, method, -1)}"
                      for method in METHODS)
    return Evidence(f"KL(MCMC) / KL(·), ratio of chain-mean KLs per seed: {shown}; weakest: {METHODS[worst.method]} "
                    f"at {worst.step:,} iterations, {worst.evidence}", weakest(*(cell.verdict for cell in found)))


def _iterations(found: list[Cell], method: str, index: int) -> str:
    cell = [c for c in found if c.method == method][index]
    return f"{cell.evidence} at {cell.step:,} it."


def _reduction_reason(found: list[Cell]) -> str:
    if not found:
        return "no run of this panel is stored"
    counts = ", ".join(f"{METHODS[method]} at {sum(c.verdict == REPRODUCED for c in found if c.method == method)} "
                       f"of {sum(c.method == method for c in found)} checkpoints" for method in METHODS)
    return f"the claimed tenfold reduction is reproduced for {counts}"


def outperforms_claim(all_measured: list[Measured]) -> Claim:
    """§4.4: ``Ratio(1)`` on KL(OPAD) / KL(OPAD+) at every judged checkpoint of every panel of the paper's own
    experiments, the weakest (the stand-in panel is shown, not judged)."""
    found = {m.panel.where: cells(m.ratios, m.steps, ("plus",), OUTPERFORMS) if m.steps else [] for m in all_measured}
    own = [m for m in all_measured if not m.panel.stand_in]
    every = [cell for m in own for cell in found[m.panel.where]]
    failed = [m.panel.where for m in own if m.missing]
    if failed or not every:
        ours = Evidence(f"not measured: runs of {', '.join(failed) or 'every panel'} failed", INCONCLUSIVE)
    else:
        worst = weakest_cell(every)
        where = next(m.panel.where for m in own if worst in found[m.panel.where])
        ours = Evidence(f"KL(OPAD) / KL(OPAD+), ratio of chain-mean KLs per seed, over {len(every)} (panel, "
                        f"checkpoint) cells: weakest {where} at {worst.step:,} iterations, {worst.evidence}",
                        weakest(*(cell.verdict for cell in every)))
    reproduced = sum(cell.verdict == REPRODUCED for cell in every)
    return Claim(
        paper=PAPER, where="§4.4; Figs. 1–4", quote=QUOTES["outperforms"], claim="OPAD+ consistently beats OPAD",
        axis="KL divergence from the target, KL(OPAD) / KL(OPAD+) of the same chains at equal sampling iterations",
        plotted=PLOTTED,
        rule=f"per panel and checkpoint from 10³ iterations to the horizon: {OUTPERFORMS.rule()}; \"consistently\": "
             "the weakest of them all (the panels of the paper's own data; the stand-in panel is shown, not judged)",
        papers_number="no number (\"consistently outperforms\"; \"significant\" in most experiments)",
        authors=Evidence(NO_AUTHORS_CODE), ours=ours, fair=_fair_all(own),
        reason=f"KL(OPAD+) < KL(OPAD) is reproduced in {reproduced} of {len(every)} (panel, checkpoint) cells",
        replay=ISING_PRESET,
        details=[line for m in all_measured for line in _cell_table(m.panel, found[m.panel.where],
                                                                     "KL(OPAD) / KL(OPAD+)")])


def stable_claim(all_measured: list[Measured]) -> Claim:
    """§4.4: ``NotWorse`` on the reduction at the horizon over that at 10³ iterations, per panel and method."""
    own = [m for m in all_measured if not m.panel.stand_in]
    found = {(m.panel.where, method): growth(m.ratios, method) for m in own if len(m.steps) > 1 for method in METHODS}
    verdicts = {key: STABLE.judge(evidence) for key, evidence in found.items()}
    short = [m.panel.where for m in own if m.missing or len(m.steps) < 2]
    if short or not found:
        ours = Evidence(f"not measured: {', '.join(short) or 'every panel'} lack a run or a second checkpoint",
                        INCONCLUSIVE)
    else:
        worst = max(found, key=lambda key: (VERDICTS.index(verdicts[key]), -np.nan_to_num(found[key].centre)))
        ours = Evidence(f"reduction at the horizon / at the first checkpoint, per seed, over {len(found)} (panel, "
                        f"method) pairs: weakest {worst[0]} {METHODS[worst[1]]}: {found[worst]}",
                        weakest(*verdicts.values()))
    steps = {m.panel.where: m.steps for m in own}
    rows = [f"| {where} | {METHODS[method]} | {steps[where][0]:,} → {steps[where][-1]:,} | {evidence} | "
            f"{verdicts[(where, method)]} |" for (where, method), evidence in found.items()]
    shrinking = sum(v != REPRODUCED for v in verdicts.values())
    return Claim(
        paper=PAPER, where="§4.4; Figs. 1–4", quote=QUOTES["stable"], claim="the reduction is stable or grows",
        axis="KL(MCMC) / KL(OPAD or OPAD+), at the horizon over at the first checkpoint (10³ iterations)",
        plotted=PLOTTED, rule=f"per panel and method: {STABLE.rule()}; the weakest of them all",
        papers_number="no number (\"remains stable or improves\")", authors=Evidence(NO_AUTHORS_CODE), ours=ours,
        fair=_fair_all(own),
        reason=f"{shrinking} of {len(verdicts)} (panel, method) pairs are not shown stable or improving",
        replay=ISING_PRESET,
        details=["Reduction KL(MCMC) / KL(method) at the horizon over at the first checkpoint, per seed (95 % "
                 "interval over seeds).", "", "| panel | method | iterations | later / earlier | verdict |",
                 "|---|---|---|---|---|", *rows, ""])


def cost_claim(args, store, all_measured: list[Measured]) -> Claim:
    """Abstract and §3.1: per seed, extra target evaluations = 0 on every figure's sampler (``Always``)."""
    runs = cost_runs(args)
    results = {run.label: store.read(run.run_id) for run in runs if store.has(run.run_id)}
    extra = {label: int(r["fed_evaluations"]) - int(r["plain_evaluations"]) for label, r in results.items()}
    per_seed = [all(extra.get(run.label) == 0 for run in runs if run.config.seed == seed) for seed in range(args.seeds)]
    if len(results) < len(runs):
        ours = Evidence(f"not measured: {len(runs) - len(results)} of {len(runs)} runs failed", INCONCLUSIVE)
    else:
        total = sum(int(r["plain_evaluations"]) for r in results.values())
        ours = Evidence(f"extra target evaluations of the sampler feeding the store: {sum(extra.values())} "
                        f"(of {total:,} the samplers made) over {len(runs) // args.seeds} samplers × {args.seeds} "
                        f"seeds; 0 in {sum(per_seed)} of {args.seeds} seeds", NO_EXTRA.judge(per_seed))
    rows = [f"| {label} | {int(r['plain_evaluations']):,} | {int(r['fed_evaluations']):,} | {extra[label]} |"
            for label, r in results.items()]
    return Claim(
        paper=PAPER, where="Abstract; §3.1 (after Algorithm 1)", quote=QUOTES["cost"],
        claim="OPAD and OPAD+ cost no extra target evaluation",
        axis="target evaluations per iteration (the cost the sentence names)", rule=NO_EXTRA.rule(),
        papers_number="0 extra evaluations (\"no extra computational costs\"; \"no significant computational "
                      "overhead\")", authors=Evidence(NO_AUTHORS_CODE), ours=ours, fair=_fair_all(all_measured),
        reason=f"{sum(v != 0 for v in extra.values())} of {len(extra)} runs made extra target evaluations; the "
               f"store's bookkeeping costs CPU time instead: {_overhead_range(all_measured)} of the sampler's step",
        replay=ISING_PRESET,
        details=[f"Each sampler {args.opad_steps:,} iterations × {args.opad_chains} chains, alone and feeding the "
                 "store, from the same seed.", "",
                 "| run | target evaluations alone | feeding the store | extra |", "|---|---|---|---|", *rows, ""])


def claims(args, store) -> list[Claim]:
    all_measured = [measure(panel, args, store) for panel in PANELS]
    return [*(reduction_claim(m) for m in all_measured), outperforms_claim(all_measured),
            stable_claim(all_measured), cost_claim(args, store, all_measured)]


# -- words and figures ----------------------------------------------------------------------------------------
def _fair(measured: Measured) -> str:
    base = ("same chains for MCMC, OPAD and OPAD+: equal iterations, moves and target evaluations (OPAD/OPAD+ add "
            "none: the cost claim)")
    if not measured.overhead.size:
        return base
    return f"{base}; CPU of the store's bookkeeping / the sampler's step: {ratio_evidence(measured.overhead)}"


def _fair_all(all_measured: list[Measured]) -> str:
    """The fair axes of a claim over every panel: the store's CPU cost on each figure's sampler (``COST_PANELS``)."""
    shown = "; ".join(f"{m.panel.where} ({m.panel.sampler}) {ratio_evidence(m.overhead)}" for m in all_measured
                      if m.panel.where in COST_PANELS and m.overhead.size)
    return ("same chains for MCMC, OPAD and OPAD+: equal iterations, moves and target evaluations; CPU of the "
            f"store's bookkeeping / the sampler's step: {shown or 'not measured'}")


def _overhead_range(all_measured: list[Measured]) -> str:
    """The smallest and largest mean (geometric, over seeds) CPU cost of the store against the step, by panel."""
    means = [float(np.exp(np.log(m.overhead).mean())) for m in all_measured if m.overhead.size]
    return f"{min(means):.2g}–{max(means):.2g}" if means else "not measured"


def _cell_table(panel: Panel, found: list[Cell], what: str) -> list[str]:
    head = [f"### {panel.where}: {panel.title}", "", f"{what} per seed (95 % interval over seeds; "
            "ratio of the chain-mean KLs the paper plots).", "", "| iterations | method | ratio | verdict |",
            "|---|---|---|---|"]
    return head + [f"| {cell.step:,} | {METHODS.get(cell.method, 'OPAD / OPAD+')} | {cell.evidence} | "
                   f"{cell.verdict} |" for cell in found] + [""]


def _data_note(panel: Panel) -> list[str]:
    if panel.target != "dag":
        return []
    return ["The paper draws one ER DAG and data set per chain; here each seed draws one (data seed "
            f"{panel.params['seed']} + {DATA_STRIDE}·seed) for its chains.", ""]


def _reduction_figure(measured: Measured):
    """Per method, every seed's reduction and their geometric mean against iterations, with the claimed 10×."""
    layers = [hv.HLine(CLAIMED).opts(color="black", line_dash="dashed")]
    for method, name in METHODS.items():
        values = measured.ratios[method]
        finite = np.where(np.isfinite(values) & (values > 0), values, np.nan)
        layers.append(hv.Curve((measured.steps, np.exp(np.nanmean(np.log(finite), axis=1))), "iterations",
                               "KL(MCMC) / KL(·)", label=name))
        points = [(step, v) for step, row in zip(measured.steps, finite) for v in row if np.isfinite(v)]
        layers.append(hv.Scatter(points, "iterations", "KL(MCMC) / KL(·)", label=f"{name}, per seed"))
    return hv.Overlay(layers).opts(title=f"OPAD {measured.panel.where}: KL reduction per seed", logx=True, logy=True,
                                   width=520, height=340, legend_position="bottom_right")
