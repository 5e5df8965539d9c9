"""The dashboard's headless models: configuration, buffer, the run client and its worker, uploads, presets, export.

Runs go through ``RunClient`` and an in-process ``Engine`` (the worker loop in a
thread, the same code a worker process runs); a few tests drive a
``RunSession`` (the run inside a worker) directly to look at its sampler.
Nothing here counts the work done in a time window: tests wait for a state,
with a generous timeout, so a slow machine passes them as a fast one does.
"""

from __future__ import annotations

import io
import json
import multiprocessing
import os
import re
import signal
import threading
import time
from dataclasses import replace

import numpy as np
import pytest

import samplers
import targets
from engine import session as session_module
from engine.budget import Budget, check
from engine.buffer import Chunk, TraceBuffer, chunk_of
from engine.client import RunClient
from engine.config import MAX_CONFIG_BYTES, RunConfig
from engine.engine import Engine
from engine.export import run_record_json, trace_csv
from engine.presets import load_presets
from engine.pacing import CpuShare, Every
from engine.session import RunSession, diagnostics
from engine.snapshot import Display, Snapshot, Status
from engine.uploads import MAX_UPLOAD_BYTES, parse_upload
from tests.tiny import TINY_UAI

#: Longest wait for a run to reach a state (seconds): generous, so that a slow machine never fails a test.
TIMEOUT = 60.0


def small_config(**overrides) -> RunConfig:
    values = dict(target="ising_segmentation", target_params={"size": 8}, sampler="locally_balanced",
                  sampler_params={"balancing": "barker"}, n_chains=3, seed=4, statistic="agreement")
    values.update(overrides)
    return RunConfig(**values)


def built(client: RunClient) -> bool:
    """The configuration asked for last is built (or was refused) and nothing is being built."""
    return client.info is not None and not client.building


def run_steps(client: RunClient, n: int, seen=None) -> dict:
    """Take ``n`` steps, wait until they are reported, and return the whole history so far.

    ``seen`` (a ``Seen``) collects every snapshot received meanwhile: a rate-limited part (diagnostics,
    learning, OPAD…) may come with the very snapshot that reports the last step.
    """
    assert client.wait_for(built, TIMEOUT, on_snapshot=seen), client.error
    target = client.status.n_steps + n
    client.step(n)
    assert client.wait_for(lambda c: c.status.n_steps >= target, TIMEOUT, on_snapshot=seen), client.error
    return client.history


class Seen:
    """The snapshots a client received (an ``on_snapshot`` callback), and the newest value of each part."""

    def __init__(self):
        self.snapshots: list[Snapshot] = []

    def __call__(self, snapshot: Snapshot) -> None:
        self.snapshots.append(snapshot)

    def latest(self, part: str):
        """The newest value of a part that was sent (parts are None in a snapshot when unchanged)."""
        return next((getattr(s, part) for s in reversed(self.snapshots) if getattr(s, part) is not None), None)


def wait_for_part(client: RunClient, seen: Seen, part: str, condition=lambda value: True):
    """Poll until the newest ``part`` received satisfies ``condition``; return it."""
    def reached(_client) -> bool:
        value = seen.latest(part)
        return value is not None and condition(value)

    assert client.wait_for(reached, TIMEOUT, on_snapshot=seen), f"no {part} as expected arrived: {seen.latest(part)}"
    return seen.latest(part)


def complete_snapshot(client: RunClient) -> Snapshot:
    """Ask for a complete snapshot (a display message makes the next one carry every part, as a freshly drawn
    page needs) and return it."""
    seen = Seen()
    client.show(Display())
    # the one snapshot that may be in flight was asked for before: the complete one is the first with the whole
    # history (only for runs of fewer than 1000 steps, which are never decimated: no other snapshot carries it)
    assert client.wait_for(lambda _: any(s.full_history is not None for s in seen.snapshots), TIMEOUT,
                           on_snapshot=seen)
    return next(s for s in seen.snapshots if s.full_history is not None)


def advance(session: RunSession, n: int) -> None:
    """Take ``n`` steps in a session as its worker does, one chunk at a time."""
    session.step(n)
    while session.busy:
        session.advance()


@pytest.fixture
def engine():
    engine = Engine(in_process=True)
    yield engine
    engine.shutdown()


