"""The sampler bake-off: one call, a strict verdict, exact frozen kernels, a tuner checked against enumeration.

Budgets are tiny and counted in target evaluations, so nothing here depends
on the machine's speed; CPU-second columns are only checked to exist.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import samplers
import targets
from samplers.common.exact import stationary_distribution, transition_matrix
from sweeps import bakeoff
from sweeps.__main__ import main
from sweeps.bake_off import TargetSource, as_source
from sweeps.bake_off.phases import tune
from sweeps.bake_off.summary import MEASURES, UNRESOLVED, UNSETTLED, RunMeasures, spread, verdict
from sweeps.bake_off.task import BakeoffRun, label
from tests.tiny import TINY_UAI

#: Result entries that are measured times, the only ones two executions of a run may differ in.
TIMED = {"trace_seconds", "step_seconds"}


def tiny_boltzmann(dim: int = 5, seed: int = 3) -> targets.Target:
    rng = np.random.default_rng(seed)
    upper = np.triu(rng.normal(scale=0.6, size=(dim, dim)), k=1)
    return targets.make("boltzmann", J=upper + upper.T, h=rng.normal(scale=0.3, size=dim))


def spectral_gap(sampler) -> float:
    """1 − λ₂ of the exact kernel (reversible: λ from the π-symmetrised matrix)."""
    pi = stationary_distribution(sampler.target)
    root = np.sqrt(pi)
    symmetric = root[:, None] * transition_matrix(sampler) / root[None, :]
    return 1.0 - np.sort(np.linalg.eigvalsh((symmetric + symmetric.T) / 2))[-2]


def test_bakeoff_on_every_sampler_ranks_skips_and_streams(tmp_path):
    streamed = []
    result = bakeoff(targets.make("boltzmann"), budget=600, seeds=5, chains=4, workers=0, results=tmp_path,
                     progress=False, on_result=lambda partial: streamed.append(len(partial.table)))
    assert {"intracluster", "kawasaki", "swendsen_wang", "wolff", "structure_mcmc"} <= set(result.skipped)
    assert "fixed-Hamming-weight" in result.skipped["kawasaki"] and "ferromagnet" in result.skipped["wolff"]
    assert {"dmala (efficiency-tuned)", "dmala (acceptance-tuned)", "metropolis", "lsb"} <= set(result.table.index)
    for measure in MEASURES:
        assert {measure, f"{measure} low", f"{measure} high"} <= set(result.table.columns)
    assert (result.table["seeds"] == 5).all() and not result.failed
    rates = result.table["ESS per 1k evals"].to_numpy()
    assert np.all(np.diff(rates[np.isfinite(rates)]) <= 1e-12)  # ranked, best first
    said = str(result)
    assert (result.winner in result.table.index and f"{result.winner} wins" in said) or \
        (result.winner is None and ("tie:" in said or "no winner:" in said))
    assert streamed == sorted(streamed) and len(streamed) == 5 * len(result.table)  # one call per finished run
    assert set(result.tuning_gain()) == {"dmala", "dlmc", "pas"}
    for efficient, accepting in zip(*(sorted(result.runs[f"dmala ({way}-tuned)"], key=lambda run: run.replicate)
                                      for way in ("efficiency", "acceptance"))):
        assert efficient.acceptance_kernel == accepting.kernel  # both variants share the acceptance tuning
    page = result.save(tmp_path / "report")
    assert page.exists() and "tuning curves" in page.read_text()


def test_a_clear_leader_wins_and_ties_are_said_as_ties(tmp_path):
    chain = targets.make("ising1d", m=8)
    result = bakeoff(chain, ["gibbs", "block_gibbs", "metropolis"], budget=3000, seeds=5, chains=4, workers=0,
                     results=tmp_path, progress=False, statistic="magnetisation")
    assert result.verdict is not None
    evidence = result.verdict.evidence
    assert (result.winner is not None) == (evidence.decisive and evidence.low > 1)
    same = bakeoff(chain, ["metropolis"], budget=3000, seeds=5, chains=4, workers=0, results=tmp_path,
                   progress=False, statistic="magnetisation")
    assert same.winner is None and same.verdict is None  # one kernel: nothing to win against


def test_a_function_target_is_identified_by_its_values_and_runs_resume(tmp_path):
    weights = np.array([0.8, -0.5, 0.3, 1.1, -0.9, 0.2])
    first = as_source(targets.from_log_prob(lambda x: x @ weights, 6))
    other = as_source(targets.from_log_prob(lambda x: x @ -weights, 6))
    assert first.description() == as_source(targets.from_log_prob(lambda x: x @ weights, 6)).description()
    assert first.description() != other.description()
    uai, changed = tmp_path / "tiny.uai", tmp_path / "changed.uai"
    uai.write_text(TINY_UAI)
    changed.write_text(TINY_UAI.replace("1 0\n", "1 1\n", 1))
    assert as_source(uai).description() != as_source(changed).description()  # a .uai file: its text decides
    computed, tables = [], []
    for _ in range(2):
        computed.append([])
        result = bakeoff(first, ["metropolis", "gibbs"], budget=500, seeds=5, chains=3, workers=0, results=tmp_path,
                         progress=False, on_result=lambda partial: computed[-1].append(partial))
        tables.append(result.table[[c for c in result.table.columns if "CPU" not in c]])
    assert len(computed[0]) == 10 and not computed[1]  # the second call computed nothing: every run was stored
    assert tables[0].equals(tables[1])


@pytest.mark.parametrize("name", ["dmala", "dlmc", "pas", "lsb", "flsb"])
def test_frozen_kernels_are_exact_and_replay(name):
    target = tiny_boltzmann()
    tuning = tune(target, name, {}, chains=4, seed=11, axis="evaluations", budget=4000)
    pi = stationary_distribution(target)
    for kernel in filter(None, (tuning.acceptance_kernel, tuning.efficiency_kernel)):
        replayed = json.loads(json.dumps(kernel))  # the report's record
        sampler = samplers.make(name, target, **replayed)
        assert not getattr(sampler, "adapting", False)
        np.testing.assert_allclose(pi @ transition_matrix(sampler), pi, atol=1e-10)
    run = BakeoffRun(TargetSource("boltzmann", {"J": target.J, "h": target.h}), {"id": "tiny"}, name,
                     "efficiency" if tuning.efficiency_kernel else "own", 0, 2000.0, "evaluations", 3, "log_prob")
    once, again = run.perform(5), run.perform(5)
    for key in once.keys() - TIMED:
        assert np.array_equal(once[key], again[key]), key


def test_efficiency_tuning_lands_near_the_spectral_gap_optimum():
    """DMALA's α and PAS's L: the tuner's setting is within a factor 2 of the one with the largest spectral gap of
    the exact kernel (enumerated over a grid). DLMC's h: the expected jump distance keeps rising with h while the
    gap falls, so only its gap is checked — within a factor 2 of the best."""
    target = targets.make("boltzmann")  # the default frustrated 8-spin model
    for name, parameter, grid in [("dmala", "step_size", np.geomspace(0.2, 6.4, 6)),
                                  ("pas", "path_length", [1, 2, 3]),
                                  ("dlmc", "step_size", np.geomspace(0.1, 6.4, 4))]:
        gaps = [spectral_gap(samplers.make(name, target, **{parameter: v, "burn_in": 0})) for v in grid]
        chosen = tune(target, name, {}, chains=32, seed=1, axis="evaluations", budget=1e5).efficiency_kernel[parameter]
        if name == "dlmc":
            assert spectral_gap(samplers.make(name, target, step_size=chosen, burn_in=0)) >= max(gaps) / 2
        else:
            assert 0.5 <= chosen / grid[int(np.argmax(gaps))] <= 2.0, (name, chosen, gaps)


def test_the_command_line_runs_end_to_end(tmp_path, capsys):
    uai = tmp_path / "tiny.uai"
    uai.write_text(TINY_UAI)
    main(["bakeoff", "--target", str(uai), "--samplers", "metropolis,gibbs", "--budget", "400", "--chains", "3",
          "--workers", "0", "--results", str(tmp_path / "runs"), "--report", str(tmp_path / "report")])
    out = capsys.readouterr().out
    assert "| 1 |" in out and ("wins" in out or "tie:" in out or "no winner:" in out)
    assert (tmp_path / "report" / "bakeoff.html").exists() and (tmp_path / "report" / "bakeoff.md").exists()


def measured(sampler: str, rates, variant: str = "own", problems=()) -> list:
    """Synthetic runs of ``sampler`` with these ESS rates per 1k evaluations (one per replicate)."""
    problems = list(problems) or [""] * len(rates)
    return [RunMeasures(label(sampler, variant), sampler, variant, replicate, {"ESS per 1k evals": rate},
                        {}, {}, "", (np.zeros(0),) * 3, np.zeros(0), np.zeros(0), np.zeros((0, 1)),
                        problem=problem)
            for replicate, (rate, problem) in enumerate(zip(rates, problems))]


def judged(*samplers_runs):
    """The verdict on these runs, ranked as the table ranks them (geometric mean of the rates)."""
    runs = {runs[0].label: runs for runs in samplers_runs}
    ranked = sorted(runs, key=lambda name: -np.mean(np.log([run.values["ESS per 1k evals"] for run in runs[name]])))
    return verdict(pd.DataFrame(index=pd.Index(ranked, name="sampler")), runs, "evaluations")


def test_the_leader_wins_only_when_it_clears_every_other_sampler():
    steady = [10, 10.2, 9.9, 10.1, 10]
    erratic = measured("pas", [20, 0.5, 10, 0.25, 20])  # geometric mean 3: third, but not cleared by the leader
    said = judged(measured("gibbs", steady), measured("metropolis", [5, 5.1, 4.9, 5, 5.05]), erratic)
    assert said.winner is None and said.runner_up == "pas" and "tie: gibbs / pas" in said.sentence("ESS per 1k evals")
    cleared = judged(measured("gibbs", steady), measured("metropolis", [5, 5.1, 4.9, 5, 5.05]),
                     measured("pas", [2, 2.1, 1.9, 2, 2.05]))
    assert cleared.winner == "gibbs" and cleared.runner_up == "metropolis"  # the closest of the two it clears


def test_two_tunings_of_one_sampler_do_not_compete_with_each_other():
    fast = [10, 10.2, 9.9, 10.1, 10]
    said = judged(measured("dmala", fast, "efficiency"), measured("dmala", fast[::-1], "acceptance"),
                  measured("gibbs", [1, 1.02, 0.99, 1.01, 1]))
    assert said.winner == "dmala (efficiency-tuned)" and said.runner_up == "gibbs"


def test_an_ess_as_large_as_its_draws_may_win_but_not_lose():
    bound = [UNRESOLVED] * 5
    leader = judged(measured("gibbs", [10, 10.2, 9.9, 10.1, 10], problems=bound),
                    measured("metropolis", [5, 5.1, 4.9, 5, 5.05]))
    assert leader.winner == "gibbs"  # its rate is at least this: the ratio can only be larger
    runner_up = judged(measured("gibbs", [10, 10.2, 9.9, 10.1, 10]),
                       measured("metropolis", [5, 5.1, 4.9, 5, 5.05], problems=bound))
    assert runner_up.winner is None and not runner_up.evidence.decisive  # its rate may be far larger
    assert "only bounds" in runner_up.sentence("ESS per 1k evals")


def test_a_single_seed_has_no_interval():
    centre, low, high = spread([5.0], rate=True)
    assert centre == pytest.approx(5.0) and np.isnan(low) and np.isnan(high)


def test_a_lead_without_a_decisive_interval_is_said_as_no_winner_not_as_a_tie():
    leader = measured("swendsen_wang", [560, 570, 565, 580, 550])
    unsettled = measured("flsb", [4.4, 9.8, 6.9, 7.0, 7.5], problems=["", "", "", UNSETTLED, ""])
    said = judged(leader, measured("wolff", [183, 180, 185, 182, 184]), unsettled)
    assert said.winner is None and said.runner_up == "flsb"
    assert said.headline == "No winner: swendsen_wang leads, but is not shown ahead of flsb"
    assert said.sentence("ESS per 1k evals").startswith("no winner: swendsen_wang leads, but its ESS per 1k evals "
                                                        "against flsb's gives no interval to judge")
    tie = judged(measured("gibbs", [10, 10.2, 9.9, 10.1, 10]), measured("pas", [20, 0.5, 10, 0.25, 20]))
    assert tie.headline == "Tie: gibbs is not shown ahead of pas" and tie.sentence("m").startswith("tie: gibbs / pas")
