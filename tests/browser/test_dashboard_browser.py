"""End-to-end tests of the served dashboard in headless Chromium (playwright, sync API).

The dashboard (``app.py``) is served in-process (see ``conftest.py``); each test
opens a new page, i.e. a new server session, drives the sidebar as a user would
and reads what the browser received from the Bokeh document in the page
(``Bokeh.documents[0]``): the "current state" lattice image and the trace
source's ``step`` column.

Without ``/usr/bin/chromium`` the module is skipped, except when the ``CI``
environment variable is set: there a missing browser is an error (``.ci/run``
installs Debian's chromium).
"""

from __future__ import annotations

import base64
import io
import json
import logging
import math
import os
import random
import re
import struct
import time
import zlib
from pathlib import Path

import pytest

from .conftest import TIMEOUT_MS, require_chromium

require_chromium()

from playwright.sync_api import Page, expect  # noqa: E402

from dashboard.controls import CONFIG_FILES  # noqa: E402
from dashboard.preset_picker import NOT_LOADED  # noqa: E402
from engine.config import RunConfig  # noqa: E402
from engine.links import link_query  # noqa: E402
from samplers.diagnostics.verdicts import VERDICTS  # noqa: E402

pytestmark = pytest.mark.browser

ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
APPLY = re.compile(r"^Apply settings")
ISING_CHAIN_PRESET = "OPAD Fig. 1 · 1-D Ising chain · Metropolis"
SEGMENTATION_PRESET = "Segmentation case 3 (dependent, noisy) · g = √t"
#: The file input that loads a configuration (JSON) or a run a sweep stored (.npz).
CONFIG_INPUT = f'input[type="file"][accept="{CONFIG_FILES}"]'
PRESET_ENTRIES = {entry["name"]: entry for entry in json.loads(
    (Path(__file__).resolve().parents[2] / "assets" / "presets.json").read_text(encoding="utf-8"))}
PRESET_TARGETS = {name: entry["config"]["target"] for name, entry in PRESET_ENTRIES.items()}
PRESET_DESCRIPTIONS = {name: entry["description"] for name, entry in PRESET_ENTRIES.items()}

#: What the page shows: the "current state" image (size, sum, values as text) and the
#: trace source's ``step`` column (length, last value; -1 when empty). The sources are
#: found through the plot *views* that are on the page (``views_manager``), so sources
#: of replaced figures (after Apply), which may linger in ``all_models``, are never read.
DIGEST_JS = """
() => {
  const docs = (window.Bokeh && window.Bokeh.documents) || [];
  if (!docs.length || !docs[0].views_manager) return null;
  let image = null, trace = null;
  const plots = docs[0].views_manager.query(view => Array.isArray(view.model.renderers) && view.model.title != null);
  for (const view of plots) {
    const plot = view.model;
    const title = typeof plot.title === "string" ? plot.title : plot.title.text;
    for (const renderer of plot.renderers) {
      const source = renderer.data_source;
      if (!source || !source.data) continue;
      if (title === "current state" && source.data.image) image = source;
      if (source.data.lp_mean) trace = source;  // the traces source (lp_mean: log p̃ of the chains' mean)
    }
  }
  const out = {image: null, step: null};
  if (image) {
    const values = Array.from(image.data.image[0]);
    out.image = {
      size: values.length,
      sum: values.reduce((s, v) => Number.isNaN(v) ? s : s + v, 0),
      values: values.map(v => Number.isNaN(v) ? "n" : String(v)).join(","),
    };
  }
  if (trace) {
    const steps = Array.from(trace.data.step);
    out.step = {length: steps.length, last: steps.length ? steps[steps.length - 1] : -1};
  }
  return out;
}
"""

#: Height (px) the page needs to show its scrolled containers (sidebar, main area) in full.
SCROLLED_HEIGHT_JS = """
() => {
  let height = document.documentElement.scrollHeight;
  for (const el of document.querySelectorAll("body *")) {
    const overflow = getComputedStyle(el).overflowY;
    if ((overflow === "auto" || overflow === "scroll") && el.scrollHeight > el.clientHeight) {
      height = Math.max(height, el.getBoundingClientRect().top + el.scrollHeight + 20);
    }
  }
  return Math.ceil(height);
}
"""

# -- helpers ----------------------------------------------------------------------------------
def digest(page: Page) -> dict:
    return page.evaluate(DIGEST_JS)


def wait_for(read, condition, timeout: float = TIMEOUT_MS / 1000, interval: float = 0.2, what: str = "condition"):
    """Poll ``read()`` until ``condition(value)`` holds; return the value (fail after ``timeout`` s)."""
    deadline = time.monotonic() + timeout
    while True:
        value = read()
        try:
            if condition(value):
                return value
        except (TypeError, KeyError):  # nothing to compare yet (no document, no source, empty column)
            pass
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout} s waiting for {what}; last value: {_short(value)}")
        time.sleep(interval)


def _short(value) -> str:
    text = repr(value)
    return text if len(text) < 400 else text[:400] + "…"


def button(page: Page, name: str):
    return page.get_by_role("button", name=name, exact=True)


def select(page: Page, label: str):
    return page.get_by_label(label, exact=True)


