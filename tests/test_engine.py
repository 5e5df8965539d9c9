"""The run engine: a worker per session, the memory budget, and a server that survives its users.

Every bad input and failure here gives a message in the client (what the page
shows) and leaves the session, and every other session, working. Processes
are real (forkserver workers) where the test is about processes: a hard
memory limit, a kill from outside, priorities, what is left behind. No test
depends on the machine's speed: each waits on a state with a generous
timeout.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from engine import client as client_module
from engine.budget import Budget, BudgetExceeded, Estimate, budget_from_arguments, check, parse_size
from engine.client import RunClient
from engine.config import RunConfig
from engine.engine import Engine

TIMEOUT = 60.0


def small(**overrides) -> RunConfig:
    values = dict(target="ising_segmentation", target_params={"size": 8}, sampler="locally_balanced", n_chains=3,
                  seed=4, statistic="agreement")
    values.update(overrides)
    return RunConfig(**values)


@pytest.fixture
def processes():
    engine = Engine(Budget(max_workers=3, idle_seconds=60))
    yield engine
    engine.shutdown()


def built(client: RunClient) -> RunClient:
    assert client.wait_for(lambda c: c.info is not None and not c.building, TIMEOUT), client.error
    return client


# -- the model never imports Panel or Bokeh ----------------------------------------------------------------
def test_the_model_package_imports_neither_panel_nor_bokeh():
    """No engine module loads a page library (Panel, Bokeh, HoloViews), itself or through anything it imports.
    One third-party import is set apart, measured first: arviz-base (which arviz-stats, the diagnostics' ESS,
    imports when it is installed) loads Bokeh's settings modules to pick its default plotting backend; whatever
    the engine's modules load beyond that fails."""
    code = ("import importlib, importlib.util, pkgutil, sys\n"
            "def page(): return {n for n in sys.modules if n.split('.')[0] in ('panel', 'bokeh', 'holoviews')}\n"
            "if importlib.util.find_spec('arviz_base'): import arviz_base\n"
            "theirs = page()\n"
            "assert not {n for n in theirs if n.split('.')[0] != 'bokeh'}, theirs\n"
            "import engine as m\n"
            "for info in pkgutil.iter_modules(m.__path__): importlib.import_module('engine.' + info.name)\n"
            "bad = sorted(page() - theirs)\n"
            "print(bad); sys.exit(1 if bad else 0)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr


def test_views_read_snapshots_never_samplers_or_targets():
    """No view module imports the samplers' or targets' packages beyond pure helpers, nor touches a run's objects."""
    from pathlib import Path
    views = Path(__file__).resolve().parents[1] / "dashboard" / "views"
    for path in views.glob("*.py"):
        text = path.read_text()
        for forbidden in (".sampler.", ".target.", "model.sampler", "model.target", "import targets"):
            assert forbidden not in text, f"{path.name} reaches into a run: {forbidden!r}"


# -- the budget -----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("config, part", [
    (RunConfig(target="ising_lattice", target_params={"size": 125, "ndim": 3}, n_chains=256,
               sampler="locally_balanced", statistic="log_prob"), "sampler (256 chains × 1,953,125 bits)"),
    (RunConfig(target="from_log_prob", target_params={"n_dim": 100_000}, n_chains=8, sampler="locally_balanced",
               statistic="log_prob"), "scoring all neighbours at once"),
    (RunConfig(target="ising1d", target_params={"m": 24}, n_chains=20, sampler="metropolis"), "OPAD"),
])
def test_configurations_over_the_run_budget_are_refused_before_anything_is_built(config, part):
    budget = Budget(run_bytes=parse_size("600MB"))
    with pytest.raises(BudgetExceeded, match="would need about") as refused:
        check(config, budget)
    assert part in str(refused.value) and "600 MB" in str(refused.value)
    engine = Engine(budget, in_process=True)
    client = built(RunClient(engine, small()))
    try:
        assert not client.apply(config)
        assert "would need about" in client.error and client.info.target_name == "ising_segmentation"
        assert client.run_steps(5)  # the session goes on
    finally:
        client.close()


