"""The dashboard's headless models: configuration, buffer, run model, uploads, presets, export."""

from __future__ import annotations

import io
import json
import threading
import time

import numpy as np
import pytest

from dashboard.model.buffer import Chunk, TraceBuffer
from dashboard.model.config import RunConfig
from dashboard.model.export import trace_csv
from dashboard.model.presets import load_presets
from dashboard.model.run_model import RunModel
from dashboard.model.uploads import MAX_UPLOAD_BYTES, parse_upload
from tests.tiny import TINY_UAI


def small_config(**overrides) -> RunConfig:
    values = dict(target="ising_segmentation", target_params={"size": 8}, sampler="locally_balanced",
                  sampler_params={"balancing": "barker"}, n_chains=3, seed=4, statistic="agreement")
    values.update(overrides)
    return RunConfig(**values)


def run_steps(model: RunModel, n: int) -> dict:
    model.step(n)
    assert model.wait_idle()
    return model.buffer.history()


@pytest.fixture
def model():
    run = RunModel(small_config())
    yield run
    run.close()


# -- configuration -------------------------------------------------------------------------------
def test_config_round_trips_through_json():
    config = small_config(target="boltzmann", target_params={"J": np.array([[0.0, 1.0], [1.0, 0.0]]), "beta": 0.5},
                          sampler="gibbs", sampler_params={}, statistic="magnetisation")
    again = RunConfig.from_json(config.to_json())
    assert again.to_dict() == config.to_dict()
    target, sampler = again.build()
    assert target.dim == 2 and sampler.n_chains == 3


@pytest.mark.parametrize(
    "text, message",
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "JSON object"),
        ('{"colour": "red"}', "unknown configuration keys"),
        ('{"n_chains": 0}', "n_chains"),
        ('{"target": "no_such_target"}', "target"),
        ('{"target_params": [1]}', "target_params must be a JSON object"),
        (" " * 5_000_001, "larger than"),
    ],
)
def test_bad_configuration_files_are_refused_with_the_reason(text, message):
    with pytest.raises(ValueError, match=message):
        RunConfig.from_json(text)


@pytest.mark.parametrize(
    "overrides, message",
    [
        (dict(sampler="gwg", target="markov_network", target_params={}, statistic="log_prob"), "differentiable"),
        (dict(statistic="magnetisation", target="rbm", target_params={}), "statistic 'magnetisation'"),
        (dict(target_params={"size": 8, "sigma": -1.0}), "sigma"),
        (dict(sampler="block_gibbs", sampler_params={"block_size": 3, "radius": 2}), "radius"),
    ],
)
def test_invalid_combinations_fail_to_build_with_a_value_error(overrides, message):
    with pytest.raises(ValueError, match=message):
        small_config(**overrides).build()


# -- buffer ------------------------------------------------------------------------------------------
def chunk(steps, n_chains=2):
    steps = np.asarray(steps)
    values = np.repeat(steps[:, None].astype(float), n_chains, axis=1)
    return Chunk(steps, steps * 10, steps * 0.001, values, -values, np.ones(len(steps), dtype=int))


def test_history_is_decimated_uniformly_and_stays_bounded():
    buffer = TraceBuffer(n_chains=2, history_size=16, recent_size=8)
    states = np.zeros((2, 5), dtype=np.uint8)
    for start in range(0, 1000, 37):
        buffer.push(chunk(range(start, min(start + 37, 1000))), states)
    history = buffer.history()
    steps = history["step"]
    assert len(steps) <= 16 and steps[0] == 0
    assert np.all(np.diff(steps) == buffer.stride)
    assert 1000 - steps[-1] <= buffer.stride
    np.testing.assert_array_equal(history["log_prob"][:, 0], steps)
    recent = buffer.recent()
    np.testing.assert_array_equal(recent["step"], np.arange(992, 1000))


def test_drain_returns_new_points_then_the_rewritten_history():
    buffer = TraceBuffer(n_chains=2, history_size=8)
    states = np.ones((2, 3), dtype=np.uint8)
    buffer.push(chunk(range(5)), states)
    first = buffer.drain()
    assert list(first.new_history["step"]) == [0, 1, 2, 3, 4] and first.full_history is None
    np.testing.assert_array_equal(first.states, states)
    assert buffer.drain().states is None  # nothing new
    buffer.push(chunk(range(5, 12)), states)
    second = buffer.drain()
    assert second.new_history is None and list(second.full_history["step"]) == [0, 2, 4, 6, 8, 10]