def status(page: Page):
    """The status line, e.g. "running · steps 1,234 · evaluations 5k · …"."""
    return page.locator(".run-status").get_by_text(re.compile(r"steps [\d,]+ · evaluations"))


def alert(page: Page):
    return page.locator(".alert-danger")


def steps_shown(page: Page) -> int:
    """The steps the status line shows, once it shows (Panel hides an HTML pane's text while it draws the pane again,
    until its style sheets have loaded: the text is read, not what the browser paints of it that instant)."""
    line = status(page)
    expect(line).to_be_visible()
    text = line.text_content()
    match = re.search(r"steps ([\d,]+) ·", text)
    assert match, text
    return int(match.group(1).replace(",", ""))


def choose_and_apply(page: Page, target: str, sampler: str, target_widget: str) -> None:
    """Choose a sampler and a target, wait until the server has taken both, then Apply.

    ``target_widget`` is the label of a parameter widget that the target's form shows: once it
    is on the page the server has processed the Target change and, as the Sampler change
    reached it first, that one too. (Clicking Apply within Panel's 50 ms debounce of a
    widget change is the separate bug tested by ``test_apply_right_after_editing_a_field``.)
    """
    select(page, "Sampler").select_option(sampler)
    select(page, "Target").select_option(target)
    expect(select(page, target_widget)).to_be_visible()
    button(page, APPLY).click()


def load_preset(page: Page, name: str) -> None:
    """Choose a preset, wait until the server shows its description, then click Load preset."""
    select(page, "Preset").select_option(label=name)
    expect(page.get_by_text(PRESET_DESCRIPTIONS[name][:40])).to_be_visible()
    button(page, "Load preset").click()


def assert_advancing(page: Page, seconds: float = TIMEOUT_MS / 1000) -> dict:
    """The lattice image and the trace's step column both change while the run goes on."""
    first = wait_for(lambda: digest(page), lambda d: d and d["image"] and d["step"], what="the Bokeh sources")
    later = wait_for(
        lambda: digest(page),
        lambda d: d["image"]["values"] != first["image"]["values"] and d["step"]["last"] > first["step"]["last"],
        timeout=seconds, what="the lattice image and the trace to change",
    )
    # and once more: it keeps going, it did not just jump once
    wait_for(
        lambda: digest(page),
        lambda d: d["image"]["values"] != later["image"]["values"] and d["step"]["last"] > later["step"]["last"],
        timeout=seconds, what="the lattice image and the trace to keep changing",
    )
    return later


def open_preset(page: Page, name: str, widget: str, value: str) -> None:
    """Load a preset and check the sidebar took it (``widget`` shows ``value``) without an error."""
    load_preset(page, name)
    expect(select(page, widget)).to_have_value(value)
    expect(alert(page)).to_be_hidden()


def wait_for_redraws(page: Page, title: str, rows: int, what: str) -> dict:
    """Wait until the plot titled ``title`` holds at least ``rows`` rows, then until it is redrawn."""
    first = wait_for(lambda: plot_sources(page, title), lambda d: d["rows"] >= rows, what=what)
    return wait_for(lambda: plot_sources(page, title), lambda d: d["values"] != first["values"],
                    what=f"{what}, redrawn as the run goes on")


def save_whole_page(page: Page, name: str, settle_ms: int = 800) -> Path:
    """Screenshot the whole dashboard into the artifacts: the window is made as tall as its scrolled content."""
    ARTIFACTS.mkdir(exist_ok=True)
    height = page.evaluate(SCROLLED_HEIGHT_JS)
    page.set_viewport_size({"width": 1400, "height": min(max(height, 1000), 4000)})
    page.wait_for_timeout(settle_ms)  # re-layout and a few more flushes
    path = ARTIFACTS / name
    page.screenshot(path=str(path), full_page=True)
    return path


def worker_processes() -> set[int]:
    """Process ids of the sessions' live worker processes (the server's shared engine)."""
    from engine.engine import shared_engine
    return {handle.runner.pid for handle in list(shared_engine()._workers.values()) if handle.alive}


def process_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


# -- tests ------------------------------------------------------------------------------------
def test_start_streams_lattice_and_trace(page: Page):
    choose_and_apply(page, "ising_lattice", "metropolis", target_widget="ndim")
    expect(alert(page)).to_be_hidden()
    # the new run is installed: a 60 × 60 lattice, a fresh trace
    wait_for(lambda: digest(page), lambda d: d["image"] and d["image"]["size"] == 60 * 60 and d["step"]["last"] == 0,
             what="the 60 × 60 ising_lattice run to be installed")
    button(page, "Start").click()
    expect(status(page)).to_contain_text("running")
    after = assert_advancing(page)
    assert after["step"]["length"] > 1


def test_pause_freezes_the_views(page: Page):
    button(page, "Start").click()
    wait_for(lambda: digest(page), lambda d: d["step"] and d["step"]["last"] > 0, what="the run to start")
    button(page, "Pause").click()
    expect(status(page)).to_contain_text("paused")
    time.sleep(0.5)  # let the last flush reach the page
    before = digest(page)
    steps_before = steps_shown(page)
    time.sleep(1.0)
    after = digest(page)
    assert after == before
    assert steps_shown(page) == steps_before
    # and Start resumes
    button(page, "Start").click()
    wait_for(lambda: digest(page), lambda d: d["step"]["last"] > before["step"]["last"], what="the run to resume")


