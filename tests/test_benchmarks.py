"""The benchmarks run end to end at a tiny size and print or write their tables and figures."""

from __future__ import annotations

import numpy as np
import pytest

import benchmarks.papers.lsb_runs as lsb_runs
from benchmarks import arguments
from benchmarks.papers import lsb_markov, lsb_rbm, lsb_segmentation
from samplers.diagnostics.verdicts import INCONCLUSIVE, NOT_REPRODUCED, REPRODUCED


@pytest.mark.parametrize("module, argv, runs", [
    (lsb_segmentation, ["--seeds", "2", "--burn-in", "20", "--steps", "30", "--size", "6", "--chains", "4",
                         "--reference-steps", "2000"], 4 * (6 * 2 + 1)),
    (lsb_rbm, ["--seeds", "2", "--burn-in", "150", "--steps", "100", "--chains", "4"], 5 * 2),
    (lsb_markov, ["--seeds", "2", "--burn-in", "10", "--steps", "20", "--chains", "2", "--reference-steps", "2000"],
     3 * (6 * 2 + 1)),
])
def test_lsb_benchmarks_store_their_runs_and_write_tables_and_figures_from_them(module, argv, runs, tmp_path,
                                                                                capsys):
    from sweeps import ResultStore

    name = module.__name__.rsplit(".", 1)[1]
    module.main(argv + ["--workers", "0", "--results", str(tmp_path)])
    table = (tmp_path / f"{name}.md").read_text()
    assert "| sampler |" in table and "±" in table
    assert (tmp_path / f"{name}.html").stat().st_size > 10_000
    out, err = capsys.readouterr()
    assert "written:" in out and f"{runs} runs computed, 0 already stored, 0 failed" in err
    assert len(ResultStore(tmp_path / name).run_ids()) == runs
    (tmp_path / f"{name}.md").unlink()
    module.main(argv + ["--workers", "0", "--results", str(tmp_path)])  # redrawn from the stored runs
    assert (tmp_path / f"{name}.md").read_text() == table
    assert f"0 runs computed, {runs} already stored" in capsys.readouterr().err


def test_convergence_is_measured_against_a_reached_reference_only():
    from samplers.diagnostics.convergence import Reference
    from sweeps import perform

    target = {"size": 5, "lam": 0.0, "mu": 3.0, "sigma": 3.0, "seed": 0}
    reference = lsb_runs.reference(perform(lsb_runs.reference_run("ising_segmentation", target, "agreement", 6, 4000),
                                           sweep_seed=0))
    assert reference.reached and 0.5 < reference.value < 1.0 and "over-dispersed" not in reference.method
    run = perform(lsb_runs.mixing_run("√t", "ising_segmentation", target, "locally_balanced", {"balancing": "sqrt"},
                                      "agreement", chains=6, replicate=0, burn_in=300, steps=40), sweep_seed=0)
    runs = [lsb_runs.summarise("√t", run, 300, given) for given in (reference, Reference(0.9, 0.1, 1.5, "disagreeing"))]
    assert 0 < runs[0].evals_to_converge <= runs[0].evals[-1]
    assert runs[1].evals_to_converge != runs[1].evals_to_converge  # NaN: no equilibrium, no convergence time
    assert "not reached" in lsb_runs.reference_note(Reference(0.9, 0.1, 1.5, "disagreeing run"))


def test_a_reference_run_starts_over_dispersed_and_keeps_thinned_draws():
    from sweeps import perform

    spec = lsb_runs.reference_run("ising_segmentation", {"size": 4}, "ones", 6, 5000)
    result = perform(spec, sweep_seed=0)
    assert len(result["trace_step"]) == lsb_runs.REFERENCE_DRAWS + 1 and "trace_log_prob" not in result
    start = result["trace_statistic"][0]  # the fraction of ones of each chain's start: zeros, ones, random, in turn
    assert list(start[0::3]) == [0.0, 0.0] and list(start[1::3]) == [1.0, 1.0]


def test_unknown_options_are_refused():
    with pytest.raises(SystemExit):
        arguments("lsb_cost", ["--bogus", "1"], steps=3)
    assert arguments("lsb_cost", ["--steps", "5"], steps=3).steps == 5


