"""The LSB §5.1 claims' logic (benchmarks.claims.lsb) on synthetic runs: censoring, baselines, the authors' column
capping the verdict, "always", "weakest over cases", the conversion of the authors' iterations, and the record's
quotes and presets."""

import argparse
import math

import numpy as np
import pytest

from benchmarks.claims import lsb as c
from benchmarks.claims.claim import NO_AUTHORS_CODE
from benchmarks.papers import lsb_reference
from samplers.diagnostics.verdicts import INCONCLUSIVE, NOT_REPRODUCED, REPRODUCED, Ratio, judgement_from_dict
from sweeps import ResultStore

CHAINS = 3


def _args(**changes):
    settings = dict(seeds=5, authors_seeds=5, iterations=100, sampling_iterations=100, lsb_authors_cases="1,2,3,4",
                    chains=CHAINS, reference_steps=2000)
    return argparse.Namespace(**(settings | changes))


def _decay_run(tau: float, learning: float = 5, iterations: int = 200, burn_in: int = 100, seconds: bool = True):
    """A run whose chain mean decays to 0 as exp(−t/τ) from 1; ``learning`` evaluations per chain per iteration
    for the first ``burn_in`` iterations, 5 after."""
    t = np.arange(iterations + 1, dtype=float)
    values = np.exp(-t / tau)[:, None] * np.ones(CHAINS)
    evaluations = np.concatenate([[0.0], np.cumsum(np.where(t[1:] <= burn_in, learning, 5.0))]) * CHAINS
    axes = {"iterations": t, "moves": t, "evaluations": evaluations} | ({"seconds": t * 1e-3} if seconds else {})
    return c.Run(values, axes)


def _seeds(lsb2_tau: float, fixed_tau=40.0, n=5, seconds=True, mu=0.0):
    """``n`` seeds: every fixed function decays with ``fixed_tau`` (√t a little slower: it is never the best but
    in case 3), LSB1 like √t, LSB2 with ``lsb2_tau`` at 20 evaluations per learning iteration."""
    seeds = []
    for seed in range(n):
        jitter = 1 + 0.05 * seed
        runs = {label: _decay_run(fixed_tau * jitter * (1.2 if label in ("√t", "LSB1") else 1.0),
                                  10 if label == "LSB1" else 5, seconds=seconds) for label in c.LABELS[:5]}
        runs["LSB2"] = _decay_run(lsb2_tau * jitter, 20, seconds=seconds)
        seeds.append(c.Seed(runs, mu, 0.0, np.array([0.1, 0.4, 0.1, 0.4]), 1.001, 0.8))
    return seeds


def test_a_seed_never_reaching_the_band_is_censored_at_its_length_and_one_without_reference_is_kept():
    never = c.Run(np.full((11, CHAINS), 1.0), {"evaluations": np.arange(11.0) * 50})
    fast = _decay_run(1.0, iterations=10, burn_in=10)  # within 1 % after 5 iterations, 75 evaluations
    seeds = [c.Seed({"√t": never, "LSB2": fast}, 0.0), c.Seed({"√t": never, "LSB2": fast}, math.nan)]
    areas, hits, reached = c.convergence(seeds, "evaluations", ("√t", "LSB2"))
    assert hits["√t"][0] == 500.0 and not reached["√t"][0]  # censored at the run's length, not NaN
    assert math.isnan(c.hit_ratios(hits, reached, "√t", "√t")[0])  # neither reached: no ratio, not 500 / 500
    assert hits["LSB2"][0] == 75.0
    assert math.isnan(areas["√t"][1]) and math.isnan(hits["LSB2"][1])  # no reference: NaN, not dropped
    ratios = c.speedups([s.runs for s in seeds], c.run_axis, lambda runs: 0.0, axes=("evaluations",))
    assert ratios["evaluations"][1][0] > 1 and len(ratios["evaluations"][0]) == 2


def test_case_3_judges_twice_as_fast_on_evaluations_against_sqrt():
    case = c.CASE[3]
    found = c.figure_2_speedup(_seeds(lsb2_tau=5.0), case, _args(), tuple(c.AXES))
    assert found.baseline == "√t"
    assert Ratio(2.0).judge(found.area["evaluations"]) == REPRODUCED
    assert found.area["iterations"].centre > found.area["evaluations"].centre  # 4 evaluations / iteration learning


def test_other_cases_compare_lsb2_with_the_best_fixed_function():
    found = c.figure_2_speedup(_seeds(lsb2_tau=5.0), c.CASE[1], _args(), ("evaluations",))
    assert found.baseline != "√t" and found.baseline in c.FIXED  # √t decays slower here: not the best
    assert found.area["evaluations"].centre == pytest.approx(found.each[found.baseline].centre)
    assert found.area["evaluations"].centre < found.each["√t"].centre


