"""A worker or race that stops answering: reported in its page, ended, and never waited for on the server's loop.

The processes are real (forkserver workers and races), stopped with SIGSTOP as
a hung one would be. No test depends on the machine's speed: each waits on a
state with a generous timeout, and "returns at once" is asserted as "returns
while the stopped process is still there" (a stopped process cannot end, so
a call that waited for it could not return before it was killed).
"""

from __future__ import annotations

import ctypes
import os
import signal
import threading
import time

import numba
import numpy as np

from engine import client as client_module
from engine.budget import Budget
from engine.client import RunClient
from engine.config import RunConfig
from engine.engine import Engine, WorkerHandle
from sweeps.bake_off import race as race_module
from sweeps.bake_off.race import Race, RaceSettings

#: Longest wait for a state (seconds): generous, so a loaded machine is only slower.
WAIT = 30.0
#: Processor seconds one evaluation of ``_heavy`` spends inside a compiled kernel, which holds the interpreter's lock.
SPIN_SECONDS = 3.0

_clock = ctypes.CDLL(None).clock  # the processor time of the process, in microseconds (POSIX)
_clock.restype, _clock.argtypes = ctypes.c_long, ()


@numba.njit
def _spin(microseconds):
    """Use the processor for ``microseconds`` without letting go of the interpreter's lock (a long kernel call)."""
    start = _clock()
    while _clock() - start < microseconds:
        pass
    return 0


def _heavy(states):
    """A log-probability whose every evaluation is one long kernel call (``SPIN_SECONDS`` of processor time)."""
    _spin(int(SPIN_SECONDS * 1e6))
    return -states.sum(axis=1).astype(float)


def small(**overrides) -> RunConfig:
    values = dict(target="ising_segmentation", target_params={"size": 8}, sampler="locally_balanced", n_chains=3,
                  seed=4, statistic="agreement")
    values.update(overrides)
    return RunConfig(**values)


def built(client: RunClient) -> RunClient:
    assert client.wait_for(lambda c: c.info is not None and not c.building, WAIT), client.error
    return client


def test_a_stopped_worker_is_reported_and_ended_and_reset_starts_its_run_again():
    engine = Engine(Budget(max_workers=2, idle_seconds=60))
    client = built(RunClient(engine, small()))
    try:
        client.start()
        assert client.wait_for(lambda c: c.status.n_steps > 5, WAIT)
        process = client._handle.runner
        os.kill(process.pid, signal.SIGSTOP)
        stopped_at = time.monotonic()
        assert client.wait_for(lambda c: c.status.phase == "failed", WAIT), "a stopped worker was never reported"
        print(f"reported {time.monotonic() - stopped_at:.1f} s after SIGSTOP: {client.error}")
        assert "has not answered for" in client.error and "Reset starts this run again" in client.error
        assert engine.n_workers == 0  # its place is free at once
        process.join(WAIT)
        assert not process.is_alive()  # killed, though nobody waited for it
        client.reset()
        assert built(client).run_steps(5) and client.error == ""
    finally:
        client.close()
        engine.shutdown()


def test_a_long_step_that_holds_the_interpreter_is_not_taken_for_a_hang(monkeypatch):
    """The heartbeat waits while a kernel runs; the worker uses the processor meanwhile, so it is let finish."""
    monkeypatch.setattr(client_module, "SILENT_SECONDS", 1.0)  # look at the silent worker within every long step
    looked = []
    activity = WorkerHandle.activity
    monkeypatch.setattr(WorkerHandle, "activity", lambda handle: looked.append(1) or activity(handle))
    engine = Engine(Budget(max_workers=1, idle_seconds=60))
    config = RunConfig(target="from_log_prob", target_params={"fn": _heavy, "n_dim": 5}, sampler="metropolis",
                       n_chains=2, statistic="log_prob", opad=False)
    client = RunClient(engine, config)
    try:
        assert client.wait_for(lambda c: c.info is not None and not c.building, 4 * WAIT), client.error
        client.step(2)
        assert client.wait_for(lambda c: c.status.n_steps >= 2 or c.error, 4 * WAIT)
        assert client.error == "" and client.status.phase != "failed" and client.status.n_steps >= 2
        assert looked  # the worker was silent long enough to be looked at, and found working
    finally:
        client.close()
        engine.shutdown()


def test_closing_a_session_whose_worker_is_stopped_returns_before_the_worker_is_gone():
    engine = Engine(Budget(max_workers=1, idle_seconds=60))
    client = built(RunClient(engine, small()))
    process = client._handle.runner
    try:
        os.kill(process.pid, signal.SIGSTOP)
        client.close()
        assert process.is_alive()  # close did not wait for it
        assert engine.n_workers == 0
        other = built(RunClient(engine, small(seed=5)))  # its place was given back at once
        assert other.run_steps(3)
        other.close()
        process.join(WAIT)
        assert not process.is_alive()  # then it was killed in the background
    finally:
        engine.shutdown()


def test_stopping_a_stopped_race_returns_before_its_process_is_gone():
    race = Race(Engine(in_process=True), owner=41)
    settings = RaceSettings("ising1d", {"m": 6}, budget=10**9, samplers=("metropolis",))
    assert race.start(settings)
    deadline = time.monotonic() + WAIT
    while not os.path.isdir(race.results):
        assert time.monotonic() < deadline
        time.sleep(0.02)
    os.kill(race.process.pid, signal.SIGSTOP)
    try:
        race.stop()
        assert race.state == "stopped" and race.process.is_alive()  # stop did not wait for it
        assert race.key not in race_module._RUNNING  # its place is free at once
    finally:
        assert race.wait_ended(WAIT)
    assert not race.process.is_alive() and not os.path.exists(race.results)


def test_a_large_configuration_for_a_stopped_worker_never_holds_up_the_caller():
    """Apply a run holding a 2000 × 2000 coupling matrix (32 MB, far more than a pipe holds) while the worker is
    stopped: the call returns (the handle's thread writes, not the server's loop), and the stopped worker is then
    reported and ended as any other."""
    engine = Engine(Budget(max_workers=2, idle_seconds=60))
    client = built(RunClient(engine, small()))
    try:
        process = client._handle.runner
        os.kill(process.pid, signal.SIGSTOP)
        couplings = RunConfig(target="boltzmann", target_params={"J": np.zeros((2000, 2000))}, sampler="metropolis",
                              n_chains=3)
        applying = threading.Thread(target=client.apply, args=(couplings,), daemon=True)
        applying.start()
        applying.join(WAIT)
        assert not applying.is_alive(), "applying a run waited on a worker that does not read its pipe"
        assert process.is_alive()  # still stopped: nothing waited for it
        assert client.wait_for(lambda c: c.status.phase == "failed", WAIT), "a stopped worker was never reported"
    finally:
        client.close()
        engine.shutdown()