def test_reset_returns_to_step_zero(page: Page):
    button(page, "Start").click()
    wait_for(lambda: steps_shown(page), lambda n: n > 0, what="steps to count up")
    button(page, "Pause").click()
    expect(status(page)).to_contain_text("paused")
    assert steps_shown(page) > 0
    button(page, "Reset").click()
    expect(status(page)).to_contain_text(re.compile(r"steps 0 ·"))
    wait_for(lambda: digest(page), lambda d: d["step"]["last"] == 0, what="the trace to restart at step 0")
    # the reset run can be started again
    button(page, "Start").click()
    wait_for(lambda: steps_shown(page), lambda n: n > 0, what="steps to count up after the reset")


def test_load_preset(page: Page):
    load_preset(page, ISING_CHAIN_PRESET)
    expect(select(page, "Target")).to_have_value("ising1d")
    expect(select(page, "Sampler")).to_have_value("metropolis")
    expect(alert(page)).to_be_hidden()
    button(page, "Start").click()
    assert_advancing(page)


def test_unsupported_pair_is_refused_and_session_survives(page: Page):
    choose_and_apply(page, "markov_network", "gwg", target_widget="network")
    expect(alert(page)).to_be_visible()
    expect(alert(page)).to_contain_text("differentiable")
    # the previous (default) run is still there and still runs
    button(page, "Start").click()
    expect(status(page)).to_contain_text("running")
    assert_advancing(page)


def test_malformed_configuration_file_is_refused(page: Page):
    config_input = page.locator(CONFIG_INPUT)
    config_input.set_input_files(files=[{"name": "broken.json", "mimeType": "application/json",
                                         "buffer": b'{"target": "ising1d", '}])
    expect(alert(page)).to_be_visible()
    expect(alert(page)).to_contain_text("not valid JSON")
    button(page, "Start").click()
    assert_advancing(page)


def test_closing_the_page_ends_its_worker_process(context, server_url):
    before = worker_processes()
    page = context.new_page()
    page.goto(f"{server_url}/app", timeout=TIMEOUT_MS)
    button(page, "Start").click()
    expect(status(page)).to_contain_text("running")
    ours = wait_for(lambda: worker_processes() - before, bool, what="this session's worker process to start")
    assert len(ours) == 1, ours
    (pid,) = ours
    assert process_exists(pid)
    page.close()
    wait_for(lambda: process_exists(pid), lambda alive: not alive, what=f"worker {pid} to end after the page closed")
    assert pid not in worker_processes()


def test_screenshot_of_a_running_segmentation(page: Page):
    load_preset(page, SEGMENTATION_PRESET)
    expect(select(page, "Target")).to_have_value("ising_segmentation")
    expect(alert(page)).to_be_hidden()
    button(page, "Start").click()
    expect(status(page)).to_contain_text("running")
    time.sleep(3)
    assert steps_shown(page) > 0
    # The template scrolls its sidebar and main area inside the window, so a "full page"
    # screenshot is only the window: make the window as tall as the scrolled content first.
    height = page.evaluate(SCROLLED_HEIGHT_JS)
    page.set_viewport_size({"width": 1400, "height": min(max(height, 1000), 4000)})
    page.wait_for_timeout(1000)  # re-layout and a few more flushes
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / "dashboard.png"
    data = page.screenshot(path=str(path), full_page=True)
    print(f"\nscreenshot: {path}")

    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    assert width >= 1000 and height >= 800, (width, height)
    assert path.stat().st_size > 20_000
    from PIL import Image

    with Image.open(io.BytesIO(data)) as image:
        colours = image.convert("RGB").getcolors(maxcolors=1_000_000)
    assert colours is not None and len(colours) > 50, "the screenshot is (nearly) blank"


def test_apply_right_after_editing_a_field(page: Page, server_errors):
    button(page, "Start").click()
    wait_for(lambda: steps_shown(page), lambda n: n > 0, what="steps to count up")
    button(page, "Pause").click()
    expect(status(page)).to_contain_text("paused")
    # A user types a new seed and clicks Apply: the seed's change is sent when the field loses
    # focus, i.e. together with the click. To make the timing deterministic both are sent from
    # one JavaScript task here (playwright's fill + click sometimes lets 50 ms pass between them).
    page.evaluate(
        """([input, apply]) => {
            input.value = "7";
            input.dispatchEvent(new Event("change", {bubbles: true}));
            apply.click();
        }""",
        [select(page, "seed").element_handle(), button(page, APPLY).element_handle()],
    )
    expect(status(page)).to_contain_text(re.compile(r"steps 0 ·"))
    wait_for(lambda: digest(page), lambda d: d["step"]["last"] == 0, what="the trace to restart at step 0")
    errors = server_errors.take()
    assert not errors, "the server logged errors:\n" + "\n\n".join(errors)


#: The models the page's document holds, once it has let go of those no root reaches: BokehJS does so itself 30 s
#: after the last change (``recompute_timeout``); here at once, so that the count is read without that wait.
MODEL_COUNT_JS = "() => { const doc = Bokeh.documents[0]; doc._recompute_all_models(); return doc._all_models.size; }"


