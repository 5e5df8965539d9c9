"""A page after any sequence of clicks reads as a fresh page opened on the same run.

A lecturer opens one page and clicks through it: loads a preset, steps it,
moves β, shows another chain or the running mean, resets, loads the next one.
Here one session walks all presets in a seeded shuffled order, with such
clicks between the loads; after each load, the whole page it shows — the
sidebar and every card, as the Bokeh models the server holds for it
(``page_models``): axis ranges and labels, legends, texts, widget values and
options, the plotted data — must equal what a fresh session opened on that
preset shows. (The browser's own side of it, the ranges Bokeh computes in
the page, is ``tests/browser/test_lecture.py``.)
"""

from __future__ import annotations

import random
import time

import pytest

from dashboard.explorer import Explorer
from dashboard.views.lattice import LatticeView
from engine.presets import load_presets

from .explorer_driver import TIMEOUT, built, settle
from .page_models import PageModels, first_difference

PRESETS = load_presets()


def ready(app: Explorer) -> bool:
    """The run asked for is built, and every command's effect has reached the page."""
    return built(app.client) and not app.client.awaiting


def load(app: Explorer, name: str) -> None:
    """Select ``name`` in the preset picker and click Load preset; wait until its run is shown."""
    picker, before = app.controls.presets, app.client.info
    picker.preset.value = name
    picker.load_preset.clicks += 1
    settle(app, lambda: ready(app) and app.client.info is not before)
    assert app.client.config.to_dict() == PRESETS[name].run_config().to_dict()


def click_around(app: Explorer, rng: random.Random) -> None:
    """What a lecturer does with a run before moving on: steps, β moved live, another chain or the running mean
    shown, Reset, or an edited draft applied."""
    action = rng.choice(["step", "beta", "display", "reset", "apply", "nothing"])
    if action == "step":
        steps = app.client.status.n_steps + rng.randint(1, 5)
        app.client.step(steps - app.client.status.n_steps)
        settle(app, lambda: ready(app) and app.client.status.n_steps >= steps)
    elif action == "beta" and app.controls.runs.live_beta.visible:
        app.client.step(2)
        settle(app, lambda: ready(app) and app.client.status.n_steps >= 2)
        app.client.set_beta(round(0.8 * app.controls.runs.live_beta.value, 3))
        settle(app, lambda: ready(app) and bool(app.client.config.beta_changes))
    elif action == "display" and LatticeView in app.views:
        lattice = app.views[LatticeView]
        lattice.chain.value = lattice.chain.end
        lattice.show_mean.value = True
        settle(app, lambda: ready(app))
    elif action == "reset":
        app.client.step(3)
        settle(app, lambda: ready(app) and app.client.status.n_steps >= 3)
        app.controls.runs.reset.clicks += 1
        settle(app, lambda: ready(app) and app.client.status.n_steps == 0)
    elif action == "apply":
        app.controls.seed.value = app.controls.seed.value + 1
        app.controls.apply_button.clicks += 1
        settle(app, lambda: ready(app) and app.client.config.seed == app.controls.seed.value)


def same_as_a_fresh_page(app: Explorer, page: PageModels, name: str) -> str | None:
    """Where ``page`` differs from a fresh session opened on preset ``name`` (its picker set to it, as a link to it
    sets it), once both have shown all their worker sends (slower displays, such as OPAD's KL, come a few snapshots
    after the first): None when they agree."""
    fresh = Explorer(PRESETS[name].run_config())
    try:
        fresh_page = PageModels(fresh)
        settle(fresh, lambda: ready(fresh))
        end = time.monotonic() + TIMEOUT
        while True:
            app.flush()
            fresh.flush()
            difference = first_difference(page.describe(), fresh_page.describe())
            if difference is None or time.monotonic() > end:
                return difference
            time.sleep(0.1)
    finally:
        fresh.close()


@pytest.mark.parametrize("seed", [0])
def test_every_preset_after_a_lecture_of_clicks_reads_as_a_fresh_page(seed):
    rng = random.Random(seed)
    order = list(PRESETS)
    rng.shuffle(order)
    app = Explorer()
    try:
        page = PageModels(app)
        settle(app, lambda: ready(app))
        for name in order:
            click_around(app, rng)
            load(app, name)
            difference = same_as_a_fresh_page(app, page, name)
            assert difference is None, f"after loading {name!r} in a used page: {difference}"
    finally:
        app.close()