def test_opad_ising_prints_kl_tables(capsys, tmp_path):
    from benchmarks.papers import opad_ising

    opad_ising.main(["--steps", "30", "--chains", "2", "--workers", "0", "--results", str(tmp_path)])
    out = capsys.readouterr().out
    assert out.count("| locally balanced √t, all scored | 30 |") == 1 and "bytes per particle" in out


def test_opad_dag_prints_kl_and_cost_tables(capsys, tmp_path):
    from benchmarks.papers import opad_dag

    opad_dag.main(["--steps", "20", "--chains", "2", "--degrees", "2", "--workers", "2", "--results", str(tmp_path)])
    out = capsys.readouterr().out
    assert "ER(5, 2)" in out and "| partition MCMC | 20 |" in out and "| structure MCMC |" in out


def test_an_opad_run_holds_every_chains_exact_kl_at_the_checkpoints():
    import numpy as np

    from benchmarks.papers.opad_runs import CHECKPOINTS, Curves, opad_run
    from sweeps import perform
    from sweeps.perform import checkpoints

    curves = Curves.from_result("Metropolis", perform(opad_run("Metropolis", "ising1d", {"m": 8}, "metropolis", {},
                                                               50, 3), sweep_seed=0))
    assert curves.steps == checkpoints(50, CHECKPOINTS) and curves.kl["mcmc"].shape == (len(curves.steps), 3)
    assert np.all(curves.kl["mcmc"] >= curves.kl["opad"] - 1e-12) and curves.overhead > 0


def test_intracluster_paper_prints_mixing_and_acf_tables_per_target(tmp_path, capsys):
    from benchmarks.papers import intracluster_paper

    # A fixed amount of work (60 moves of the paper's IM per trial, the others for the time those took), not a
    # time budget: what is printed must not depend on the machine's speed or load.
    argv = ["--scale", "0.02", "--moves", "60", "--trials", "2", "--lags", "0.02,0.05", "--results", str(tmp_path)]
    intracluster_paper.main(argv + ["--workers", "2"])
    out, err = capsys.readouterr()
    assert "6 runs computed, 0 already stored, 0 failed" in err
    assert "2 trials × the compute time of 60 moves of the paper's IM per sampler" in out
    assert out.count("time grid Δt = ") == 3 and out.count(" ms (61 points)") == 3
    for title in ("### Ferromagnet 8×8", "### ±J spin glass 2×2×2", "### Gabor RBM 4×4 + 10"):
        assert out.count(title) == 1
    assert out.count("| sampler | moves / s | acceptance | mean E | τ_int (s) |") == 3
    assert out.count("| sampler | ACF(0.02 s) | ACF(0.05 s) |") == 3
    assert "| IM (paper) k = 16, γ = 1.0 |" in out and "| IM (paper) k = U[1, 4], γ = 0.8 |" in out
    assert out.count("| IM k = 16, γ = 0.5 |") == 2 and out.count("| Kawasaki | ") == 6
    kawasaki_ratios = [line for line in out.splitlines() if line.startswith("| Kawasaki |") and line.endswith(" 1× |")]
    assert len(kawasaki_ratios) == 3 and "±" in out  # Kawasaki's τ against its own; spread over 2 trials
    rows = [line.split(" | ")[1:] for line in out.splitlines() if line.startswith("| ") and "sampler" not in line]
    mixing, acf = [cells for cells in rows if len(cells) == 6], [cells for cells in rows if len(cells) == 2]
    assert len(mixing) == 9 and len(acf) == 9 and len(rows) == 18
    # Every chain makes at least one move and τ_int > 0, so speed, acceptance, energy, τ_int and ESS/s are finite
    # (mean ± sd over the 2 trials) and so is the τ ratio, however fast the machine.
    assert all(" ± " in cell and "nan" not in cell for cells in mixing for cell in cells[:5])
    assert all(cells[5].endswith("× |") and "nan" not in cells[5] for cells in mixing)
    table = (tmp_path / "intracluster_paper.md").read_text()
    assert table.count("| Kawasaki |") == 6 and (tmp_path / "intracluster_paper.html").stat().st_size > 10_000
    intracluster_paper.main(argv + ["--workers", "0"])  # the trials are stored: the same tables, redrawn
    assert (tmp_path / "intracluster_paper.md").read_text() == table
    assert "0 runs computed, 6 already stored" in capsys.readouterr().err