def test_new_runs_do_not_grow_the_browser_document(page: Page):
    """Applying settings again and again replaces the plots with the new run's: the page's Bokeh models stay as
    many (the old ones leave the document)."""
    def apply_and_settle() -> int:
        """Apply, wait until the new run is built and shown, then until the page's model count holds still."""
        button(page, APPLY).click()
        expect(status(page)).to_contain_text(re.compile(r"^ready · steps 0 ·"))
        counts = [page.evaluate(MODEL_COUNT_JS)]
        while len(counts) < 3 or len(set(counts[-3:])) > 1:  # the same count three reads in a row
            page.wait_for_timeout(300)
            counts.append(page.evaluate(MODEL_COUNT_JS))
            assert len(counts) < 200, f"the page's model count never settled: {counts[-10:]}"
        return counts[-1]

    before = apply_and_settle()
    after = [apply_and_settle() for _ in range(3)]
    assert after == [before] * 3


#: A digest of every data source drawn in the plot titled ``title``: the number of rows of
#: its longest source and all its numeric columns as text (changes whenever any curve does).
PLOT_SOURCES_JS = r"""
(title) => {
  const docs = (window.Bokeh && window.Bokeh.documents) || [];
  if (!docs.length || !docs[0].views_manager) return null;
  const plots = docs[0].views_manager.query(view => Array.isArray(view.model.renderers) && view.model.title != null);
  for (const view of plots) {
    const plot = view.model;
    const text = typeof plot.title === "string" ? plot.title : plot.title.text;
    if (text.replace(/\s+/g, " ") !== title) continue;  // a long title is wrapped onto lines
    let rows = 0, values = [];
    for (const renderer of plot.renderers) {
      const source = renderer.data_source;
      if (!source || !source.data) continue;
      for (const column of Object.values(source.data)) {
        const array = Array.from(column);
        rows = Math.max(rows, array.length);
        values.push(array.join(","));
      }
    }
    return {rows: rows, values: values.join("|")};
  }
  return null;
}
"""
LSB_PRESET = "LSB · segmentation case 3 · LSB1 learns the mixture (K = 2000)"


def plot_sources(page: Page, title: str):
    return page.evaluate(PLOT_SOURCES_JS, title)


def test_learned_balancing_function_is_redrawn_live_and_freezes(page: Page):
    load_preset(page, LSB_PRESET)
    expect(select(page, "Sampler")).to_have_value("lsb")
    expect(alert(page)).to_be_hidden()
    # A burn-in no machine finishes within the test, so that only "Freeze now" ends the learning (the preset's
    # K = 2000 steps take about a second of CPU).
    burn_in = select(page, "burn in")
    burn_in.fill("100000000")
    burn_in.press("Enter")
    page.wait_for_timeout(300)  # past Panel's 50 ms debounce of the field's change
    button(page, APPLY).click()
    button(page, "Start").click()
    learning = page.locator(".learning-status")
    expect(learning).to_contain_text("of burn-in K = 100,000,000")
    wait_for(lambda: plot_sources(page, "objective L̂ (Eq. 5)"), lambda d: d["rows"] > 5,
             what="the objective trace to fill")
    first = plot_sources(page, "balancing function g(t)")
    wait_for(lambda: plot_sources(page, "balancing function g(t)"), lambda d: d["values"] != first["values"],
             what="the learned g(t) to be redrawn")
    weights = plot_sources(page, "LSB1 weights softmax(θ)")
    assert weights and weights["rows"] > 5
    # The button sits below the fold of the template's scrolled main area: scroll first and let
    # the scroll settle, or the click can land where the button was before the scroll ended.
    freeze = button(page, "Freeze now")
    freeze.scroll_into_view_if_needed()
    page.wait_for_timeout(300)
    freeze.click()
    expect(learning).to_contain_text("frozen")
    expect(button(page, "Freeze now")).to_be_disabled()
    time.sleep(1.0)  # the last redraw of the learned curve reaches the page
    frozen = plot_sources(page, "balancing function g(t)")
    time.sleep(1.5)
    assert plot_sources(page, "balancing function g(t)")["values"] == frozen["values"]
    assert steps_shown(page) > 0
    save_whole_page(page, "lsb.png", settle_ms=800)


BVS_PRESET = "OPAD Fig. 2 · variable selection, diabetes data (m = 10) · Metropolis"
KL_TITLE = "KL(P‖π) against iterations"
INCLUSION_TITLE = "posterior inclusion probabilities P(γⱼ = 1 | y)"


def test_kl_curves_and_inclusion_bars_are_drawn_live(page: Page):
    open_preset(page, BVS_PRESET, "Target", "bvs")
    button(page, "Start").click()
    wait_for_redraws(page, KL_TITLE, 20, what="the KL curves of 20 chains")
    expect(page.locator(".kl-status")).to_contain_text("MCMC/OPAD+")
    # columns: names, MCMC, OPAD, OPAD+, exact, γ* (NaN throughout: the diabetes data have no true model)
    bars = wait_for(lambda: plot_sources(page, INCLUSION_TITLE),
                    lambda d: d["rows"] == 10 and not any("NaN" in c for c in d["values"].split("|")[1:5]),
                    what="the inclusion bars of the 10 predictors")
    wait_for(lambda: plot_sources(page, INCLUSION_TITLE), lambda d: d["values"] != bars["values"],
             what="the inclusion bars to be redrawn")
    save_whole_page(page, "opad.png", settle_ms=800)


