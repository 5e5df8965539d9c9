"""The OPAD claims' logic on synthetic stored results: the paper's checkpoints, "consistently" as the weakest
(method, checkpoint), a failed seed's run never dropped, and the extra-evaluation count on tiny real runs."""

from __future__ import annotations

import argparse
import re

import numpy as np

from benchmarks.claims import opad as claims_opad
from benchmarks.claims.opad import PANELS, ExtraEvaluations, audit_runs, claims, cost_runs, half_decades, judged_steps
from engine.config import RunConfig
from samplers.diagnostics.verdicts import INCONCLUSIVE, NOT_REPRODUCED, REPRODUCED, WEAKER
from samplers.opad.store import ParticleStore
from sweeps.perform import checkpoints

from .stored import DictStore

CHAINS = 4


def options(seeds: int = 5, steps: int = 10_000, long_steps: int = 1_000_000) -> argparse.Namespace:
    return argparse.Namespace(seeds=seeds, opad_chains=CHAINS, opad_steps=steps, opad_long_steps=long_steps)


def kl_result(steps: int, reduction, seed: int) -> dict:
    """A stored ``opad_run`` whose chains' KL(MCMC) / KL(OPAD) at checkpoint k is ``reduction(k, "opad", seed)``
    (and OPAD+), with a little noise between chains."""
    marks = np.array(checkpoints(steps, half_decades(steps)))
    noise = np.random.default_rng(seed).uniform(0.95, 1.05, (len(marks), CHAINS))
    mcmc = noise / np.sqrt(marks)[:, None]
    return {"kl_step": marks, "kl_mcmc": mcmc,
            **{f"kl_{kind}": mcmc / np.array([reduction(k, kind, seed) for k in marks])[:, None]
               for kind in ("opad", "opad_plus")},
            "step_seconds": 1.0, "store_seconds": 0.3, "n_particles": 100, "store_bytes": 4000}


def stored(args, reduction, extra=lambda seed: 0) -> DictStore:
    """Every run of the audit stored: the KL runs with ``reduction``, the cost runs with ``extra(seed)`` extra
    evaluations."""
    results = {}
    for run in audit_runs(args):
        if isinstance(run, ExtraEvaluations):
            results[run.run_id] = {"plain_evaluations": 1000, "fed_evaluations": 1000 + extra(run.config.seed)}
        else:
            results[run.run_id] = kl_result(run.steps, reduction, run.config.seed)
    return DictStore(results)


def by_where(found) -> dict:
    """The panels' claims by panel ("Fig. 1(a)", …)."""
    return {match.group(1): claim for claim in found if (match := re.match(r"§4\.4; (Fig\. [^:]+):", claim.where))}


def growing(k, kind, seed):
    """A reduction that grows with iterations, OPAD+ ahead of OPAD: 10× reached only from 10⁴ iterations."""
    return (1.0 + (0.1 * seed)) * k ** 0.25 * (1.5 if kind == "opad_plus" else 1.0)


# -- the paper's checkpoints ------------------------------------------------------------------------------------
def test_the_runs_record_every_half_decade_and_are_judged_from_ten_to_the_third():
    assert checkpoints(10_000, half_decades(10_000)) == [10, 32, 100, 316, 1000, 3162, 10_000]
    long = checkpoints(1_000_000, half_decades(1_000_000))
    assert {1000, 10_000, 100_000, 1_000_000} <= set(long)
    assert judged_steps(long) == [1000, 3162, 10_000, 31623, 100_000, 316228, 1_000_000]
    assert judged_steps([10, 55, 300]) == [55, 300]  # a --quick run: from a tenth of its horizon
    args = options()
    for panel in PANELS:
        assert {run.kl_checkpoints for run in panel.runs(args)} == {half_decades(getattr(args, panel.horizon))}


def test_seeds_are_separate_runs_with_their_own_data_and_every_run_is_listed_once():
    args = options()
    runs = audit_runs(args)
    assert len({run.run_id for run in runs}) == len(runs)
    dag = next(panel for panel in PANELS if panel.where == "Fig. 3(b)").runs(args)
    assert len({run.config.target_params["seed"] for run in dag}) == args.seeds
    assert [run.config.seed for run in dag] == list(range(args.seeds))
    assert len(cost_runs(args)) == len(claims_opad.COST_PANELS) * args.seeds


