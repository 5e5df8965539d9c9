"""From a bake-off's stored runs to its table, ranking and verdict.

Per run (``RunMeasures``), over the second half of the measured trace (the
first half is the way from over-dispersed starts to equilibrium):

* ESS: rank-normalised bulk ESS of the statistic over all chains
  (``samplers.diagnostics.ess.ess``), per 1,000 target evaluations, per CPU second
  and per step of that half;
* DISCS's ESS: each chain's ESS of its Hamming distance to the fixed reference
  state (``discs_ess``), summed over chains, per 1,000 evaluations of the half;
* split-R̂ of the statistic (``rhat``) and the acceptance rate;
* time to equilibrium: the first point on the axis where the chains' mean
  statistic comes within max(1 % of its starting distance, the noise of a
  mean of the chains at equilibrium) of the reference
  (``samplers.diagnostics.convergence.first_hit``); a run that never does is counted at
  its length (``verdicts.censored``). The reference is exact when the target
  can be enumerated (d ≤ ``EXACT_DIM``), else the mean of the second halves
  of the runs whose own split-R̂ is below ``RHAT_LIMIT``, used only if the
  split-R̂ of all their chains together is below it too (``Reference.reached``:
  runs of different samplers from over-dispersed starts agree; otherwise the
  column is empty and the report says why).

A run's ESS is *not usable* in a verdict when its chains have not settled
(split-R̂ above ``SETTLED_RHAT``, the dashboard comparison card's threshold:
an ESS of chains that disagree measures nothing). An ESS *as large as its
draws* (chains × draws kept in the half: the draws look independent at the
trace's spacing, or the estimator is at its cap) is not resolved: the run's
true ESS is at least its draws. Such a run's rate is counted at its draws, a
lower bound: it may make its sampler win (the ratio can only be larger), but
not lose to it, so a ratio *against* a sampler whose ESS is unresolved is no
ratio (NaN). The table marks those rows.

Each rate (ESS per unit, time to equilibrium) is reported as its geometric
mean over seeds with a 95 % t-interval on its logarithm, as the verdicts'
ratios are (a rate lives on a log scale, and its interval never crosses 0);
split-R̂ and the acceptance rate, and a rate with a zero among its seeds, as
the mean with a 95 % t-interval (``samplers.diagnostics.convergence.interval``); a
measure of a single seed has no interval. Rows are ranked by the geometric
mean of ESS per unit of the budget's axis, the settled ones first (below).

Settling comes first. A kernel has *settled* at this budget when its chains
settled on every seed it ran (no seed's ESS is unusable); a sampler whose
chains did not settle on some seed has *lost* at this budget: a user who runs
it with this budget cannot count on its chains having settled, and its ESS on
that seed measures nothing. So the table ranks every settled kernel above every
unsettled one (each group by its ESS rate), and an unsettled sampler can lose
but never block a winner. Raising the budget can let it settle: the verdict is
for this budget.

The verdict compares samplers, not kernels: each sampler is represented by its
best-ranked kernel (efficiency- or acceptance-tuned), and the *leader* is the
first of them in the ranking. Paired by seed (the runs of equal replicate
number are independent: each has its own seed and starts), the leader L,
settled on every seed, stands against another sampler O as follows:

* O did not settle on some seed: on that seed L's chains settled and O's did
  not, so L is ahead there, and one such seed is enough — O *did not settle
  within the budget* and lost to L at this budget, whatever its rate on its
  other seeds (the report counts its unsettled seeds);
* O settled on every seed: the per-seed ratios of L's ESS rate to O's on the
  seeds both finished (a seed only one of the two finished is left out) decide
  by the claims audit's rule (``samplers.diagnostics.verdicts.Ratio(1)``: a pair's
  log ratio has mean log(rate_L/rate_O), and L is ahead only when the 95 %
  t-interval on log ρ over ≥ 5 seeds lies entirely above 1: "reproduced"). A
  denominator whose ESS is only a lower bound gives no ratio on its seed.

L *wins* when it settled on every seed and is ahead of every other sampler.
Otherwise there is no winner: a *tie* with the first sampler L does not clear
when their interval reaches 1; *no interval to judge* when that ratio is not
decisive (fewer than five shared seeds, or a lower-bound ESS against it); and
*nothing settled* when no sampler settled on every seed (then L is only the
best of unsettled runs, and cannot win). The report says which.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from engine.comparison import SETTLED_RHAT
from engine.statistics import available_statistics
from samplers.diagnostics.convergence import RHAT_LIMIT, Reference, exact_reference, first_hit, interval
from samplers.diagnostics.ess import discs_ess, ess, rhat
from samplers.diagnostics.verdicts import REPRODUCED, Ratio, censored, paired_ratios, ratio_evidence

from .phases import tuned_parameter
from .task import label

#: Largest dimension whose equilibrium reference is computed by enumeration.
EXACT_DIM = 16
#: The measure each axis ranks by (ESS per unit of that axis).
RANKED_BY = {"evaluations": "ESS per 1k evals", "seconds": "ESS per CPU s", "steps": "ESS per step"}
#: Draws of each run's second half kept (evenly spaced) for the pooled reference.
HALF_DRAWS = 1000
#: The table's measures, in order.
MEASURES = ("ESS per 1k evals", "ESS per CPU s", "ESS per step", "DISCS ESS per 1k evals", "split-R̂",
            "equilibrium", "acceptance")


@dataclass
class RunMeasures:
    """One stored run's measures (module docstring), its frozen kernel and its traces for the figures."""

    label: str
    sampler: str
    variant: str
    replicate: int
    values: dict
    kernel: dict
    acceptance_kernel: dict
    tuned_parameter: str
    tuning: tuple[np.ndarray, np.ndarray, np.ndarray]
    axis_values: np.ndarray
    chain_mean: np.ndarray
    halves: np.ndarray = field(repr=False)
    used: float = 0.0
    problem: str = ""  # what limits its ESS in a verdict ("" when nothing does: ``_problem``)
    tuning_used: float = 0.0  # the budget its tuning spent before it was measured
    never_settled: bool = False  # its time to equilibrium is censored at its length
    seconds: float = 0.0  # CPU seconds of its measured steps
    tuning_note: str = ""  # what its tuning could not do as planned (``phases.Tuning.note``)


