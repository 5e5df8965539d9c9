"""From a bake-off's stored runs to its table, ranking and verdict.

Per run (``RunMeasures``), over the second half of the measured trace (the
first half is the way from over-dispersed starts to equilibrium):

* ESS: rank-normalised bulk ESS of the statistic over all chains
  (``samplers.diagnostics.ess``), per 1,000 target evaluations, per CPU second
  and per step of that half;
* DISCS's ESS: each chain's ESS of its Hamming distance to the fixed reference
  state (``discs_ess``), summed over chains, per 1,000 evaluations of the half;
* split-R̂ of the statistic (``rhat``) and the acceptance rate;
* time to equilibrium: the first point on the axis where the chains' mean
  statistic comes within max(1 % of its starting distance, the noise of a
  mean of the chains at equilibrium) of the reference
  (``samplers.convergence.first_hit``); a run that never does is counted at
  its length (``verdicts.censored``). The reference is exact when the target
  can be enumerated (d ≤ ``EXACT_DIM``), else the mean of the second halves
  of the runs whose own split-R̂ is below ``RHAT_LIMIT``, used only if the
  split-R̂ of all their chains together is below it too (``Reference.reached``:
  runs of different samplers from over-dispersed starts agree; otherwise the
  column is empty and the report says why).

A run's ESS is *not usable* in a verdict when its chains have not settled
(split-R̂ above ``SETTLED_RHAT``, the dashboard comparison card's threshold:
an ESS of chains that disagree measures nothing) or when it is *not resolved*:
as large as the number of draws it came from (chains × draws kept in the
half), the draws looking independent at the trace's spacing or the estimator
at its cap on a short trace, so that the rate is only a lower bound. A ratio
with such an ESS on either side counts as no ratio (NaN), so it can never make
a winner; the table marks those rows.

Each rate (ESS per unit, time to equilibrium) is reported as its geometric
mean over seeds with a 95 % t-interval on its logarithm, as the verdicts'
ratios are (a rate lives on a log scale, and its interval never crosses 0);
split-R̂ and the acceptance rate, and a rate with a zero among its seeds, as
the mean with a 95 % t-interval (``samplers.convergence.interval``). Rows are ranked by the geometric mean of
ESS per unit of the budget's axis. The leader *wins* only when the per-seed
ratio of its ESS rate to the runner-up's (paired by replicate) clears 1 by the
claims audit's rule (``samplers.verdicts.Ratio(1)``: 95 % interval on log ρ
over ≥ 5 seeds entirely above 1: "reproduced"); otherwise it is a tie, and the
report says so.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from dashboard.model.comparison import SETTLED_RHAT
from dashboard.model.statistics import available_statistics
from samplers.convergence import RHAT_LIMIT, Reference, exact_reference, first_hit, interval
from samplers.diagnostics import discs_ess, ess, rhat
from samplers.verdicts import REPRODUCED, Ratio, censored, paired_ratios, ratio_evidence

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
    problem: str = ""  # why its ESS is not usable in a verdict ("" when it is)


def evenly(draws: np.ndarray, count: int) -> np.ndarray:
    """At most ``count`` evenly spaced rows of ``draws`` (every k-th, k the smallest that fits)."""
    return draws[::max(1, math.ceil(len(draws) / count))]


def _problem(value: float, draws: int, split_rhat: float) -> str:
    """Why an ESS is not usable in a verdict (module docstring), or ""."""
    if not split_rhat <= SETTLED_RHAT:
        return f"chains not settled (split-R̂ > {SETTLED_RHAT})"
    return "ESS not resolved (as large as its draws)" if value >= draws else ""


def run_measures(result: dict, axis: str) -> RunMeasures:
    """The measures of one stored ``BakeoffRun`` result (equilibrium is filled in by ``with_equilibrium``)."""
    spec = json.loads(result["spec"])
    statistic, hamming = result["trace_statistic"], result["trace_hamming"]
    half = len(statistic) // 2
    kept = statistic[half:].T  # (chains, draws)
    spent = {key: result[f"trace_{key}"][-1] - result[f"trace_{key}"][half] for key in ("evals", "seconds", "step")}
    value = ess(kept)
    with np.errstate(divide="ignore", invalid="ignore"):
        values = {"ESS per 1k evals": 1e3 * value / spent["evals"], "ESS per CPU s": value / spent["seconds"],
                  "ESS per step": value / spent["step"],
                  "DISCS ESS per 1k evals": 1e3 * float(discs_ess(hamming.T).sum()) / spent["evals"],
                  "split-R̂": rhat(kept), "acceptance": float(result["acceptance"])}
    axis_values = {"evaluations": result["trace_evals"], "seconds": result["trace_seconds"],
                   "steps": result["trace_step"]}[axis]
    return RunMeasures(label(spec["sampler"], spec["variant"]), spec["sampler"], spec["variant"],
                       int(spec["replicate"]), values, json.loads(result["kernel"]),
                       json.loads(result["acceptance_kernel"]), str(result["tuned_parameter"]),
                       (result["tuning_grid"], result["tuning_efficiency"], result["tuning_acceptance"]),
                       axis_values, statistic.mean(axis=1), evenly(statistic[half:], HALF_DRAWS),
                       float(result["used"]), _problem(value, kept.size, values["split-R̂"]))


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
    run.values["equilibrium"] = float(censored([hit], run.used)[0])


#: The ESS rates, which need a usable ESS in a verdict (module docstring).
ESS_RATES = ("ESS per 1k evals", "ESS per CPU s", "ESS per step")
#: The measures reported on a log scale (module docstring).
RATES = ("ESS per 1k evals", "ESS per CPU s", "ESS per step", "DISCS ESS per 1k evals", "equilibrium")


def spread(values, rate: bool) -> tuple[float, float, float]:
    """(centre, low, high) of per-seed ``values`` (module docstring): on a log scale for a ``rate``."""
    values = np.asarray(values, dtype=float)
    if rate and values.size and np.all(values > 0):
        centre = interval(np.log(values))
        return math.exp(centre.mean), math.exp(centre.low), math.exp(centre.high)
    centre = interval(values)
    return centre.mean, centre.low, centre.high


def _setting(runs: list[RunMeasures]) -> str:
    """The frozen kernel's tuned value ("step_size=0.88", median over seeds), or what the sampler froze."""
    parameter = tuned_parameter(runs[0].sampler)
    if parameter:
        return f"{parameter}={np.median([run.kernel[parameter] for run in runs]):.3g}"
    return "learned g, frozen" if "theta" in runs[0].kernel else "as given"


