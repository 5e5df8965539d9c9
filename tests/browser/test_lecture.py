"""A lecture in one page: every preset, one after another, reads as a fresh page on the same run.

A lecturer opens one page at 1280×720 and loads the presets one after another,
stepping each. What only the browser knows — the axis ranges Bokeh computes
from the data in the page — must then be what a fresh page opened on that
run (its link) shows at the same step: every plot shown, with its title,
axis labels, legend and ranges, in the same order. Plots against compute
seconds depend on the machine's speed, so there the ranges are only checked
to fit their data (no axis of −350…0 around a curve near −0.4, no 400k
seconds around a run of a few); every other plot's ranges must be equal.
(The server's side of it, every model of the page after random clicks, is
``tests/test_history.py``.)
"""

from __future__ import annotations

import math
import random
import time

import pytest

from .conftest import TIMEOUT_MS, require_chromium

require_chromium()

from playwright.sync_api import Page  # noqa: E402

from engine.config import RunConfig  # noqa: E402
from engine.links import link_query  # noqa: E402

from .test_dashboard_browser import (  # noqa: E402
    PRESET_ENTRIES, alert, button, load_preset, open_dashboard, steps_shown, wait_for)

pytestmark = pytest.mark.browser

PROJECTOR = {"width": 1280, "height": 720}
#: Steps each preset takes before it is read (clicks of Step: the same data in both pages).
STEPS = 3
#: The fixed shuffled order of the lecture.
ORDER_SEED = 40
#: An automatic range fits its data when it holds it and spans at most this many times the data's span (a flat
#: curve: this many times its size, or 1).
FIT = 20.0

#: Every plot shown: its title, axis labels, legend labels, its automatic ranges (start, end) and the span of
#: the data of its lines and markers on each axis.
PLOTS_JS = r"""
() => {
  const docs = (window.Bokeh && window.Bokeh.documents) || [];
  if (!docs.length || !docs[0].views_manager) return null;
  const views = docs[0].views_manager.query(view => view.model.type === "Figure" || view.model.type === "Plot");
  const text = (value) => value == null ? "" : (typeof value === "string" ? value : (value.text ?? "")).replace(/\s+/g, " ");
  const out = [];
  for (const view of views) {
    const rect = view.el.getBoundingClientRect();
    if (!view.el.isConnected || rect.width === 0 || rect.height === 0) continue;
    const plot = view.model;
    const side = (name) => Array.isArray(plot[name]) ? plot[name] : [];
    const axis = (axes) => axes.map(a => text(a.axis_label)).join(" / ");
    const legends = [];
    for (const item of ["left", "right", "above", "below", "center"].flatMap(side)) {
      if (item.items) for (const entry of item.items) legends.push(text(entry.label && (entry.label.value ?? entry.label)));
    }
    const span = {x: [Infinity, -Infinity], y: [Infinity, -Infinity]};
    for (const renderer of plot.renderers) {
      const glyph = renderer.glyph, source = renderer.data_source;
      if (!glyph || !source || !source.data || !renderer.visible) continue;
      for (const dim of ["x", "y"]) {
        const spec = glyph[dim];
        if (!spec || spec.field == null || !(spec.field in source.data)) continue;
        for (const v of source.data[spec.field]) {
          if (Number.isFinite(v)) { span[dim][0] = Math.min(span[dim][0], v); span[dim][1] = Math.max(span[dim][1], v); }
        }
      }
    }
    const range = (r) => r.type === "DataRange1d" || r.constructor.name === "DataRange1d" ? [r.start, r.end] : null;
    out.push({title: text(plot.title), x_label: axis(side("below")), y_label: axis(side("left")),
              legend: legends, x: range(plot.x_range), y: range(plot.y_range),
              x_data: span.x, y_data: span.y});
  }
  const key = (p) => [p.title, p.x_label, p.y_label].join("|");
  out.sort((a, b) => key(a).localeCompare(key(b)));
  return out;
}
"""


def plots(page: Page) -> list[dict]:
    return page.evaluate(PLOTS_JS) or []


