"""The claim logic of ``benchmarks.claims.lsb_models`` on synthetic runs (and two tiny real ones)."""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pytest

from benchmarks.claims import lsb_models as models
from benchmarks.claims.claim import judge_again
from benchmarks.claims.lsb_models import RbmEvidence, Trace
from samplers.diagnostics.convergence import Reference
from samplers.diagnostics.verdicts import (INCONCLUSIVE, NOT_REPRODUCED, REPRODUCED, WEAKER, Judgement, Much, Ratio,
                                           ratio_evidence)
from sweeps.runner import perform_task

from .stored import DictStore

MU = -10.0
EXACT = Reference(MU, 0.0, float("nan"), "exact (test)", 0.0, exact=True)
ARGS = argparse.Namespace(models_iterations=200, seeds=5, authors_seeds=5, reference_steps=2000)
PAPER = Path(__file__).resolve().parents[2] / "shared/papers/lsb-local-self-balancing.txt"


def trace(rate: float, evaluations_per_step: float = 1.0, seconds_per_step: float = 1e-3, steps: int = 400,
          burn_in: int = 200, seed: int = 0, mu: float = MU) -> Trace:
    """4 chains whose mean approaches ``mu`` from 0 as exp(−k / rate), with a little independent noise."""
    rng = np.random.default_rng(seed)
    k = np.arange(steps + 1)
    values = (mu * (1 - np.exp(-k / rate)))[:, None] + 0.001 * rng.standard_normal((steps + 1, 4))
    values[0] = 0.0
    return Trace(values, evaluations_per_step * k.astype(float), seconds_per_step * k, burn_in)


def seeds(**rates) -> list[dict[str, Trace]]:
    """Five seeds of the labelled runs, each (rate, evaluations per step[, CPU seconds per step])."""
    return [{label: trace(*spec, seed=seed) for label, spec in rates.items()} for seed in range(5)]


def counted(flsb2: float, **others: float) -> list[dict[str, Trace]]:
    """Five seeds of Appendix F's counts: FLSB2 and every block sampler at its evaluations per step (``others``
    names the ones that differ from Table 4's count)."""
    per_step = {**{label: float(count) for label, count in models.TABLE_4.items()}, "FLSB2": flsb2, **others}
    return seeds(**{label: (10.0, per_step[label]) for label in ("FLSB2", *models.BLOCK_SAMPLERS)})


def test_a_run_that_never_converges_is_counted_at_its_length_not_dropped():
    stuck = Trace(np.zeros((401, 4)), np.arange(401.0) * 2, np.arange(401.0), 200)  # never moves from 0
    assert stuck.to_converge(EXACT) == 800.0  # its last evaluation
    fast = trace(rate=10.0)
    assert fast.to_converge(EXACT) < 100
    evidence = models.ratios([{"a": stuck, "b": fast}] * 5, models.converge(EXACT), "a", "b")
    assert evidence.decisive and evidence.n == 5 and evidence.centre > 8


def test_seeds_with_a_failed_run_are_missing_and_make_the_evidence_not_decisive():
    replicates = models.rbm_runs(ARGS)
    result = {"trace_statistic": np.zeros((401, 16)), "trace_evals": np.arange(401.0) * 16,
              "trace_seconds": np.arange(401.0)}
    stored = {task.run_id: result for runs in replicates for task in runs.values()}
    stored.pop(replicates[3]["FLSB2"].run_id)
    found = models.stored_traces(DictStore(stored), replicates, 200)
    assert len(found) == 4
    judgement = models.compare(found, models.cost_per_iteration("evaluations"), "Gibbs-2", "FLSB2", "evals", Much())
    assert not judgement.evidence.decisive and judgement.verdict == INCONCLUSIVE


def test_column_is_the_weakest_judgement_and_says_when_nothing_was_measured():
    good = Judgement("a / b", Ratio(2), ratio_evidence([3.0, 3.1, 2.9, 3.0, 3.05]))
    bad = Judgement("c / d", Ratio(1), ratio_evidence([0.5, 0.52, 0.49, 0.5, 0.51]))
    assert (good.verdict, bad.verdict) == (REPRODUCED, NOT_REPRODUCED)
    both = models.column([good, bad], "x")
    assert both.verdict == NOT_REPRODUCED and both.judged == (good, bad)
    assert "c / d" in models.reason([good, bad])
    empty = models.column([], "the runs failed")
    assert empty.verdict == INCONCLUSIVE and empty.text.startswith("not measured") and not empty.judged
    many = models.column([good] * 4 + [bad], "x")
    assert many.text.startswith("c / d") and "weakest of 5" in many.text and len(many.judged) == 5