def table(runs: dict[str, list[RunMeasures]], axis: str) -> pd.DataFrame:
    """One row per label, ranked by ESS per unit of ``axis`` (geometric mean over seeds; zero ESS last): each
    measure's mean and 95 % interval (``<measure> low``, ``<measure> high``), the seeds and the setting."""
    rows = []
    for name, measured in runs.items():
        row = {"sampler": name, "setting": _setting(measured), "seeds": len(measured),
               "ESS not usable": sum(bool(run.problem) for run in measured)}
        for measure in MEASURES:
            centre, low, high = spread([run.values.get(measure, math.nan) for run in measured], measure in RATES)
            row |= {measure: centre, f"{measure} low": low, f"{measure} high": high}
        rates = np.array([run.values[RANKED_BY[axis]] for run in measured])
        row["_rank"] = float(np.exp(np.mean(np.log(rates)))) if np.all(rates > 0) else 0.0
        rows.append(row)
    frame = pd.DataFrame(rows)
    if frame.empty:
        return frame
    return frame.sort_values("_rank", ascending=False, kind="stable").drop(columns="_rank").set_index("sampler")


def paired_evidence(numerator: list[RunMeasures], denominator: list[RunMeasures], measure: str):
    """The evidence (``ratio_evidence``) of the per-seed ratios of ``measure``, paired by replicate."""
    by_seed = [{run.replicate: run.values[measure] if not run.problem or measure not in ESS_RATES else math.nan
                for run in runs} for runs in (numerator, denominator)]
    shared = sorted(set(by_seed[0]) & set(by_seed[1]))
    return ratio_evidence(paired_ratios([by_seed[0][s] for s in shared], [by_seed[1][s] for s in shared]))


@dataclass(frozen=True)
class Verdict:
    """The leader against the runner-up: their per-seed ratio's evidence, and the winner (None: a tie)."""

    leader: str
    runner_up: str
    evidence: object
    winner: str | None
    problems: tuple[str, ...] = ()

    def sentence(self, measure: str) -> str:
        if self.winner:
            return (f"{self.winner} wins: its {measure} is {self.evidence} times {self.runner_up}'s, the 95 % interval "
                    f"entirely above 1 ({Ratio(1).rule()}).")
        problems = f"; ESS not usable on some seeds — {', '.join(self.problems)}: raise the budget" \
            if self.problems else ""
        return (f"tie: {self.leader} leads {self.runner_up} on {measure} by {self.evidence}, which does not clear 1 "
                f"({Ratio(1).rule()}){problems}.")


def verdict(ranked: pd.DataFrame, runs: dict[str, list[RunMeasures]], axis: str) -> Verdict | None:
    """The winner by the strict rule (module docstring); None with fewer than two rows."""
    if len(ranked) < 2:
        return None
    leader, runner_up = ranked.index[:2]
    evidence = paired_evidence(runs[leader], runs[runner_up], RANKED_BY[axis])
    problems = tuple(sorted({run.problem for name in (leader, runner_up) for run in runs[name] if run.problem}))
    return Verdict(leader, runner_up, evidence, leader if Ratio(1).judge(evidence) == REPRODUCED else None,
                   problems)


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