@pytest.fixture
def client(engine):
    client = RunClient(engine, small_config())
    assert client.wait_for(built, TIMEOUT), client.error
    yield client
    client.close()


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
        (" " * (MAX_CONFIG_BYTES + 1), "larger than"),
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
    assert first.fresh_states and first.n_steps == 4
    np.testing.assert_array_equal(buffer.latest_states(), states)
    np.testing.assert_array_equal(buffer.mean_state(1), states[1])
    nothing = buffer.drain()
    assert not nothing.fresh_states and len(nothing.new_history["step"]) == 0  # nothing new
    buffer.push(chunk(range(5, 12)), np.zeros((2, 3), dtype=np.uint8))
    second = buffer.drain()
    assert second.new_history is None and list(second.full_history["step"]) == [0, 2, 4, 6, 8, 10]
    assert second.fresh_states and second.n_steps == 11
    np.testing.assert_array_equal(buffer.mean_state(0), [0.5, 0.5, 0.5])  # the running mean over two pushes


def test_a_chunk_of_rows_keeps_each_steps_log_p_statistic():
    """The log p̃ statistic returns the sampler's own array, which every step overwrites: each row copies it."""
    from engine.buffer import trace_row
    from engine.statistics import available_statistics

    target = targets.make("ising1d", m=6)
    sampler = samplers.make("metropolis", target, n_chains=3, seed=0)
    statistic = available_statistics(target)["log_prob"]
    rows, log_p = [], []
    for _ in range(20):
        sampler.step(record=False)
        rows.append(trace_row(sampler, 0.0, statistic))
        log_p.append(sampler.log_p.copy())
    np.testing.assert_array_equal(chunk_of(rows).statistic, np.array(log_p))
    assert len({tuple(row) for row in np.array(log_p)}) > 1


def test_the_acceptance_counts_moves_not_the_starting_states():
    """A sampler that accepts every move (Wolff) reads 1, not steps/(steps + 1): step 0 is no move."""
    buffer = TraceBuffer(n_chains=4, recent_size=1024)
    states = np.zeros((4, 3), dtype=np.uint8)
    buffer.push(chunk_of([(0, 0, 0.0, np.zeros(4), np.zeros(4), 0)]), states)  # a run's first row: no move yet
    assert np.isnan(buffer.recent_acceptance())
    moves = [(step, step, 0.0, np.zeros(4), np.zeros(4), 4) for step in range(1, 885)]
    buffer.push(chunk_of(moves), states)
    assert buffer.recent_acceptance() == 1.0


def test_a_run_that_is_not_running_reports_no_speed():
    running = Status(phase="running", n_steps=500, steps_per_second=23.4)
    assert running.steps_per_second == 23.4
    assert replace(running, phase="paused").steps_per_second == 0.0
    assert Status(phase="failed", steps_per_second=23.4).steps_per_second == 0.0


def test_memory_stays_flat_over_a_long_run():
    buffer = TraceBuffer(n_chains=4, history_size=100, recent_size=50)
    states = np.zeros((4, 10), dtype=np.uint8)
    sizes = []
    for start in range(0, 200_000, 500):
        buffer.push(chunk(range(start, start + 500), n_chains=4), states)
        sizes.append(sum(a.nbytes for a in buffer._history.values()) + sum(a.nbytes for a in buffer._recent.values()))
    assert len(set(sizes)) == 1
    assert len(buffer.history()["step"]) <= 100


# -- the run: client, worker, session ---------------------------------------------------------------
def test_steps_reach_the_history_and_reset_replays_the_same_run(client):
    first = run_steps(client, 120)
    assert list(first["step"][:3]) == [0, 1, 2] and first["step"][-1] == 120
    assert client.status.n_steps == 120 and client.status.phase == "paused"
    run = client.info.run
    client.reset()
    assert client.wait_for(lambda c: built(c) and c.info.run != run and c.history is not None, TIMEOUT)
    assert client.history["step"].tolist() == [0] and client.status.n_steps == 0
    again = run_steps(client, 120)
    np.testing.assert_array_equal(first["step"], again["step"])
    np.testing.assert_array_equal(first["log_prob"], again["log_prob"])
    np.testing.assert_array_equal(first["statistic"], again["statistic"])


