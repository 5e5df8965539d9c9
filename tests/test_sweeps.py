"""Sweeps: run ids and seeds, stored results, and the same numbers serially and on a Dask cluster.

The cluster tests share one local cluster of two worker processes. They wait
for states (a stored result, the sweep's end), never for a time window.
"""

from __future__ import annotations

import os
import signal

import numpy as np
import pytest

from engine.config import RunConfig
from sweeps import ResultStore, RunSpec, Sweep, grid, run_seed, run_sweep
from sweeps.perform import TIMING_KEYS

BASE = {"target": "ising1d", "target_params": {"m": 8}, "sampler": "metropolis", "n_chains": 3,
        "statistic": "magnetisation"}


def small_sweep(name: str = "small", steps: int = 200, replicates: int = 2, seed: int = 7) -> Sweep:
    return Sweep(name, seed, grid(BASE, {"sampler": ["metropolis", "locally_balanced", "gibbs"]}, steps=steps,
                                  replicates=replicates, kl_checkpoints=4))


def assert_same_results(first: ResultStore, second: ResultStore) -> None:
    """Every stored run is in both, with bitwise equal arrays and values (timings excepted)."""
    assert first.run_ids() == second.run_ids()
    for run_id in first.run_ids():
        one, other = first.read(run_id), second.read(run_id)
        assert one.keys() == other.keys()
        for key in one.keys() - set(TIMING_KEYS):
            if isinstance(one[key], np.ndarray):
                assert one[key].dtype == other[key].dtype and np.array_equal(one[key], other[key]), key
            else:
                assert one[key] == other[key], key


@pytest.fixture(scope="module")
def client():
    from distributed import Client

    from sweeps.runner import local_cluster

    cluster = local_cluster(2)
    client = Client(cluster)
    yield client
    client.close()
    cluster.close()


# -- identity and seeds ---------------------------------------------------------------------------------------
def test_a_run_is_identified_by_its_description_and_its_seed_by_the_sweep_and_the_run():
    run = RunSpec(RunConfig.from_dict(BASE), steps=100)
    same = RunSpec(RunConfig.from_dict(BASE), steps=100, label="a name for tables only")
    assert run.run_id == same.run_id and len(run.run_id) == 20
    assert RunSpec(RunConfig.from_dict(BASE), steps=101).run_id != run.run_id
    assert RunSpec(RunConfig.from_dict({**BASE, "seed": 1}), steps=100).run_id != run.run_id  # another replicate
    assert run_seed(7, run.run_id) == run_seed(7, same.run_id) != run_seed(8, run.run_id)
    assert RunSpec.from_dict(run.to_dict()) == run
    sweep = small_sweep()
    assert len(sweep.runs) == 6 and Sweep.from_dict(sweep.to_dict()) == sweep
    with pytest.raises(ValueError, match="same run twice"):
        Sweep("twice", 0, (run, same))


def test_a_run_records_traces_acceptance_and_exact_kl(tmp_path):
    sweep = Sweep("one", 3, (RunSpec(RunConfig.from_dict(BASE), steps=300, trace_points=31, kl_checkpoints=5),))
    report = run_sweep(sweep, tmp_path, workers=0, progress=False)
    result = report.store.read(sweep.runs[0].run_id)
    assert list(result["trace_step"]) == list(range(0, 301, 10)) and result["trace_log_prob"].shape == (31, 3)
    assert 0 < result["acceptance"] < 1 and result["sampler_seed"] == run_seed(3, sweep.runs[0].run_id)
    assert result["kl_step"][-1] == 300 and result["kl_mcmc"].shape == (5, 3)
    # OPAD's estimate is never worse than the chain's frequencies, and OPAD+ never worse than OPAD
    assert np.all(result["kl_opad"] <= result["kl_mcmc"] + 1e-12)
    assert np.all(result["kl_opad_plus"] <= result["kl_opad"] + 1e-12)
    assert RunSpec.from_dict(__import__("json").loads(result["spec"])) == sweep.runs[0]


def test_a_run_traces_the_balancing_function_lsb1_learns(tmp_path):
    config = RunConfig(target="ising_segmentation", target_params={"size": 6}, sampler="lsb",
                       sampler_params={"parametrization": "lsb1", "burn_in": 4}, n_chains=2, statistic="agreement")
    sweep = Sweep("learning", 0, (RunSpec(config, steps=6, trace_points=7, traced=("statistic", "balancing")),))
    result = run_sweep(sweep, tmp_path, workers=0, progress=False).store.read(sweep.runs[0].run_id)
    logits = result["trace_balancing"]
    assert logits.shape == (7, 4) and np.all(logits[0] == 0)  # four mixture logits, uniform before learning
    assert np.any(logits[4] != 0) and np.array_equal(logits[4], logits[6])  # learned for 4 steps, then frozen
    assert result["trace_statistic"].shape == (7, 2)


# -- stored and resumable ------------------------------------------------------------------------------------
def test_an_interrupted_sweep_computes_only_the_missing_runs_when_started_again(tmp_path):
    sweep = small_sweep()
    stored = []

    def interrupt_after_two(run_id: str) -> None:
        stored.append(run_id)
        if len(stored) == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_sweep(sweep, tmp_path, workers=0, progress=False, on_result=interrupt_after_two)
    store = ResultStore(tmp_path / sweep.name)
    assert store.run_ids() == set(stored)
    again = run_sweep(sweep, tmp_path, workers=0, progress=False)
    assert again.skipped == 2 and set(again.computed) == {run.run_id for run in sweep.runs} - set(stored)
    assert store.run_ids() == {run.run_id for run in sweep.runs}
    assert run_sweep(sweep, tmp_path, workers=0, progress=False).computed == []