def evenly(draws: np.ndarray, count: int) -> np.ndarray:
    """At most ``count`` evenly spaced rows of ``draws`` (every k-th, k the smallest that fits)."""
    return draws[::max(1, math.ceil(len(draws) / count))]


#: A run's ESS problems (module docstring): not usable at all, or only a lower bound.
UNSETTLED, UNRESOLVED = f"chains not settled (split-R̂ > {SETTLED_RHAT})", "ESS as large as its draws (a lower bound)"


def _problem(value: float, draws: int, split_rhat: float) -> str:
    """What limits an ESS in a verdict (module docstring), or ""."""
    if not split_rhat <= SETTLED_RHAT:
        return UNSETTLED
    return UNRESOLVED if value >= draws else ""


def run_measures(result: dict, axis: str) -> RunMeasures:
    """The measures of one stored ``BakeoffRun`` result (equilibrium is filled in by ``with_equilibrium``)."""
    spec = json.loads(result["spec"])
    statistic, hamming = result["trace_statistic"], result["trace_hamming"]
    half = len(statistic) // 2
    kept = statistic[half:].T  # (chains, draws)
    # the kept draws' cost: from the row before the first of them to the last
    spent = {key: result[f"trace_{key}"][-1] - result[f"trace_{key}"][half - 1]
             for key in ("evals", "seconds", "step")}
    measured = ess(kept)
    value = min(measured, kept.size)  # an unresolved ESS counts at its draws (module docstring)
    with np.errstate(divide="ignore", invalid="ignore"):
        values = {"ESS per 1k evals": 1e3 * value / spent["evals"], "ESS per CPU s": value / spent["seconds"],
                  "ESS per step": value / spent["step"],
                  "DISCS ESS per 1k evals": 1e3 * float(discs_ess(hamming[half:].T).sum()) / spent["evals"],
                  "split-R̂": rhat(kept), "acceptance": float(result["acceptance"])}
    axis_values = {"evaluations": result["trace_evals"], "seconds": result["trace_seconds"],
                   "steps": result["trace_step"]}[axis]
    return RunMeasures(label(spec["sampler"], spec["variant"]), spec["sampler"], spec["variant"],
                       int(spec["replicate"]), values, json.loads(result["kernel"]),
                       json.loads(result["acceptance_kernel"]), str(result["tuned_parameter"]),
                       (result["tuning_grid"], result["tuning_efficiency"], result["tuning_acceptance"]),
                       axis_values, statistic.mean(axis=1), evenly(statistic[half:], HALF_DRAWS),
                       float(result["used"]), _problem(measured, kept.size, values["split-R̂"]),
                       float(result["tuning_used"]), seconds=float(result["step_seconds"]),
                       tuning_note=str(result["tuning_note"]))