def test_an_exported_configuration_reproduces_the_run(client, engine):
    trace = run_steps(client, 80)
    exported = run_record_json(client.config, client.frozen)  # what the page's "configuration" download holds
    replay = RunClient(engine, RunConfig.from_json(exported))
    try:
        np.testing.assert_array_equal(trace["log_prob"], run_steps(replay, 80)["log_prob"])
        np.testing.assert_array_equal(trace["statistic"], replay.history["statistic"])
    finally:
        replay.close()


def test_start_and_pause(client):
    client.start()
    assert client.wait_for(lambda c: c.status.running and c.status.n_steps >= 50, TIMEOUT)
    client.pause()
    assert client.wait_for(lambda c: c.status.phase == "paused", TIMEOUT)
    settled = client.status.n_steps
    assert settled >= 50 and not client.status.running and client.status.steps_per_second == 0
    time.sleep(0.2)  # a run that went on after the pause would show in the step count below
    assert client.run_steps(10, timeout=TIMEOUT)
    assert client.status.n_steps == settled + 10 and not client.status.running


def test_the_speed_cap_bounds_the_steps_per_elapsed_time(client):
    """The cap is an upper bound on steps per elapsed time: a slow machine satisfies it as a fast one does."""
    cap = 50.0
    client.set_speed(cap)
    assert client.config.steps_per_second == cap
    reports = []

    def record(snapshot):
        reports.append((time.perf_counter(), snapshot.status))

    started = time.perf_counter()
    client.start()
    assert client.wait_for(lambda c: c.status.running and c.status.n_steps >= 25, TIMEOUT, on_snapshot=record)
    client.pause()
    assert client.wait_for(lambda c: c.status.phase == "paused", TIMEOUT, on_snapshot=record)
    elapsed = time.perf_counter() - started
    assert client.status.n_steps <= cap * elapsed + 2
    for seen_at, status in reports:  # at every report, not only at the end
        assert status.n_steps <= cap * (seen_at - started) + 2
    settled = client.status.n_steps
    client.start()
    client.set_speed(0.0)  # changed live: uncapped, and the run goes on
    assert client.config.steps_per_second == 0.0
    assert client.wait_for(lambda c: c.status.running and c.status.n_steps >= settled + 200, TIMEOUT)
    client.pause()


def test_an_invalid_change_keeps_the_current_run(client):
    run_steps(client, 30)
    before, info = client.config, client.info
    refused = small_config(sampler="gwg", target="markov_network", target_params={}, statistic="log_prob")
    if client.apply(refused):  # accepted for building: the worker answers that it cannot build it
        assert client.wait_for(lambda c: not c.building, TIMEOUT)
    assert "differentiable" in client.error
    assert client.config is before and client.info is info and client.status.n_steps == 30
    run_steps(client, 5)  # the current run goes on where it was
    assert client.status.n_steps == 35 and client.info is info
    changed = small_config(target="ising1d", target_params={"m": 6}, statistic="magnetisation")
    assert client.apply(changed)
    assert client.wait_for(lambda c: built(c) and c.config is changed, TIMEOUT)
    assert client.error == "" and client.info.dim == 6 and client.info.target_name == "ising1d"


class HeldBack:
    """A worker's pipe whose answers the test holds back until it lets them through all at once (as when a page
    update comes late: a page loaded while its default run was still being built)."""

    def __init__(self, connection):
        self.connection, self.held = connection, []

    def hold_until(self, condition, timeout: float = TIMEOUT) -> None:
        """Read the worker's answers (kept for later) until ``condition(answers)`` holds."""
        end = time.monotonic() + timeout
        while not condition(self.held):
            assert self.connection.poll(max(0.0, end - time.monotonic())), f"the worker answered only {self.held}"
            self.held.append(self.connection.recv())

    def poll(self, timeout: float = 0.0) -> bool:
        return bool(self.held) or self.connection.poll(timeout)

    def recv(self):
        return self.held.pop(0) if self.held else self.connection.recv()

    def send(self, message) -> None:
        self.connection.send(message)

    def close(self) -> None:
        self.connection.close()