SLOW_MOTION_PRESET = "IM · slow motion on a 12×12 ferromagnet (k = 6)"
COMPARISON_PRESET = "IM Fig. 2 · ferromagnet 30×30 at β = 1/2.27, half up · k = 45, γ = β/2 vs Kawasaki"


def test_slow_motion_move_is_played_flip_by_flip(page: Page):
    open_preset(page, SLOW_MOTION_PRESET, "Sampler", "intracluster")
    slow = button(page, "Slow-motion move")
    slow.scroll_into_view_if_needed()
    page.wait_for_timeout(300)
    slow.click()
    replay = page.locator(".replay-status")
    # A loaded machine may show any frame late or skip to the next: wait on what a frame says, not on which one.
    expect(replay).to_contain_text(re.compile(r"step \d+ of 12 \(first walk, towards c\)"))
    wait_for(lambda: plot_sources(page, "current state"), lambda d: "#e63946" in d["values"],
             what="the first walk's flips to be outlined")
    expect(replay).to_contain_text(re.compile(r"second walk, away from c|move (accepted|rejected)"))
    expect(replay).to_contain_text(re.compile(r"move (accepted|rejected)"))
    expect(status(page)).to_contain_text("paused")
    assert steps_shown(page) == 1


def test_comparison_card_draws_both_samplers_at_equal_compute_time(page: Page):
    open_preset(page, COMPARISON_PRESET, "compare with", "kawasaki")
    button(page, "Start").click()
    wait_for_redraws(page, "mean E = −log p̃ over chains against compute seconds", 20, what="both energy traces")
    wait_for(lambda: plot_sources(page, "autocorrelation of E = −log p̃ against the lag in compute seconds"),
             lambda d: d["rows"] > 10, what="the compute-time autocorrelations")
    expect(page.locator(".comparison-status")).to_contain_text("kawasaki")
    save_whole_page(page, "intracluster.png", settle_ms=1500)


def test_an_oversize_upload_is_refused_in_the_browser_and_the_session_goes_on(page: Page, server_errors):
    choose_and_apply(page, "boltzmann", "gibbs", target_widget="beta")
    model_input = page.locator('input[type="file"][accept=".npz,.csv"]')
    model_input.set_input_files(files=[{"name": "huge.npz", "mimeType": "application/octet-stream",
                                        "buffer": b"PK" + bytes(16_000_000)}])
    expect(alert(page)).to_be_visible()
    expect(alert(page)).to_contain_text("huge.npz is 16 MB; files up to 10 MB are accepted here")
    button(page, "Start").click()
    expect(status(page)).to_contain_text("running")
    assert_advancing(page)


def test_a_deeply_nested_configuration_gives_a_message_and_nothing_of_it_reaches_the_log(page: Page, caplog):
    nested = b'{"target": "ising1d", "target_params": {"m": ' + b"[" * 50_000 + b"]" * 50_000 + b"}}"
    page.locator(CONFIG_INPUT).set_input_files(
        files=[{"name": "nested.json", "mimeType": "application/json", "buffer": nested}])
    expect(alert(page)).to_be_visible()
    expect(alert(page)).to_contain_text("nests deeper than")
    sent = base64.b64encode(nested).decode()
    logged = "\n".join(record.getMessage() for record in caplog.records if record.levelno >= logging.INFO)
    assert "[[[[[[[[[[" not in logged and sent[40:80] not in logged  # neither the file nor its upload
    button(page, "Start").click()
    assert_advancing(page)


def test_a_decompression_bomb_is_refused_with_its_size_and_the_session_goes_on(page: Page):
    from tests.hostile_files import decompression_bomb
    choose_and_apply(page, "boltzmann", "gibbs", target_widget="beta")
    page.locator('input[type="file"][accept=".npz,.csv"]').set_input_files(
        files=[{"name": "bomb.npz", "mimeType": "application/octet-stream", "buffer": decompression_bomb()}])
    expect(alert(page)).to_be_visible()
    expect(alert(page)).to_contain_text("would take 3.2 GB decompressed")
    button(page, "Start").click()
    expect(status(page)).to_contain_text("running")
    assert_advancing(page)


#: A verdict cell of the claims card holds exactly one word of the vocabulary
#: (``samplers.diagnostics.verdicts.VERDICTS``).
VERDICT = re.compile("^(" + "|".join(VERDICTS) + ")$")
CLAIM_PRESET = "Claim · LSB Fig. 2 · LSB2 (two moves per step, the authors' schedule) beside √t at equal steps"


def test_the_claims_card_and_a_claim_replayed_at_equal_steps(page: Page):
    page.get_by_text("Which of the papers' claims hold?").click()
    expect(page.locator("table.claims")).to_be_visible()
    expect(page.locator("table.claims td.verdict").first).to_have_text(VERDICT)
    open_preset(page, CLAIM_PRESET, "at equal", "steps")
    button(page, "Start").click()
    wait_for_redraws(page, "mean magnetisation over chains against steps", 10, what="both magnetisation traces")
    expect(page.locator(".comparison-heading")).to_contain_text("at equal steps")
    expect(page.locator(".comparison-status")).to_contain_text("locally_balanced")
    save_whole_page(page, "claims.png", settle_ms=1500)