def pooled_reference(runs: list[RunMeasures]) -> Reference:
    """The mean of the statistic over the second halves of the runs whose own split-R̂ is below ``RHAT_LIMIT``
    (all runs if fewer than two are), with the split-R̂ of all their chains together (each run's last ``m`` kept
    draws, m the fewest)."""
    settled = [run for run in runs if run.values["split-R̂"] < RHAT_LIMIT]
    pooled = settled if len(settled) >= 2 else runs
    m = min(len(run.halves) for run in pooled)
    chains = np.concatenate([run.halves[-m:].T for run in pooled])
    value = float(np.mean([run.halves.mean() for run in pooled]))
    spread = float(np.mean([run.halves.std() for run in pooled]))
    r = rhat(chains)
    which = (f"the {len(pooled)} of {len(runs)} runs whose own split-R̂ < {RHAT_LIMIT}" if pooled is settled
             else f"all {len(runs)} runs (fewer than two had split-R̂ < {RHAT_LIMIT})")
    return Reference(value, spread / math.sqrt(max(ess(chains), 1.0)), r,
                     f"second halves of {which}, pooled: split-R̂ {r:.4g}", spread)


def exact_equilibrium(target, statistic: str) -> Reference | None:
    """The exact reference by enumeration for d ≤ ``EXACT_DIM`` (else None: ``pooled_reference`` instead)."""
    return exact_reference(target, available_statistics(target)[statistic]) if target.dim <= EXACT_DIM else None


def with_equilibrium(run: RunMeasures, reference: Reference, chains: int) -> None:
    """Fill in the run's time to equilibrium against ``reference`` (censored at its length; NaN if not reached)."""
    if not reference.reached:
        run.values["equilibrium"] = math.nan
        return
    hit = first_hit(run.axis_values - run.axis_values[0], run.chain_mean, reference.value,
                    noise=reference.noise(chains))
    run.never_settled = not np.isfinite(hit)
    run.values["equilibrium"] = float(censored([hit], run.used)[0])


#: The ESS rates, which need a usable ESS in a verdict (module docstring).
ESS_RATES = ("ESS per 1k evals", "ESS per CPU s", "ESS per step")
#: The measures reported on a log scale (module docstring).
RATES = ("ESS per 1k evals", "ESS per CPU s", "ESS per step", "DISCS ESS per 1k evals", "equilibrium")


def spread(values, rate: bool) -> tuple[float, float, float]:
    """(centre, low, high) of per-seed ``values`` (module docstring): on a log scale for a ``rate``; low and high
    NaN with fewer than two finite values (no interval)."""
    values = np.asarray(values, dtype=float)
    if rate and values.size and np.all(values > 0):
        centre = interval(np.log(values))
        centre = type(centre)(*(math.exp(v) for v in (centre.mean, centre.low, centre.high)), centre.n)
    else:
        centre = interval(values)
    if centre.n < 2:
        return centre.mean, math.nan, math.nan
    return centre.mean, centre.low, centre.high


def _setting(runs: list[RunMeasures]) -> str:
    """The frozen kernel's tuned value ("step_size=0.88", median over seeds), or what the sampler froze."""
    parameter = tuned_parameter(runs[0].sampler)
    if parameter:
        return f"{parameter}={np.median([run.kernel[parameter] for run in runs]):.3g}"
    return "learned g, frozen" if "theta" in runs[0].kernel else "as given"


def settled(runs: list[RunMeasures]) -> bool:
    """Whether a kernel's chains settled on every seed it ran (module docstring)."""
    return not any(run.problem == UNSETTLED for run in runs)