def test_figure_4_judges_evaluations_and_a_stand_in_caps_the_row_but_never_lifts_it():
    # GWG: one evaluation per step, slow; FLSB2 two per step while learning, but eight times faster per step.
    ours = seeds(GWG=(80.0, 1.0), FLSB2=(10.0, 2.0))
    claim = models.figure_4_flsb2(ARGS, RbmEvidence(ours, [], EXACT))
    assert claim.ours.verdict == REPRODUCED  # ≈ 4× fewer evaluations: lo ≥ 1.5 / 1.25
    assert claim.verdict == INCONCLUSIVE and claim.stand_in  # capped: a stand-in not argued equivalent
    assert "target evaluations to converge" in claim.ours.text
    slower = models.figure_4_flsb2(ARGS, RbmEvidence(seeds(GWG=(20.0, 1.0), FLSB2=(15.0, 2.0)), [], EXACT))
    assert slower.ours.verdict == NOT_REPRODUCED  # faster per step, slower per evaluation
    assert slower.verdict == NOT_REPRODUCED  # the weakest column wins, the stand-in does not lift it
    assert "ours: not reproduced on a stand-in" in slower.verdict_text


def test_appendix_f_judges_every_block_sampler_and_the_authors_contradicting_code_decides():
    theirs = counted(4.0, **{"HB-10-1": 10.0})  # their FLSB2 scores 4 rows per step, as their Gibbs-2
    claim = models.appendix_f(ARGS, RbmEvidence([], [], EXACT, counted(1.0), theirs))
    assert claim.equivalent and claim.ours.verdict == REPRODUCED
    assert {judgement.label.split(" /")[0] for judgement in claim.ours.judged} == set(models.BLOCK_SAMPLERS)
    if (models.AUTHORS_RBM_DIR / "self_sampler.py").is_file():
        assert claim.authors.verdict == NOT_REPRODUCED and "Gibbs-2 / FLSB2" in claim.authors.text
        assert claim.verdict == NOT_REPRODUCED
    one_close = models.appendix_f(ARGS, RbmEvidence([], [], EXACT, counted(1.0, **{"Gibbs-4": 1.1}), []))
    assert one_close.ours.verdict == WEAKER  # Gibbs-4 / FLSB2 = 1.1: above 1, below "much"'s reach 1.5 / 1.25
    assert "Gibbs-4 / FLSB2" in one_close.ours.text


def test_the_papers_table_4_is_judged_by_the_same_rule_and_can_contradict_the_row(monkeypatch):
    claim = models.appendix_f(ARGS, RbmEvidence([], [], EXACT, counted(1.0), []))
    assert claim.papers.verdict == REPRODUCED  # Table 4: 4× to 1024× fewer
    assert [j.evidence.centre for j in claim.papers.judged] == [models.TABLE_4[label] for label in
                                                                models.BLOCK_SAMPLERS]
    monkeypatch.setitem(models.TABLE_4, "FLSB2", 4)  # were FLSB2 to pay 4 per step, as Gibbs-2
    contradicted = models.appendix_f(ARGS, RbmEvidence([], [], EXACT, counted(1.0), []))
    assert contradicted.papers.verdict == NOT_REPRODUCED and contradicted.verdict == NOT_REPRODUCED
    assert contradicted.ours.verdict == REPRODUCED and "paper's numbers: not reproduced" in contradicted.verdict_text


def sticky(seed: int, phi: float = 0.995) -> Trace:
    """A converged trace whose chains move as AR(1) with coefficient ``phi``: a small ESS."""
    rng = np.random.default_rng(seed)
    values = np.zeros((401, 4))
    for k in range(1, 401):
        values[k] = phi * values[k - 1] + rng.standard_normal(4)
    return Trace(values + MU, np.arange(401.0), 1e-3 * np.arange(401.0), 200)


def test_similar_ess_needs_every_ratio_inside_the_factor():
    def network(lsb2):
        return [{label: (lsb2(s) if label == "LSB2" else trace(20.0, seed=10 * s + i))
                 for i, label in enumerate(models.MARKOV)} for s in range(5)]

    alike = models.table_3(ARGS, {"net": (EXACT, network(lambda s: trace(20.0, seed=100 + s)))})
    assert alike.ours.verdict == REPRODUCED and alike.verdict == INCONCLUSIVE  # the stand-in networks
    worse = models.table_3(ARGS, {"net": (EXACT, network(sticky))})
    assert worse.ours.verdict == NOT_REPRODUCED and "LSB2 / " in worse.ours.text


