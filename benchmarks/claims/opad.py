"""The OPAD paper's headlines (Afshar, Francis & Cripps: Abstract, §1, §3, §3.1, §4.4, §5, Figs. 1–4), judged as
written over seeds.

**The runs.** For each panel the paper plots — Fig. 1(a) (1-D Ising chain, 10⁴
iterations), 1(b) (the same, 10⁶), 2(a–b) (variable selection, synthetic
data), 2(c–d) (the mouse data: the diabetes data stand in), 3(a–c) and 4(a–c)
(DAGs on 5 nodes, ER(5, 1), ER(5, 2), ER(5, 3); structure and partition MCMC)
— each of ``--seeds`` independent seeds is a separate run
(``benchmarks.papers.opad_runs.opad_run``: its own random stream and, where the
paper draws data, its own data set) of ``--opad-chains`` chains of the paper's
reference MCMC, feeding a ``ParticleStore`` that reads the exact KL(P‖π) of each
chain's MCMC, OPAD and OPAD+ approximations at every half decade of iterations
(10, 10^1.5, …, the horizon). The paper plots the mean over its 20 chains, so a
seed's reduction at a checkpoint k is the ratio of those means,

    ρ_s(k) = mean_c KL(MCMC_c, k) / mean_c KL(OPAD_c, k)     (and OPAD+),

read at the checkpoints from 10³ iterations (the paper's axes) to the horizon.
Every verdict is derived from ``Judgement``s (``samplers.diagnostics.verdicts``:
a criterion, the per-seed numbers it judged, a label saying which panel, method
and checkpoint), the weakest deciding; the rules' words come from the criteria.

* **The reduction (§4.4):** "much lower (from one-tenth to one-thousandth …)":
  ``Ratio(10)`` on each (method, checkpoint) of a panel; "consistently": all of
  them.
* **OPAD+ outperforms OPAD (§4.4):** ``Ratio(1)`` on KL(OPAD) / KL(OPAD+), same
  cells, every panel of the paper's own experiments (the stand-in panel is
  shown, not judged — as in every claim over the paper's experiments).
* **"Stable or improves" (§4.4):** ``NotWorse`` on ρ_s(horizon) / ρ_s(10³) per
  seed, for each panel and method.
* **"Consistently and often substantially" (Abstract):** "consistently" is
  ``Ratio(1)`` on each (panel, method, checkpoint); "often substantially" is
  ``Much`` on each seed's median over the panels of the reduction at the
  horizon, per method — the median panel reaching the size means most panels
  do (5 of the 9), which is how "often" is read.
* **"More noticeable in higher iterations" (§4.4, Fig. 1):** ``Ratio(1)`` per
  method on ρ_s at Fig. 1(b)'s horizon (10⁶) over ρ_s at Fig. 1(a)'s (10⁴).
* **"Several orders of magnitude" (§5):** read as at least two: ``Ratio(100)``
  per panel on each seed's larger of the OPAD and OPAD+ reductions at the
  horizon ("through OPAD/OPAD+"), every panel of the paper's experiments.
* **Inequalities (7) and (9) (§3):** KL(MCMC) ≥ KL(OPAD) ≥ KL(OPAD+) for every
  chain: ``Always`` per panel (the stand-in's too: a theorem holds on any data),
  a seed showing it when every chain obeys both at every recorded checkpoint
  (from 10 iterations) within ``ORDER_TOLERANCE`` nats of rounding.
* **No extra cost (Abstract, §3.1):** "no extra computational costs" on both
  axes a cost has. Target evaluations (the cost §3.1 names: "this evaluation
  only needs to be done once … and then saved"): per seed and per figure's
  sampler, ``ExtraEvaluations`` runs the sampler twice from the same seed —
  once alone, once recording every step and feeding the store — and counts the
  target's evaluations (``targets.base``) of both; a seed shows the claim when
  the difference is 0 on every sampler (``Always``). CPU seconds: per seed and
  per figure's sampler, the KL run's CPU per step without the store over with
  it, step / (step + store bookkeeping) from ``sweeps.perform``'s timers
  (``NotWorse``: "no significant computational overhead" read as within the
  audit's ``SHORTFALL``). The weakest of the two axes decides.

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
from samplers.diagnostics.verdicts import (MUCH, REPRODUCED, SHORTFALL, VERDICTS, Always, Judgement, Much, NotWorse,
                                           Ratio, RatioEvidence, paired_ratios, ratio_evidence, weakest_judgement)
from samplers.opad.store import ParticleStore
from sweeps import RunSpec, Task, run_seed

PAPER = "OPAD"
#: The reduction the paper claims at least ("from one-tenth to one-thousandth").
CLAIMED = 10.0
#: "Several orders of magnitude" (§5), read as at least two.
SEVERAL_ORDERS = 100.0
#: The first iteration the paper's axes show; a shorter run (``--quick``) is judged from a tenth of its horizon.
FIRST_PLOTTED = 1000
#: Data seed of replicate s: the seed-0 data set's seed + s · DATA_STRIDE (disjoint between the ER(5, d) panels).
DATA_STRIDE = 1000
#: Rounding (nats) within which a chain's KL(MCMC) ≥ KL(OPAD) ≥ KL(OPAD+) still holds: the store's KLs are running
#: float64 sums and log-sums, exact to about 1e-12 nats over 10⁶ iterations.
ORDER_TOLERANCE = 1e-9
REDUCTION, BETTER, STABLE, SUBSTANTIAL, ORDERS = Ratio(CLAIMED), Ratio(1.0), NotWorse(), Much(), Ratio(SEVERAL_ORDERS)
NO_EXTRA = Always("the sampler feeding the OPAD/OPAD+ store makes exactly as many target evaluations as the same "
                  "sampler from the same seed without it, on each figure's sampler")
NO_OVERHEAD = NotWorse(ratio="CPU seconds per step without the store / with it")
ORDERED = Always(f"KL(MCMC) ≥ KL(OPAD) ≥ KL(OPAD+) for every chain at every recorded checkpoint (from 10 "
                 f"iterations), within {ORDER_TOLERANCE:g} nats of rounding")
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
    "improves": "The results illustrate that our proposed reweighting of the particles improves any particle-based "
                "approximation to the target distribution consistently and often substantially.",
    "noticeable": "In Figures 1(a) and 1(b) the target distribution is the Ising model introduced in Section 4.1 and "
                  "the sampling is carried on for 10K and 1M iterations respectively. The results show that OPAD "
                  "and OPAD+ significantly outperform the reference and the difference is more noticeable in higher "
                  "iterations.",
    "orders": "Our experiments demonstrate that through OPAD/OPAD+ particle reweighting, the divergence from the "
              "target can be reduced by several orders of magnitude.",
    "inequalities": "We prove that the KL divergence of OPAD+ from the target is less than that of OPAD, just as the "
                    "KL divergence of OPAD from the target is less than that of MCMC or any other corresponding "
                    "particle-based method. … Note that in (9), the equality only happens in an improbable case "
                    "where (a) any proposed state is added to the Markov chain and (b) the frequency of occurrences "
                    "of any state in the chain is exactly proportional to its target probability.",
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
#: The Ising panels of §4.4's "more noticeable in higher iterations": the shorter horizon, then the longer.
ISING_HORIZONS = ("Fig. 1(a)", "Fig. 1(b)")


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
    """One (method, checkpoint) of a panel: its judgement (the per-seed ratios and the criterion)."""

    method: str
    step: int
    judgement: Judgement

    @property
    def evidence(self):
        return self.judgement.evidence

    @property
    def verdict(self) -> str:
        return self.judgement.verdict


def seed_ratios(curves: list[Curves], steps: list[int]) -> dict[str, np.ndarray]:
    """Per method, ``(len(steps), seeds)``: each seed's mean-over-chains KL(MCMC) / KL(method) (the paper's plotted
    means), and under "plus" KL(OPAD) / KL(OPAD+)."""
    means = {kind: np.array([[run.kl[kind][run.steps.index(step)].mean() for run in curves] for step in steps])
             for kind in ("mcmc", *METHODS)}
    return {"opad": paired_ratios(means["mcmc"], means["opad"]),
            "opad_plus": paired_ratios(means["mcmc"], means["opad_plus"]),
            "plus": paired_ratios(means["opad"], means["opad_plus"])}


def order_margin(curves: Curves) -> float:
    """The smallest of KL(MCMC) − KL(OPAD) and KL(OPAD) − KL(OPAD+) over every chain and recorded checkpoint of one
    run (nats): ≥ 0 where Inequalities (7) and (9) hold for each chain."""
    kl = {kind: np.asarray(curves.kl[kind], dtype=float) for kind in ("mcmc", *METHODS)}
    return float(min((kl["mcmc"] - kl["opad"]).min(), (kl["opad"] - kl["opad_plus"]).min()))


@dataclass(frozen=True)
class Measured:
    """A panel's stored runs, read: the judged checkpoints, the ratios per seed, the store's CPU cost per seed
    (store bookkeeping / sampler step), the per-seed ``order_margin``; ``missing`` names the seeds whose run
    failed."""

    panel: Panel
    steps: list[int]
    ratios: dict[str, np.ndarray]
    overhead: np.ndarray
    margins: np.ndarray
    missing: list[int]

    def cells(self, methods, criterion) -> list[Cell]:
        """The judgement of every (method in ``methods``, judged checkpoint) by ``criterion``."""
        return [Cell(method, step, Judgement(f"{self.panel.where} {METHODS.get(method, 'OPAD / OPAD+')} at "
                                             f"{step:,} iterations", criterion, ratio_evidence(self.ratios[method][i])))
                for method in methods for i, step in enumerate(self.steps)]

    def at_horizon(self, method: str) -> np.ndarray:
        """Per seed, the reduction KL(MCMC) / KL(method) at the horizon."""
        return self.ratios[method][-1]

    def growth(self, method: str) -> RatioEvidence:
        """Per seed, the reduction at the horizon over that at the first judged checkpoint."""
        return ratio_evidence(paired_ratios(self.ratios[method][-1], self.ratios[method][0]))


def measure(panel: Panel, args, store) -> Measured:
    """Read ``panel``'s runs from ``store``."""
    runs = panel.runs(args)
    curves = [Curves.from_result(run.label, store.read(run.run_id)) for run in runs if store.has(run.run_id)]
    missing = [seed for seed, run in enumerate(runs) if not store.has(run.run_id)]
    if not curves:
        return Measured(panel, [], {}, np.array([]), np.array([]), missing)
    steps = judged_steps(curves[0].steps)
    return Measured(panel, steps, seed_ratios(curves, steps), np.array([run.overhead for run in curves]),
                    np.array([order_margin(run) for run in curves]), missing)


