"""The dashboard's comparison sampler (at equal compute time, steps or evaluations) and slow-motion moves.

Runs go through ``RunClient`` (or the ``Explorer``) with the worker in-process; the companion's own sampler is
looked at in a ``RunSession``, the run inside a worker. Tests wait for states with a generous timeout and never
count the work done in a time window.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

import samplers
import targets
from dashboard.views.adaptation import AdaptationView
from dashboard.views.balancing import thinned
from dashboard.views.comparison import ComparisonView
from dashboard.views.inspector import describe
from dashboard.views.lattice import LatticeView
from engine.buffer import Chunk, TraceBuffer
from engine.client import RunClient
from engine.comparison import SETTLED_RHAT, compare, compared_values, unreadable
from engine.config import RunConfig
from engine.engine import Engine
from engine.move_replay import MoveReplay
from engine.numbers import exp_number, number, wide_number
from engine.session import RunSession
from engine.snapshot import BARELY_MOVES, Display
from engine.statistics import folds
from samplers.diagnostics.inspection import ProposalInspection
from tests.explorer_driver import TIMEOUT, applied, built, card, make_explorer, settle, view


def im_config(**overrides) -> RunConfig:
    values = dict(target="ising_lattice", target_params={"size": 8}, sampler="intracluster",
                  sampler_params={"n_active": 32, "walk_length": (1, 4), "gamma": 0.5}, n_chains=3, seed=2,
                  statistic="log_prob", compare_sampler="kawasaki")
    values.update(overrides)
    return RunConfig(**values)


@pytest.fixture
def engine():
    engine = Engine(in_process=True)
    yield engine
    engine.shutdown()


# -- the comparison sampler ---------------------------------------------------------------------------------------
def test_the_companion_samples_the_same_space_for_the_same_compute_time():
    session = RunSession(im_config(), run=1, request=1, max_particles=100_000)
    assert session.companion.sampler.n_active == 32  # taken from the main sampler
    session.start()
    while session.sampler.n_steps < 500:
        session.advance()
    session.pause()
    main, companion = session.buffer.history(), session.companion.buffer.history()
    assert companion["step"][-1] > main["step"][-1]  # Kawasaki steps are cheaper
    # equal compute, up to the last step of each side
    assert companion["seconds"][-1] == pytest.approx(main["seconds"][-1], rel=0.2, abs=0.05)
    assert np.all(session.companion.sampler.states.sum(axis=1) == 32)


def test_the_run_reports_both_samplers_at_equal_compute_time(engine):
    client = RunClient(engine, im_config())
    try:
        assert client.wait_for(built, TIMEOUT), client.error
        assert client.info.companion == "kawasaki"
        states = []
        client.step(300)

        def final(c) -> bool:
            state = states[-1] if states else None
            return (c.status.n_steps == 300 and state is not None
                    and state.trace[0]["x"][-1] == c.status.seconds)  # compared at the last step

        assert client.wait_for(final, TIMEOUT,
                               on_snapshot=lambda s: s.comparison is not None and states.append(s.comparison))
        state = states[-1]
        main, companion = state.trace
        assert companion["x"][-1] == pytest.approx(main["x"][-1], rel=0.2, abs=0.05)
        assert "intracluster" in state.lines[0] and "kawasaki" in state.lines[1]
        again = RunConfig.from_json(client.config.to_json())
        assert again.compare_sampler == "kawasaki"
    finally:
        client.close()


def claim_config(axis: str) -> RunConfig:
    """LSB2 in the authors' schedule (two learning moves per step) beside √t, sharing ``axis``."""
    return RunConfig(target="ising_segmentation", target_params={"size": 6, "field": "authors", "periodic": True},
                     sampler="lsb", sampler_params={"parametrization": "lsb2", "burn_in": 40, "learning_moves": 2},
                     n_chains=4, seed=1, statistic="magnetisation", compare_sampler="locally_balanced",
                     compare_params={"balancing": "sqrt"}, compare_axis=axis)