def test_an_opad_store_is_cut_to_what_the_budget_leaves():
    config = RunConfig(target="ising1d", target_params={"m": 19}, n_chains=20, sampler="metropolis")
    roomy = check(config, Budget(run_bytes=parse_size("4GB")))
    tight = check(config, Budget(run_bytes=parse_size("100MB")))
    assert roomy.opad_particles == 2**19 > tight.opad_particles >= 10_000
    assert tight.total <= parse_size("100MB")


def test_the_budget_is_set_by_server_options():
    budget = budget_from_arguments(["--max-workers", "30", "--run-memory", "1.5GB", "--total-memory", "12GiB",
                                    "--upload-limit", "4MB", "--idle-seconds", "30"])
    assert budget.max_workers == 30 and budget.run_bytes == 1_500_000_000 and budget.total_bytes == 12 * 2**30
    assert budget.uploads.file_bytes == 4_000_000 and budget.idle_seconds == 30
    assert budget_from_arguments([]) == Budget()
    with pytest.raises(SystemExit):
        budget_from_arguments(["--run-memory", "lots"])


def test_the_server_total_refuses_a_run_that_does_not_fit_beside_the_others():
    engine = Engine(Budget(total_bytes=parse_size("50MB")), in_process=True)
    first = built(RunClient(engine, small()))
    second = None
    try:
        big = RunConfig(target="ising_lattice", target_params={"size": 500}, n_chains=4, sampler="metropolis",
                        opad=False)
        assert check(big, engine.budget).total > 25e6
        assert first.apply(big)
        built(first)
        second = RunClient(engine, big)
        assert "server busy" in second.error and second.info is None
    finally:
        first.close()
        if second is not None:
            second.close()


def test_a_server_at_its_worker_cap_says_busy_and_the_others_go_on(processes):
    clients = [built(RunClient(processes, small(seed=i))) for i in range(3)]
    try:
        refused = RunClient(processes, small())
        assert "server busy" in refused.error and "Try again" in refused.error
        for client in clients:
            assert client.run_steps(10)
        clients[0].close()
        assert built(RunClient(processes, small())).run_steps(3)  # a freed place is taken
    finally:
        for client in clients:
            client.close()


# -- workers are processes of their own ---------------------------------------------------------------------
def test_workers_sample_at_the_lowest_priority_once_their_first_snapshot_is_out(processes):
    client = built(RunClient(processes, small()))
    try:
        assert client.run_steps(10)  # snapshots have arrived
        pid = client._handle.runner.pid
        threads = [int(tid) for tid in os.listdir(f"/proc/{pid}/task")]
        assert len(threads) >= 2  # the loop and its sender
        assert {os.getpriority(os.PRIO_PROCESS, tid) for tid in threads} == {19}
        assert os.getpriority(os.PRIO_PROCESS, 0) < 19  # the server keeps its priority
    finally:
        client.close()


def test_a_worker_killed_from_outside_gives_a_message_and_the_session_restarts_its_run(processes):
    client, other = built(RunClient(processes, small())), built(RunClient(processes, small(seed=9)))
    try:
        assert client.run_steps(20)
        os.kill(client._handle.runner.pid, signal.SIGKILL)
        assert client.wait_for(lambda c: c.status.phase == "failed", TIMEOUT)
        assert "SIGKILL" in client.error and "starts this run again" in client.error
        assert other.run_steps(10)  # the other session did not notice
        client.start()
        assert client.wait_for(lambda c: c.status.running and c.status.n_steps > 5, TIMEOUT)
        assert client.config.seed == 4 and client.error == ""
    finally:
        client.close()
        other.close()