def test_the_authors_code_contradicting_caps_the_row(monkeypatch):
    monkeypatch.setattr(lsb_reference, "available", lambda: True)
    ours = c.CaseRuns(_seeds(lsb2_tau=5.0))
    theirs = c.CaseRuns(_seeds(lsb2_tau=40.0, seconds=False))  # LSB2 4× slower per evaluation
    claim = c.figure_2(_args(), c.CASE[3], ours, theirs)
    assert claim.ours.verdict == REPRODUCED
    assert claim.authors.verdict == NOT_REPRODUCED
    assert claim.verdict == NOT_REPRODUCED
    assert "target evaluations" in claim.axis and "iterations" in claim.plotted
    assert "on their iterations" in claim.authors.text


def test_a_failed_run_is_not_measured_and_inconclusive(tmp_path, monkeypatch):
    monkeypatch.setattr(lsb_reference, "REFERENCE_DIR", tmp_path / "absent")
    args = _args()
    ours = c.our_case(ResultStore(tmp_path / "store"), args, c.CASE[3])
    assert not ours.seeds and "failed" in ours.missing
    claim = c.figure_2(args, c.CASE[3], ours, c.authors_case(None, args, c.CASE[3], ours))
    assert claim.ours.text.startswith("not measured") and claim.ours.verdict == INCONCLUSIVE
    assert claim.authors.text == NO_AUTHORS_CODE and claim.authors.verdict is None
    assert claim.verdict == INCONCLUSIVE


def test_the_authors_iterations_become_evaluations_at_our_counts():
    per_iteration = c.evaluations_per_iteration(_seeds(5.0), 100)
    assert per_iteration["LSB2"] == pytest.approx((20.0, 5.0)) and per_iteration["√t"] == pytest.approx((5.0, 5.0))
    sums = np.zeros((201, CHAINS))
    run = c.authors_run(sums, "LSB2", per_iteration["LSB2"], 100)
    assert run.axes["evaluations"][100] == 2000 and run.axes["evaluations"][200] == 2500
    assert run.axes["moves"][100] == 200 and run.axes["moves"][200] == 300


def test_the_authors_plateau_is_their_fixed_functions_sampling_phase():
    runs = {label: c.Run(np.full((21, CHAINS), 9.0 if label in c.FIXED else -9.0), {}) for label in c.LABELS}
    for k, label in enumerate(c.FIXED):
        runs[label].values[11:] = 0.1 * k  # the sampling phase (burn-in 10): plateaus 0, 0.1, 0.2, 0.3
    mu, noise, rhat = c.authors_reference(runs, 10)
    assert mu == pytest.approx(0.15) and noise == pytest.approx(2 * np.std([0.0, 0.1, 0.2, 0.3]))
    assert rhat > 1.01  # the four disagree: reported, not hidden


def _mixing_seeds(rng, slow: set[str], n=5, iterations=500):
    """Seeds whose ``slow`` labels are AR(1) with ρ = 0.95 and the others independent draws."""
    seeds = []
    for _ in range(n):
        runs = {}
        for label in c.LABELS:
            noise = rng.normal(size=(iterations + 1, CHAINS))
            if label in slow:
                for t in range(1, iterations + 1):
                    noise[t] = 0.95 * noise[t - 1] + np.sqrt(1 - 0.95**2) * noise[t]
            runs[label] = c.Run(noise, {"evaluations": np.arange(iterations + 1) * 5.0 * CHAINS,
                                        "seconds": np.arange(iterations + 1) * 1e-3})
        seeds.append(c.Seed(runs, 0.0, 0.0, np.array([0.4, 0.1, 0.4, 0.1])))
    return seeds


def test_max_is_judged_per_case_and_the_weakest_case_decides(monkeypatch):
    monkeypatch.setattr(lsb_reference, "available", lambda: False)
    rng = np.random.default_rng(0)
    args = _args(sampling_iterations=400)
    slow_max = {case.number: (c.CaseRuns(_mixing_seeds(rng, {"max{1,t}"})), None) for case in c.CASES}
    assert c.max_claim(args, slow_max).ours.verdict == REPRODUCED
    slow_max[4] = (c.CaseRuns(_mixing_seeds(rng, set())), None)  # case 4: max{1,t} mixes like the others
    claim = c.max_claim(args, slow_max)
    assert claim.ours.verdict in (INCONCLUSIVE, NOT_REPRODUCED) and claim.verdict == claim.ours.verdict
    assert claim.authors.text == NO_AUTHORS_CODE