@pytest.mark.parametrize("axis", ["steps", "evaluations"])
def test_the_companion_gets_as_many_steps_or_evaluations_as_the_run(axis):
    session = RunSession(claim_config(axis), run=1, request=1, max_particles=100_000)
    session.start()
    while session.sampler.n_steps < 60:
        session.advance()
    session.pause()
    main, companion = session.sampler, session.companion.sampler
    if axis == "steps":
        assert companion.n_steps == main.n_steps
    else:  # one √t step costs 1 + deg = 5 evaluations on the wrapped lattice
        assert 0 <= companion.n_evals - main.n_evals < 5 * companion.n_chains + 1
        assert companion.n_steps > main.n_steps  # LSB2's learning steps cost more evaluations
    state = session.snapshot(Display(), everything=True).comparison
    assert [column["x"][-1] for column in state.trace] == [
        {"steps": s.n_steps, "evaluations": s.n_evals}[axis] for s in (main, companion)]
    assert np.allclose(state.trace[1]["y"][-1], companion.target.magnetisation(companion.states).mean())
    assert "<b>lsb</b>" in state.lines[0] and f"{main.n_steps:,} steps, {main.n_evals:,} evaluations" in state.lines[0]
    assert "<b>locally_balanced</b>" in state.lines[1]


def test_an_invalid_comparison_is_refused_and_the_run_goes_on(engine):
    client = RunClient(engine, im_config(compare_sampler=""))
    try:
        assert client.wait_for(built, TIMEOUT), client.error
        assert client.info.companion == ""
        assert client.run_steps(5, TIMEOUT)
        info = client.info
        if client.apply(im_config(compare_params={"n_active": 1000})):  # else refused at once
            assert client.wait_for(lambda c: not c.building, TIMEOUT)
        assert "comparison sampler kawasaki" in client.error and "n_active" in client.error
        assert client.info is info and client.info.companion == "" and client.config.compare_sampler == ""
        assert client.run_steps(5, TIMEOUT) and client.status.n_steps == 10 and client.info is info
    finally:
        client.close()


def test_comparison_view_draws_energy_and_time_autocorrelation_for_both():
    app = make_explorer(im_config())
    try:
        comparison = view(app, ComparisonView)
        assert card(app, ComparisonView).visible
        app.client.start()
        settle(app, lambda: all(len(trace.data["x"]) > 5 and len(acf.data["lag"]) > 10
                                for trace, acf in zip(comparison.trace_sources, comparison.acf_sources)))
        app.client.pause()
        settle(app, lambda: app.client.status.phase == "paused")
        for trace, acf in zip(comparison.trace_sources, comparison.acf_sources):
            assert len(trace.data["x"]) > 5 and len(acf.data["lag"]) > 10
            assert acf.data["acf"][0] == pytest.approx(1.0)
        assert "kawasaki" in comparison.status.object and "intracluster" in comparison.status.object
        assert [item.label["value"] for item in comparison.trace_figure.legend[0].items] == \
            ["intracluster", "kawasaki"]
        assert comparison.trace_figure.xaxis.axis_label == "compute seconds" and "E = −log p̃" in \
            comparison.trace_figure.title.text and "equal compute seconds" in comparison.heading.object
        applied(app, RunConfig(target="ising1d", sampler="metropolis", statistic="log_prob"))
        assert not card(app, ComparisonView).visible
    finally:
        app.close()


def test_comparison_view_names_the_magnetisation_of_a_cluster_sampler_as_its_size():
    app = make_explorer(RunConfig(target="ising_lattice", target_params={"size": 8}, sampler="wolff", n_chains=2,
                                  statistic="magnetisation", compare_sampler="metropolis", compare_axis="steps"))
    try:
        comparison = view(app, ComparisonView)
        assert "mean |magnetisation|" in comparison.trace_figure.title.text.replace("\n", " ")
        assert "|magnetisation|" in comparison.acf_figure.title.text
        assert "compared on |magnetisation|" in comparison.heading.object
        applied(app, RunConfig(target="ising_lattice", target_params={"size": 8}, sampler="metropolis",
                               n_chains=2, statistic="magnetisation", compare_sampler="dlmc", compare_axis="steps"))
        comparison = view(app, ComparisonView)  # the new run's own view
        assert "|" not in comparison.trace_figure.title.text and "compared on" not in comparison.heading.object
    finally:
        app.close()


@pytest.mark.parametrize(("learning_moves", "says"), [
    (1, "both make one move a step, so as many moves"),
    (2, "while it learns, lsb makes 2 moves a step and locally_balanced makes 1 move a step")])
