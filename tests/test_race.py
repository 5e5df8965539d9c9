"""The Race card's model and text: a bake-off in a process of its own, streamed, stoppable, refused when busy.

Budgets are counted in target evaluations and every wait is on a state with a
generous timeout, so nothing here depends on the machine's speed.
"""

from __future__ import annotations

import math
import multiprocessing
import os
import threading
import time

import pytest

from dashboard import race as card
from dashboard.explorer import Explorer
from sweeps.bake_off import race as model
from engine.budget import Budget
from engine.config import RunConfig
from engine.engine import Engine
from engine.numbers import number
from engine.presets import load_presets
from sweeps import bakeoff
from sweeps.bake_off import SUBSPACE_ADVICE, BakeoffResult, applicable
from sweeps.bake_off.race import Race, RaceSettings, RaceSnapshot, RankedRow, snapshot
from sweeps.bake_off.summary import UNRESOLVED, UNSETTLED, table, verdict
from tests import test_bakeoff as bake  # its synthetic runs (a module import collects no tests)

#: Longest wait for a state (seconds): generous, so a loaded machine is only slower.
WAIT = 120
#: The 1-D Ising chain of the OPAD paper's preset.
CHAIN = {"m": 15, "beta": 0.5, "J": 1.0, "h": 0.1, "mu": 1.0}
#: A race that ends at its own budget: Swendsen–Wang's chains settle on every seed at 500 evaluations per run (and
#: at 400; at 300 one of the seeds the runs' hashes give since the bake-off's format 2 does not).
TINY = RaceSettings("ising1d", CHAIN, budget=500, samplers=("metropolis", "swendsen_wang"))
#: A race whose first budget settles no sampler's chains (Swendsen–Wang's not on one seed of five at 100).
TOO_SMALL = RaceSettings("ising1d", CHAIN, budget=100, samplers=("metropolis", "swendsen_wang"))
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


def race_to_the_end(settings: RaceSettings, owner: int) -> tuple[Race, int]:
    """A finished race on ``settings`` (its process gone) and the messages it sent."""
    race = Race(Engine(in_process=True), owner=owner)
    assert race.start(settings) and race.state == "running"
    taken = wait_for(lambda: race.state != "running", race)
    assert race.state == "finished", race.message
    assert race.wait_ended(WAIT)  # the page never waits for the process: a thread does
    return race, taken


def test_a_race_streams_every_run_and_ends_with_the_bakeoffs_ranking(tmp_path):
    race, taken = race_to_the_end(TINY, owner=1)
    final = race.latest
    assert final.finished and final.done == final.total == 2 * TINY.seeds
    assert taken == final.total + 1  # one snapshot per stored run, then the final one
    assert race.process.exitcode == 0 and not os.path.exists(race.results)
    assert (final.budget, final.raised_from) == (TINY.budget, ())

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
    said = expected.verdict
    assert (final.winner, final.headline, final.outcome, final.leader, final.runner_up, final.lost) == (
        expected.winner, said.headline, said.outcome, said.leader, said.runner_up, said.unsettled)
    assert final.ratio == pytest.approx((said.evidence.centre, said.evidence.low, said.evidence.high), nan_ok=True)
    assert final.winner == "swendsen_wang" and final.lost == (("metropolis", 5, 5),)
    text = card.verdict_box(final)
    assert "swendsen_wang wins" in text and "metropolis (5 of 5 seeds)" in text


def test_a_race_whose_budget_settles_no_sampler_raises_the_budget_itself_and_says_so():
    race, taken = race_to_the_end(TOO_SMALL, owner=7)
    final = race.latest
    assert (final.budget, final.raised_from) == (TOO_SMALL.raised()[0], (TOO_SMALL.budget,))
    assert final.out_of_time == {}  # both are quick: raced again
    assert taken == 2 * final.total + 1  # every run at both budgets, then the final snapshot
    assert final.winner == "swendsen_wang" and final.outcome == "wins"
    said = card.verdict_box(final)
    raised = number(TOO_SMALL.raised()[0])
    assert (f"At {TOO_SMALL.budget} evaluations per run no sampler's chains settled, so the race raised the budget "
            f"itself to {raised}.") in said
    assert f"at {raised} evaluations per run" in card.progress(race)