def open_dashboard(context, url: str) -> Page:
    """A new page at ``url`` (the dashboard, with a query), connected and showing its Start button."""
    page = context.new_page()
    page.goto(url, timeout=60_000)
    page.wait_for_function("() => window.Bokeh && Bokeh.documents && Bokeh.documents.length > 0",
                           timeout=TIMEOUT_MS)
    button(page, "Start").wait_for(state="visible")
    return page


def steps_taken(page: Page, n: int) -> dict:
    """Click Step ``n`` times, wait until the page shows step ``n``; the digest then."""
    for _ in range(n):
        button(page, "Step").click()
    wait_for(lambda: steps_shown(page), lambda shown: shown == n, what=f"{n} steps")
    return wait_for(lambda: digest(page), lambda d: d["step"]["last"] == n, what=f"the trace at step {n}")


def test_the_page_url_is_a_link_that_replays_the_run(page: Page, context):
    load_preset(page, ISING_CHAIN_PRESET)
    expect(select(page, "Sampler")).to_have_value("metropolis")
    wait_for(lambda: page.url, lambda url: "?run=" in url, what="the URL to carry the run")
    expect(button(page, "Copy link to this run")).to_be_visible()
    link = page.url
    first = steps_taken(page, 5)
    other = open_dashboard(context, link)
    try:
        expect(select(other, "Sampler")).to_have_value("metropolis")
        expect(select(other, "chains")).to_have_value("20")
        again = steps_taken(other, 5)
        assert again["image"]["values"] == first["image"]["values"]  # the same run, step for step
        expect(alert(other)).to_be_hidden()
    finally:
        other.close()


def test_a_bad_link_says_so_and_shows_the_default_run(context, server_url):
    page = open_dashboard(context, f"{server_url}/app?run=not-a-run")
    try:
        expect(alert(page)).to_contain_text("This link's run could not be read")
        wait_for(lambda: digest(page), lambda d: d["step"]["last"] == 0, what="the default run")
        expect(select(page, "Sampler")).to_have_value("locally_balanced")
    finally:
        page.close()


def test_no_request_leaves_the_machine(context):
    """Everything the page loads (scripts, styles, fonts) comes from this server: it works offline.

    Served as `make serve` serves it — `panel serve app.py` in a process of its own — so no setting left
    in this test process by other tests can hide or cause an outside request.
    """
    import subprocess
    import sys

    from tests.browser.conftest import _free_port

    port = _free_port()
    root = Path(__file__).resolve().parents[2]
    server = subprocess.Popen([sys.executable, "-m", "panel", "serve", str(root / "app.py"), "--port", str(port),
                               "--setup", str(root / "serve_setup.py")],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=root)
    url = f"http://localhost:{port}"
    try:
        page = context.new_page()
        outside: list[str] = []
        page.on("request", lambda request: outside.append(request.url)
                if not request.url.startswith((url, "data:", "blob:")) else None)
        wait_for(lambda: _answers(f"{url}/app"), bool, what="panel serve to answer")
        page.goto(f"{url}/app", timeout=60_000)
        button(page, "Start").wait_for(state="visible", timeout=TIMEOUT_MS)
        button(page, "Start").click()
        wait_for(lambda: steps_shown(page), lambda n: n > 0, what="the run to start")
        page.close()
        assert outside == []
    finally:
        server.terminate()
        server.wait(timeout=30)


def _answers(url: str) -> bool:
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status == 200
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return False


#: The proposal inspector's picture as drawn in the page: its title (with the step), its values (log₁₀ Q per site)
#: and Σ 10^value.
INSPECTOR_IMAGE_JS = """
() => {
  const docs = (window.Bokeh && window.Bokeh.documents) || [];
  if (!docs.length || !docs[0].views_manager) return null;
  const plots = docs[0].views_manager.query(view => Array.isArray(view.model.renderers) && view.model.title != null);
  for (const view of plots) {
    const title = typeof view.model.title === "string" ? view.model.title : view.model.title.text;
    if (!title.startsWith("log₁₀ proposal at x")) continue;
    for (const renderer of view.model.renderers) {
      const data = renderer.data_source && renderer.data_source.data;
      if (!data || !data.image) continue;
      const values = Array.from(data.image[0]);
      const total = values.filter(Number.isFinite).reduce((sum, value) => sum + Math.pow(10, value), 0);
      return {title: title, values: values.join(","), total: total};
    }
  }
  return null;
}
"""


