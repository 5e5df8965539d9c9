"""The claim logic of ``benchmarks.claims.lsb_models`` on synthetic runs (and two tiny real ones)."""

from __future__ import annotations

import argparse

import numpy as np
import pytest

from benchmarks.claims import lsb_models as models
from benchmarks.claims.lsb_models import Comparison, RbmEvidence, Trace
from samplers.diagnostics.convergence import Reference
from samplers.diagnostics.verdicts import INCONCLUSIVE, NOT_REPRODUCED, REPRODUCED, Much, Ratio, ratio_evidence

from .stored import DictStore

MU = -10.0
EXACT = Reference(MU, 0.0, float("nan"), "exact (test)", 0.0, exact=True)
ARGS = argparse.Namespace(models_iterations=200, seeds=5, authors_seeds=5, reference_steps=2000)


def trace(rate: float, evaluations_per_step: float = 1.0, steps: int = 400, burn_in: int = 200,
          seed: int = 0, mu: float = MU) -> Trace:
    """4 chains whose mean approaches ``mu`` from 0 as exp(−k / rate), with a little independent noise."""
    rng = np.random.default_rng(seed)
    k = np.arange(steps + 1)
    values = (mu * (1 - np.exp(-k / rate)))[:, None] + 0.001 * rng.standard_normal((steps + 1, 4))
    values[0] = 0.0
    return Trace(values, evaluations_per_step * k.astype(float), 1e-3 * k, burn_in)


def seeds(**rates) -> list[dict[str, Trace]]:
    """Five seeds of the labelled runs, each (rate, evaluations per step)."""
    return [{label: trace(*spec, seed=seed) for label, spec in rates.items()} for seed in range(5)]


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
    comparison = models.compare(found, models.Trace.evaluations_per_iteration, "Gibbs-2", "FLSB2", "evals", Much())
    assert not comparison.evidence.decisive and comparison.verdict == INCONCLUSIVE


def test_column_is_the_weakest_comparison_and_says_when_nothing_was_measured():
    good = Comparison("a / b", ratio_evidence([3.0, 3.1, 2.9, 3.0, 3.05]), REPRODUCED)
    bad = Comparison("c / d", ratio_evidence([0.5, 0.52, 0.49, 0.5, 0.51]), NOT_REPRODUCED)
    assert models.column([good, bad], "x").verdict == NOT_REPRODUCED
    assert "c / d" in models.reason([good, bad])
    empty = models.column([], "the runs failed")
    assert empty.verdict == INCONCLUSIVE and empty.text.startswith("not measured")
    many = models.column([good] * 4 + [bad], "x")
    assert many.text.startswith("c / d") and "weakest of 5" in many.text


def test_figure_4_judges_evaluations_and_stays_inconclusive_on_the_stand_in():
    # GWG: one evaluation per step, slow; FLSB2 two per step while learning, but four times faster per step.
    ours = seeds(GWG=(80.0, 1.0), FLSB2=(10.0, 2.0))
    claim = models.figure_4_flsb2(ARGS, RbmEvidence(ours, [], EXACT))
    assert claim.ours.verdict == REPRODUCED  # ≈ 4× fewer evaluations: lo ≥ 1.5
    assert claim.verdict == INCONCLUSIVE and claim.stand_in  # a stand-in not argued equivalent
    assert "target evaluations to converge" in claim.ours.text
    slower = models.figure_4_flsb2(ARGS, RbmEvidence(seeds(GWG=(20.0, 1.0), FLSB2=(15.0, 2.0)), [], EXACT))
    assert slower.ours.verdict == NOT_REPRODUCED  # faster per step, slower per evaluation


def test_the_authors_contradicting_code_caps_the_verdict():
    def flat(evaluations_per_step):
        return trace(rate=10.0, evaluations_per_step=evaluations_per_step)

    ours = [{"Gibbs-2": flat(4.0), "HB-10-1": flat(11.0), "FLSB2": flat(1.0)} for _ in range(5)]
    theirs = [{"Gibbs-2": flat(4.0), "HB-10-1": flat(10.0), "FLSB2": flat(4.0)} for _ in range(5)]
    claim = models.appendix_f(ARGS, RbmEvidence(ours, theirs, EXACT))
    assert claim.equivalent and claim.ours.verdict == REPRODUCED
    if (models.AUTHORS_RBM_DIR / "self_sampler.py").is_file():
        assert claim.authors.verdict == NOT_REPRODUCED  # their FLSB2 scores 4 rows per step, as their Gibbs-2
        assert claim.verdict == NOT_REPRODUCED


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
        result = spec.perform(0)
        assert Trace.from_result(result, 6).evaluations_per_iteration() == expected


@pytest.mark.skipif(not (models.AUTHORS_RBM_DIR / "samplers.py").is_file(), reason="the authors' code is absent")
def test_the_authors_gwg_runs_unmodified_and_pays_four_evaluations_per_step():
    result = models.AuthorsRbmRun("gwg", 0, 3, 5, "GWG").perform(0)
    run = Trace.from_result(result, 3)
    assert run.values.shape == (9, models.RBM_CHAINS) and np.all(np.isfinite(run.values))
    assert run.evaluations_per_iteration() == 4.0  # gradient and value at x and at x'
