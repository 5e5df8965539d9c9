"""The Race card in headless Chromium: a race on the 1-D Ising chain streams its ranking, ends with Swendsen–Wang's
win at the top of the card, above the ranking, and Stop ends the next one (fixtures and helpers: ``conftest.py``,
``test_dashboard_browser.py``)."""

from __future__ import annotations

import multiprocessing
import re
import time

import pytest

from .conftest import require_chromium

require_chromium()

from playwright.sync_api import Page, expect  # noqa: E402

from . import test_dashboard_browser as dashboard  # noqa: E402  (its helpers; a module import collects no tests)

pytestmark = pytest.mark.browser

#: Longest wait for a race to end (ms): generous, so that a loaded machine is only slower.
RACE_MS = 300_000
CARD = "Race: which sampler mixes fastest on this target?"


def progress(page: Page):
    return page.locator(".race-progress")


def test_a_race_streams_a_ranking_and_ends_with_a_verdict_and_stop_ends_the_next(page: Page):
    dashboard.load_preset(page, dashboard.ISING_CHAIN_PRESET)
    expect(dashboard.status(page)).to_be_visible()
    page.get_by_text(CARD).click()
    dashboard.button(page, "Race").click()
    expect(progress(page)).to_contain_text("on ising1d")
    expect(progress(page)).to_contain_text(re.compile(r"Finished on ising1d \(d = 15\): (\d+) of \1 runs"),
                                           timeout=RACE_MS)
    expect(page.locator("table.race tr").nth(2)).to_be_visible()  # a header and at least two samplers
    verdict = page.locator(".race-verdict")
    expect(verdict.locator("b")).to_have_text("swendsen_wang wins")  # its chains settled; it clears every other
    said = verdict.inner_text()
    assert "entirely above 1" in said and "lost at this budget" in said and "nan" not in said.lower()
    header, box, table = (locator.bounding_box() for locator in (page.get_by_text(CARD), verdict,
                                                                 page.locator("table.race")))
    assert box["y"] + box["height"] <= table["y"]  # the verdict comes before the ranking
    assert box["y"] - header["y"] < page.viewport_size["height"] / 2  # on the card's first screen
    expect(page.locator(".race-outcome")).to_contain_text("structure_mcmc")  # skipped, with its reason
    dashboard.save_whole_page(page, "race.png", settle_ms=1500)

    dashboard.button(page, "Race").click()
    expect(progress(page)).to_contain_text("Racing on ising1d")
    dashboard.button(page, "Stop").click()
    expect(progress(page)).to_contain_text("Stopped on ising1d")
    assert not racing(timeout=RACE_MS / 1000), "the stopped race's process outlived its reaper's kill"


def racing(timeout: float) -> list:
    """The race processes still alive once none is, or ``timeout`` seconds have passed: Stop terminates the race
    without waiting for its process (a reaper thread ends it), which on a loaded machine takes a while."""
    deadline = time.monotonic() + timeout
    while True:
        alive = [child for child in multiprocessing.active_children() if child.name.startswith("race-")]
        if not alive or time.monotonic() > deadline:
            return alive
        time.sleep(0.1)