def test_one_poll_brings_at_most_one_new_run_to_the_page():
    """Two runs built before the page's next update (a file loaded while the default run was being built): one
    poll hands over the first, the next poll the second. Views rebuilt for two runs in one page update sent the
    browser models it had not been sent ("reference … isn't known"), and the sidebar and the address kept the
    old run while the new one ran (issue 34, item 6)."""
    engine = Engine(in_process=True)
    client = RunClient(engine, small_config(seed=1))
    try:
        second = small_config(seed=2, n_chains=5)
        assert client.apply(second)
        pipe = HeldBack(client._handle.connection)
        client._handle.connection = pipe
        pipe.hold_until(lambda answers: sum(kind == "info" for kind, *_ in answers) == 2)
        runs_per_poll = []
        client.param.watch(lambda event: runs_per_poll[-1].append(event.new.n_chains), "info")
        for _ in range(2):
            runs_per_poll.append([])
            client.poll()
        assert runs_per_poll == [[3], [5]]
        assert client.config is second and not client.building
    finally:
        client.close()
        engine.shutdown()


def test_a_configuration_over_the_budget_is_refused_at_once_and_the_run_goes_on():
    engine = Engine(Budget(run_bytes=50 * check(small_config(), Budget()).total), in_process=True)
    client = RunClient(engine, small_config())
    try:
        assert client.wait_for(built, TIMEOUT), client.error
        run_steps(client, 10)
        info = client.info
        assert not client.apply(small_config(target_params={"size": 200}, n_chains=256))
        assert "memory" in client.error and not client.building
        run_steps(client, 5)
        assert client.info is info and client.status.n_steps == 15
    finally:
        client.close()
        engine.shutdown()


@pytest.mark.parametrize("in_process", [True, False], ids=["thread", "process"])
def test_close_stops_the_worker(in_process):
    engine = Engine(in_process=in_process)
    threads, processes = set(threading.enumerate()), set(multiprocessing.active_children())
    client = RunClient(engine, small_config())
    try:
        assert client.wait_for(built, TIMEOUT), client.error
        client.start()
        assert client.wait_for(lambda c: c.status.running and c.status.n_steps > 0, TIMEOUT)
        assert client.worker_alive and engine.n_workers == 1
        workers = ([t for t in threading.enumerate() if t not in threads] if in_process
                   else [p for p in multiprocessing.active_children() if p not in processes])
        assert workers and all(worker.is_alive() for worker in workers)
        client.close()
        assert not client.worker_alive and engine.n_workers == 0
        for worker in workers:
            worker.join(TIMEOUT)
            assert not worker.is_alive()
        client.close()  # idempotent
        assert client.poll() == [] and engine.n_workers == 0
    finally:
        client.close()
        engine.shutdown()


def test_a_closed_client_does_not_start_a_worker_again(engine):
    client = RunClient(engine, small_config())
    try:
        assert client.wait_for(built, TIMEOUT)
        client.close()
        client.start()  # e.g. a late click after the session ended
        time.sleep(0.2)
        assert not client.worker_alive and engine.n_workers == 0
    finally:
        client.close()


def test_diagnostics_report_ess_and_rates(client):
    seen = Seen()
    run_steps(client, 400, seen)
    values = wait_for_part(client, seen, "diagnostics", lambda d: d["window (steps)"] == 401)
    assert 0 < values["acceptance"] <= 1 and values["ESS"] > 0 and values["ESS per second"] > 0
    assert values["ESS per 1000 evaluations"] > 0 and np.isfinite(values["R-hat"]) and values["ESS per step"] > 0
    discs_mean = float(values["ESS per chain, DISCS (2nd half)"].split(" ± ")[0].replace(",", ""))
    per_step = values["ESS per chain, DISCS (2nd half) per step"]
    assert 0 < discs_mean and per_step == pytest.approx(discs_mean / 200, rel=1e-3)  # the mean is shown to 4 digits
    session = RunSession(small_config(), run=1, request=1, max_particles=100_000)
    first = diagnostics(session.buffer.recent())
    assert first["window (steps)"] == 1 and np.isnan(first["ESS"])
    advance(session, 400)
    direct = diagnostics(session.buffer.recent())
    assert direct["window (steps)"] == 401
    assert direct["acceptance"] == values["acceptance"] and direct["ESS"] == values["ESS"]  # the same run