def _not_measured(all_measured: list[Measured]) -> Evidence | None:
    """Not measured, when a seed's run of any of ``all_measured`` failed: a failed seed is never dropped."""
    failed = [f"the runs of seed(s) {m.missing} of {m.panel.where} failed" for m in all_measured if m.missing]
    return Evidence.not_measured("; ".join(failed) + " (the sweep's summary says why)") if failed else None


def _own(all_measured: list[Measured]) -> list[Measured]:
    """The panels of the paper's own experiments (a stand-in panel is shown, not judged)."""
    return [m for m in all_measured if not m.panel.stand_in]


def _panel(all_measured: list[Measured], where: str) -> Measured:
    return next(m for m in all_measured if m.panel.where == where)


# -- the claims -----------------------------------------------------------------------------------------------
def reduction_claim(measured: Measured) -> Claim:
    """Figs. 1–4, one panel: ``Ratio(10)`` on every (OPAD and OPAD+, checkpoint from 10³), the weakest."""
    panel = measured.panel
    found = measured.cells(METHODS, REDUCTION)
    ours = _not_measured([measured]) or _reduction_evidence(found)
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
    worst = weakest_judgement([cell.judgement for cell in found])
    shown = "; ".join(f"{METHODS[method]} {_iterations(found, method, 0)} → {_iterations(found, method, -1)}"
                      for method in METHODS)
    return Evidence(f"KL(MCMC) / KL(·), ratio of chain-mean KLs per seed: {shown}; weakest: {worst.label}, "
                    f"{worst.evidence}", tuple(cell.judgement for cell in found))