def test_intracluster_paper_fixes_the_reference_moves_and_gives_the_others_its_time():
    import numpy as np

    from benchmarks.papers import intracluster_paper as paper

    exp = paper.experiments(0.02)[0]
    traces, window = paper.run_trial(exp, seed=3, seconds=np.inf, moves=20)
    reference = traces[paper.REFERENCE]
    assert len(reference.times) == 21  # exactly 20 moves, whatever the speed
    assert window == reference.times[-1] > 0
    for trace in traces:  # every other chain ran at least the reference's time
        assert len(trace.times) >= 2 and trace.times[-1] >= reference.times[-1]
    grid = paper.time_grid({setting.label: [trace] for setting, trace in zip(exp.settings, traces)}, window, points=21)
    assert len(grid) == 21 and grid[0] == 0 and grid[-1] == window
    with pytest.raises(SystemExit):
        paper.main(["--moves", "14"])  # a grid of 15 points: refused before any run
    with pytest.raises(ValueError):
        paper.timed_trace(exp, exp.settings[0], 0)  # neither a time budget nor a number of moves


def test_intracluster_cost_prints_timings_and_the_tree_scaling(capsys):
    from benchmarks.costs import intracluster_cost

    # A fixed number of moves per timed run, not a time budget: the rows must not depend on the machine's speed.
    intracluster_cost.main(["--small", "8", "--large", "16", "--k", "4", "--gabor-scale", "0.02", "--moves", "3",
                            "--repeats", "1"])
    out = capsys.readouterr().out
    assert "best of 1 runs of 3 moves each" in out
    rows = [line for line in out.splitlines() if line.startswith("| ") and not line.startswith("| target")]
    assert len(rows) == 8 and all(line.count("|") == 9 for line in rows)
    assert sum("IM tree, k = 4, γ = 1.0" in line for line in rows) == 3
    assert sum("IM dense" in line for line in rows) == 1 and sum("| Kawasaki |" in line for line in rows) == 3
    assert "M = 64 → 256" in out and "log M₂ / log M₁ = 1.33, M₂ / M₁ = 4" in out


def test_lsb_reference_times_the_authors_code_when_present(tmp_path, monkeypatch):
    from benchmarks.papers import lsb_reference

    assert isinstance(lsb_reference.available(), bool)
    with pytest.raises(ValueError):
        lsb_reference.reference_seconds_per_step("gibbs")  # refused before anything is built or timed
    seconds = lsb_reference.reference_seconds_per_step("sqrt", steps=2, repeats=1)
    if lsb_reference.available():
        assert isinstance(seconds, float) and seconds > 0
    else:
        assert seconds is None
    monkeypatch.setattr(lsb_reference, "REFERENCE_DIR", tmp_path / "absent")
    assert lsb_reference.available() is False
    assert lsb_reference.reference_seconds_per_step("lsb2_frozen") is None


def test_kernels_vs_reference_prints_our_side_and_skips_a_missing_reference(tmp_path, monkeypatch, capsys):
    from benchmarks.costs import kernels_vs_reference
    from benchmarks.papers import lsb_reference

    monkeypatch.setattr(lsb_reference, "REFERENCE_DIR", tmp_path / "absent")
    kernels_vs_reference.main(["--steps", "3", "--reference-steps", "1", "--repeats", "1"])
    out = capsys.readouterr().out
    assert "comparison skipped" in out
    rows = [line for line in out.splitlines() if line.startswith("| ") and not line.startswith("| step")]
    assert [row.split(" | ")[0] for row in rows] == [
        "| locally balanced sqrt", "| locally balanced barker", "| locally balanced min", "| locally balanced max",
        "| LSB1 while learning", "| LSB1 frozen", "| LSB2 while learning", "| LSB2 frozen"]
    assert all(row.split(" | ")[1] == "–" and row.split(" | ")[4] == "–" for row in rows)
    assert "√t step 240×240 / 30×30:" in out and "frozen LSB2 / fixed √t step:" in out
    assert "per accepted move 240×240 / 30×30:" in out
    assert "1 chain " in out and "4 chains " in out