def burn_cpu(seconds: float) -> None:
    """Use ``seconds`` of this thread's CPU time (however long that takes on a loaded machine)."""
    until = time.thread_time() + seconds
    while time.thread_time() < until:
        pass


def test_a_cpu_share_counts_the_thread_cpu_time_of_its_work_against_all_of_it():
    share = CpuShare(0.1)
    assert share.allows()
    with share.spending():
        burn_cpu(0.02)
    assert not share.allows()  # 0.02 s of about 0.02 s
    burn_cpu(0.2)
    assert share.allows()  # 0.02 s of at least 0.22 s


def test_a_running_session_skips_the_slow_parts_past_its_display_share_but_never_the_status(monkeypatch):
    monkeypatch.setattr(session_module, "DISPLAY_SHARE", 0.0)  # any display work is over the share
    monkeypatch.setattr(session_module, "DIAGNOSTICS_SECONDS", 0.0)
    session = RunSession(small_config(), run=1, request=1, max_particles=100_000)
    assert session.snapshot(Display(), everything=True).diagnostics is not None  # a first snapshot has it all
    session.start()
    for _ in range(3):
        session.advance()
        snapshot = session.snapshot(Display())
        assert snapshot.diagnostics is None and snapshot.status.running and snapshot.new_history is not None
    assert session.unsent  # the diagnostics are still due
    session.pause()
    answer = session.snapshot(Display(), quick=True)  # the answer to Pause waits for nothing slow
    assert answer.status.phase == "paused" and answer.diagnostics is None
    later = [session.snapshot(Display())]  # then, paused, nothing else wants the CPU: computed in the background
    deadline = time.monotonic() + 60
    while later[-1].diagnostics is None and session.unsent and time.monotonic() < deadline:
        time.sleep(0.01)
        later.append(session.snapshot(Display()))
    assert later[-1].diagnostics["window (steps)"] == session.sampler.n_steps + 1
    assert all(snapshot.diagnostics is None for snapshot in later[:-1])  # sent once, when finished


def test_the_diagnostics_are_computed_in_the_background_and_sent_once_finished(monkeypatch):
    session = RunSession(small_config(), run=1, request=1, max_particles=100_000)
    session.snapshot(Display(), everything=True)
    advance(session, 50)
    computing, release = threading.Event(), threading.Event()

    def slow(recent):
        computing.set()
        release.wait(60)
        return diagnostics(recent)

    monkeypatch.setattr(session_module, "diagnostics", slow)
    monkeypatch.setattr(session_module, "DIAGNOSTICS_SECONDS", 0.0)
    session._diagnostics_due = Every(0.0)
    assert session.snapshot(Display()).diagnostics is None and computing.wait(60)
    assert session.unsent  # the worker will answer when it is done
    assert session.snapshot(Display()).diagnostics is None  # a snapshot never waits for it
    release.set()
    deadline = time.monotonic() + 60
    while (arrived := session.snapshot(Display()).diagnostics) is None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert arrived["window (steps)"] == 51


def test_a_learning_run_reports_its_state_and_freezes_on_request(engine):
    config = small_config(sampler="lsb", sampler_params={"parametrization": "lsb2", "burn_in": 1000})
    client = RunClient(engine, config)
    try:
        assert client.wait_for(built, TIMEOUT), client.error
        assert client.info.capabilities.learns_balancing
        seen = Seen()
        run_steps(client, 12, seen)
        state = wait_for_part(client, seen, "learning", lambda s: s.step == 12)
        assert state.adapting and state.frozen_at is None and state.burn_in == 1000
        assert state.history["step"].tolist() == list(range(12))
        client.start()
        assert client.wait_for(lambda c: c.status.running and c.status.n_steps > 12, TIMEOUT, on_snapshot=seen)
        client.freeze()  # while the worker runs
        client.pause()
        assert client.wait_for(lambda c: c.status.phase == "paused", TIMEOUT, on_snapshot=seen)
        state = wait_for_part(client, seen, "learning", lambda s: not s.adapting)
        assert state.frozen_at > 12 and state.frozen_at <= client.status.n_steps
        frozen_curve, frozen_at = state.log_g, state.frozen_at
        run_steps(client, 20, seen)
        state = wait_for_part(client, seen, "learning")  # resent only if it changed (g is learned no more)
        assert not state.adapting and state.frozen_at == frozen_at
        np.testing.assert_array_equal(state.log_g, frozen_curve)
        run = client.info.run
        seen = Seen()
        client.reset()  # the same seed learns the same g again
        assert client.wait_for(lambda c: built(c) and c.info.run != run, TIMEOUT, on_snapshot=seen)
        assert client.frozen is None
        state = wait_for_part(client, seen, "learning", lambda s: s.step == 0)
        assert state.adapting and state.frozen_at is None
    finally:
        client.close()
    fixed = RunClient(engine, small_config())
    try:
        assert fixed.wait_for(built, TIMEOUT)
        assert not fixed.info.capabilities.learns_balancing
        seen = Seen()
        fixed.freeze()  # nothing to freeze: a no-op
        run_steps(fixed, 5, seen)
        assert fixed.error == "" and fixed.status.phase == "paused" and fixed.status.n_steps == 5
        assert fixed.frozen is None and complete_snapshot(fixed).learning is None
        assert all(s.learning is None for s in seen.snapshots)
    finally:
        fixed.close()