def _iterations(found: list[Cell], method: str, index: int) -> str:
    cell = [c for c in found if c.method == method][index]
    return f"{cell.evidence} at {cell.step:,} it."


def _reduction_reason(found: list[Cell]) -> str:
    if not found:
        return "no run of this panel is stored"
    counts = ", ".join(f"{METHODS[method]} at {sum(c.verdict == REPRODUCED for c in found if c.method == method)} "
                       f"of {sum(c.method == method for c in found)} checkpoints" for method in METHODS)
    return f"the claimed tenfold reduction is demonstrated (reproduced) for {counts}"


def outperforms_claim(all_measured: list[Measured]) -> Claim:
    """§4.4: ``Ratio(1)`` on KL(OPAD) / KL(OPAD+) at every judged checkpoint of every panel of the paper's own
    experiments, the weakest (the stand-in panel is shown, not judged)."""
    found = {m.panel.where: m.cells(("plus",), BETTER) for m in all_measured}
    own = _own(all_measured)
    every = [cell.judgement for m in own for cell in found[m.panel.where]]
    ours = _not_measured(own)
    if ours is None:
        worst = weakest_judgement(every)
        ours = Evidence(f"KL(OPAD) / KL(OPAD+), ratio of chain-mean KLs per seed, over {len(every)} (panel, "
                        f"checkpoint) cells: weakest {worst.label}, {worst.evidence}", tuple(every))
    reproduced = sum(judgement.verdict == REPRODUCED for judgement in every)
    return Claim(
        paper=PAPER, where="§4.4; Figs. 1–4", quote=QUOTES["outperforms"], claim="OPAD+ consistently beats OPAD",
        axis="KL divergence from the target, KL(OPAD) / KL(OPAD+) of the same chains at equal sampling iterations",
        plotted=PLOTTED,
        rule=f"per panel and checkpoint from 10³ iterations to the horizon: {BETTER.rule()}; \"consistently\": "
             "the weakest of them all (the panels of the paper's own data; the stand-in panel is shown, not judged)",
        papers_number="no number (\"consistently outperforms\"; \"significant\" in most experiments)",
        authors=Evidence(NO_AUTHORS_CODE), ours=ours, fair=_fair_all(own),
        reason=f"KL(OPAD+) < KL(OPAD) is reproduced in {reproduced} of {len(every)} (panel, checkpoint) cells",
        replay=ISING_PRESET,
        details=[line for m in all_measured for line in _cell_table(m.panel, found[m.panel.where],
                                                                     "KL(OPAD) / KL(OPAD+)")])