def test_proposal_inspector_shows_each_step(page: Page):
    page.get_by_text("Proposal inspector").first.click()
    pictures = []
    for step in (1, 2, 3):
        button(page, "Step").click()
        text = page.locator(".inspector-text")
        expect(text).to_contain_text(re.compile(rf"Step {step}\. Proposed: flip site \(\d+, \d+\)"))
        picture = wait_for(lambda: page.evaluate(INSPECTOR_IMAGE_JS),
                           lambda found: found is not None and found["title"].endswith(f"(step {step})"),
                           what=f"the inspector's picture of step {step}")
        assert picture["total"] == pytest.approx(1.0, abs=1e-4)  # Q(x^(j) | x) over the sites sums to one
        picture["accepted"] = text.filter(has_text=re.compile(rf"Step {step}\..*\baccepted\b")).count() == 1
        pictures.append(picture)
    expect(page.locator(".inspector-text")).to_contain_text("acceptance probability")
    # the picture is the proposal at the state before each step: it changes after every accepted move
    for picture, following in zip(pictures, pictures[1:]):
        assert picture["accepted"] == (picture["values"] != following["values"])


#: Visible elements whose right edge is past the window's (cut off, or widening the page), except inside a box meant
#: to scroll sideways (``.scroll-x``, and a Tabulator table) and Bokeh's per-renderer DOM nodes (they draw nothing).
OVERFLOW_JS = """
() => {
  const width = document.documentElement.clientWidth, out = [];
  const parentOf = (el) => el.parentElement || (el.getRootNode() ? el.getRootNode().host : null) || null;
  const scrolls = (el) => {
    for (let a = parentOf(el); a; a = parentOf(a))
      if (a.classList && (a.classList.contains("scroll-x") || a.classList.contains("tabulator"))) return true;
    return false;
  };
  const walk = (root) => {
    for (const el of root.querySelectorAll("*")) {
      const r = el.getBoundingClientRect(), name = String(el.className);
      if (r.width > 0 && r.height > 0 && r.right > width + 1 && !name.includes("GlyphRenderer") && !scrolls(el))
        out.push(`${el.tagName}.${name.slice(0, 50)} ends at ${Math.round(r.right)} px`);
      if (el.shadowRoot) walk(el.shadowRoot);
    }
  };
  walk(document);
  return out.slice(0, 10);
}
"""
COLLAPSED_CARDS = ("Proposal inspector", "Which of the papers", "All targets and samplers")
LAYOUT_PRESETS = ("DISCS · RBM digits · DMALA (step size tuned in 500 steps)",
                  "OPAD Figs. 3–4 · DAGs ER(5, 2) · partition MCMC", LSB_PRESET, COMPARISON_PRESET, BVS_PRESET)


@pytest.mark.parametrize("width, height", [(1280, 720), (1000, 800)])
def test_nothing_is_cut_off_on_a_projector_or_a_narrow_window(page: Page, width: int, height: int):
    page.set_viewport_size({"width": width, "height": height})
    for title in COLLAPSED_CARDS:  # every card open, the inspector drawing a gradient proposal's two plots
        page.locator(".card-header", has_text=title).first.click()
    for name in LAYOUT_PRESETS:
        load_preset(page, name)
        expect(select(page, "Target")).to_have_value(PRESET_TARGETS[name])  # the preset's run is built
        wait_for(lambda: steps_shown(page), lambda shown: shown == 0, what="the preset's run at step 0")
        steps_taken(page, 3)
        assert page.evaluate(OVERFLOW_JS) == [], f"{name} at {width} × {height}"
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / f"layout-{width}-{PRESET_TARGETS[name]}.png"))


def packed_link(config: dict) -> str:
    """A ``?run=`` query carrying ``config`` as it is (valid or not), packed as the app packs links."""
    return base64.urlsafe_b64encode(zlib.compress(json.dumps(config).encode(), 9)).decode().rstrip("=")


def test_a_links_markup_is_shown_as_text_and_fetches_nothing(context, server_url):
    hostile = "![i](http://127.0.0.1:9/p.png)"
    page = context.new_page()
    fetched: list[str] = []
    page.on("request", lambda request: fetched.append(request.url) if "127.0.0.1:9/" in request.url else None)
    page.goto(f"{server_url}/app?run={packed_link({hostile: 1, 'seed': 3})}", timeout=60_000)
    try:
        expect(alert(page)).to_contain_text(hostile)  # character for character: no image, no link
        expect(alert(page).locator("img, a")).to_have_count(0)
        wait_for(lambda: digest(page), lambda d: d["step"]["last"] == 0, what="the default run")
        assert fetched == []
    finally:
        page.close()


def test_a_link_over_the_budget_says_so_and_shows_the_default_run(context, server_url):
    over = RunConfig(target="ising_lattice", target_params={"ndim": 3, "size": 125}, n_chains=256)
    page = open_dashboard(context, f"{server_url}/app?run={link_query(over)}")
    try:
        expect(alert(page)).to_contain_text("one run may use 2 GB")
        wait_for(lambda: digest(page), lambda d: d["step"]["last"] == 0, what="the default run")
        expect(page.locator(".run-waiting")).to_be_hidden()
    finally:
        page.close()


@pytest.mark.parametrize("length", [64_000, 100_000])
def test_a_link_longer_than_the_app_reads_is_refused_with_its_message(context, server_url, length):
    query = base64.urlsafe_b64encode(random.Random(length).randbytes(length)).decode()[:length]  # as a link's
    page = open_dashboard(context, f"{server_url}/app?run={query}")
    try:
        expect(alert(page)).to_contain_text(f"the link's run is {length:,} characters long; at most 6,000 are read")
        wait_for(lambda: digest(page), lambda d: d["step"]["last"] == 0, what="the default run")
    finally:
        page.close()