def test_freezing_a_paused_learning_run_is_reported_without_another_step(engine):
    client = RunClient(engine, small_config(sampler="lsb", sampler_params={"parametrization": "lsb2",
                                                                           "burn_in": 1000}))
    try:
        assert client.wait_for(built, TIMEOUT)
        seen = Seen()
        run_steps(client, 12, seen)
        client.freeze()
        state = wait_for_part(client, seen, "learning", lambda s: not s.adapting)
        assert state.frozen_at == 12 and client.status.n_steps == 12
    finally:
        client.close()


def test_a_frozen_learning_run_keeps_its_target_exact():
    """Inside the worker: after a freeze the sampler's cached log p̃ are the target's, and g no longer changes."""
    session = RunSession(small_config(sampler="lsb", sampler_params={"parametrization": "lsb2", "burn_in": 1000}),
                         run=1, request=1, max_particles=100_000)
    advance(session, 12)
    assert session.sampler.adapting
    session.freeze()
    assert not session.sampler.adapting and session.sampler.frozen_at == 12
    frozen_curve = session.sampler.log_g(np.linspace(-3, 3, 7))
    advance(session, 20)
    np.testing.assert_array_equal(session.sampler.log_g(np.linspace(-3, 3, 7)), frozen_curve)
    np.testing.assert_allclose(session.sampler.log_p, session.target.log_prob(session.sampler.states), atol=1e-9)
    state = session.snapshot(Display(), everything=True).learning
    assert not state.adapting and state.frozen_at == 12 and state.step == 32


def test_the_record_of_a_frozen_run_holds_its_kernel_and_reads_back(engine):
    config = small_config(sampler="lsb", sampler_params={"parametrization": "lsb2", "burn_in": 1000})
    client = RunClient(engine, config)
    try:
        assert client.wait_for(built, TIMEOUT)
        run_steps(client, 12)
        client.freeze()
        seen = Seen()
        run_steps(client, 3, seen)
        wait_for_part(client, seen, "learning", lambda s: not s.adapting)
        assert client.wait_for(lambda c: c.frozen is not None, TIMEOUT)
        assert client.frozen["at_step"] == 12 and client.frozen["sampler_params"]
        record = run_record_json(client.config, client.frozen)
        assert json.loads(record)["frozen"] == json.loads(json.dumps(client.frozen))
        assert RunConfig.from_json(record).to_dict() == config.to_dict()  # informative, and read back
    finally:
        client.close()


def test_a_paused_session_that_polls_keeps_its_run():
    engine = Engine(Budget(idle_seconds=1.0), in_process=True)
    client = RunClient(engine, small_config())
    try:
        assert client.wait_for(built, TIMEOUT)
        run_steps(client, 5)
        assert not client.wait_for(lambda c: not c.worker_alive or c.error != "", 3.0)  # polled for 3 s
        assert client.worker_alive and client.status.phase == "paused"
    finally:
        client.close()
        engine.shutdown()