def test_equal_steps_say_what_they_mean_in_moves(learning_moves, says):
    """The LSB Fig. 2 claim presets: at equal steps, LSB2 with one learning move a step makes as many moves as √t
    (the "equal moves" preset); with the authors' two, the heading says it makes twice as many while it learns."""
    app = make_explorer(RunConfig(target="ising_lattice", target_params={"size": 6}, sampler="lsb", n_chains=3,
                                  sampler_params={"parametrization": "lsb2", "learning_moves": learning_moves},
                                  compare_sampler="locally_balanced", compare_axis="steps"))
    try:
        assert app.client.info.moves_per_step == (learning_moves, 1)
        heading = view(app, ComparisonView).heading.object
        assert "at equal steps" in heading and says in heading
    finally:
        app.close()


def ar1_buffer(rho: float, acceptance: float = 0.5, drift: float = 0.0, n_chains: int = 4, n_steps: int = 20_000,
               seed: int = 0) -> TraceBuffer:
    """A trace buffer of AR(1) energies with autocorrelation ρ^lag (τ = (1 + ρ)/(1 − ρ) steps), one step per
    evaluation and per millisecond, ``acceptance`` of chains accepting each step and a linear ``drift``."""
    rng = np.random.default_rng(seed)
    values = np.zeros((n_steps, n_chains))
    noise = rng.normal(size=(n_steps, n_chains)) * np.sqrt(1 - rho ** 2)
    for t in range(1, n_steps):
        values[t] = rho * values[t - 1] + noise[t]
    values += drift * np.arange(n_steps)[:, None] / n_steps
    steps = np.arange(n_steps)
    buffer = TraceBuffer(n_chains)
    buffer.push(Chunk(step=steps, n_evals=steps, seconds=steps / 1000, log_prob=-values, statistic=-values,
                      accepted=np.full(n_steps, round(acceptance * n_chains))), np.zeros((n_chains, 4), np.uint8))
    return buffer


@pytest.mark.parametrize("axis", ["seconds", "steps", "evaluations"])
def test_the_comparison_names_the_faster_sampler_only_when_its_data_show_it(axis):
    def verdict(first: TraceBuffer, second: TraceBuffer) -> str:
        return compare(("a", "b"), (first, second), axis).lines[-1]

    assert "(a mixes faster per" in verdict(ar1_buffer(0.5), ar1_buffer(0.98, seed=1))  # τ 3 against 99 steps
    assert "(b mixes faster per" in verdict(ar1_buffer(0.98), ar1_buffer(0.5, seed=1))
    assert "no clear difference" in verdict(ar1_buffer(0.9), ar1_buffer(0.9, seed=1))  # the same chain, reseeded
    stuck = verdict(ar1_buffer(0.5, acceptance=0.0), ar1_buffer(0.98, seed=1))
    assert stuck.startswith("no verdict") and "a accepts 0.00% of its moves" in stuck and "s faster per" not in stuck
    drifting = verdict(ar1_buffer(0.5), ar1_buffer(0.5, drift=-30, seed=1))
    assert drifting.startswith("no verdict") and "b has not settled" in drifting
    slow = ar1_buffer(0.9995, seed=1)  # τ ≈ 4000 steps over a 10,000-step half: its chains disagree, too
    assert verdict(ar1_buffer(0.5), slow).startswith("no verdict on which mixes faster: b has")
    settled = ar1_buffer(0.5).history()
    energy = compared_values(settled, "log_prob", fold=False)
    assert unreadable(settled, axis, energy, tau=3.0 * {"seconds": 1e-3}.get(axis, 1), acceptance=0.5) is None
    assert "too short to resolve" in unreadable(settled, axis, energy, tau=float("nan"), acceptance=0.5)
    assert "too short to resolve" in unreadable(settled, axis, energy, tau=3000.0, acceptance=0.5)
    young = {key: column[:9] for key, column in settled.items()}  # 5 steps in: no split-R̂ yet, and no "nan" said
    said = unreadable(young, axis, compared_values(young, "log_prob", fold=False), tau=3.0, acceptance=0.5)
    assert "has 5 draws in the second half of its trace, too few to tell" in said and "nan" not in said