def stable_claim(all_measured: list[Measured]) -> Claim:
    """§4.4: ``NotWorse`` on the reduction at the horizon over that at 10³ iterations, per panel and method."""
    own = _own(all_measured)
    short = [m.panel.where for m in own if not m.missing and len(m.steps) < 2]
    pairs = [(m, Judgement(f"{m.panel.where} {name}", STABLE, m.growth(method))) for m in own if len(m.steps) > 1
             for method, name in METHODS.items()]
    judged = [judgement for _, judgement in pairs]
    ours = _not_measured(own) or (Evidence.not_measured(f"{', '.join(short)} lack a second checkpoint") if short
                                  else None)
    if ours is None:
        worst = weakest_judgement(judged)
        ours = Evidence(f"reduction at the horizon / at the first checkpoint, per seed, over {len(judged)} (panel, "
                        f"method) pairs: weakest {worst.label}: {worst.evidence}", tuple(judged))
    rows = [f"| {j.label} | {m.steps[0]:,} → {m.steps[-1]:,} | {j.evidence} | {j.verdict} |" for m, j in pairs]
    shrinking = sum(j.verdict != REPRODUCED for j in judged)
    return Claim(
        paper=PAPER, where="§4.4; Figs. 1–4", quote=QUOTES["stable"], claim="the reduction is stable or grows",
        axis="KL(MCMC) / KL(OPAD or OPAD+), at the horizon over at the first checkpoint (10³ iterations)",
        plotted=PLOTTED, rule=f"per panel and method: {STABLE.rule()}; the weakest of them all",
        papers_number="no number (\"remains stable or improves\")", authors=Evidence(NO_AUTHORS_CODE), ours=ours,
        fair=_fair_all(own),
        reason=f"{shrinking} of {len(judged)} (panel, method) pairs are not shown stable or improving",
        replay=ISING_PRESET,
        details=["Reduction KL(MCMC) / KL(method) at the horizon over at the first checkpoint, per seed (95 % "
                 "interval over seeds).", "", "| panel, method | iterations | later / earlier | verdict |",
                 "|---|---|---|---|", *rows, ""])