def test_interleaved_timing_gives_each_sampler_its_own_warm_up_and_repeats():
    import samplers
    import targets
    from benchmarks import interleaved_cpu_seconds_per_step

    target = targets.make("ising1d", m=6)
    first, second = (samplers.make("metropolis", target, n_chains=2, seed=seed) for seed in (0, 1))
    seconds = interleaved_cpu_seconds_per_step([first, second], steps=10, repeats=3)
    assert len(seconds) == 2 and all(0 < s < float("inf") for s in seconds)
    assert first.n_steps == second.n_steps == 3 * (10 + 2)  # each repeat: steps // 5 untimed, then the timed steps


def test_discs_ising_prints_both_findings_with_verdicts(capsys, tmp_path):
    from benchmarks.papers import discs_ising

    discs_ising.main(["--size", "6", "--steps", "400", "--chains", "4", "--sizes", "4,6", "--samplers",
                      "locally_balanced,pas", "--workers", "2", "--results", str(tmp_path)])
    out = capsys.readouterr().out
    verdicts = [line.split(": ", 1)[1].split(" (")[0] for line in out.splitlines() if line.startswith("verdict: ")]
    assert len(verdicts) == 2 and all(v in (REPRODUCED, NOT_REPRODUCED, INCONCLUSIVE) for v in verdicts)
    rows = [line.split() for line in out.splitlines() if line.split()[:1] in (["locally_balanced"], ["pas"])]
    assert len(rows) == 8 and {row[2] for row in rows} == {"above", "below"}
    assert "falls" in out and "for Metropolis" in out


def test_discs_ising_model_is_discs_energy():
    import targets

    target = targets.make("discs_ising", size=3, lam=0.5, mu=0.5, sigma=1.5, seed=0)
    states = np.random.default_rng(1).integers(0, 2, size=(20, 9), dtype=np.uint8)
    spins = (2.0 * states - 1).reshape(20, 3, 3)
    field = -target.pairwise_model()[2].reshape(3, 3)  # b of DISCS
    # DISCS's forward: λ Σ over open-lattice neighbour pairs of s_i s_j − Σ b_i s_i.
    pairs = ((spins[:, 1:, :] * spins[:, :-1, :]).sum(axis=(1, 2))
             + (spins[:, :, 1:] * spins[:, :, :-1]).sum(axis=(1, 2)))
    expected = 0.5 * pairs - (spins * field).sum(axis=(1, 2))
    np.testing.assert_allclose(target.log_prob(states), expected, atol=1e-12)


def test_help_lists_every_benchmark_with_one_line(capsys):
    from benchmarks.__main__ import BENCHMARKS, main

    main(["--help"])
    out = capsys.readouterr().out
    for name in BENCHMARKS:
        line = next(line for line in out.splitlines() if line.split()[:1] == [name])
        assert len(line.split(None, 1)[1]) > 20
    assert "several hours" in out


@pytest.mark.parametrize("name", __import__("benchmarks.__main__", fromlist=["BENCHMARKS"]).BENCHMARKS)
def test_every_benchmark_option_has_a_description_and_a_default(name, capsys):
    import importlib

    from benchmarks.__main__ import declared_options, module_name

    with pytest.raises(SystemExit):
        importlib.import_module(module_name(name)).main(["--help"])
    out = " ".join(capsys.readouterr().out.split())
    headers = {option: f"{option} {option[2:].upper().replace('-', '_')} " for option in declared_options(name)}
    for option, header in headers.items():
        described = out.split(header, 1)[1]
        for other in headers.values():  # up to the next option's header
            described = described.split(other, 1)[0]
        assert not described.startswith("(default:"), f"{name} {option} has no description"
        assert "(default:" in described, f"{name} {option} shows no default"


def test_options_go_only_to_the_benchmarks_that_declare_them():
    from benchmarks.__main__ import routed

    out = routed(["opad_ising", "discs_ising"], ["--steps", "100", "--sizes=4,6", "--samplers", "pas"])
    assert out == {"opad_ising": ["--steps", "100", "--samplers", "pas"],
                   "discs_ising": ["--steps", "100", "--sizes=4,6", "--samplers", "pas"]}
    with pytest.raises(SystemExit, match="--degrees is not an option of opad_ising"):
        routed(["opad_ising"], ["--degrees", "1"])


