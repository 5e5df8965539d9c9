"""Changing β while a run goes on: the sampler continued on the new target, recorded, replayed exactly."""

from __future__ import annotations

import numpy as np
import pytest

import samplers
import targets
from engine.config import MAX_BETA_CHANGES, RunConfig
from engine.session import RunSession
from samplers.common.continuation import continue_on, derived_seed
from tests.test_dashboard_model import advance


def test_continue_on_carries_states_counts_and_a_frozen_kernel():
    target = targets.make("ising_lattice", size=6, beta=0.3)
    sampler = samplers.make("dmala", target, n_chains=3, seed=1, burn_in=20)
    samplers.run(sampler, 25)
    colder = target.with_params(beta=0.7)
    continued = continue_on(sampler, colder, seed=5)
    np.testing.assert_array_equal(continued.states, sampler.states)
    np.testing.assert_allclose(continued.log_p, colder.log_prob(sampler.states))
    assert continued.n_steps == 25 and continued.n_evals > sampler.n_evals  # its start was evaluated on the new β
    assert continued.tuned_value == sampler.tuned_value and not continued.adapting
    assert continued.target is colder and continued.seed == 5
    continued.step()
    assert continued.n_steps == 26


def test_continue_on_refuses_an_adapting_sampler_and_another_dimension():
    target = targets.make("ising_lattice", size=6, beta=0.3)
    adapting = samplers.make("dmala", target, n_chains=2, burn_in=100)
    with pytest.raises(ValueError, match="still adapting its kernel: freeze it first"):
        continue_on(adapting, target.with_params(beta=0.5), seed=0)
    with pytest.raises(ValueError, match="dimension"):
        continue_on(samplers.make("metropolis", target), target.with_params(size=7), seed=0)
    assert derived_seed(0, 1) != derived_seed(0, 2) and derived_seed(3, 1) == derived_seed(3, 1)


def config(**overrides) -> RunConfig:
    values = dict(target="ising_lattice", target_params={"size": 8, "beta": 0.3}, sampler="wolff", n_chains=2,
                  seed=3, statistic="magnetisation", compare_sampler="metropolis", compare_axis="steps")
    return RunConfig(**(values | overrides))


def test_a_live_change_of_beta_is_recorded_and_its_configuration_replays_the_run():
    live = RunSession(config(), run=1, request=1, max_particles=10_000)
    advance(live, 30)
    live.set_beta(0.8)
    assert live.target.beta == 0.8 and live.sampler.target is live.target and live.sampler.n_steps == 30
    assert live.companion.sampler.target is live.target
    advance(live, 40)
    assert live.config.beta_changes == [[30, 0.8]]
    replay = RunSession(RunConfig.from_json(live.config.to_json()), run=1, request=1, max_particles=10_000)
    advance(replay, 70)
    first, second = live.buffer.history(), replay.buffer.history()
    for column in ("step", "n_evals", "log_prob", "statistic"):
        np.testing.assert_array_equal(first[column], second[column])
    assert replay.target.beta == 0.8
    # the new β shows: a cold 8×8 ferromagnet magnetises
    assert np.abs(live.sampler.states.mean(axis=1) - 0.5).max() > 0.3


def test_a_change_at_the_same_step_replaces_the_previous_one_and_opad_restarts():
    session = RunSession(config(compare_sampler="", target_params={"size": 4, "beta": 0.3}), run=1, request=1,
                         max_particles=10_000)
    advance(session, 10)
    old_tracker = session.tracker
    session.set_beta(0.5)
    session.set_beta(0.6)
    assert session.config.beta_changes == [[10, 0.6]] and session.tracker is not old_tracker
    assert session.tracker.target is session.target


def test_targets_without_beta_and_adapting_samplers_refuse_a_change():
    session = RunSession(RunConfig(target="ising_segmentation", target_params={"size": 6}, statistic="log_prob",
                                   n_chains=2), run=1, request=1, max_particles=1000)
    with pytest.raises(ValueError, match="no inverse temperature"):
        session.set_beta(0.5)
    adapting = RunSession(config(sampler="dlmc", sampler_params={"burn_in": 50}, compare_sampler=""), run=1,
                          request=1, max_particles=1000)
    advance(adapting, 5)
    with pytest.raises(ValueError, match="freeze it first"):
        adapting.set_beta(0.5)
    assert adapting.config.beta_changes == [] and adapting.target.beta == 0.3


@pytest.mark.parametrize("changes, message", [
    ("0.5", "must be a list"),
    ([[1, 0.5], [1, 0.6]], "steps must increase"),
    ([[1, 200.0]], "each β lie in"),
    ([[1.5, 0.2]], "pair \\[step, β\\]"),
    ([[1, True]], "pair \\[step, β\\]"),
    ([[step, 0.5] for step in range(MAX_BETA_CHANGES + 1)], "the limit is"),
])
def test_hostile_beta_changes_are_refused_with_a_reason(changes, message):
    with pytest.raises(ValueError, match=message):
        RunConfig.from_dict({"target": "ising_lattice", "beta_changes": changes})


def test_beta_changes_need_a_target_with_beta():
    with pytest.raises(ValueError, match="has no inverse temperature"):
        RunConfig(target="ising_segmentation", beta_changes=[[3, 0.5]]).build()