def improves_claim(all_measured: list[Measured]) -> Claim:
    """Abstract: "consistently" — ``Ratio(1)`` on KL(MCMC) / KL(OPAD or OPAD+) at every judged checkpoint of every
    panel of the paper's experiments; "often substantially" — ``Much`` per method on each seed's median, over those
    panels, of the reduction at the horizon (the median panel reaching the size: most panels do); the weakest."""
    own = _own(all_measured)
    consistent = [cell.judgement for m in own for cell in m.cells(METHODS, BETTER)]
    ours = _not_measured(own)
    if ours is None:
        often = [Judgement(f"often substantially, {name}: each seed's median over the {len(own)} panels at the "
                           "horizon", SUBSTANTIAL, ratio_evidence(np.median([m.at_horizon(method) for m in own], 0)))
                 for method, name in METHODS.items()]
        worst = weakest_judgement(consistent)
        ours = Evidence(f"KL(MCMC) / KL(·), ratio of chain-mean KLs per seed; \"consistently\", over "
                        f"{len(consistent)} (panel, method, checkpoint) cells: weakest {worst.label}, "
                        f"{worst.evidence}; "
                        + "; ".join(f"{j.label}: {j.evidence}" for j in often), (*consistent, *often))
    demonstrated = ", ".join(
        f"{sum(SUBSTANTIAL.judge(ratio_evidence(m.at_horizon(method))) == REPRODUCED for m in own if m.steps)} of "
        f"{len(own)} panels for {name}" for method, name in METHODS.items())
    return Claim(
        paper=PAPER, where="Abstract; Figs. 1–4", quote=QUOTES["improves"],
        claim="OPAD/OPAD+ improve on MCMC consistently and often substantially", axis=AXIS, plotted=PLOTTED,
        rule=f"\"consistently\": per panel, method and checkpoint from 10³ iterations to the horizon: "
             f"{BETTER.rule()}; \"often substantially\": per method, each seed's median over the {len(own)} panels "
             "of the paper's experiments of the reduction at the horizon (\"often\" read as in most panels: the "
             f"median panel reaching the size), {SUBSTANTIAL.rule()}; the weakest of them all (the stand-in panel is "
             "shown, not judged)",
        papers_number="no number (\"consistently and often substantially\")", authors=Evidence(NO_AUTHORS_CODE),
        ours=ours, fair=_fair_all(own),
        reason=f"KL(·) < KL(MCMC) is reproduced in {sum(j.verdict == REPRODUCED for j in consistent)} of "
               f"{len(consistent)} (panel, method, checkpoint) cells; the reduction at the horizon demonstrates "
               f"{MUCH:g}× (reproduced) in {demonstrated}",
        replay=ISING_PRESET, details=_horizon_table(all_measured))