# -- the verdicts ---------------------------------------------------------------------------------------------
def test_consistently_is_the_weakest_checkpoint_so_fig_1a_fails_where_it_fails():
    args = options()
    found = by_where(claims(args, stored(args, growing)))
    # Fig. 1(a) runs to 10⁴: 10× is out of reach at 10³ for both methods, so "consistently" is not reproduced
    assert found["Fig. 1(a)"].ours.verdict in (NOT_REPRODUCED, WEAKER)
    assert found["Fig. 1(a)"].verdict == found["Fig. 1(a)"].ours.verdict
    assert "| 1,000 | OPAD |" in "\n".join(found["Fig. 1(a)"].details)
    assert found["Fig. 1(a)"].authors.verdict is None
    # a reduction that is 10× at every checkpoint reproduces it
    everywhere = by_where(claims(args, stored(args, lambda k, kind, seed: 30.0 + seed)))
    assert everywhere["Fig. 1(b)"].verdict == REPRODUCED
    # the stand-in panel stays inconclusive whatever its numbers
    assert everywhere["Fig. 2(c–d)"].verdict == INCONCLUSIVE and everywhere["Fig. 2(c–d)"].stand_in


def test_one_failing_checkpoint_of_one_method_makes_the_panel_fail():
    args = options()

    def dips(k, kind, seed):
        return 1.0 if (kind == "opad" and k == 3162) else 30.0 + seed

    found = by_where(claims(args, stored(args, dips)))
    assert found["Fig. 3(a)"].ours.verdict == NOT_REPRODUCED
    assert "OPAD at 3,162 iterations" in found["Fig. 3(a)"].ours.text


def test_a_seed_whose_run_failed_makes_the_panel_not_measured_not_a_smaller_sample():
    args = options()
    store = stored(args, lambda k, kind, seed: 30.0 + seed)
    lost = next(panel for panel in PANELS if panel.where == "Fig. 2(a–b)").runs(args)[3]
    del store.results[lost.run_id]
    found = by_where(claims(args, store))
    assert found["Fig. 2(a–b)"].ours.verdict == INCONCLUSIVE
    assert found["Fig. 2(a–b)"].ours.text.startswith("not measured: the runs of seed(s) [3]")
    assert found["Fig. 1(b)"].ours.verdict == REPRODUCED


def test_opad_plus_no_better_than_opad_does_not_outperform_it():
    args = options()
    same = claims(args, stored(args, lambda k, kind, seed: 30.0 + seed))
    outperforms = next(claim for claim in same if claim.claim == "OPAD+ consistently beats OPAD")
    assert outperforms.ours.verdict == NOT_REPRODUCED  # KL(OPAD) / KL(OPAD+) = 1 at every cell
    ahead = claims(args, stored(args, growing))
    assert next(claim for claim in ahead if claim.claim == "OPAD+ consistently beats OPAD").verdict == REPRODUCED


def test_a_reduction_that_shrinks_is_not_stable():
    args = options()
    stable = next(c for c in claims(args, stored(args, growing)) if c.claim == "the reduction is stable or grows")
    assert stable.verdict == REPRODUCED
    shrinking = next(c for c in claims(args, stored(args, lambda k, kind, seed: 1e4 / k ** 0.5 * (1 + 0.1 * seed)))
                     if c.claim == "the reduction is stable or grows")
    assert shrinking.verdict == NOT_REPRODUCED


def test_extra_evaluations_in_one_seed_fail_the_cost_claim():
    args = options()
    cost = next(c for c in claims(args, stored(args, growing)) if "extra target evaluation" in c.claim)
    assert cost.verdict == REPRODUCED and "0 in 5 of 5 seeds" in cost.ours.text
    cost = next(c for c in claims(args, stored(args, growing, extra=lambda seed: int(seed == 2)))
                if "extra target evaluation" in c.claim)
    assert cost.verdict == NOT_REPRODUCED and "0 in 4 of 5 seeds" in cost.ours.text


def test_the_quick_sizes_are_never_decisive():
    args = options(seeds=2, steps=300, long_steps=1000)
    found = claims(args, stored(args, lambda k, kind, seed: 30.0 + seed))
    assert {claim.verdict for claim in found} == {INCONCLUSIVE}


# -- the measurement of extra evaluations on tiny real runs ---------------------------------------------------
def tiny_task(sampler: str = "metropolis") -> ExtraEvaluations:
    config = RunConfig(target="ising1d", target_params={"m": 8}, sampler=sampler, sampler_params={}, n_chains=3,
                       statistic="log_prob")
    return ExtraEvaluations(config, 60, "tiny")


def test_feeding_the_store_costs_no_target_evaluation():
    result = tiny_task().perform(0)
    assert result["plain_evaluations"] == result["fed_evaluations"] > 0


def test_a_store_that_evaluated_the_target_would_be_counted(monkeypatch):
    update = ParticleStore.update

    def evaluating(self, record):
        self.target.log_prob(record.states)  # what OPAD+ must not need: p̃ of what the sampler already scored
        update(self, record)

    monkeypatch.setattr(ParticleStore, "update", evaluating)
    result = tiny_task().perform(0)
    assert result["fed_evaluations"] - result["plain_evaluations"] == 60 * 3


def test_with_no_run_stored_every_claim_says_not_measured():
    found = claims(options(), DictStore({}))
    assert len(found) == len(PANELS) + 3
    assert all(claim.verdict == INCONCLUSIVE and claim.ours.text.startswith("not measured") for claim in found)