def test_memory_stays_flat_over_a_long_run():
    buffer = TraceBuffer(n_chains=4, history_size=100, recent_size=50)
    states = np.zeros((4, 10), dtype=np.uint8)
    sizes = []
    for start in range(0, 200_000, 500):
        buffer.push(chunk(range(start, start + 500), n_chains=4), states)
        sizes.append(sum(a.nbytes for a in buffer._history.values()) + sum(a.nbytes for a in buffer._recent.values()))
    assert len(set(sizes)) == 1
    assert len(buffer.history()["step"]) <= 100


# -- run model ---------------------------------------------------------------------------------------
def test_steps_reach_the_buffer_and_reset_replays_the_same_run(model):
    first = run_steps(model, 120)
    assert list(first["step"][:3]) == [0, 1, 2] and first["step"][-1] == 120
    model.reset()
    assert model.buffer.history()["step"].tolist() == [0]
    again = run_steps(model, 120)
    np.testing.assert_array_equal(first["log_prob"], again["log_prob"])
    np.testing.assert_array_equal(first["statistic"], again["statistic"])


def test_an_exported_configuration_reproduces_the_run(model):
    trace = run_steps(model, 80)
    replay = RunModel(RunConfig.from_json(model.config.to_json()))
    try:
        np.testing.assert_array_equal(trace["log_prob"], run_steps(replay, 80)["log_prob"])
    finally:
        replay.close()


def test_start_and_pause(model):
    model.start()
    deadline = time.time() + 10
    while model.poll().n_steps < 50 and time.time() < deadline:
        time.sleep(0.02)
    model.pause()
    settled = model.poll().n_steps
    assert settled >= 50 and not model.running
    time.sleep(0.2)
    assert model.poll().n_steps == settled


def test_speed_cap_is_respected(model):
    model.set_speed(50.0)
    started = time.perf_counter()
    model.start()
    time.sleep(0.6)
    model.pause()
    elapsed = time.perf_counter() - started
    assert model.poll().n_steps <= 50.0 * elapsed + 2


def test_an_invalid_change_keeps_the_current_run(model):
    run_steps(model, 30)
    before = model.config
    assert not model.apply(small_config(sampler="gwg", target="markov_network", target_params={},
                                        statistic="log_prob"))
    assert "differentiable" in model.error
    assert model.config is before and model.poll().n_steps == 30
    assert model.apply(small_config(target="ising1d", target_params={"m": 6}, statistic="magnetisation"))
    assert model.error == "" and model.target.dim == 6


def test_close_stops_and_joins_the_thread():
    run = RunModel(small_config())
    run.start()
    name = run._thread.name
    assert any(t.name == name for t in threading.enumerate())
    run.close()
    assert not run.thread_alive and not any(t.name == name for t in threading.enumerate())
    with pytest.raises(RuntimeError, match="closed"):
        run.start()


def test_diagnostics_report_ess_and_rates(model):
    run_steps(model, 400)
    values = model.diagnostics()
    assert values["window (steps)"] == 401
    assert 0 < values["acceptance"] <= 1 and values["ESS"] > 0 and values["ESS per second"] > 0


def test_a_learning_run_reports_its_state_and_freezes_on_request():
    run = RunModel(small_config(sampler="lsb", sampler_params={"parametrization": "lsb2", "burn_in": 1000}))
    try:
        assert run.learns_balancing
        run_steps(run, 12)
        state = run.learning_state()
        assert state.learning and state.frozen_at is None and state.burn_in == 1000
        assert state.history["step"].tolist() == list(range(12))
        run.start()
        time.sleep(0.2)
        run.freeze()  # while the thread runs
        run.pause()
        state = run.learning_state()
        assert not state.learning and state.frozen_at >= 12
        frozen_curve = run.balancing_curve(np.linspace(-3, 3, 7))
        run_steps(run, 20)
        np.testing.assert_array_equal(run.balancing_curve(np.linspace(-3, 3, 7)), frozen_curve)
        np.testing.assert_allclose(run.sampler.log_p, run.target.log_prob(run.sampler.states), atol=1e-9)
        run.reset()  # the same seed learns the same g again
        assert run.learning_state().learning
    finally:
        run.close()
    fixed = RunModel(small_config())
    try:
        assert not fixed.learns_balancing and fixed.learning_state() is None
        fixed.freeze()  # nothing to freeze: a no-op
    finally:
        fixed.close()