def table(runs: dict[str, list[RunMeasures]], axis: str) -> pd.DataFrame:
    """One row per label, the settled ones first (module docstring), each group ranked by ESS per unit of ``axis``
    (geometric mean over seeds; zero ESS last): each measure's mean and 95 % interval (``<measure> low``,
    ``<measure> high``), the seeds, the setting, and the seeds whose ESS is not usable (chains not settled) or
    only a lower bound (as large as its draws), and those whose time to equilibrium is censored at the run's
    length."""
    rows = []
    for name, measured in runs.items():
        row = {"sampler": name, "setting": _setting(measured), "seeds": len(measured),
               "ESS not usable": sum(run.problem == UNSETTLED for run in measured),
               "ESS a lower bound": sum(run.problem == UNRESOLVED for run in measured),
               "equilibrium censored": sum(run.never_settled for run in measured)}
        for measure in MEASURES:
            centre, low, high = spread([run.values.get(measure, math.nan) for run in measured], measure in RATES)
            row |= {measure: centre, f"{measure} low": low, f"{measure} high": high}
        rates = np.array([run.values[RANKED_BY[axis]] for run in measured])
        row["_rank"] = float(np.exp(np.mean(np.log(rates)))) if np.all(rates > 0) else 0.0
        row["_settled"] = settled(measured)
        rows.append(row)
    frame = pd.DataFrame(rows)
    if frame.empty:
        return frame
    return frame.sort_values(["_settled", "_rank"], ascending=False, kind="stable") \
        .drop(columns=["_settled", "_rank"]).set_index("sampler")


def paired_evidence(numerator: list[RunMeasures], denominator: list[RunMeasures], measure: str):
    """The evidence (``ratio_evidence``) of the per-seed ratios of ``measure``, paired by replicate (module
    docstring): an unsettled run's ESS rate gives no ratio, nor does an unresolved one in the denominator (its rate
    is only a lower bound)."""
    def usable(run: RunMeasures, side: int) -> float:
        if measure in ESS_RATES and (run.problem == UNSETTLED or (run.problem == UNRESOLVED and side == 1)):
            return math.nan
        return run.values[measure]

    by_seed = [{run.replicate: usable(run, side) for run in runs} for side, runs in enumerate((numerator, denominator))]
    shared = sorted(set(by_seed[0]) & set(by_seed[1]))
    return ratio_evidence(paired_ratios([by_seed[0][s] for s in shared], [by_seed[1][s] for s in shared]))


#: How a verdict ends (``Verdict.outcome``, module docstring).
OUTCOMES = ("wins", "tie", "no interval", "nothing settled")
WINS, TIE, NO_INTERVAL, NOTHING_SETTLED = OUTCOMES


@dataclass(frozen=True)
class Verdict:
    """The leading sampler against the closest other one, their per-seed ratio's evidence, and the winner (None:
    no winner). The closest is the first settled sampler the leader does not clear, else the settled one whose
    ratio's interval reaches lowest, else (every other sampler lost by not settling) the best-ranked of those.
    ``unsettled``: (sampler, seeds its chains did not settle on, its seeds) of every other sampler that did not
    settle within the budget, in rank order; ``leader_settled``: whether the leader settled on every seed."""

    leader: str
    runner_up: str
    evidence: object
    winner: str | None
    problems: tuple[str, ...] = ()
    unsettled: tuple[tuple[str, int, int], ...] = ()
    leader_settled: bool = True

    @property
    def outcome(self) -> str:
        """One of ``OUTCOMES`` (module docstring)."""
        if self.winner:
            return WINS
        if not self.leader_settled:
            return NOTHING_SETTLED
        return TIE if self.evidence.decisive else NO_INTERVAL

    @property
    def runner_up_lost(self) -> bool:
        """Whether the closest other sampler is one that did not settle within the budget."""
        return any(name == self.runner_up for name, _, _ in self.unsettled)

    def lost(self) -> str:
        """The samplers that did not settle within the budget, with their seeds ("" when none)."""
        return ", ".join(f"{name} ({count} of {seeds} seeds)" for name, count, seeds in self.unsettled)

    def sentence(self, measure: str) -> str:
        lost = (f"; did not settle within the budget (split-R̂ > {SETTLED_RHAT}), so lost at this budget: "
                f"{self.lost()}") if self.unsettled else ""
        outcome = self.outcome
        if outcome == WINS and self.runner_up_lost:
            return (f"{self.winner} wins: its chains settled on every seed, and every other sampler's did not "
                    f"within the budget{lost}.")
        if outcome == WINS:
            return (f"{self.winner} wins: its {measure} is {self.evidence} times {self.runner_up}'s, the closest other "
                    f"sampler, the 95 % interval entirely above 1 ({Ratio(1).rule()}){lost}.")
        if outcome == NOTHING_SETTLED:
            return (f"no winner: no sampler's chains settled on every seed within the budget (split-R̂ > "
                    f"{SETTLED_RHAT} on some seed of each); {self.leader} leads the unsettled runs, but an ESS of "
                    f"chains that have not settled measures nothing: raise the budget.")
        problems = ("; ESS as large as its draws on some seeds, so that the ratios against them are only bounds"
                    if UNRESOLVED in self.problems else "")
        if outcome == NO_INTERVAL:  # the lead is not shown, nor is a tie
            return (f"no winner: {self.leader} leads, but its {measure} against {self.runner_up}'s gives no interval "
                    f"to judge ({self.evidence}){problems}{lost}.")
        return (f"tie: {self.leader} / {self.runner_up} of {measure}, paired by seed, is {self.evidence}, which does "
                f"not clear 1 ({Ratio(1).rule()}){problems}{lost}.")

    @property
    def headline(self) -> str:
        """The outcome in a few words: who wins, a tie, or no winner (no decisive interval, or nothing settled)."""
        return {WINS: f"{self.winner} wins",
                TIE: f"Tie: {self.leader} is not shown ahead of {self.runner_up}",
                NO_INTERVAL: f"No winner: {self.leader} leads, but is not shown ahead of {self.runner_up}",
                NOTHING_SETTLED: "No winner: no sampler's chains settled within the budget"}[self.outcome]