def test_a_raised_race_leaves_out_the_samplers_too_slow_for_the_larger_budget_and_says_they_lost(monkeypatch, tmp_path):
    """When the race raises its budget, a sampler projected to take more than ``SECONDS_PER_RUN`` a run at the larger
    budget is not raced at it: the final snapshot names it with its projection, the card says it lost there, and
    the rows hold only the samplers raced. (The projection is planted: how fast a sampler runs is the machine's.)"""
    settings = RaceSettings("ising1d", CHAIN, budget=100, samplers=("metropolis", "gibbs", "swendsen_wang"))
    seen = []

    def planted(result, budget):
        seen.append((result.budget, budget, sorted(result.runs)))
        return {"metropolis": 10 * model.SECONDS_PER_RUN, "gibbs": 0.5, "swendsen_wang": 0.5}

    for name, replacement in (("projected_seconds", planted), ("limit_memory", lambda run_bytes: None),
                              ("sample_at_low_priority", lambda: None)):
        monkeypatch.setattr(model, name, replacement)  # run here, in this process: no limit, no lowered priority
    mine, theirs = multiprocessing.Pipe(duplex=False)
    racing = threading.Thread(target=model.run_race, args=(theirs, settings, str(tmp_path), 0), daemon=True)
    racing.start()  # beside the reading here: the pipe holds only so much
    messages = [mine.recv()]
    while messages[-1][0] == "progress":
        messages.append(mine.recv())
    racing.join(WAIT)
    kind, final = messages[-1]
    assert kind == "finished" and seen == [(100, settings.raised()[0], ["gibbs", "metropolis", "swendsen_wang"])]
    assert (final.budget, final.raised_from) == (settings.raised()[0], (100,))
    assert final.out_of_time == {"metropolis": 10 * model.SECONDS_PER_RUN}
    assert {row.sampler for row in final.rows} == {"gibbs", "swendsen_wang"} and final.total == 2 * settings.seeds
    said = card.verdict_box(final)
    assert (f"Too slow to race at {number(final.budget)} evaluations per run, so lost at this budget (1; a run would "
            f"take more than the {number(model.SECONDS_PER_RUN)} CPU seconds a raised race allows): metropolis "
            f"(about {10 * model.SECONDS_PER_RUN:.0f} s).") in said
    assert all(snap.out_of_time == {} for kind, snap in messages if kind == "progress" and snap.budget == 100)


def synthetic(*samplers_runs, budget: int = model.BUDGET) -> RaceSnapshot:
    """The finished race's snapshot of these synthetic runs (``test_bakeoff.measured``) on the 1-D Ising chain, with
    the samplers the bake-off skips there."""
    runs = {runs[0].label: runs for runs in samplers_runs}
    ranked = table(runs, "evaluations")
    said = verdict(ranked, runs, "evaluations")
    skipped = applicable(TINY.build_target(), ["kawasaki", "structure_mcmc"])[1]
    result = BakeoffResult(ranked, said.winner, said, skipped, runs, None, "ising1d", 15, "evaluations", budget,
                           model.SEEDS, model.CHAINS, "log_prob", None)
    return snapshot(result, RaceSettings("ising1d", CHAIN, budget), True)


#: One finished race of each kind of verdict, on synthetic runs.
VERDICTS = {
    "wins, the samplers that did not settle lost": (
        bake.measured("swendsen_wang", bake.SWENDSEN_WANG), bake.measured("wolff", bake.WOLFF),
        bake.measured("flsb", [4.4, 9.8, 6.9, 7.0, 7.5], problems=["", "", "", UNSETTLED, ""])),
    "wins, every other sampler did not settle": (
        bake.measured("pas", [60, 62, 58, 61, 59]),
        bake.measured("gwg", [80, 81, 79, 80, 82], problems=[UNSETTLED] * 5)),
    "tie": (bake.measured("gibbs", [10, 10.2, 9.9, 10.1, 10]), bake.measured("pas", [20, 0.5, 10, 0.25, 20])),
    "no interval, a failed run": (bake.measured("swendsen_wang", bake.SWENDSEN_WANG),
                                  bake.measured("wolff", bake.WOLFF[:4])),
    "no interval, a lower bound": (bake.measured("gibbs", [10, 10.2, 9.9, 10.1, 10]),
                                   bake.measured("metropolis", [5, 5.1, 4.9, 5, 5.05], problems=[UNRESOLVED] * 5)),
    "nothing settled": (bake.measured("swendsen_wang", bake.SWENDSEN_WANG, problems=[UNSETTLED] * 5),
                        bake.measured("wolff", bake.WOLFF, problems=["", UNSETTLED, "", "", ""])),
}


@pytest.mark.parametrize("kind", VERDICTS)
def test_the_cards_verdict_is_in_words_for_a_class_and_agrees_with_the_table(kind):
    latest = synthetic(*VERDICTS[kind])
    box, ranking, details = card.verdict_box(latest), card.ranking_table(latest), card.outcome(latest)
    for text in (box, ranking, details):
        assert "nan" not in text.lower() and "samplers=" not in text and "name it" not in text
    assert "fixed-Hamming-weight" in details and SUBSPACE_ADVICE not in details  # the library's advice stays there
    first = latest.rows[0].sampler
    headline = box.split("</b>")[0]
    assert (latest.winner in (None, first)) and first == latest.leader  # the headline's leader is the table's first
    assert (f">{first} wins" in headline) if latest.winner else \
        (f"{first} leads" in headline or f"Tie: {first}" in headline or "no sampler's chains settled" in headline)
    unsettled = [bool(row.unusable) for row in latest.rows]
    assert unsettled == sorted(unsettled)  # who did not settle ranks below every sampler that did
    for row in latest.rows[1:]:
        if row.unusable and latest.outcome != "nothing settled":  # said lost in the verdict, flagged in the table
            assert f"{row.sampler} ({row.unusable} of {row.seeds} seeds)" in box and \
                f"did not settle on {row.unusable} of {row.seeds}: lost" in ranking
    expected = {"wins, the samplers that did not settle lost": "is 3.09 times wolff's (95 % interval",
                "wins, every other sampler did not settle": "pas's chains settled on every seed; every other",
                "tie": "not entirely above 1, so neither is shown ahead",
                "no interval, a failed run": "only 4 seeds were finished by both, and an interval needs 5",
                "no interval, a lower bound": "the ratio is unknown on 5 of the 5 seeds; metropolis's effective sample "
                                              "size was as large as its draws on 5 seeds",
                "nothing settled": "No sampler's chains settled (split-R̂ at most 1.05) on every seed"}[kind]
    assert expected in box


