"""The Race card's model and text: a bake-off in a process of its own, streamed, stoppable, refused when busy.

Budgets are counted in target evaluations and every wait is on a state with a
generous timeout, so nothing here depends on the machine's speed.
"""

from __future__ import annotations

import os
import time

import pytest

from dashboard import race as card
from dashboard.explorer import Explorer
from sweeps.bake_off import race as model
from engine.budget import Budget
from engine.config import RunConfig
from engine.engine import Engine
from sweeps import bakeoff
from sweeps.bake_off.race import Race, RaceSettings, RaceSnapshot, RankedRow

#: Longest wait for a state (seconds): generous, so a loaded machine is only slower.
WAIT = 120
TINY = RaceSettings("ising1d", {"m": 6}, budget=500, samplers=("metropolis", "gibbs"))
#: A race that does not end by itself within any test.
ENDLESS = RaceSettings("ising1d", {"m": 6}, budget=10**9, samplers=("metropolis",))


def wait_for(condition, race: Race | None = None) -> int:
    """Wait until ``condition()`` (polling ``race`` meanwhile, as a page's flush does); the messages taken."""
    taken, deadline = 0, time.monotonic() + WAIT
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        taken += race.poll() if race is not None else 0
        time.sleep(0.02)
    return taken


def test_a_race_streams_every_run_and_ends_with_the_bakeoffs_ranking(tmp_path):
    race = Race(Engine(in_process=True), owner=1)
    assert race.start(TINY) and race.state == "running"
    taken = wait_for(lambda: race.state != "running", race)
    assert race.state == "finished", race.message
    final = race.latest
    assert final.finished and final.done == final.total == 2 * TINY.seeds
    assert taken == final.total + 1  # one snapshot per stored run, then the final one
    assert race.process.exitcode == 0 and not os.path.exists(race.results)

    expected = bakeoff(TINY.build_target(), TINY.samplers, TINY.budget, TINY.axis, TINY.seeds, chains=TINY.chains,
                       seed=TINY.seed, results=tmp_path, workers=0, progress=False)
    measure = final.measure
    assert [row.sampler for row in final.rows] == list(expected.table.index)
    for row in final.rows:
        line = expected.table.loc[row.sampler]
        assert (row.setting, row.seeds, row.unusable, row.lower_bound) == (
            line["setting"], line["seeds"], line["ESS not usable"], line["ESS a lower bound"])
        assert (row.rate, row.low, row.high) == pytest.approx(
            (line[measure], line[f"{measure} low"], line[f"{measure} high"]), nan_ok=True)
    assert final.winner == expected.winner and final.verdict == expected.verdict.sentence(measure)
    assert final.verdict.startswith(f"{final.winner} wins" if final.winner else ("tie:", "no winner:"))
    assert final.headline == expected.verdict.headline


def test_stop_terminates_the_race_and_removes_its_runs():
    race = Race(Engine(in_process=True), owner=2)
    assert race.start(ENDLESS)
    wait_for(lambda: race.process.is_alive() and os.path.isdir(race.results))
    race.stop()
    assert race.state == "stopped" and not race.process.is_alive() and not os.path.exists(race.results)
    assert race.poll() == 0


def test_a_busy_server_refuses_a_race_with_the_reason_and_a_free_one_takes_it(monkeypatch):
    engine = Engine(Budget(max_workers=1), in_process=True)
    first, second = Race(engine, owner=3), Race(engine, owner=4)
    try:
        assert first.start(ENDLESS)
        assert not second.start(TINY) and second.state == "refused"
        assert "server busy" in second.message and "1 race and 0 sampler runs" in second.message
        assert "server busy" in card.progress(second)
        first.stop()
        monkeypatch.setattr(model, "MAX_RACES", 1)
        other_engine = Race(Engine(in_process=True), owner=5)
        assert second.start(ENDLESS)  # the place the first race held is free again
        assert not other_engine.start(TINY) and "server busy" in other_engine.message  # the server's limit
    finally:
        first.stop()
        second.stop()


def test_closing_the_session_ends_its_race():
    explorer = Explorer(RunConfig(target="ising1d", target_params={"m": 6}, sampler="metropolis", opad=False))
    try:
        explorer.race.collapsed = False  # open the card: it is built
        intro = explorer.race_card.intro
        assert "5 times" in intro.object and "4 chains" in intro.object and "3000 target evaluations" in intro.object
        explorer.race_card.budget.value = 10_000
        assert "10,000 target evaluations" in intro.object
        race = explorer.race_card.race
        assert race.start(ENDLESS)
        wait_for(lambda: race.process.is_alive())
    finally:
        explorer.close()
    assert race.state == "stopped" and not race.process.is_alive()


HOSTILE = "<img src=x onerror=alert(1)>[click](http://example.com) **bold**"


def test_every_name_and_reason_in_the_card_is_shown_as_text():
    rows = (RankedRow(HOSTILE, HOSTILE, 5, 0, 0, 3.0, 2.0, 4.0), RankedRow("gibbs", "as given", 5, 5, 0, 1.0, 0.5, 2.0))
    latest = RaceSnapshot(HOSTILE, 6, "ESS per 1k evals", rows, 10, 10, HOSTILE, HOSTILE, f"{HOSTILE} wins",
                          {HOSTILE: HOSTILE}, {HOSTILE: HOSTILE}, True)
    race = Race(Engine(in_process=True), owner=6)
    race.settings, race.latest, race.state, race.message = RaceSettings(HOSTILE), latest, "failed", HOSTILE
    for text in (card.ranking_table(latest), card.outcome(latest), card.progress(race)):
        assert "<img" not in text and "&lt;img src=x onerror=alert(1)&gt;" in text
    assert "&lt;img src=x onerror=alert(1)&gt;[click](http://example.com) **bold** wins" in card.outcome(latest)
    assert "ESS not usable on 5" in card.ranking_table(latest)
    assert card.plotted(latest)["sampler"] == [HOSTILE, "gibbs"]  # drawn as canvas text, never HTML