def noticeable_claim(all_measured: list[Measured]) -> Claim:
    """§4.4 on Fig. 1: per method, ``Ratio(1)`` on the reduction at Fig. 1(b)'s horizon (10⁶) over that at Fig.
    1(a)'s (10⁴), seed by seed (independent runs, paired by seed index)."""
    short, long = (_panel(all_measured, where) for where in ISING_HORIZONS)
    ours, judged = _not_measured([short, long]), ()
    if ours is None:
        judged = tuple(Judgement(f"{name}: at {long.steps[-1]:,} over at {short.steps[-1]:,} iterations", BETTER,
                                 ratio_evidence(paired_ratios(long.at_horizon(method), short.at_horizon(method))))
                       for method, name in METHODS.items())
        shown = "; ".join(f"{name} {ratio_evidence(short.at_horizon(method))} at {short.steps[-1]:,} it. → "
                          f"{ratio_evidence(long.at_horizon(method))} at {long.steps[-1]:,} it."
                          for method, name in METHODS.items())
        ours = Evidence(f"KL(MCMC) / KL(·), ratio of chain-mean KLs per seed: {shown}; later / earlier per seed: "
                        + "; ".join(f"{j.label}: {j.evidence}" for j in judged), judged)
    return Claim(
        paper=PAPER, where="§4.4; Figs. 1(a)–(b)", quote=QUOTES["noticeable"],
        claim="on the Ising chain the reduction is larger at 10⁶ iterations than at 10⁴",
        axis="KL(MCMC) / KL(OPAD or OPAD+) at the longer horizon (Fig. 1(b), paper: 10⁶ iterations) over at the "
             "shorter (Fig. 1(a), 10⁴)", plotted=PLOTTED,
        rule=f"per method (OPAD, OPAD+), the later reduction over the earlier, seed by seed: {BETTER.rule()}; the "
             "weakest of both",
        papers_number="no number (\"more noticeable in higher iterations\")", authors=Evidence(NO_AUTHORS_CODE),
        ours=ours, fair=_fair_all([short, long]),
        reason="; ".join(f"{j.label}: {j.verdict}" for j in judged) or "not measured", replay=ISING_PRESET)


def orders_claim(all_measured: list[Measured]) -> Claim:
    """§5: ``Ratio(100)`` ("several orders of magnitude", read as at least two) per panel of the paper's experiments
    on each seed's larger of the OPAD and OPAD+ reductions at the horizon; the weakest."""
    own = _own(all_measured)
    ours, judged = _not_measured(own), ()
    if ours is None:
        judged = tuple(Judgement(m.panel.where, ORDERS, ratio_evidence(np.maximum(m.at_horizon("opad"),
                                                                                  m.at_horizon("opad_plus"))))
                       for m in own)
        worst = weakest_judgement(judged)
        ours = Evidence(f"per seed the larger of KL(MCMC) / KL(OPAD) and KL(MCMC) / KL(OPAD+) (ratios of chain-mean "
                        f"KLs) at each panel's horizon, over {len(judged)} panels: weakest {worst.label}, "
                        f"{worst.evidence}", judged)
    by_verdict = "; ".join(f"{verdict}: {', '.join(j.label for j in judged if j.verdict == verdict)}"
                           for verdict in VERDICTS if any(j.verdict == verdict for j in judged))
    return Claim(
        paper=PAPER, where="§5 (Conclusion); Figs. 1–4", quote=QUOTES["orders"],
        claim="OPAD/OPAD+ reduce the KL by several orders of magnitude", axis=AXIS, plotted=PLOTTED,
        rule=f"\"several orders of magnitude\" read as at least two; per panel of the paper's experiments, each "
             f"seed's larger reduction (OPAD or OPAD+: \"through OPAD/OPAD+\") at the horizon: {ORDERS.rule()}; the "
             "weakest of the panels (a general statement about the experiments; the stand-in panel is shown, not "
             "judged)",
        papers_number="several orders of magnitude (§5); \"from one-tenth to one-thousandth\" (§4.4)",
        authors=Evidence(NO_AUTHORS_CODE), ours=ours, fair=_fair_all(own),
        reason=f"the panels by verdict on {SEVERAL_ORDERS:g}× — {by_verdict}" if judged else "not measured",
        replay=ISING_PRESET,
        details=_horizon_table(all_measured) + ["| panel | larger reduction per seed | verdict |", "|---|---|---|",
                                                *(f"| {j.label} | {j.evidence} | {j.verdict} |" for j in judged),
                                                ""])