def test_table_2_judges_lsb2_against_every_previous_function_and_the_papers_own_table(monkeypatch):
    monkeypatch.setattr(lsb_reference, "available", lambda: False)
    rng = np.random.default_rng(1)
    args = _args(sampling_iterations=400)
    slow = set(c.PREVIOUS)  # every previous function AR(1), LSB2 independent draws
    case_4 = c.table_2(args, c.CASE[4], c.CaseRuns(_mixing_seeds(rng, slow)), None)
    assert case_4.rule.startswith(Ratio(1.0).rule()) and "each previous function" in case_4.rule
    assert [j.label for j in case_4.ours.judged] == [f"case 4: LSB2 / {label}" for label in c.PREVIOUS]
    assert case_4.ours.verdict == REPRODUCED and case_4.papers.verdict == REPRODUCED  # the table: 20.11 / 7.08
    assert case_4.verdict == REPRODUCED
    one_fast = c.table_2(args, c.CASE[4], c.CaseRuns(_mixing_seeds(rng, slow - {"LSB1"})), None)
    assert one_fast.ours.verdict == INCONCLUSIVE and "LSB1" in one_fast.ours.text  # the weakest comparator decides
    case_2 = c.table_2(args, c.CASE[2], c.CaseRuns(_mixing_seeds(rng, slow)), None)
    assert case_2.ours.verdict == REPRODUCED
    assert case_2.papers.verdict == NOT_REPRODUCED and case_2.verdict == NOT_REPRODUCED  # its table: 2.30 vs 3.30
    assert "0.697 [0.656, 0.741]" in case_2.papers.text
    stored = case_2.row()["judged"]["papers_number"]["judged"][0]
    assert judgement_from_dict(stored).verdict == NOT_REPRODUCED and stored["evidence"]["a"] == [2.30, 0.29]


def test_the_caption_is_significance_against_each_other_function_in_every_case(monkeypatch):
    monkeypatch.setattr(lsb_reference, "available", lambda: False)
    rng = np.random.default_rng(2)
    args = _args(sampling_iterations=400)
    cases = {case.number: (c.CaseRuns(_mixing_seeds(rng, {"max{1,t}"})), None) for case in c.CASES}
    claim = c.max_claim(args, cases)
    assert len(claim.ours.judged) == 4 * 5 and claim.ours.verdict == REPRODUCED
    assert "significance against each other function" in claim.rule
    assert claim.papers.verdict == INCONCLUSIVE  # case 4's table: min{1,t} 1.74 ± 0.26 against max{1,t} 1.74 ± 0.51
    assert claim.verdict == INCONCLUSIVE


def test_lsb1_must_hold_during_most_of_its_burn_in_in_every_case_of_every_seed(monkeypatch):
    monkeypatch.setattr(lsb_reference, "available", lambda: False)
    cases = {case.number: (c.CaseRuns(_seeds(5.0)), None) for case in c.CASES}  # 0.8 of the burn-in unbounded
    assert c.lsb1_claim(_args(), cases).ours.verdict == REPRODUCED
    seeds = _seeds(5.0)
    seeds[2] = c.Seed(seeds[2].runs, 0.0, 0.0, np.array([0.1, 0.4, 0.1, 0.4]), 1.0, 0.3)  # bounded most of it
    cases[2] = (c.CaseRuns(seeds), None)
    assert c.lsb1_holds([runs for runs, _ in cases.values()]) == [True, True, False, True, True]
    assert c.lsb1_claim(_args(), cases).verdict == NOT_REPRODUCED
    few = {case.number: (c.CaseRuns(_seeds(5.0, n=2)), None) for case in c.CASES}
    assert c.lsb1_claim(_args(), few).ours.verdict == INCONCLUSIVE


def test_the_share_of_burn_in_is_read_from_the_path_of_lsb1s_weights():
    path = np.array([[0.1, 0.5, 0.1, 0.3], [0.4, 0.1, 0.4, 0.1], [0.2, 0.2, 0.2, 0.4], [0.3, 0.3, 0.3, 0.1]])
    assert c.unbounded_share(path) == pytest.approx(0.5)  # rows 0 and 2 exceed ½ on √t + max{1,t}
    logits = np.log(path)
    assert np.allclose(c._softmax(logits), path)