def test_table_3_judges_the_papers_means_and_sds_over_its_five_chains(monkeypatch):
    found = {"net": (EXACT, [{label: trace(20.0, seed=10 * s + i) for i, label in enumerate(models.MARKOV)}
                             for s in range(5)])}
    claim = models.table_3(ARGS, found)
    assert claim.papers.verdict == REPRODUCED and len(claim.papers.judged) == 16
    lsb2_sqrt = next(j.evidence for j in claim.papers.judged if j.label == "LSB2 / √t of ESS (MN 1, Table 3)")
    assert lsb2_sqrt.n == models.MARKOV_CHAINS and lsb2_sqrt.centre == pytest.approx(3.22 / 3.41)
    assert 0.5 < lsb2_sqrt.low < lsb2_sqrt.centre < lsb2_sqrt.high < 2
    monkeypatch.setitem(models.TABLE_3, "MN 1", {**models.TABLE_3["MN 1"], "LSB2": (10.0, 0.5)})
    unlike = models.table_3(ARGS, found)  # an LSB2 three times the fixed functions' ESS is not "similar"
    assert unlike.papers.verdict == NOT_REPRODUCED and unlike.verdict == NOT_REPRODUCED


def test_the_abstract_judges_the_second_parametrization_against_every_recent_local_sampler():
    rbm = RbmEvidence(seeds(GWG=(80.0, 1.0), FLSB1=(80.0, 2.0), FLSB2=(10.0, 2.0)), [], EXACT)

    def networks(lsb2_rate, fixed_rates):
        rates = {**dict(zip(models.FIXED, fixed_rates)), "LSB1": 200.0, "LSB2": lsb2_rate}  # LSB1 is not judged
        return {"net": (EXACT, seeds(**{label: (rates[label], 1.0) for label in models.MARKOV}))}

    claim = models.abstract(ARGS, rbm, networks(5.0, (40.0, 40.0, 40.0, 40.0)))
    assert claim.ours.verdict == REPRODUCED and len(claim.ours.judged) == 1 + len(models.FIXED)
    assert claim.verdict == INCONCLUSIVE  # the stand-ins cap it
    one_faster = models.abstract(ARGS, rbm, networks(5.0, (40.0, 40.0, 2.0, 40.0)))
    assert one_faster.ours.verdict == NOT_REPRODUCED and "min(1,t) / LSB2" in one_faster.reason
    assert one_faster.verdict == NOT_REPRODUCED
    gwg_faster = RbmEvidence(seeds(GWG=(10.0, 1.0), FLSB2=(40.0, 1.0)), [], EXACT)
    assert models.abstract(ARGS, gwg_faster, networks(5.0, (40.0,) * 4)).ours.verdict == NOT_REPRODUCED


def test_the_overhead_claim_wants_equal_target_evaluations_and_more_cpu_per_sampling_iteration():
    def rbm(flsb2_evaluations, flsb2_seconds):
        return RbmEvidence(seeds(GWG=(20.0, 1.0, 1e-3), FLSB1=(20.0, 1.0, 1e-3),
                                 FLSB2=(20.0, flsb2_evaluations, flsb2_seconds)), [], EXACT)

    as_said = models.overhead(ARGS, rbm(1.0, 3e-3))
    assert as_said.ours.verdict == REPRODUCED and len(as_said.ours.judged) == 4
    assert as_said.verdict == INCONCLUSIVE  # CPU seconds depend on the model: the stand-in caps the row
    more_evaluations = models.overhead(ARGS, rbm(2.0, 3e-3))  # the overhead paid in target evaluations
    assert more_evaluations.ours.verdict == NOT_REPRODUCED and more_evaluations.verdict == NOT_REPRODUCED
    no_overhead = models.overhead(ARGS, rbm(1.0, 0.5e-3))  # FLSB2 cheaper per iteration than GWG and FLSB1
    assert no_overhead.ours.verdict == NOT_REPRODUCED and "CPU seconds per sampling iteration" in no_overhead.reason
    assert "per burn-in iteration" in as_said.fair


def synthetic_claims() -> list:
    """Every claim of the module, on synthetic runs that exist for each of them."""
    labels = {"GWG": (80.0, 1.0), "FLSB1": (60.0, 1.0), "FLSB2": (10.0, 1.0, 2e-3), "Gibbs-2": (30.0, 4.0),
              "HB-10-1": (30.0, 11.0)}
    rbm = RbmEvidence(seeds(**labels), seeds(**labels), EXACT, counted(1.0), counted(4.0))
    markov = {"net": (EXACT, seeds(**{label: ((5.0 if label in models.LEARNED else 40.0), 1.0)
                                      for label in models.MARKOV}))}
    return [models.abstract(ARGS, rbm, markov), models.figure_4_flsb2(ARGS, rbm), models.figure_4_flsb1(ARGS, rbm),
            models.figure_4_ess(ARGS, rbm), models.figure_4_ess_per_second(ARGS, rbm), models.overhead(ARGS, rbm),
            models.appendix_f(ARGS, rbm), models.figure_5(ARGS, markov), models.table_3(ARGS, markov)]