def inequalities_claim(all_measured: list[Measured]) -> Claim:
    """§3, Inequalities (7) and (9): KL(MCMC) ≥ KL(OPAD) ≥ KL(OPAD+) for every chain, ``Always`` per panel (the
    stand-in's too: a theorem holds on any data) over seeds, each seed's every chain and recorded checkpoint."""
    ours, judged = _not_measured(all_measured), ()
    if ours is None:
        judged = tuple(Judgement(m.panel.where, ORDERED, [bool(margin >= -ORDER_TOLERANCE) for margin in m.margins])
                       for m in all_measured)
        smallest = min(all_measured, key=lambda m: m.margins.min())
        ours = Evidence(f"the smallest of KL(MCMC) − KL(OPAD) and KL(OPAD) − KL(OPAD+) over every chain and "
                        f"recorded checkpoint: {smallest.margins.min():.3g} nats ({smallest.panel.where}); the "
                        f"ordering holds in {sum(sum(j.evidence) for j in judged)} of "
                        f"{sum(len(j.evidence) for j in judged)} (panel, seed) runs", judged)
    failing = [j.label for j in judged if not all(j.evidence)]
    return Claim(
        paper=PAPER, where="§1; §3, Inequalities (7) and (9)", quote=QUOTES["inequalities"],
        claim="KL(MCMC) ≥ KL(OPAD) ≥ KL(OPAD+) for every chain",
        axis="KL divergence from the target of each chain's MCMC, OPAD and OPAD+ approximations, at every recorded "
             "checkpoint", plotted=PLOTTED, rule=f"per panel (all {len(PANELS)}: a theorem holds on any data): "
                                                 f"{ORDERED.rule()}; the weakest of the panels",
        papers_number="a theorem (Theorem 1, Corollary 1): always", authors=Evidence(NO_AUTHORS_CODE), ours=ours,
        fair=_fair_all(all_measured),
        reason=(f"violated in {', '.join(failing)}" if failing else "no chain violates the ordering") if judged
        else "not measured", replay=ISING_PRESET,
        details=["Smallest of KL(MCMC) − KL(OPAD) and KL(OPAD) − KL(OPAD+) over every chain and checkpoint, per "
                 "seed (nats).", "", "| panel | per seed | verdict |", "|---|---|---|",
                 *(f"| {m.panel.where} | {', '.join(f'{v:.3g}' for v in m.margins)} | {j.verdict} |"
                   for m, j in zip(all_measured, judged)), ""])


def cost_claim(args, store, all_measured: list[Measured]) -> Claim:
    """Abstract and §3.1, "no extra computational costs" on both axes, the weakest deciding: per seed, 0 extra target
    evaluations on every figure's sampler (``Always``); per figure's sampler (``COST_PANELS``), CPU seconds per step
    without the store over with it, step / (step + store) = 1 / (1 + overhead) per seed (``NotWorse``)."""
    runs = cost_runs(args)
    results = {run.label: store.read(run.run_id) for run in runs if store.has(run.run_id)}
    extra = {label: int(r["fed_evaluations"]) - int(r["plain_evaluations"]) for label, r in results.items()}
    timed = [m for m in all_measured if m.panel.where in COST_PANELS]
    lost = len(runs) - len(results)
    ours = (Evidence.not_measured(f"{lost} of {len(runs)} runs counting target evaluations failed") if lost
            else _not_measured(timed))
    reason = "not measured"
    if ours is None:
        per_seed = [all(extra[run.label] == 0 for run in runs if run.config.seed == seed) for seed in range(args.seeds)]
        evaluations = Judgement("extra target evaluations, every figure's sampler", NO_EXTRA, per_seed)
        cpu = [Judgement(f"CPU per step without / with the store, {m.panel.where} ({m.panel.sampler})", NO_OVERHEAD,
                         ratio_evidence(1 / (1 + m.overhead))) for m in timed]
        ours = Evidence(f"target evaluations: {sum(extra.values())} extra (of "
                        f"{sum(int(r['plain_evaluations']) for r in results.values()):,} the samplers made) over "
                        f"{len(timed)} samplers × {args.seeds} seeds, 0 in {sum(per_seed)} of {args.seeds} seeds; CPU "
                        "seconds per step without the store / with it (the sampler's step, recording what the store "
                        "needs, against that plus the store's bookkeeping and KL reads): "
                        + "; ".join(f"{m.panel.where} ({m.panel.sampler}) {j.evidence}" for m, j in zip(timed, cpu)),
                        (evaluations, *cpu))
        reason = (f"target evaluations: {evaluations.verdict} ({sum(v != 0 for v in extra.values())} of {len(extra)} "
                  f"runs made extra ones); CPU seconds: {weakest_judgement(cpu).verdict} (the store's bookkeeping "
                  f"costs {_overhead_range(all_measured)} of the sampler's step across the panels)")
    rows = [f"| {label} | {int(r['plain_evaluations']):,} | {int(r['fed_evaluations']):,} | {extra[label]} |"
            for label, r in results.items()]
    return Claim(
        paper=PAPER, where="Abstract; §3.1 (after Algorithm 1)", quote=QUOTES["cost"],
        claim="OPAD and OPAD+ cost no extra target evaluation and no significant CPU time",
        axis="the cost of an iteration with the OPAD/OPAD+ store against without it: target evaluations (the cost "
             "§3.1 names) and CPU seconds",
        rule=f"target evaluations: {NO_EXTRA.rule()}; CPU seconds, per figure's sampler (\"no significant "
             f"computational overhead\" read as within the audit's {SHORTFALL:g}×): {NO_OVERHEAD.rule()}; the "
             "weakest of both axes",
        papers_number="0 extra evaluations and no CPU figure (\"no extra computational costs\"; \"no significant "
                      "computational overhead\")", authors=Evidence(NO_AUTHORS_CODE), ours=ours,
        fair=_fair_all(all_measured), reason=reason, replay=ISING_PRESET,
        details=[f"Each sampler {args.opad_steps:,} iterations × {args.opad_chains} chains, alone and feeding the "
                 "store, from the same seed.", "",
                 "| run | target evaluations alone | feeding the store | extra |", "|---|---|---|---|", *rows, "",
                 "CPU of the store's bookkeeping / the sampler's step in the KL runs, per seed (95 % interval over "
                 "seeds).", "", "| panel | store / step |", "|---|---|",
                 *(f"| {m.panel.where} ({m.panel.sampler}) | {ratio_evidence(m.overhead)} |" for m in timed), ""])