def test_a_run_whose_estimate_is_wrong_hits_the_worker_memory_limit_and_only_that_run_fails(processes, monkeypatch):
    other = built(RunClient(processes, small(seed=9)))
    monkeypatch.setattr(client_module, "check", lambda config, budget: Estimate({"wrong": 1}, 10_000))
    engine = Engine(Budget(run_bytes=parse_size("300MB"), idle_seconds=60))
    client = built(RunClient(engine, small()))
    try:
        huge = RunConfig(target="ising_lattice", target_params={"size": 200}, n_chains=256,
                         sampler="locally_balanced", statistic="log_prob", opad=False)
        assert client.apply(huge)
        assert client.wait_for(lambda c: c.error, TIMEOUT)
        assert "memory" in client.error.lower()
        assert client.info.target_name == "ising_segmentation" or client.status.phase == "failed"
        assert other.run_steps(10)
        client.start()  # the session goes on: its last valid run (restarted if the worker died)
        assert client.wait_for(lambda c: c.status.running and c.status.n_steps > 5, TIMEOUT)
    finally:
        client.close()
        engine.shutdown()
        other.close()


def test_no_process_is_left_behind_when_sessions_close(processes):
    clients = [built(RunClient(processes, small(seed=i))) for i in range(3)]
    pids = [client._handle.runner.pid for client in clients]
    for client in clients:
        client.start()
    for client in clients:
        client.close()  # returns at once: a thread makes sure the process is gone
    assert processes.n_workers == 0
    processes.shutdown()  # waits for those threads
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def test_a_worker_that_hears_nothing_from_its_session_ends():
    engine = Engine(Budget(idle_seconds=1.0))
    client = built(RunClient(engine, small()))
    try:
        process = client._handle.runner
        process.join(TIMEOUT)  # no polls: the session is gone as far as the worker can tell
        assert not process.is_alive() and process.exitcode == 0
    finally:
        client.close()
        engine.shutdown()


# -- failures inside a run ---------------------------------------------------------------------------------
def _fails_after_a_while(states):
    _fails_after_a_while.calls += 1
    if _fails_after_a_while.calls > 50:
        raise FloatingPointError("the user's function broke")
    return -states.sum(axis=1).astype(float)


def test_an_exception_in_a_run_shows_its_reason_and_the_session_goes_on():
    _fails_after_a_while.calls = 0
    engine = Engine(in_process=True)
    config = RunConfig(target="from_log_prob", target_params={"fn": _fails_after_a_while, "n_dim": 5},
                       sampler="metropolis", n_chains=2, statistic="log_prob", opad=False)
    client = built(RunClient(engine, config))
    try:
        client.start()
        assert client.wait_for(lambda c: c.status.phase == "failed", TIMEOUT)
        assert "FloatingPointError: the user's function broke" in client.error
        assert client.apply(small())
        assert built(client).run_steps(5) and client.error == ""
    finally:
        client.close()


def test_a_worker_that_must_compile_the_kernels_says_so_before_it_builds(monkeypatch):
    from samplers.common import warmup

    monkeypatch.setattr(warmup, "_READY", False)  # as in a process not forked from the warm forkserver
    client = RunClient(Engine(in_process=True), small())
    seen = []
    client.param.watch(lambda event: seen.append(event.new), "compiling")
    try:
        built(client)
        assert seen == [True, False] and warmup.kernels_ready()
        assert client.apply(small(seed=5))
        built(client)
        assert seen == [True, False]  # compiled once per process
    finally:
        client.close()


def test_an_error_raised_while_a_run_is_built_survives_that_build():
    client = RunClient(Engine(in_process=True), small())
    try:
        client.error = "broken.json is not valid JSON"  # e.g. a file refused before the first run's info arrived
        built(client)
        assert client.error == "broken.json is not valid JSON"
        assert client.apply(small(seed=9))  # a later request clears it once built
        assert built(client).error == ""
    finally:
        client.close()


@pytest.fixture
def client():
    """A small run with its worker in-process."""
    client = built(RunClient(Engine(in_process=True), small()))
    yield client
    client.close()