@pytest.mark.parametrize("preset, winner", [("OPAD Fig. 1 · 1-D Ising chain · Metropolis", "swendsen_wang"),
                                            ("RBM on 8×8 digits · Gibbs with gradients", None)])
def test_the_first_presets_race_to_a_verdict_from_the_cards_default_settings(preset, winner):
    """The race as the card runs it (in its process, at a larger budget while no sampler settles on every seed),
    from the card's default budget, seeds and chains: a winner (Swendsen–Wang on the 1-D Ising chain, at the first
    budget) or a tie, never "no winner". (On the RBM no sampler settles on every seed at the first budget with the
    seeds the runs' hashes give since the bake-off's format 2, the old tuning's included: the race raises it.)"""
    settings = RaceSettings.of(load_presets()[preset].run_config())
    assert (settings.budget, settings.seeds, settings.chains) == (model.BUDGET, model.SEEDS, model.CHAINS)
    race, _ = race_to_the_end(settings, owner=4)
    final = race.latest
    assert final.outcome in ("wins", "tie"), final
    assert winner is None or (final.winner, final.raised_from) == (winner, ()), final


def test_stop_terminates_the_race_and_removes_its_runs():
    race = Race(Engine(in_process=True), owner=2)
    assert race.start(ENDLESS)
    wait_for(lambda: race.process.is_alive() and os.path.isdir(race.results))
    race.stop()
    assert race.state == "stopped" and race.wait_ended(WAIT)  # stop returns at once; a thread waits for the process
    assert not race.process.is_alive() and not os.path.exists(race.results)
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
    assert race.state == "stopped" and race.wait_ended(WAIT) and not race.process.is_alive()


def test_race_waits_while_the_sessions_run_is_being_built_and_a_replaced_card_stops_following_the_run():
    """A race pressed while a new run is built would race the run before, and the new run's arrival would end it:
    Race is not pressable then. A card replaced by a new run's no longer follows the session's run."""
    explorer = Explorer(RunConfig(target="ising1d", target_params={"m": 6}, sampler="metropolis", opad=False))
    try:
        explorer.client.wait_for(lambda client: client.info is not None and not client.building, WAIT)
        explorer.race.collapsed = False  # open the card: it is built
        first = explorer.race_card
        assert not first.go.disabled
        explorer.client.apply(RunConfig(target="ising1d", target_params={"m": 7}, sampler="metropolis", opad=False))
        assert explorer.client.building and first.go.disabled
        explorer.client.wait_for(lambda client: not client.building, WAIT)
        explorer.flush()  # the new run arrives: a fresh card, pressable
        assert explorer.race_card is not first and not explorer.race_card.go.disabled
        explorer.client.building = True  # the replaced card follows the run no more
        assert not first.go.disabled and explorer.race_card.go.disabled
        explorer.client.building = False
    finally:
        explorer.close()


HOSTILE = "<img src=x onerror=alert(1)>[click](http://example.com) **bold**"


def test_every_name_and_reason_in_the_card_is_shown_as_text():
    rows = (RankedRow(HOSTILE, HOSTILE, 5, 0, 0, 3.0, 2.0, 4.0), RankedRow("gibbs", "as given", 5, 5, 0, 1.0, 0.5, 2.0))
    latest = RaceSnapshot(HOSTILE, 6, "ESS per 1k evals", rows, 10, 10, 3000, (), HOSTILE, f"{HOSTILE} wins", "wins",
                          HOSTILE, "gibbs", True, (math.nan,) * 3, 5, 5, (("gibbs", 5, 5),), {HOSTILE: HOSTILE},
                          {HOSTILE: HOSTILE}, True)
    race = Race(Engine(in_process=True), owner=6)
    race.settings, race.latest, race.state, race.message = RaceSettings(HOSTILE), latest, "failed", HOSTILE
    for text in (card.ranking_table(latest), card.verdict_box(latest), card.outcome(latest), card.progress(race)):
        assert "<img" not in text and "&lt;img src=x onerror=alert(1)&gt;" in text
    assert "&lt;img src=x onerror=alert(1)&gt;[click](http://example.com) **bold** wins" in card.verdict_box(latest)
    assert "did not settle on 5 of 5: lost" in card.ranking_table(latest)
    assert card.plotted(latest)["sampler"] == [HOSTILE, "gibbs"]  # drawn as canvas text, never HTML