def claims(args, store) -> list[Claim]:
    all_measured = [measure(panel, args, store) for panel in PANELS]
    return [*(reduction_claim(m) for m in all_measured), outperforms_claim(all_measured),
            stable_claim(all_measured), noticeable_claim(all_measured), improves_claim(all_measured),
            orders_claim(all_measured), inequalities_claim(all_measured), cost_claim(args, store, all_measured)]


# -- words and figures ----------------------------------------------------------------------------------------
def _fair(measured: Measured) -> str:
    base = ("same chains for MCMC, OPAD and OPAD+: equal iterations, moves and target evaluations (OPAD/OPAD+ add "
            "none: the cost claim)")
    if not measured.overhead.size:
        return base
    return f"{base}; CPU of the store's bookkeeping / the sampler's step: {ratio_evidence(measured.overhead)}"


def _fair_all(all_measured: list[Measured]) -> str:
    """The fair axes of a claim over panels: the store's CPU cost on each figure's sampler (``COST_PANELS``)."""
    shown = "; ".join(f"{m.panel.where} ({m.panel.sampler}) {ratio_evidence(m.overhead)}" for m in all_measured
                      if m.panel.where in COST_PANELS and m.overhead.size)
    return ("same chains for MCMC, OPAD and OPAD+: equal iterations, moves and target evaluations; CPU of the "
            f"store's bookkeeping / the sampler's step: {shown or 'not measured'}")


def _overhead_range(all_measured: list[Measured]) -> str:
    """The smallest and largest mean (geometric, over seeds) CPU cost of the store against the step, by panel."""
    means = [float(np.exp(np.log(m.overhead).mean())) for m in all_measured if m.overhead.size]
    return f"{min(means):.2g}–{max(means):.2g}" if means else "not measured"


def _horizon_table(all_measured: list[Measured]) -> list[str]:
    """Each stored panel's reductions at its horizon, per method (95 % interval over seeds)."""
    rows = [f"| {m.panel.where}{' (stand-in)' if m.panel.stand_in else ''} | {m.steps[-1]:,} | "
            + " | ".join(str(ratio_evidence(m.at_horizon(method))) for method in METHODS) + " |"
            for m in all_measured if m.steps]
    return ["KL(MCMC) / KL(method) at each panel's horizon, ratio of chain-mean KLs per seed (95 % interval over "
            "seeds).", "", "| panel | iterations | OPAD | OPAD+ |", "|---|---|---|---|", *rows, ""]


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
