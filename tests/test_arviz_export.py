"""A run, a sweep's runs and a bake-off as ArviZ data: the same numbers, labelled chain × draw, that ArviZ reads.

Each conversion is checked value for value against what the run recorded (a
chain and a draw transposed, or the initial state kept as a draw, fails), and
ArviZ's own tools run on it: ``arviz_stats.ess`` gives the bulk ESS the
project's diagnostics give on the same draws, and ``arviz_plots`` draws it.
"""

from __future__ import annotations

import json

import arviz_plots
import arviz_stats
import numpy as np
import pytest

import samplers
import targets
from engine.arviz_data import from_history, from_result, from_results, from_trace
from engine.config import RunConfig
from engine.session import RunSession
from samplers.diagnostics.ess import ess
from sweeps import RunSpec, Sweep, bakeoff, run_sweep
from sweeps.arviz_export import from_bakeoff, from_store

CONFIG = RunConfig(target="ising1d", target_params={"m": 8}, sampler="metropolis", n_chains=3, seed=5,
                   statistic="magnetisation")


def test_a_headless_run_is_its_chains_by_draws_with_its_acceptance_and_its_configuration_to_replay():
    target, sampler = CONFIG.build()
    trace = samplers.run(sampler, 120, statistic=target.magnetisation)
    data = from_trace(trace, "magnetisation", CONFIG)
    posterior, stats = data["posterior"], data["sample_stats"]
    assert dict(posterior.sizes) == {"chain": 3, "draw": 120}
    np.testing.assert_array_equal(posterior["log_prob"].values, trace.log_prob[1:].T)  # the start is no draw
    np.testing.assert_array_equal(posterior["magnetisation"].values, trace.statistic[1:].T)
    np.testing.assert_array_equal(stats["accepted"].values, trace.accepted.T)
    np.testing.assert_array_equal(posterior["step"].values, np.arange(1, 121))
    np.testing.assert_array_equal(posterior["n_evals"].values, trace.n_evals[1:])
    np.testing.assert_array_equal(stats["seconds"].values, trace.wall_time[1:])
    assert float(arviz_stats.ess(data)["magnetisation"]) == pytest.approx(ess(trace.statistic[1:].T), rel=1e-12)
    _, again = RunConfig.from_dict(json.loads(data.attrs["config"])).build()  # replays the run
    np.testing.assert_array_equal(samplers.run(again, 120).log_prob, trace.log_prob)
    assert data.attrs["sampler"] == "metropolis" and data.attrs["seed"] == 5


def test_a_trace_of_log_prob_alone_holds_it_once():
    _, sampler = CONFIG.build()
    data = from_trace(samplers.run(sampler, 10), "log_prob")
    assert list(data["posterior"].data_vars) == ["log_prob"]


def test_a_dashboard_runs_history_is_its_thinned_draws():
    session = RunSession(CONFIG, run=1, request=1, max_particles=10_000)
    session.start()
    while session.sampler.n_steps < 3000:  # long enough that the history decimates
        session.advance()
    session.pause()
    history = session.buffer.history()
    assert np.unique(np.diff(history["step"])).size == 1 and history["step"][1] > 1  # evenly thinned
    data = from_history(history, "magnetisation", session.config)
    drawn = history["step"] > 0
    np.testing.assert_array_equal(data["posterior"]["magnetisation"].values, history["statistic"][drawn].T)
    np.testing.assert_array_equal(data["posterior"]["step"].values, history["step"][drawn])
    assert "sample_stats" not in data.children  # the history keeps no acceptance per chain


def test_a_sweeps_runs_of_one_configuration_are_one_run_with_their_seeds_chains_side_by_side(tmp_path):
    spec = RunSpec(CONFIG, steps=200, trace_points=50, label="metropolis")
    other = RunSpec(RunConfig.from_dict({**CONFIG.to_dict(), "seed": 6}), steps=200, trace_points=50,
                    label="metropolis")
    store = run_sweep(Sweep("two seeds", 3, (spec, other)), tmp_path, workers=0, progress=False).store
    results = sorted((store.read(run_id) for run_id in store.run_ids()), key=lambda r: r["sampler_seed"])
    trees = from_store(store)
    assert list(trees) == ["metropolis"]
    data = trees["metropolis"]
    assert dict(data["posterior"].sizes) == {"chain": 6, "draw": 49}
    for run, result in enumerate(results):
        chains = data["posterior"]["magnetisation"].values[3 * run:3 * run + 3]
        np.testing.assert_array_equal(chains, result["trace_statistic"][1:].T)
        np.testing.assert_array_equal(data["posterior"]["n_evals"].values[3 * run], result["trace_evals"][1:])
    assert json.loads(data.attrs["config"])["seed"] == results[0]["sampler_seed"]
    single = from_result(results[1])
    assert json.loads(single.attrs["config"])["seed"] == results[1]["sampler_seed"]
    assert single.attrs["acceptance"] == results[1]["acceptance"]


def test_runs_that_traced_different_steps_are_not_joined():
    first = {"trace_step": np.arange(3), "trace_evals": np.arange(3), "trace_seconds": np.zeros(3),
             "trace_statistic": np.zeros((3, 2))}
    second = {**first, "trace_step": np.arange(3) * 2}
    with pytest.raises(ValueError, match="traced different steps"):
        from_results([first, second])


def test_a_bakeoffs_measured_runs_are_arviz_data_that_arviz_reads_and_draws(tmp_path):
    target = targets.make("ising_segmentation", size=5)
    result = bakeoff(target, samplers=["metropolis", "gibbs"], budget=1500, seeds=2, chains=3, results=tmp_path,
                     workers=0, progress=False)
    trees = from_bakeoff(result)
    labels = {key.split(" · replicate ")[0] for key in trees}
    assert labels == set(result.runs)
    for data in trees.values():
        assert {"log_prob", "hamming_distance"} <= set(data["posterior"].data_vars)
        assert np.all(np.isfinite(arviz_stats.ess(data)["log_prob"].values))
    plot = arviz_plots.plot_ess(next(iter(trees.values())), var_names=["log_prob"], backend="bokeh")
    assert plot.viz["figure"].item() is not None
