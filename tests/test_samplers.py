"""Sampler contract: registry, runs, reproducibility, evaluation counts, bad input."""

from __future__ import annotations

import numpy as np
import pytest

import samplers
import targets

def example(name: str) -> tuple[targets.Target, dict]:
    """The example target and parameters of sampler ``name``'s facts (``samplers.base.SamplerFacts``)."""
    facts = samplers.sampler_class(name).facts
    target_name, target_params = facts.example_target
    return targets.make(target_name, **target_params), dict(facts.example)


@pytest.mark.parametrize("name", samplers.available())
def test_same_seed_gives_the_same_run_and_config_replays_it(name):
    target, params = example(name)
    first = samplers.make(name, target, n_chains=3, seed=11, **params)
    trace = samplers.run(first, 50, keep_states_every=10)
    config = first.config()
    replay = samplers.make(config["sampler"], target, **config["params"])
    again = samplers.run(replay, 50, keep_states_every=10)
    np.testing.assert_array_equal(trace.log_prob, again.log_prob)
    np.testing.assert_array_equal(trace.states, again.states)
    other = samplers.run(samplers.make(name, target, n_chains=3, seed=12, **params), 50)
    assert not np.array_equal(trace.log_prob, other.log_prob)


def test_trace_shapes_and_summary():
    target = targets.make("ising1d")
    sampler = samplers.make("metropolis", target, n_chains=4, seed=0)
    trace = samplers.run(sampler, 400, statistic=target.magnetisation, keep_states_every=100)
    assert trace.log_prob.shape == trace.statistic.shape == (401, 4)
    assert trace.accepted.shape == (400, 4)
    assert trace.states.shape == (5, 4, 15) and list(trace.state_steps) == [0, 100, 200, 300, 400]
    assert np.all(np.diff(trace.n_evals) == 4) and np.all(np.diff(trace.wall_time) >= 0)
    summary = trace.summary()
    assert 0 < summary["acceptance"] < 1 and summary["ess"] > 0
    assert summary["ess_per_eval"] == pytest.approx(summary["ess"] / (trace.n_evals[-1] - trace.n_evals[200]))


def test_locally_balanced_costs_o1_evaluations_on_a_lattice_and_od_on_a_black_box():
    lattice = targets.make("ising_lattice", size=10)
    sampler = samplers.make("locally_balanced", lattice, n_chains=2, seed=0)
    assert sampler.n_evals == 2 + 2 * 100  # initial log p̃ and all flip ratios
    sampler.step()
    assert sampler.n_evals - 202 == 2 * 5  # the flipped site and its four neighbours
    box = targets.from_log_prob(lambda x: x.sum(axis=1).astype(float), 7)
    sampler = samplers.make("locally_balanced", box, n_chains=2, seed=0)
    before = sampler.n_evals
    sampler.step()
    assert sampler.n_evals - before == 2 * 7


def test_gwg_costs_one_evaluation_per_step():
    target = targets.make("ising_segmentation", size=5)
    sampler = samplers.make("gwg", target, n_chains=3, seed=0)
    before = sampler.n_evals
    for _ in range(10):
        sampler.step()
    assert sampler.n_evals - before == 30


def test_max_balancing_survives_huge_ratios():
    target = targets.make("ising_lattice", size=6, beta=50.0, h=5.0)
    sampler = samplers.make("locally_balanced", target, n_chains=4, seed=0, balancing="max")
    for _ in range(200):
        record = sampler.step()
    assert np.all(np.isfinite(record.log_prob))
    np.testing.assert_allclose(record.log_prob, target.log_prob(record.states), rtol=1e-10)


def test_step_without_record_advances_the_same_chain():
    target = targets.make("ising1d")
    a = samplers.make("locally_balanced", target, n_chains=2, seed=5)
    b = samplers.make("locally_balanced", target, n_chains=2, seed=5)
    for _ in range(30):
        a.step()
        assert b.step(record=False) is None
    np.testing.assert_array_equal(a.states, b.states)


def test_init_sets_the_starting_states():
    target = targets.make("ising1d", m=5)
    start = np.array([1, 0, 1, 0, 1], dtype=np.uint8)
    sampler = samplers.make("gibbs", target, n_chains=3, seed=0, init=start)
    np.testing.assert_array_equal(sampler.states, np.repeat(start[None], 3, axis=0))


@pytest.mark.parametrize(
    "build, message",
    [
        (lambda t: samplers.make("no_such_sampler", t), "unknown sampler"),
        (lambda t: samplers.make("metropolis", t, n_chains=0), "n_chains"),
        (lambda t: samplers.make("metropolis", t, seed=-1), "seed"),
        (lambda t: samplers.make("locally_balanced", t, balancing="cubic"), "balancing"),
        (lambda t: samplers.make("block_gibbs", targets.make("ising1d", m=6), block_size=8), "block_size=8 exceeds"),
        (lambda t: samplers.make("hamming_ball", t, block_size=3, radius=4), "radius=4 must not exceed"),
        (lambda t: samplers.make("gibbs", t, scan="diagonal"), "scan"),
        (lambda t: samplers.make("gibbs", t, n_chains=2, init=np.zeros((3, 15), dtype=np.uint8)), "init"),
        (lambda t: samplers.make("gibbs", t, init=np.zeros(4, dtype=np.uint8)), "shape"),
        (lambda t: samplers.make("gibbs", "ising1d"), "target must be"),
        (lambda t: samplers.run(samplers.make("gibbs", t), -1), "n_steps"),
    ],
)
def test_bad_parameters_raise_clear_errors(build, message):
    with pytest.raises(ValueError, match=message):
        build(targets.make("ising1d"))


def test_zero_probability_start_is_refused():
    target = targets.from_log_prob(lambda x: np.where(x[:, 0] == 1, 0.0, -np.inf), 3)
    with pytest.raises(ValueError, match="zero probability"):
        samplers.make("metropolis", target, init=np.zeros(3, dtype=np.uint8))
