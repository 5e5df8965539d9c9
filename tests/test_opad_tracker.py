"""OPAD in a live run: the tracker's snapshots, its checkpoints, the run options and the DAG upload."""

from __future__ import annotations

import numpy as np
import pytest

import samplers
import targets
from dashboard.model.config import RunConfig
from dashboard.model.opad_tracker import GROWTH, OpadTracker, tracking_problem
from dashboard.model.run_model import RunModel
from dashboard.model.uploads import parse_upload
from samplers.exact import stationary_distribution
from samplers.opad import KINDS, ParticleStore
from tests.tiny import TINY_TARGETS


def feed(tracker: OpadTracker, sampler, steps: int) -> None:
    for _ in range(steps):
        tracker.update(sampler.step())
        tracker.checkpoint(sampler.n_steps)
    tracker.publish(sampler.n_steps)


def test_checkpoints_are_log_spaced_and_end_with_the_latest_values():
    target = TINY_TARGETS["frustrated_boltzmann"]()
    sampler = samplers.make("metropolis", target, n_chains=5, seed=0)
    tracker = OpadTracker(target)
    feed(tracker, sampler, 3000)
    snapshot = tracker.snapshot
    steps = snapshot.steps
    assert steps[0] == 1 and np.all(np.diff(steps) > 0)
    due = steps[:-1]
    assert np.all(due[1:] >= np.ceil(due[:-1] * GROWTH) - 1)  # log-spaced: ~log(3000)/log(1.05) rows
    assert len(steps) < 200
    # the rows hold the store's exact KL: per chain, and pooled in the last column
    reference = ParticleStore(target, flush_every=1)
    replay = samplers.make("metropolis", target, n_chains=5, seed=0)
    for _ in range(int(steps[-1])):
        reference.update(replay.step())
    for kind in KINDS:
        assert snapshot.kl[kind].shape == (len(steps), 6)
        assert snapshot.kl[kind][-1, -1] == pytest.approx(reference.kl()[kind], abs=1e-12)
        assert snapshot.kl[kind][-1, 2] == pytest.approx(reference.kl(2)[kind], abs=1e-12)
    assert np.all(snapshot.kl["mcmc"] >= snapshot.kl["opad"] - 1e-12)
    assert np.all(snapshot.kl["opad"] >= snapshot.kl["opad_plus"] - 1e-12)


def test_marginals_are_exact_and_estimated(monkeypatch):
    monkeypatch.setattr("dashboard.model.opad_tracker.MARGINALS_SECONDS", 0.0)  # refreshed at every checkpoint
    target = TINY_TARGETS["bvs"]()
    sampler = samplers.make("gibbs", target, n_chains=4, seed=1)
    tracker = OpadTracker(target)
    feed(tracker, sampler, 500)
    marginals = tracker.snapshot.marginals
    states, _ = target.enumerate()
    np.testing.assert_allclose(marginals["exact"], stationary_distribution(target) @ states, atol=1e-12)
    for kind in KINDS:
        assert marginals[kind].shape == (target.dim,)
        assert np.all((marginals[kind] >= -1e-12) & (marginals[kind] <= 1 + 1e-12))
    assert np.abs(marginals["opad_plus"] - marginals["exact"]).max() < 0.05
    np.testing.assert_allclose(marginals["opad"], tracker.store.expectation()["opad"], atol=1e-12)


def test_targets_too_large_to_enumerate_are_not_tracked_and_the_run_says_why():
    big = targets.make("ising_segmentation", size=6)
    assert "d = 36" in tracking_problem(big)
    with pytest.raises(ValueError, match="enumerate"):
        OpadTracker(big)
    run = RunModel(RunConfig(target="ising_segmentation", target_params={"size": 6}, sampler="metropolis",
                             statistic="log_prob"))
    try:
        assert run.tracker is None and run.opad_snapshot() is None and "d = 36" in run.opad_problem
        run.step(5)
        assert run.wait_idle()
    finally:
        run.close()


def test_a_run_streams_opad_snapshots_and_can_switch_them_off():
    config = RunConfig(target="ising1d", target_params={"m": 10}, sampler="locally_balanced", n_chains=3,
                       statistic="log_prob", opad_neighbours=True)
    run = RunModel(config)
    try:
        run.step(200)
        assert run.wait_idle()
        snapshot = run.opad_snapshot()
        assert snapshot.steps[-1] == 200 and snapshot.n_particles > 0
        assert run.sampler.record_neighbours and run.tracker.store.scored_neighbours
        off = RunConfig.from_json(config.to_json())
        off.opad = False
        assert run.apply(off) and run.tracker is None and "off" in run.opad_problem
    finally:
        run.close()


def test_all_scored_states_needs_a_sampler_that_scores_them():
    config = RunConfig(target="ising1d", sampler="metropolis", statistic="log_prob", opad_neighbours=True)
    with pytest.raises(ValueError, match="scores every neighbour"):
        config.build()


def test_dag_data_upload_runs_the_structure_target():
    rng = np.random.default_rng(0)
    table = rng.normal(size=(50, 3))
    text = "a,b,c\n" + "\n".join(",".join(f"{v:.6f}" for v in row) for row in table)
    params = parse_upload("dag", "data.csv", text.encode())
    assert params["n_nodes"] == 3
    np.testing.assert_allclose(params["data"], table, atol=1e-6)
    target, _ = RunConfig(target="dag", target_params=params, sampler="metropolis", statistic="log_prob").build()
    assert target.dim == 6
    wide = ",".join(f"v{i}" for i in range(13)) + "\n" + (",".join("0" for _ in range(13)) + "\n") * 3
    with pytest.raises(ValueError, match="2 to 12 variables"):
        parse_upload("dag", "wide.csv", wide.encode())


def test_a_fixed_distance_run_is_measured_against_the_target_restricted_to_its_space():
    config = RunConfig(target="ising1d", target_params={"m": 10}, sampler="kawasaki", sampler_params={"n_active": 4},
                       n_chains=4, statistic="log_prob")
    run = RunModel(config)
    try:
        run.step(400)
        assert run.wait_idle()
        store = run.tracker.store
        states, probabilities = store.exact()
        assert len(states) == 210 and np.all(states.sum(axis=1) == 4)  # C(10, 4) states with 4 ones
        visited = store.states(store.support("opad"))
        assert np.all(visited.sum(axis=1) == 4)
        scratch = -np.log(probabilities[np.isin(targets.state_codes(states), targets.state_codes(visited))].sum())
        assert run.opad_snapshot().kl["opad"][-1, -1] == pytest.approx(scratch, abs=1e-10)
        assert np.all(run.opad_snapshot().marginals["exact"] == pytest.approx(0.4))  # symmetric chain: 4/10
    finally:
        run.close()