def test_sweep_scaling_prints_the_speed_up_and_the_overhead_per_run(capsys):
    from benchmarks.costs import sweep_scaling

    sweep_scaling.main(["--runs", "2", "--run-seconds", "0.05"])
    out = capsys.readouterr().out
    assert "| 2 workers |" in out and "speed-up 2 workers / 1 worker:" in out and "scheduler overhead per run" in out


def test_the_classroom_ratio_on_the_cpu_left_by_the_clients_scales_headless_by_that_cpu(monkeypatch):
    from benchmarks.serving import measurements
    monkeypatch.setattr(measurements.os, "cpu_count", lambda: 2)
    result = {"n": 2, "pages": 1, "served": {"page 0": 300.0, "light 1": 100.0}, "headless": [600.0, 400.0],
              "headless_cpu": 200.0,
              "cpu": {"workers": 90.0, "server": 30.0, "benchmark + Chromium": 60.0, "light clients": 10.0,
                      "everything else on the machine": 10.0}}
    summary = measurements.summarise(result)
    assert summary["ratio"] == pytest.approx(0.4)
    assert summary["cpu_left"] == pytest.approx(120.0)  # 200 % less 80 % of clients and other programs
    assert summary["ratio_left"] == pytest.approx(400.0 / (500.0 * 1.2))  # headless: 500 steps per CPU second


def test_the_page_speed_phase_counts_each_groups_cpu_and_says_whether_a_burst_met_its_goal(capsys):
    from benchmarks.serving.page_speed import spent
    from benchmarks.serving.report import print_page_speed

    before = {"server": {1: 10.0}, "Chromium": {7: 1.0, 8: 2.0}}
    after = {"server": {1: 12.5}, "Chromium": {7: 4.0, 9: 3.0}}  # 8 ended, 9 started meanwhile
    assert spent(before, after) == {"server": 2.5, "Chromium": 6.0}
    print_page_speed({"sequential": [(1.1, 2.4)], "burst": [(9.0, 20.0), (12.0, 25.0)],
                      "burst_cpu": {"server": 2.5, "Chromium": 6.0}, "light_burst": [2.1, 3.4]})
    printed = capsys.readouterr().out
    assert "2 light clients at once" in printed and "2.75 / 3.40   (goal < 3 s: NOT MET)" in printed
    assert "server 2.5, Chromium 6.0" in printed
    print_page_speed({"sequential": [], "burst": [], "light_burst": [2.1, 2.9]})
    assert "2.50 / 2.90   (goal < 3 s: met)" in capsys.readouterr().out


def test_the_burst_phase_judges_its_goals_and_counts_a_page_never_shown_as_missed():
    from benchmarks.serving.burst import _goals, _row

    nan = float("nan")
    results = {30: {"documents": [3.0, 4.5], "pages": [(2.0, 6.0), (4.0, 7.5)], "cpu_per_page": 0.08,
                    "cpu_per_page_to_lattices": 0.4},
               60: {"documents": [6.0, nan], "pages": [(3.0, 9.0)], "cpu_per_page": 0.2,
                    "cpu_per_page_to_lattices": 0.9},
               10: {"error": "TimeoutError: "}}
    goals = _goals(results)
    assert "30 at once, worst document ≤ 5 s: 4.50 s ok" in goals
    assert "60 at once, worst document ≤ 10 s: inf s MISSED" in goals  # one client never held its document
    assert "30 at once, server CPU per page ≤ 0.1 s: 0.080 s ok" in goals
    assert "60 at once, server CPU per page ≤ 0.1 s: 0.200 s MISSED" in goals
    assert "Chromium page during 30 at once, Start ≤ 5 s: 4.00 s ok" in goals
    assert "Chromium page during 30 at once, lattice ≤ 8 s: 7.50 s ok" in goals
    assert not any(line.startswith("10 at once") for line in goals)
    assert _row(results[10]) == "failed: TimeoutError: "
    assert "document 6.00 / 6.00 s" in _row(results[60]) and "1 never shown" in _row(results[60])
