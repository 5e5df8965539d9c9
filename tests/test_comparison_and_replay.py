"""Issue 6's dashboard models and views: a comparison sampler at equal compute time, and slow-motion moves."""

from __future__ import annotations

import time

import numpy as np
import pytest

import samplers
import targets
from dashboard.model.config import RunConfig
from dashboard.explorer import Explorer
from dashboard.model.move_replay import MoveReplay
from dashboard.model.run_model import RunModel


def im_config(**overrides) -> RunConfig:
    values = dict(target="ising_lattice", target_params={"size": 8}, sampler="intracluster",
                  sampler_params={"n_active": 32, "walk_length": (1, 4), "gamma": 0.5}, n_chains=3, seed=2,
                  statistic="log_prob", compare_sampler="kawasaki")
    values.update(overrides)
    return RunConfig(**values)


def test_the_companion_samples_the_same_space_for_the_same_compute_time():
    run = RunModel(im_config())
    try:
        assert run.companion.sampler.n_active == 32  # taken from the main sampler
        run.start()
        time.sleep(1.5)
        run.pause()
        main, companion = run.buffer.history(), run.companion.buffer.history()
        assert companion["step"][-1] > main["step"][-1]  # Kawasaki steps are cheaper
        # equal compute, up to the last step of each side
        assert companion["seconds"][-1] == pytest.approx(main["seconds"][-1], rel=0.2, abs=0.05)
        assert np.all(run.companion.sampler.states.sum(axis=1) == 32)
        again = RunConfig.from_json(run.config.to_json())
        assert again.compare_sampler == "kawasaki"
    finally:
        run.close()


def test_an_invalid_comparison_is_refused_and_the_run_goes_on():
    run = RunModel(im_config(compare_sampler=""))
    try:
        assert run.companion is None
        assert not run.apply(im_config(compare_params={"n_active": 1000}))
        assert "comparison sampler kawasaki" in run.error and "n_active" in run.error
        assert run.companion is None and run.config.compare_sampler == ""
    finally:
        run.close()


def test_comparison_view_draws_energy_and_time_autocorrelation_for_both():
    app = Explorer(im_config())
    try:
        assert app._comparison_card.visible
        app.model.start()
        time.sleep(2.0)
        app.model.pause()
        app.comparison.throttle.reset()
        app.flush()
        for energy, acf in zip(app.comparison.energy_sources, app.comparison.acf_sources):
            assert len(energy.data["seconds"]) > 5 and len(acf.data["lag"]) > 10
            assert acf.data["acf"][0] == pytest.approx(1.0)
        assert "kawasaki" in app.comparison.status.object and "intracluster" in app.comparison.status.object
        assert [item.label["value"] for item in app.comparison.energy_figure.legend[0].items] == \
            ["intracluster", "kawasaki"]
        assert app.controls.apply(RunConfig(target="ising1d", sampler="metropolis", statistic="log_prob"))
        assert not app._comparison_card.visible
    finally:
        app.close()


@pytest.mark.parametrize("reflip", [False, True])
def test_a_replayed_move_goes_out_and_back_to_the_same_distance(reflip):
    target = targets.make("ising_lattice", size=6)
    sampler = samplers.make("intracluster", target, n_chains=2, seed=4, n_active=18, walk_length=3, gamma=0.3,
                            reflip=reflip)
    for _ in range(20):
        start = sampler.states[1].copy()
        sampler.step()
        replay = MoveReplay.from_sampler(start, sampler, chain=1)
        frames = [replay.frame(t) for t in range(len(replay))]
        distances = [int(np.count_nonzero(f.state != replay.reference)) for f in frames]
        assert distances[0] == distances[-2] == distances[-1] == 18
        assert max(abs(d - 18) for d in distances) == 3  # the bridge point is k = 3 away
        np.testing.assert_array_equal(frames[-1].state, sampler.states[1])  # the outcome is the chain's state
        assert ("accepted" in frames[-1].text) == bool(sampler.last_accepted[1])
        assert len(frames[3].first_walk) == 3 and len(frames[3].second_walk) == 0
        assert len(frames[5].second_walk) == 2


def test_slow_motion_plays_the_move_frame_by_frame(monkeypatch):
    monkeypatch.setattr("dashboard.views.lattice.FRAME_SECONDS", 0.0)
    app = Explorer(im_config(compare_sampler="", sampler_params={"n_active": 32, "walk_length": 2, "gamma": 0.5}))
    try:
        view = app.lattice
        assert view.slow_motion.visible
        view.slow_motion.clicks += 1
        assert not app.model.running and app.model.sampler.n_steps == 1
        texts = []
        for _ in range(8):
            texts.append(view.replay_status.object)
            app.flush()
        assert texts[0].startswith("step 0 of 4") and "step 2 of 4 (first walk" in texts[2]
        assert texts[5].startswith("move ") and texts[6] == ""  # the last frame, then back to the live view
        assert view.walk_source.data["x"] == []
        assert app.controls.apply(RunConfig(target="ising1d", sampler="metropolis", statistic="log_prob"))
        assert not view.slow_motion.visible
    finally:
        app.close()


def test_adaptation_card_follows_the_tuning_until_it_freezes():
    app = Explorer(im_config(compare_sampler="", n_chains=8,
                             sampler_params={"n_active": 32, "walk_length": (1, 8), "gamma": 2.0, "adapt": True,
                                             "burn_in": 60}))
    try:
        view = app.adaptation
        assert app._adaptation_card.visible
        app.model.step(30)
        assert app.model.wait_idle()
        view.throttle.reset()
        app.flush()
        assert "adapting" in view.status.object and len(view.source.data["step"]) > 5
        assert not view.frozen_markers[0].visible
        app.model.step(40)
        assert app.model.wait_idle()
        view.throttle.reset()
        app.flush()
        assert "frozen" in view.status.object and "step 60" in view.status.object
        assert view.frozen_markers[0].visible and view.frozen_markers[0].location == 60
        history = app.model.sampler.adaptation_history()
        np.testing.assert_array_equal(view.source.data["gamma"], history["gamma"])
        assert app.controls.apply(im_config(compare_sampler=""))
        assert not app._adaptation_card.visible
    finally:
        app.close()