@pytest.mark.parametrize("value, printed", [(1330.4, "1330"), (8430.0, "8430"), (12_345.6, "12,346"),
                                            (0.0000123, "0.0000123"), (2.5, "2.5"), (0.23456, "0.2346")])
def test_a_number_in_a_sentence_is_written_out(value, printed):
    assert number(value) == printed and float(printed.replace(",", "")) == pytest.approx(value, rel=1e-3)


@pytest.mark.parametrize("value, printed", [(0.0123, "0.0123"), (8430.0, "8430"), (3.2e-38, "3.2 × 10⁻³⁸"),
                                            (1e-300, "10⁻³⁰⁰"), (9.96e-38, "10⁻³⁷"), (0.0, "0"), (-2e-9, "−2 × 10⁻⁹")])
def test_a_number_of_any_size_is_written_as_a_power_of_ten_beyond_the_written_out_range(value, printed):
    assert wide_number(value) == printed and "e" not in printed
    if value > 0:
        assert exp_number(math.log(value)) == printed
    assert exp_number(float("-inf")) == "0" and exp_number(2000.0) == "3.9 × 10⁸⁶⁸"  # e^2000, beyond any float


def test_the_inspector_writes_a_probability_ratio_of_any_size_without_exponent_notation():
    inspection = ProposalInspection(kind="path", step=7, before=np.zeros(6, np.uint8), proposed_sites=np.array([3]),
                                    accepted=False, log_target_ratio=-900.0, log_q_forward=-800.0, log_q_reverse=-2.0,
                                    acceptance=1e-300, path=np.array([3, 4]))
    said = describe(inspection)
    assert "p̃(y)/p̃(x) = 1.4 × 10⁻³⁹¹" in said and "acceptance probability 10⁻³⁰⁰" in said
    assert not re.search(r"\de[+-]?\d", said)


def test_a_ratio_of_a_thousand_is_printed_without_exponent_notation(monkeypatch):
    taus = iter([1.0, 1330.0])  # the autocorrelation times of a and b, in steps
    monkeypatch.setattr("engine.comparison.integrated_time", lambda lags, acf: next(taus))
    lines = compare(("a", "b"), (ar1_buffer(0.0, n_steps=30_000), ar1_buffer(0.0, n_steps=30_000, seed=1)),
                    "steps").lines
    assert "autocorrelation time 1330 steps" in lines[1]
    assert "b / a: 1330× (a mixes faster per step)" in lines[-1]
    assert not any(re.search(r"\de[+-]?\d", line) for line in lines), lines


def flipping_buffer(flips: bool, n_chains: int = 4, n_steps: int = 4000, seed: int = 0) -> TraceBuffer:
    """Magnetisations around 0.8 in size, their sign drawn afresh at each step when ``flips`` (a cluster sampler's
    moves), else always +."""
    rng = np.random.default_rng(seed)
    size = 0.8 + 0.05 * rng.normal(size=(n_steps, n_chains))
    sign = rng.choice([-1.0, 1.0], size=(n_steps, n_chains)) if flips else 1.0
    steps = np.arange(n_steps)
    buffer = TraceBuffer(n_chains)
    buffer.push(Chunk(step=steps, n_evals=steps, seconds=steps / 1000, log_prob=-size, statistic=sign * size,
                      accepted=np.full(n_steps, n_chains)), np.zeros((n_chains, 4), np.uint8))
    return buffer


def test_a_cluster_sampler_is_compared_on_the_size_of_its_magnetisation():
    assert folds(("wolff", "metropolis"), "magnetisation") and folds(("metropolis", "swendsen_wang"), "magnetisation")
    assert not folds(("wolff", "metropolis"), "log_prob") and not folds(("metropolis", "dlmc"), "magnetisation")
    buffers = (flipping_buffer(True), flipping_buffer(False, seed=1))
    state = compare(("wolff", "metropolis"), buffers, "steps", "magnetisation")
    for trace in state.trace:  # |m| of both: Wolff's is not a mean of ±0.8 around 0
        assert np.all(trace["y"] > 0.7)
    signed = compare(("metropolis", "metropolis"), buffers, "steps", "magnetisation")
    assert abs(signed.trace[0]["y"][1:].mean()) < 0.2  # what m itself would have shown