def test_a_failed_run_records_its_error_and_the_sweep_goes_on(tmp_path):
    big = RunSpec(RunConfig.from_dict({**BASE, "target_params": {"m": 40}}), steps=10, kl_checkpoints=3)
    sweep = Sweep("with-a-failure", 0, small_sweep().runs[:2] + (big,))
    report = run_sweep(sweep, tmp_path, workers=0, progress=False)
    assert set(report.failed) == {big.run_id} and "KL checkpoints" in report.failed[big.run_id]
    assert len(report.computed) == 2 and "failed" in report.summary() and big.run_id in report.summary()
    assert report.store.failures() == report.failed and not report.store.has(big.run_id)
    # a failed run is tried again next time (it fails again here); the stored runs are not
    again = run_sweep(sweep, tmp_path, workers=0, progress=False)
    assert again.computed == [] and set(again.failed) == {big.run_id}


def test_a_partly_written_file_is_not_a_result(tmp_path):
    store = ResultStore(tmp_path)
    (tmp_path / ".writing-abc.npz").write_bytes(b"half a file")
    assert store.run_ids() == set()
    store.write("abc", {"x": np.arange(3)})
    assert store.run_ids() == {"abc"} and list(store.read("abc")["x"]) == [0, 1, 2]


# -- on a cluster --------------------------------------------------------------------------------------------
def test_a_sweep_on_two_workers_is_bitwise_identical_to_the_serial_sweep(tmp_path, client):
    sweep = small_sweep()
    serial = run_sweep(sweep, tmp_path / "serial", workers=0, progress=False)
    parallel = run_sweep(sweep, tmp_path / "parallel", client=client, progress=False)
    assert sorted(parallel.computed) == sorted(serial.computed) and not parallel.failed
    assert_same_results(serial.store, parallel.store)


def test_a_killed_worker_does_not_lose_or_duplicate_a_run(tmp_path, client):
    sweep = small_sweep("killed", steps=20_000, replicates=3)  # 9 runs of a good fraction of a second each
    killed, stored = [], []

    def kill_a_worker(run_id: str) -> None:
        stored.append(run_id)
        if not killed:  # after the first stored result, while the others run
            pid = next(iter(client.run(os.getpid).values()))
            os.kill(pid, signal.SIGKILL)
            killed.append(len(stored))

    report = run_sweep(sweep, tmp_path, client=client, progress=False, on_result=kill_a_worker)
    assert killed == [1] and not report.failed
    assert sorted(report.computed) == sorted(run.run_id for run in sweep.runs)  # each run stored once
    assert report.store.run_ids() == {run.run_id for run in sweep.runs}
    client.wait_for_workers(2, timeout=120)  # the nanny restarts the killed worker
    serial = run_sweep(sweep, tmp_path / "serial", workers=0, progress=False)
    assert_same_results(serial.store, report.store)


# -- the dashboard opens a stored run ------------------------------------------------------------------------
def test_a_stored_run_opens_as_the_configuration_that_replays_it_step_for_step(tmp_path):
    from engine.stored_runs import config_from_stored_run, is_stored_run

    spec = RunSpec(RunConfig.from_dict(BASE), steps=150, trace_points=4)
    report = run_sweep(Sweep("open", 5, (spec,)), tmp_path, workers=0, progress=False)
    data = report.store.path(spec.run_id).read_bytes()
    assert is_stored_run(data)
    config = config_from_stored_run(data)
    assert config.seed == run_seed(5, spec.run_id) and config.sampler == "metropolis"
    _, sampler = config.build()
    for _ in range(spec.steps):
        sampler.step(record=False)
    stored = report.store.read(spec.run_id)
    np.testing.assert_array_equal(sampler.log_p, stored["trace_log_prob"][-1])  # the same chain, bitwise


@pytest.mark.parametrize("entries, message", [
    ({"x": np.arange(3)}, "no 'spec' entry"),
    ({"spec": np.array("[1, 2]"), "sampler_seed": np.array(3)}, "no configuration"),
    ({"spec": np.array("x" * 2_000_000), "sampler_seed": np.array(3)}, "decompressed"),
])
def test_a_file_that_is_not_a_stored_run_is_refused_with_a_message(tmp_path, entries, message):
    from engine.stored_runs import config_from_stored_run

    path = tmp_path / "bad.npz"
    np.savez(path, **entries)
    with pytest.raises(ValueError, match=message):
        config_from_stored_run(path.read_bytes())
    with pytest.raises(ValueError, match="not a readable stored run"):
        config_from_stored_run(b"PK\x03\x04" + b"\x00" * 40)


def test_a_stored_run_from_over_dispersed_starts_is_refused_as_it_cannot_be_replayed(tmp_path):
    from engine.stored_runs import config_from_stored_run

    spec = RunSpec(RunConfig.from_dict(BASE), steps=10, trace_points=3, start="over_dispersed")
    report = run_sweep(Sweep("dispersed", 0, (spec,)), tmp_path, workers=0, progress=False)
    with pytest.raises(ValueError, match="over_dispersed states"):
        config_from_stored_run(report.store.path(spec.run_id).read_bytes())