def misfits(shown: list[dict]) -> list[str]:
    """The automatic ranges that do not fit their data (module docstring)."""
    out = []
    for plot in shown:
        for dim in ("x", "y"):
            bounds, (low, high) = plot[dim], plot[f"{dim}_data"]
            if bounds is None or not (math.isfinite(low) and math.isfinite(high)):
                continue
            start, end = sorted(bounds)
            data_span = high - low
            allowed = FIT * (data_span if data_span > 0 else max(abs(high), 1.0))
            if start > low + 1e-9 * abs(low) or end < high - 1e-9 * abs(high) or end - start > allowed:
                out.append(f"{plot['title']} ({plot['y_label']}): {dim} range {start:g}…{end:g} around data "
                           f"{low:g}…{high:g}")
    return out


def comparable(shown: list[dict]) -> list[dict]:
    """The plots as they must be equal in both pages: ranges against compute seconds depend on the machine's speed,
    and so do those plots' data spans."""
    out = []
    for plot in shown:
        timed = "second" in plot["x_label"] or "second" in plot["title"]
        plot = {key: value for key, value in plot.items() if not key.endswith("_data")}
        if timed:
            plot["x"] = plot["y"] = None
        else:  # NaN (a range with nothing to fit yet) as None, so that equal pages compare equal
            plot["x"], plot["y"] = (None if bounds is None else [float(f"{b:.6g}") if math.isfinite(b) else None
                                                                 for b in bounds]
                                    for bounds in (plot["x"], plot["y"]))
        out.append(plot)
    return out


def differences(shown: list[dict], expected: list[dict]) -> list[str]:
    """What differs between two pages' plots, plot by plot."""
    names = [[(p["title"], p["y_label"]) for p in plots] for plots in (shown, expected)]
    if names[0] != names[1]:
        return [f"plots {names[0]} ≠ {names[1]}"]
    return [f"{a['title']} ({a['y_label']}): {key} {a[key]!r} ≠ {b[key]!r}"
            for a, b in zip(shown, expected) for key in a if a[key] != b[key]]


def step(page: Page, n: int) -> None:
    for _ in range(n):
        button(page, "Step").click()
    wait_for(lambda: steps_shown(page), lambda shown: shown == n, what=f"{n} steps")


def same_plots(page: Page, other: Page) -> tuple[list[dict], list[dict]]:
    """Both pages' plots once they agree, or as they are after ``TIMEOUT_MS`` (the last snapshots of a paused run,
    such as its learning curves, may reach one page a few seconds after the other)."""
    deadline = time.monotonic() + TIMEOUT_MS / 1000
    while True:
        shown, expected = comparable(plots(page)), comparable(plots(other))
        if (shown == expected and shown) or time.monotonic() > deadline:
            return shown, expected
        page.wait_for_timeout(500)


def test_a_lecture_through_every_preset_reads_like_fresh_pages(context, server_url, server_errors):
    order = list(PRESET_ENTRIES)
    random.Random(ORDER_SEED).shuffle(order)
    context.set_default_timeout(TIMEOUT_MS)
    lecture = open_dashboard(context, f"{server_url}/app")
    errors: list[str] = []
    lecture.on("pageerror", lambda error: errors.append(str(error)))
    lecture.set_viewport_size(PROJECTOR)
    step(lecture, 1)
    try:
        for name in order:
            load_preset(lecture, name)  # the run shown has taken steps: the new one shows step 0
            wait_for(lambda: steps_shown(lecture), lambda shown: shown == 0, what=f"{name}'s run")
            step(lecture, STEPS)
            fresh = open_dashboard(context, f"{server_url}/app?run="
                                            f"{link_query(RunConfig.from_dict(PRESET_ENTRIES[name]['config']))}")
            try:
                fresh.set_viewport_size(PROJECTOR)
                step(fresh, STEPS)
                shown, expected = same_plots(lecture, fresh)
                assert shown == expected, \
                    f"after loading {name!r} in the lecture's page: {differences(shown, expected)}"
                assert not misfits(plots(fresh)), f"{name}, a fresh page: {misfits(plots(fresh))}"
            finally:
                fresh.close()
            assert not misfits(plots(lecture)), f"{name}: {misfits(plots(lecture))}"
            assert alert(lecture).is_hidden()
            assert not errors, f"JavaScript errors in the lecture's page after loading {name!r}: {errors}"
    finally:
        lecture.close()