@pytest.mark.parametrize("measured", [1.0503, 1.0549, 1.0551, 1.2])
def test_a_split_rhat_is_called_unsettled_only_when_the_number_printed_is_above_the_threshold(measured, monkeypatch):
    monkeypatch.setattr("engine.comparison.rhat", lambda draws: measured)
    history = ar1_buffer(0.5).history()
    reason = unreadable(history, "steps", compared_values(history, "log_prob", False), tau=3.0, acceptance=0.5) or ""
    printed = re.search(r"split-R̂ ([\d.]+)", reason)
    assert (printed is not None) == (round(measured, 2) > SETTLED_RHAT)  # 1.0503 reads "1.05": settled
    assert printed is None or float(printed.group(1)) > SETTLED_RHAT


@pytest.mark.parametrize("acceptance", [0.00994, 0.00996, 0.5])
def test_an_acceptance_is_called_too_low_only_when_the_percentage_printed_is_under_the_threshold(acceptance):
    history = ar1_buffer(0.5).history()
    reason = unreadable(history, "steps", compared_values(history, "log_prob", False), tau=3.0,
                        acceptance=acceptance) or ""
    printed = re.search(r"accepts ([\d.]+)% of its moves", reason)
    assert (printed is not None) == (acceptance < 0.00995)  # 0.00996 reads "1.00%": not under 1 %
    assert printed is None or float(printed.group(1)) < 100 * BARELY_MOVES


# -- slow motion -------------------------------------------------------------------------------------------------
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


def test_a_replayed_move_in_the_worker_is_the_runs_next_move(engine):
    config = im_config(compare_sampler="", sampler_params={"n_active": 32, "walk_length": 2, "gamma": 0.5})
    client = RunClient(engine, config)
    try:
        assert client.wait_for(built, TIMEOUT)
        assert client.info.capabilities.replays_moves
        client.start()
        assert client.wait_for(lambda c: c.status.running and c.status.n_steps > 0, TIMEOUT)
        client.replay_move(1)  # pauses the run, makes one move and sends it
        assert client.wait_for(lambda c: c.replay is not None and c.status.phase == "paused", TIMEOUT)
        replay, steps = client.replay, client.status.n_steps
        assert client.wait_for(lambda c: c.status.n_steps == steps and not c.status.running, TIMEOUT)
        _, sampler = config.build()  # the same run, headless: the replayed move is its move at that step
        for _ in range(steps - 1):
            sampler.step(record=False)
        np.testing.assert_array_equal(replay.start, sampler.states[1])
        sampler.step(record=False)
        np.testing.assert_array_equal(replay.frame(len(replay) - 1).state, sampler.states[1])
        assert replay.walk_length == 2 and replay.accepted == bool(sampler.last_accepted[1])
    finally:
        client.close()
    refused = RunClient(engine, RunConfig(target="ising1d", sampler="metropolis", statistic="log_prob"))
    try:
        assert refused.wait_for(built, TIMEOUT)
        refused.replay_move(0)
        assert refused.wait_for(lambda c: "does not record its moves" in c.error, TIMEOUT)
        assert refused.replay is None
    finally:
        refused.close()


def test_slow_motion_plays_the_move_frame_by_frame(monkeypatch):
    monkeypatch.setattr("dashboard.views.lattice.FRAME_SECONDS", 0.0)
    app = make_explorer(im_config(compare_sampler="", sampler_params={"n_active": 32, "walk_length": 2,
                                                                      "gamma": 0.5}))
    try:
        lattice = view(app, LatticeView)
        assert lattice.slow_motion.visible
        lattice.slow_motion.clicks += 1
        settle(app, lambda: app.client.replay is not None)  # that flush shows the move's first frame
        texts = []
        for _ in range(8):
            texts.append(lattice.replay_status.object)
            app.flush()
        assert texts[0].startswith("step 0 of 4") and "step 2 of 4 (first walk" in texts[2]
        assert texts[5].startswith("move ") and texts[6] == ""  # the last frame, then back to the live view
        assert lattice.walk_source.data["x"] == []
        settle(app, lambda: app.client.status.n_steps == 1)
        assert not app.client.status.running
        applied(app, RunConfig(target="ising1d", sampler="metropolis", statistic="log_prob"))
        assert not view(app, LatticeView).slow_motion.visible  # the new run's own view
    finally:
        app.close()