def test_the_sidebar_the_address_and_the_run_agree_after_every_load(context, server_url, tmp_path):
    """A configuration file loaded as soon as the page shows (its default run still being built): the sidebar,
    the page's address and the run are the file's, and the page never hears of a model it was not sent
    ("reference … isn't known": two runs' views built in one page update, whose events lost the sidebar's and
    the address's changes)."""
    for seed in range(1, 11):
        config = RunConfig(target="ising_lattice", target_params={"ndim": 3, "size": 5}, sampler="metropolis",
                           n_chains=256, seed=seed, statistic="magnetisation")
        path = tmp_path / f"run-{seed}.json"
        path.write_text(config.to_json())
        page = open_dashboard(context, f"{server_url}/app")
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        try:
            page.set_input_files(CONFIG_INPUT, str(path))
            wait_for(lambda: page.evaluate("() => window.location.search"), f"?run={link_query(config)}".__eq__,
                     what=f"the address to carry the run of seed {seed}")  # (page.url lags behind pushState)
            expect(select(page, "seed")).to_have_value(str(seed))
            expect(select(page, "Target")).to_have_value("ising_lattice")
            expect(select(page, "chains")).to_have_value("256")
            assert errors == []
        finally:
            page.close()


#: The status line's numbers: phase, steps, evaluations, steps per second, acceptance (SI-suffixed, "–" for none).
STATUS_NUMBERS = re.compile(r"^(\w+) · steps ([\d,]+) · evaluations (\S+) · (\S+) steps/s · acceptance (\S+) ·")
SI = {"k": 1e3, "M": 1e6, "G": 1e9}


def si_number(text: str) -> float:
    """A number as the status line prints it ("1.23k", "0.999", "–" for none)."""
    if text == "–":
        return float("nan")
    return float(text[:-1]) * SI[text[-1]] if text[-1] in SI else float(text)


def printed_agrees(printed: float, measured: float) -> bool:
    """The printed number is the measured one to its 3 significant digits (both NaN: both say none)."""
    return (math.isnan(printed) and math.isnan(measured)) or math.isclose(printed, measured, rel_tol=5e-3, abs_tol=5e-4)


def session_status(preset_config: dict):
    """The status of the run of the one live session showing ``preset_config``'s run (the server is in-process):
    the snapshot the page's status line is drawn from."""
    from dashboard.explorer import _LIVE
    from engine.presets import run_key

    key = run_key(RunConfig.from_dict(preset_config))
    clients = [explorer.client for explorer in list(_LIVE)
               if explorer.client.config is not None and run_key(explorer.client.config) == key]
    return clients[0].status if len(clients) == 1 else None


def status_agrees(printed: str, measured) -> bool:
    """Whether every number of the status line ``printed`` is the run's own (``measured``, its status): steps,
    evaluations, steps per second (0 while paused) and acceptance."""
    match = STATUS_NUMBERS.match(printed)
    if match is None or measured is None:
        return False
    phase, steps, evaluations, speed, acceptance = match.groups()
    return (phase == measured.phase and int(steps.replace(",", "")) == measured.n_steps
            and printed_agrees(si_number(evaluations), measured.n_evals)
            and printed_agrees(si_number(speed), measured.steps_per_second)
            and printed_agrees(si_number(acceptance), measured.acceptance))


def run_pause_and_read_status(page: Page, name: str, config: dict) -> str:
    """Load preset ``name`` (of ``config``), run it a little, pause it; its status line once it prints the run's
    own numbers (``status_agrees``)."""
    load_preset(page, name)
    wait_for(lambda: session_status(config), lambda measured: measured is not None, what=f"the run of {name}")
    expect(page.get_by_text(NOT_LOADED)).to_be_hidden()
    expect(select(page, "Target")).to_have_value(config["target"])  # the page shows the new run
    wait_for(lambda: steps_shown(page), lambda shown: shown == 0, what=f"{name} at step 0")
    button(page, "Start").click()
    # OPAD's presets enumerate the exact posterior (2^20 models for variable selection) before the first step:
    # minutes on a loaded machine
    wait_for(lambda: steps_shown(page), lambda shown: shown > 0, timeout=5 * TIMEOUT_MS / 1000,
             what=f"{name} to take steps")
    button(page, "Pause").click()
    wait_for(lambda: session_status(config), lambda measured: measured.phase == "paused", what=f"{name} to pause")
    printed, _ = wait_for(lambda: (status(page).inner_text(), session_status(config)), lambda pair: status_agrees(*pair),
                          what=f"the status line of {name} to print its run's numbers (printed, measured)")
    return printed


def test_every_preset_prints_its_own_runs_numbers(page: Page):
    """Each preset, run a little and paused: the sidebar names it, and the status line's numbers are its run's
    snapshot's — a paused run at 0 steps/s (it printed the speed it had before the pause)."""
    page.set_viewport_size({"width": 1280, "height": 720})
    for name, entry in PRESET_ENTRIES.items():
        assert " · 0 steps/s · " in run_pause_and_read_status(page, name, entry["config"]), name