def test_lsb1_in_case_4_must_leave_max_and_mix_better_than_it(monkeypatch):
    monkeypatch.setattr(lsb_reference, "available", lambda: False)
    rng = np.random.default_rng(3)
    args = _args(sampling_iterations=400)
    cases = {4: (c.CaseRuns(_mixing_seeds(rng, {"max{1,t}"})), None)}  # final weights 0.4, 0.1, 0.4, 0.1
    claim = c.lsb1_case_4_claim(args, cases)
    assert claim.ours.verdict == REPRODUCED and claim.papers.verdict == REPRODUCED  # 2.52 vs 1.74 over 30 chains
    stuck = [c.Seed(seed.runs, 0.0, 0.0, np.array([0.1, 0.1, 0.1, 0.7])) for seed in cases[4][0].seeds]
    assert c.lsb1_case_4_claim(args, {4: (c.CaseRuns(stuck), None)}).ours.verdict == NOT_REPRODUCED


def _agreement_run(approach: float, iterations: int, evaluations_per_iteration: float) -> c.Run:
    """A run whose agreement with the truth rises from ½ towards 1 as 1 − ½ exp(−t / approach)."""
    t = np.arange(iterations + 1, dtype=float)
    values = (1 - 0.5 * np.exp(-t / approach))[:, None] * np.ones(CHAINS)
    return c.Run(values, {"iterations": t, "evaluations": t * evaluations_per_iteration * CHAINS})


def test_figure_3_compares_the_disagreement_with_the_truth_after_its_iterations(monkeypatch):
    args = _args(iterations=300)
    faster = [{**{label: _agreement_run(200.0 * (1 + 0.01 * s), 1200, 5.0) for label in c.FIXED},
               "LSB2": _agreement_run(50.0 * (1 + 0.01 * s), 1200, 20.0)} for s in range(5)]
    monkeypatch.setattr(c, "figure_3_seeds", lambda store, args, case: faster)
    claim = c.figure_3_claim(args, store=None)
    assert len(claim.ours.judged) == 8 and claim.ours.verdict == REPRODUCED
    ratio = c.figure_3_ratios(faster, "√t", "iterations", 300)[0]
    assert ratio == pytest.approx(np.exp(-300 / 200) / np.exp(-300 / 50))
    assert claim.authors.verdict is None and "agreement" in claim.authors.text
    monkeypatch.setattr(c, "figure_3_seeds", lambda store, args, case: "2 of Fig. 3's runs failed")
    assert c.figure_3_claim(args, store=None).ours.verdict == INCONCLUSIVE


def test_audit_runs_follow_the_authors_schedule(monkeypatch, tmp_path):
    monkeypatch.setattr(lsb_reference, "REFERENCE_DIR", tmp_path / "absent")
    args = _args(seeds=2, iterations=2000, sampling_iterations=50)
    runs = c.audit_runs(args)
    assert len(runs) == len({run.run_id for run in runs}) == 4 * 2 * 7 + 2 * 2 * len(c.FIGURE_3_LABELS)
    lsb1 = c.case_runs(args, c.CASE[1], 0)["LSB1"]
    assert lsb1.traced == ("statistic", "balancing") and c.case_runs(args, c.CASE[1], 0)["√t"].traced == ("statistic",)
    assert c.figure_3_runs(args, c.CASE[3], 0)["LSB2"].config.statistic == "agreement"
    lsb2 = c.case_runs(args, c.CASE[4], 0)["LSB2"].config.sampler_params
    assert lsb2["burn_in"] == 800 and lsb2["learning_moves"] == 2 and lsb2["parametrization"] == "lsb2"
    assert c.case_runs(args, c.CASE[3], 1)["√t"].config.target_params["seed"] == 1  # a field per seed
    assert (c.eval_start(c.CASE[4], args), c.lags(c.CASE[4], args), c.lags(c.CASE[1], args)) == (400, 50, 50)
    monkeypatch.setattr(lsb_reference, "available", lambda: True)
    authors = [run for run in c.audit_runs(_args(seeds=1, authors_seeds=2, lsb_authors_cases="3"))
               if isinstance(run, c.AuthorsRun)]
    assert [(run.case, run.seed) for run in authors] == [(3, 0), (3, 1)]



@pytest.mark.skipif(not lsb_reference.available(), reason="the authors' code is not in ../shared/reference")
def test_the_authors_runner_records_every_sampler_and_lsb1s_weights():
    result = lsb_reference.runner(4, 2, 1.0, 1.0, 3.0, burn_in=2, iterations=2, seed=0)
    assert {f"sums_{func}" for func in lsb_reference.RUNNER_FUNCS} <= set(result)
    assert all(result[f"sums_{func}"].shape == (5, 2) for func in lsb_reference.RUNNER_FUNCS)
    assert np.all(np.abs(result["sums_sqrt"]) <= 16)
    assert result["lsb1_weights"].shape == (2, 4) and np.allclose(result["lsb1_weights"].sum(axis=1), 1)