# -- uploads, presets, export ------------------------------------------------------------------------
def test_uploads_parse_uai_npz_and_csv():
    assert parse_upload("markov_network", "tiny.uai", TINY_UAI.encode())["uai_text"] == TINY_UAI
    J = np.array([[0.0, 0.5], [0.5, 0.0]])
    archive = io.BytesIO()
    np.savez(archive, J=J, h=np.array([0.1, -0.1]))
    params = parse_upload("boltzmann", "model.npz", archive.getvalue())
    np.testing.assert_array_equal(params["J"], J)
    params = parse_upload("boltzmann", "couplings.csv", b"0,0.5,0.1\n0.5,0,-0.1\n")
    np.testing.assert_array_equal(params["h"], [0.1, -0.1])


def test_regression_csv_upload_picks_the_response_and_runs_bvs():
    data = b"a,y,b\n1,2,3\n4,5,7\n2,1,0\n3,3,1\n"
    params = parse_upload("bvs", "mine.csv", data)
    np.testing.assert_array_equal(params["y"], [2, 5, 1, 3])
    np.testing.assert_array_equal(params["X"], [[1, 3], [4, 7], [2, 0], [3, 1]])
    last = parse_upload("bvs", "mine.csv", b"a,b,target\n1,2,3\n4,5,7\n2,1,0\n")
    np.testing.assert_array_equal(last["y"], [3, 7, 0])
    config = small_config(target="bvs", target_params=params, sampler="gibbs", sampler_params={}, statistic="ones")
    again = RunConfig.from_json(config.to_json())  # uploaded data travel in the exported configuration
    target, sampler = again.build()
    assert target.dim == 2 and sampler.step().states.shape == (3, 2)


@pytest.mark.parametrize(
    "target, filename, data, message",
    [
        ("markov_network", "net.uai", b"MARKOV\n2\n2 2\n1\n1 5\n\n2 1 1\n", "line"),
        ("markov_network", "net.txt", b"MARKOV", "accepts .uai"),
        ("boltzmann", "model.npz", b"not a zip", "not a readable .npz"),
        ("boltzmann", "couplings.csv", b"0,1\n1,x\n", "not a numeric CSV"),
        ("boltzmann", "couplings.csv", b"0,1,2,3\n1,0,2,3\n", "expected a d"),
        ("boltzmann", "big.csv", b"0" * (MAX_UPLOAD_BYTES + 1), "limit"),
        ("ising1d", "x.uai", b"MARKOV", "accepts no files"),
        ("bvs", "data.csv", b"1,2\n3,4\n", "name every column"),
        ("bvs", "data.csv", b"a,y\n1,x\n2,3\n", "must be a number"),
        ("bvs", "data.csv", b"a,b,y\n1,2\n3,4\n", "column names"),
        ("bvs", "data.csv", b"a,y\n1,2\n", "at least 2 rows"),
        ("bvs", "data.csv", b"a,y\n1,nan\n2,3\n", "non-finite"),
        ("bvs", "data.npz", b"PK", "accepts .csv"),
    ],
)
def test_bad_uploads_are_refused_with_the_reason(target, filename, data, message):
    with pytest.raises(ValueError, match=message):
        parse_upload(target, filename, data)


def test_npz_with_pickled_objects_is_refused():
    archive = io.BytesIO()
    np.savez(archive, J=np.array([{"code": "evil"}], dtype=object))
    with pytest.raises(ValueError, match="pickle"):
        parse_upload("boltzmann", "evil.npz", archive.getvalue())


def test_every_preset_builds_and_runs():
    presets = load_presets()
    assert len(presets) >= 25
    for preset in presets.values():
        target, sampler = preset.run_config().build()
        sampler.step()
        assert preset.description


def test_trace_csv_has_a_header_and_one_row_per_history_point(model):
    history = run_steps(model, 10)
    lines = trace_csv(history).strip().splitlines()
    assert lines[0].split(",")[:4] == ["step", "n_evals", "seconds", "log_prob_0"]
    assert len(lines) == 12 and lines[-1].startswith("10,")
    json.dumps(model.config.to_dict())


def test_every_upload_type_has_a_hint():
    from dashboard.model.uploads import UPLOAD_HINTS, UPLOAD_TYPES

    assert set(UPLOAD_HINTS) == set(UPLOAD_TYPES)