def test_every_verdict_is_derived_again_from_the_numbers_the_record_stores():
    claims = synthetic_claims()
    assert len({claim.verdict for claim in claims}) > 1  # not every row capped alike: the check can tell them apart
    for claim in claims:
        row = claim.row()
        again = judge_again(row)
        assert set(again) == {f"{key}_verdict" for key in claim.columns} | {"verdict"}
        assert again == {key: row[key] for key in again}, claim.where


@pytest.mark.skipif(not PAPER.is_file(), reason="the paper is not in ../shared/papers")
def test_every_quote_is_the_papers_own_words():
    def words(text):
        return " ".join(text.split())

    paper = words(PAPER.read_text(encoding="utf-8").replace("t𝑡\\sqrt{t}", "√t"))
    for claim in synthetic_claims():
        for fragment in filter(None, map(words, claim.quote.split("…"))):
            assert fragment in paper, (claim.where, fragment)


def test_figure_5_without_a_reached_reference_names_the_network_and_is_inconclusive():
    unreached = Reference(MU, 0.1, 1.3, "long run (test)", 1.0)
    found = {"net": (unreached, seeds(**{label: (20.0, 1.0) for label in models.MARKOV}))}
    claim = models.figure_5(ARGS, found)
    assert claim.ours.verdict == INCONCLUSIVE and "net: no equilibrium reference" in claim.ours.text
    reached = {"net": (EXACT, seeds(**{label: ((5.0 if label in models.LEARNED else 40.0), 1.0)
                                       for label in models.MARKOV}))}
    assert models.figure_5(ARGS, reached).ours.verdict == Ratio(1).judge(
        models.ratios(reached["net"][1], models.converge(EXACT), "√t", "LSB2"))


def test_our_runs_count_evaluations_per_sampling_iteration_as_table_4():
    from sweeps.spec import RunSpec

    small = argparse.Namespace(models_iterations=6, seeds=1)
    runs = models.rbm_runs(small)[0]
    for label, expected in (("Gibbs-2", 4.0), ("HB-10-1", 11.0), ("FLSB2", 1.0)):
        spec = runs[label]
        assert isinstance(spec, RunSpec)
        result = perform_task(spec, 0)
        assert Trace.from_result(result, 6).per_iteration("evaluations") == expected
    # Appendix F's other block samplers: 2^k values of a block, or the Hamming ball's 1 + 10 + 45 (+ 120) states
    for label, expected in (("Gibbs-4", 16.0), ("Gibbs-10", 1024.0), ("HB-10-2", 56.0), ("HB-10-3", 176.0)):
        result = perform_task(models.count_runs(small)[0][label], 0)
        assert Trace.from_result(result, 0).per_iteration("evaluations") == expected


@pytest.mark.skipif(not (models.AUTHORS_RBM_DIR / "samplers.py").is_file(), reason="the authors' code is absent")
def test_the_authors_gwg_runs_unmodified_and_pays_four_evaluations_per_step():
    result = models.AuthorsRbmRun("gwg", 0, 3, 5, "GWG").perform(0)
    run = Trace.from_result(result, 3)
    assert run.values.shape == (9, models.RBM_CHAINS) and np.all(np.isfinite(run.values))
    assert run.per_iteration("evaluations") == 4.0  # gradient and value at x and at x'


@pytest.mark.skipif(not (models.AUTHORS_RBM_DIR / "block_samplers.py").is_file(), reason="the authors' code is absent")
def test_the_authors_block_samplers_are_built_from_their_scripts_names():
    gibbs = Trace.from_result(models.AuthorsRbmRun("bg-4", 0, 0, 3, "Gibbs-4").perform(0), 0)
    assert gibbs.per_iteration("evaluations") == 16.0  # 2^4 rows a block
    # one pass over 64 sites in blocks of 10: six balls of 1 + 10 + 45 rows, and one of 1 + 4 + 6 for the last 4
    ball = Trace.from_result(models.AuthorsRbmRun("hb-10-2", 0, 0, 7, "HB-10-2").perform(0), 0)
    assert ball.per_iteration("evaluations") == pytest.approx((6 * 56 + 11) / 7)