def test_a_killed_worker_takes_only_its_run_and_its_restart_is_booked_again():
    config = small_config()
    need = check(config, Budget()).total
    engine = Engine(Budget(total_bytes=need + need // 2))  # room for one run: worker processes
    processes = set(multiprocessing.active_children())
    first = RunClient(engine, config)
    second = None
    try:
        assert first.wait_for(built, TIMEOUT), first.error
        trace = run_steps(first, 30)
        second = RunClient(engine, config)
        assert "server busy" in second.error and second.info is None
        worker = next(p for p in multiprocessing.active_children() if p not in processes)
        os.kill(worker.pid, signal.SIGKILL)  # the worker this test started
        assert first.wait_for(lambda c: c.status.phase == "failed", TIMEOUT)
        assert "SIGKILL" in first.error and not first.worker_alive
        first.start()  # starts the run again from its seed in a new worker
        assert first.wait_for(lambda c: built(c) and c.status.running and c.status.n_steps > 0, TIMEOUT)
        first.pause()
        assert not second.apply(config) and "server busy" in second.error  # the restarted run is booked
        run = first.info.run
        first.reset()
        assert first.wait_for(lambda c: built(c) and c.info.run != run, TIMEOUT)
        np.testing.assert_array_equal(run_steps(first, 30)["log_prob"], trace["log_prob"])
    finally:
        first.close()
        if second is not None:
            second.close()
        engine.shutdown()


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
        config = preset.run_config()
        check(config, Budget())  # within a default server's budget for one run
        target, sampler = config.build()
        sampler.step()
        assert preset.description


#: What a preset's text may not state, as its run does not show it: a duration (the speed is the machine's), a
#: measured rate other than a target it tunes toward, or a verdict on a paper's claim (the claims card gives those).
NOT_SHOWN_BY_THE_RUN = {"a duration": re.compile(r"\d\s*(s|min|seconds?|minutes?)\b|(few|some) (seconds|minutes)"),
                        "a measured per cent": re.compile(r"(?<!toward )(?<![\d.])\d+(\.\d+)? ?%"),
                        "a verdict": re.compile(r"\breproduced\b")}


@pytest.mark.parametrize("name", list(load_presets()))
def test_no_preset_states_a_measurement_its_run_does_not_show(name):
    preset = load_presets()[name]
    for text in (preset.description, preset.shows_failure):
        for what, pattern in NOT_SHOWN_BY_THE_RUN.items():
            assert not pattern.search(text), f"{name} states {what}: {pattern.search(text).group(0)!r}"


def test_a_preset_runs_in_a_worker(engine):
    preset = next(iter(load_presets().values()))
    client = RunClient(engine, preset.run_config())
    try:
        assert client.wait_for(built, TIMEOUT), client.error
        assert client.error == "" and client.info.sampler == preset.config.get("sampler", client.info.sampler)
        run_steps(client, 3)
        assert client.status.n_steps == 3
    finally:
        client.close()


def test_trace_csv_has_a_header_and_one_row_per_history_point(client):
    history = run_steps(client, 10)
    lines = trace_csv(history).strip().splitlines()
    assert lines[0].split(",")[:4] == ["step", "n_evals", "seconds", "log_prob_0"]
    assert len(lines) == 12 and lines[-1].startswith("10,")
    json.dumps(client.config.to_dict())


def test_every_upload_type_has_a_hint():
    from engine.uploads import UPLOAD_HINTS, UPLOAD_TYPES

    assert set(UPLOAD_HINTS) == set(UPLOAD_TYPES)


def test_an_rbm_run_draws_its_summed_out_hidden_units_given_the_chain_shown():
    config = small_config(target="rbm", target_params={}, sampler="gibbs", sampler_params={}, statistic="log_prob")
    session = RunSession(config, run=1, request=1, max_particles=100_000)
    advance(session, 5)
    info = session.info()
    assert info.hidden_units == session.target.n_hidden == 16
    for chain in (0, 2):
        snapshot = session.snapshot(Display(chain=chain), everything=True)
        state = session.buffer.latest_states()[chain]
        expected = session.target.hidden_probabilities(state).reshape(4, 4)
        np.testing.assert_array_equal(snapshot.hidden_image, expected.astype(np.float32))
    plain = RunSession(small_config(), run=1, request=1, max_particles=100_000)
    assert plain.info().hidden_units == 0 and plain.snapshot(Display(), everything=True).hidden_image is None