def best_of_each_sampler(ranked: pd.DataFrame, runs: dict[str, list[RunMeasures]]) -> list[str]:
    """The best-ranked label of each sampler (its efficiency- or acceptance-tuned kernel), in rank order."""
    seen, best = set(), []
    for name in ranked.index:
        sampler = runs[name][0].sampler
        if sampler not in seen:
            seen.add(sampler)
            best.append(name)
    return best


def verdict(ranked: pd.DataFrame, runs: dict[str, list[RunMeasures]], axis: str) -> Verdict | None:
    """The verdict by the rule of the module docstring, on ``ranked`` (``table``'s order: settled kernels first);
    None with fewer than two samplers."""
    contenders = best_of_each_sampler(ranked, runs)
    if len(contenders) < 2:
        return None
    leader, others = contenders[0], contenders[1:]
    lost = tuple((other, sum(run.problem == UNSETTLED for run in runs[other]), len(runs[other]))
                 for other in others if not settled(runs[other]))
    ruled = [other for other in others if settled(runs[other])]
    evidence = {other: paired_evidence(runs[leader], runs[other], RANKED_BY[axis]) for other in others}
    uncleared = [other for other in ruled if Ratio(1).judge(evidence[other]) != REPRODUCED]
    if uncleared:
        closest = uncleared[0]
    elif ruled:
        closest = min(ruled, key=lambda other: evidence[other].low)
    else:
        closest = others[0]
    problems = tuple(sorted({run.problem for name in (leader, closest) for run in runs[name] if run.problem}))
    wins = settled(runs[leader]) and not uncleared
    return Verdict(leader, closest, evidence[closest], leader if wins else None, problems, lost,
                   settled(runs[leader]))


def tuning_gain(runs: dict[str, list[RunMeasures]], axis: str) -> dict[str, tuple[str, str, object]]:
    """Sampler → (acceptance-tuned value, efficiency-tuned value, evidence of the per-seed ratio of ESS per unit
    of ``axis`` efficiency-tuned / acceptance-tuned), for the samplers measured both ways."""
    measure, out = RANKED_BY[axis], {}
    for name in {run.sampler for measured in runs.values() for run in measured}:
        pair = [runs.get(label(name, variant), []) for variant in ("efficiency", "acceptance")]
        if not all(pair):
            continue
        parameter = tuned_parameter(name)
        chosen = [{run.replicate: run.kernel[parameter] for run in measured} for measured in pair]
        changed = sum(chosen[0][r] != chosen[1].get(r) for r in chosen[0])
        out[name] = (_setting(pair[1]), f"{_setting(pair[0])} (changed on {changed} of {len(chosen[0])} seeds)",
                     paired_evidence(*pair, measure))
    return dict(sorted(out.items()))