def test_slow_motions_colours_are_each_in_the_key_and_named_alike_by_every_text(monkeypatch):
    """The lattice key shows each walk colour with its meaning; the button, the inspector and the slow-motion
    preset name the same colours; a frame draws only those, the second walk's squares inside the first's."""
    from dashboard.views.inspector import marks_key
    from dashboard.views.lattice import WALK_COLOUR_NAMES, WALK_COLOURS, WALK_OUTLINE_SIDES
    from engine.presets import load_presets

    monkeypatch.setattr("dashboard.views.lattice.FRAME_SECONDS", 0.0)
    app = make_explorer(im_config(compare_sampler="", sampler_params={"n_active": 32, "walk_length": 2,
                                                                      "gamma": 0.5}))
    try:
        lattice = view(app, LatticeView)
        inspector_key = "".join(marks_key("walk"))
        walk = ProposalInspection(kind="walk", step=1, before=np.zeros(64, dtype=np.uint8),
                                  proposed_sites=np.array([1, 2, 3, 4]), accepted=True, log_target_ratio=0.0,
                                  path=np.array([1, 2, 3, 4]))
        slow_motion = next(preset for name, preset in load_presets().items() if "slow motion" in name)
        for colour, name, walk_name in zip(WALK_COLOURS, WALK_COLOUR_NAMES, ("first", "second")):
            assert colour in lattice.key.object and f"{name} " in lattice.key.object
            assert f"flipped by the {walk_name} walk" in lattice.key.object
            assert f"{walk_name} walk {name}" in lattice.slow_motion.description
            assert colour in inspector_key and f"{name}: the {walk_name} walk's flips" in inspector_key
            assert f"{walk_name} walk ({name}, " in describe(walk).lower()
        assert f"first walk ({WALK_COLOUR_NAMES[0]} " in slow_motion.description
        assert f"second ({WALK_COLOUR_NAMES[1]}, " in slow_motion.description
        assert "blue" not in slow_motion.description + lattice.key.object + lattice.slow_motion.description
        lattice.slow_motion.clicks += 1
        settle(app, lambda: app.client.replay is not None)
        while len(set(lattice.walk_source.data["color"])) < 2:  # until a frame of the second walk
            app.flush()
        data = lattice.walk_source.data
        assert dict(zip(data["color"], data["side"])) == dict(zip(WALK_COLOURS, WALK_OUTLINE_SIDES))
        assert WALK_OUTLINE_SIDES[1] < WALK_OUTLINE_SIDES[0]
    finally:
        app.close()


# -- tuning the walks --------------------------------------------------------------------------------------------
def test_adaptation_card_follows_the_tuning_until_it_freezes():
    config = im_config(compare_sampler="", n_chains=8,
                       sampler_params={"n_active": 32, "walk_length": (1, 8), "gamma": 2.0, "adapt": True,
                                       "burn_in": 60})
    app = make_explorer(config)
    try:
        adaptation = view(app, AdaptationView)
        assert card(app, AdaptationView).visible
        app.client.step(30)
        settle(app, lambda: app.client.status.n_steps == 30 and "adapting" in adaptation.status.object
               and len(adaptation.source.data["step"]) > 5)
        assert not adaptation.frozen_markers[0].visible
        app.client.step(40)
        settle(app, lambda: app.client.status.n_steps == 70 and "frozen" in adaptation.status.object)
        assert "step 60" in adaptation.status.object
        assert adaptation.frozen_markers[0].visible and adaptation.frozen_markers[0].location == 60
        _, sampler = config.build()  # the same run, headless
        for _ in range(70):
            sampler.step(record=False)
        history = thinned(sampler.adaptation_history())
        assert history["step"][-1] < 70  # so the curve ends at the value in force at step 70, the frozen γ
        settle(app, lambda: len(adaptation.source.data["gamma"]) == len(history["gamma"]) + 1)
        np.testing.assert_array_equal(adaptation.source.data["gamma"],
                                      [*history["gamma"], sampler.frozen_params()["gamma"]])
        applied(app, im_config(compare_sampler=""))
        assert not card(app, AdaptationView).visible
    finally:
        app.close()
