"""OPAD in a live run: the tracker's snapshots, its checkpoints, the run options and the DAG upload.

Runs go through ``RunClient`` with the worker in-process (what the views receive), and through a
``RunSession`` (the run inside a worker) where a test looks at its sampler or its particle store. Tests wait
for states with a generous timeout and never count the work done in a time window.
"""

from __future__ import annotations

import numpy as np
import pytest

import samplers
import targets
from engine.client import RunClient
from engine.config import RunConfig
from engine.engine import Engine
from engine.opad_tracker import GROWTH, OpadTracker, tracking_problem
from engine.session import RunSession
from engine.snapshot import Display
from engine.uploads import parse_upload
from samplers.common.exact import stationary_distribution
from samplers.opad.store import KINDS, ParticleStore
from tests.tiny import TINY_TARGETS

#: Longest wait for a run to reach a state (seconds): generous, so that a slow machine never fails a test.
TIMEOUT = 60.0


@pytest.fixture
def engine():
    engine = Engine(in_process=True)
    yield engine
    engine.shutdown()


def built(client: RunClient) -> bool:
    return client.info is not None and not client.building


def run_steps(client: RunClient, n: int, opads: list) -> None:
    """Take ``n`` steps and wait until they are reported, collecting every OPAD snapshot received meanwhile."""
    def collect(snapshot):
        if snapshot.opad is not None:
            opads.append(snapshot.opad)

    assert client.wait_for(built, TIMEOUT, on_snapshot=collect), client.error
    target = client.status.n_steps + n
    client.step(n)
    assert client.wait_for(lambda c: c.status.n_steps >= target, TIMEOUT, on_snapshot=collect), client.error


def latest_opad(client: RunClient, opads: list, step: int):
    """Wait until the OPAD snapshot of ``step`` has arrived (rate-limited: it may come after the step's report)."""
    def collect(snapshot):
        if snapshot.opad is not None:
            opads.append(snapshot.opad)

    assert client.wait_for(lambda c: bool(opads) and opads[-1].steps[-1:].tolist() == [step], TIMEOUT,
                           on_snapshot=collect)  # (the run's first snapshot has no steps yet)
    return opads[-1]


def advance(session: RunSession, n: int) -> None:
    """Take ``n`` steps in a session as its worker does, one chunk at a time."""
    session.step(n)
    while session.busy:
        session.advance()


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
    monkeypatch.setattr("engine.opad_tracker.MARGINALS_SECONDS", 0.0)  # refreshed at every checkpoint
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


def test_targets_too_large_to_enumerate_are_not_tracked_and_the_run_says_why(engine):
    big = targets.make("ising_segmentation", size=6)
    assert "d = 36" in tracking_problem(big)
    with pytest.raises(ValueError, match="enumerate"):
        OpadTracker(big)
    client = RunClient(engine, RunConfig(target="ising_segmentation", target_params={"size": 6},
                                         sampler="metropolis", statistic="log_prob"))
    try:
        opads = []
        run_steps(client, 5, opads)
        assert not client.info.opad_tracked and "d = 36" in client.info.opad_problem
        assert client.status.n_steps == 5 and client.error == "" and opads == []
    finally:
        client.close()
    session = RunSession(RunConfig(target="ising_segmentation", target_params={"size": 6}, sampler="metropolis",
                                   statistic="log_prob"), run=1, request=1, max_particles=100_000)
    advance(session, 5)
    assert session.tracker is None and session.snapshot(Display(), everything=True).opad is None


def test_a_run_streams_opad_snapshots_and_can_switch_them_off(engine):
    config = RunConfig(target="ising1d", target_params={"m": 10}, sampler="locally_balanced", n_chains=3,
                       statistic="log_prob", opad_neighbours=True)
    client = RunClient(engine, config)
    try:
        opads = []
        run_steps(client, 200, opads)
        assert client.info.opad_tracked
        snapshot = latest_opad(client, opads, 200)
        assert snapshot.steps[-1] == 200 and snapshot.n_particles > 0
        session = RunSession(config, run=1, request=1, max_particles=100_000)  # the run inside the worker
        assert session.sampler.record_neighbours and session.tracker.store.scored_neighbours
        advance(session, 200)
        inside = session.snapshot(Display(), everything=True).opad
        np.testing.assert_array_equal(inside.steps, snapshot.steps)
        for kind in KINDS:  # the same run (up to rounding: where its chunks end depends on time)
            np.testing.assert_allclose(inside.kl[kind], snapshot.kl[kind], rtol=1e-12, atol=1e-12)
        off = RunConfig.from_json(config.to_json())
        off.opad = False
        assert client.apply(off)
        assert client.wait_for(lambda c: built(c) and c.config is off, TIMEOUT)
        assert not client.info.opad_tracked and "off" in client.info.opad_problem
        opads.clear()
        run_steps(client, 20, opads)
        assert opads == []
    finally:
        client.close()


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


def test_a_fixed_distance_run_is_measured_against_the_target_restricted_to_its_space(engine):
    config = RunConfig(target="ising1d", target_params={"m": 10}, sampler="kawasaki", sampler_params={"n_active": 4},
                       n_chains=4, statistic="log_prob")
    session = RunSession(config, run=1, request=1, max_particles=100_000)
    advance(session, 400)
    store = session.tracker.store
    states, probabilities = store.exact()
    assert len(states) == 210 and np.all(states.sum(axis=1) == 4)  # C(10, 4) states with 4 ones
    visited = store.states(store.support("opad"))
    assert np.all(visited.sum(axis=1) == 4)
    scratch = -np.log(probabilities[np.isin(targets.state_codes(states), targets.state_codes(visited))].sum())
    assert session.snapshot(Display(), everything=True).opad.kl["opad"][-1, -1] == pytest.approx(scratch, abs=1e-10)
    client = RunClient(engine, config)  # the same run in a worker: what the views receive
    try:
        opads = []
        run_steps(client, 400, opads)
        snapshot = latest_opad(client, opads, 400)
        assert snapshot.kl["opad"][-1, -1] == pytest.approx(scratch, abs=1e-10)
        assert np.all(snapshot.marginals["exact"] == pytest.approx(0.4))  # symmetric chain: 4/10
    finally:
        client.close()