def test_a_refused_configuration_keeps_the_current_run(client):
    assert client.run_steps(7)
    assert client.apply(small(sampler="gwg", target="markov_network", target_params={}, statistic="log_prob"))
    assert client.wait_for(lambda c: c.error, TIMEOUT) and "differentiable" in client.error
    assert client.info.target_name == "ising_segmentation" and client.status.n_steps == 7
    assert client.run_steps(3)


def test_a_slow_reader_gets_one_snapshot_and_loses_no_trace_row(client):
    """At most one snapshot is in flight; the worker keeps what happened meanwhile in its bounded buffer."""
    client.poll()
    client.step(500)
    time.sleep(0.5)  # not a timing assertion: the reader is simply away for a while
    assert len(client.poll()) <= 1
    assert client.wait_for(lambda c: c.status.n_steps == 500, TIMEOUT)
    steps = client.history["step"]
    assert steps[0] == 0 and steps[-1] == 500 and len(set(steps)) == len(steps)
    assert (steps[1:] - steps[:-1] == steps[1] - steps[0]).all()  # uniform, nothing skipped


def test_a_page_awaits_a_new_runs_first_snapshot_and_each_commands_answer(client):
    """``awaiting`` tells the page to look again soon: until the run is drawn, and until a command shows."""
    assert client.wait_for(lambda c: not c.awaiting, TIMEOUT)
    client.start()
    assert client.awaiting
    assert client.wait_for(lambda c: not c.awaiting, TIMEOUT)
    assert client.status.running
    client.pause()
    assert client.wait_for(lambda c: not c.awaiting, TIMEOUT)
    assert not client.status.running
    assert client.apply(small(seed=11))
    assert client.awaiting and client.building
    assert client.wait_for(lambda c: not c.awaiting, TIMEOUT)
    assert client.config.seed == 11 and client.status.n_steps == 0


# -- the status before the first step ------------------------------------------------------------------------------
def opad_chain(**overrides) -> RunConfig:
    """A run whose OPAD tracker enumerates its target (2^8 states) in its first step."""
    values = dict(target="ising1d", target_params={"m": 8}, sampler="metropolis", n_chains=2, seed=3,
                  statistic="log_prob")
    values.update(overrides)
    return RunConfig(**values)


def test_a_run_is_ready_until_it_first_steps_and_its_phase_says_what_a_setting_up_step_does():
    from engine.session import ENUMERATING, READY, STARTING, RunSession

    session = RunSession(small(), run=1, request=1, max_particles=1000)
    assert session.tracker is None and session.status().phase == READY and not session.setting_up
    assert session.status().n_evals == session.sampler.n_evals > 0  # the set-up's evaluations, before any step
    session.step(1)
    assert session.setting_up == session.status().phase == STARTING
    session.advance()
    assert session.status().phase == "paused" and session.status().n_steps == 1 and not session.setting_up

    opad = RunSession(opad_chain(), run=1, request=1, max_particles=100_000)
    assert opad.tracker is not None and opad.status().phase == READY
    opad.start()
    assert opad.setting_up == opad.status().phase == ENUMERATING  # the first checkpoint enumerates the target
    opad.advance()
    assert opad.status().phase == "running" and opad.sampler.n_steps > 0
    opad.set_beta(0.3)  # a new tracker for the new target: its first step enumerates again
    assert opad.status().phase == ENUMERATING
    opad.advance()
    assert opad.status().phase == "running"


def test_the_worker_tells_the_page_what_a_first_step_sets_up_before_taking_it():
    from engine.session import ENUMERATING, READY

    client = built(RunClient(Engine(in_process=True), opad_chain()))
    try:
        assert client.wait_for(lambda c: c.drawn, TIMEOUT) and client.status.phase == READY
        seen = []
        client.param.watch(lambda event: seen.append((event.new.phase, event.new.n_steps)), "status")
        client.start()
        assert client.wait_for(lambda c: c.status.n_steps > 0, TIMEOUT)
        first_step = next(index for index, (_, steps) in enumerate(seen) if steps > 0)
        assert (ENUMERATING, 0) in seen[:first_step]  # sent before the step, whether a snapshot is wanted or not
    finally:
        client.close()
