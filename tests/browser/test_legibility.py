"""Every preset legible at a glance on a projector (1280 × 720) and in a narrow window (1000 px).

For each preset the page loads it, takes a step and reads the plots the browser
drew from Bokeh's views (``LEGIBILITY_JS``): no legend box over a glyph's
bounding box or wider than its plot, no title or axis label wider than its plot, no tick label in
"e+" notation nor two alike, at least three tick labels on every axis of numbers (not one of names) of
a plot that draws something,
no tick label read as an SI prefix where it does not belong (``SI_PREFIX``: a number followed by
n, µ or m on any axis — nothing below one carries a prefix here — or by k, M or G on a log axis, whose
probabilities, KL divergences and ratios read as powers of ten), no raw TeX in any text shown
(``RAW_TEX``: "\\beta", "e^{", "x_{" in the page's visible text, shadow roots included, or in a plot's
title, axis labels and legend), a colour key beside every image, and the state and the run's lead
view beside it (``explorer.Explorer.lead``: its traces, or what the run is about — the KL curves of an OPAD
run, the balancing function an LSB run learns) within the first screen, without scrolling. Every defect of every preset is
collected, then reported together.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from .conftest import TIMEOUT_MS, require_chromium

require_chromium()

from playwright.sync_api import Page, expect  # noqa: E402

pytestmark = pytest.mark.browser

PRESETS = json.loads((Path(__file__).resolve().parents[2] / "assets" / "presets.json").read_text(encoding="utf-8"))
#: Pixels a box may reach into another before it counts as over it (anti-aliasing, borders).
SLACK = 2

#: Whether the trace's source holds a point (``lp_mean``: log p̃ of the chains' mean, or of the one chain).
TRACE_DRAWN_JS = """
() => Bokeh.documents[0].views_manager.query(view => Array.isArray(view.model.renderers)).some(view =>
  view.model.renderers.some(r => r.data_source && r.data_source.data.lp_mean && r.data_source.data.lp_mean.length > 0))
"""

#: A tick label that reads as an SI prefix: a number, then one of n µ m k M G (and perhaps a unit after a space).
SI_PREFIX = r"^[−-]?\d[\d.,]*\s?([nµμmkMG])(\s\S+)?$"
#: Prefixes that no axis carries (nothing below one has a unit here: a probability of 0.001 is not "1m").
SUB_UNIT_PREFIXES = "nµμm"
#: Raw TeX: a command ("\beta") or a braced sub- or superscript ("e^{", "x_{").
RAW_TEX = r"\\[A-Za-z]+|[_^]\{"

#: The legibility defects of the plots shown, as sentences. Reads Bokeh's views of the plots on the page (only
#: those with a size: a hidden or collapsed card's plots have none).
LEGIBILITY_JS = """
([slack, siPrefix, subUnit, rawTex]) => {
  const doc = Bokeh.documents[0];
  const problems = [];
  const si = new RegExp(siPrefix), tex = new RegExp(rawTex);
  const texts = [];  // every text shown: the page's visible text nodes, shadow roots included, and the plots' texts
  const walk = (root) => {
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const el = node.parentElement;
      if (el && !el.closest("script, style, template, annotation, .katex-mathml") &&
          el.checkVisibility({opacityProperty: true, visibilityProperty: true})) texts.push(node.data);
    }
    for (const el of root.querySelectorAll("*")) if (el.shadowRoot) walk(el.shadowRoot);
  };
  walk(document.body);
  const font = (text) => `${text.text_font_style} ${text.text_font_size} ${text.text_font}`;
  const canvas = document.createElement("canvas").getContext("2d");
  const width = (text, f) => { canvas.font = f; return Math.max(...String(text).split("\\n").map(l => canvas.measureText(l).width)); };
  const overlap = (a, b) => a.x0 < b.x1 - slack && b.x0 < a.x1 - slack && a.y0 < b.y1 - slack && b.y0 < a.y1 - slack;
  const visible = (view) => { const r = view.el.getBoundingClientRect(); return r.width > 0 && r.height > 0; };
  const query = (test) => Array.from(doc.views_manager.query(test)).filter(visible);  // query gives an iterator
  const plots = query(view => view.model.type === "Figure" || view.model.type === "Plot");
  const keys = query(view => typeof view.model.text === "string" && view.model.text.includes("background:"))
    .map(view => view.el.getBoundingClientRect());
  let state = null, lead = null;
  const inLead = (el) => { for (let n = el; n; n = n.parentNode || n.host) if (n.classList?.contains("lead-card")) return true; return false; };
  for (const view of plots) {
    const plot = view.model, title = plot.title ? plot.title.text : "";
    const name = `"${title || plot.yaxis?.[0]?.axis_label || "untitled"}"`.replace(/\\n/g, " ");
    texts.push(title, ...[...plot.above, ...plot.below, ...plot.left, ...plot.right, ...plot.center]
      .flatMap(item => [item.axis_label, ...(item.type === "Legend" ? item.items.map(i => i.label?.value) : [])])
      .filter(text => typeof text === "string"));
    const frame = view.frame.bbox;
    const box = view.el.getBoundingClientRect();
    if (title === "current state") state = box;
    if (!lead && inLead(view.el)) lead = box;  // the first plot of the view beside the state
    const glyphs = [];
    for (const rv of view.renderer_views.values()) {
      const model = rv.model;
      if (model.type === "GlyphRenderer" && model.visible && rv.glyph && rv.glyph.index) {
        const b = rv.glyph.bounds();
        if (!Number.isFinite(b.x0) || !Number.isFinite(b.y0)) continue;
        const xs = [b.x0, b.x1].map(x => rv.coordinates.x_scale.compute(x));
        const ys = [b.y0, b.y1].map(y => rv.coordinates.y_scale.compute(y));
        glyphs.push({x0: Math.max(frame.x0, Math.min(...xs)), x1: Math.min(frame.x1, Math.max(...xs)),
                     y0: Math.max(frame.y0, Math.min(...ys)), y1: Math.min(frame.y1, Math.max(...ys))});
      }
    }
    let colourBar = false;
    for (const rv of view.renderer_views.values()) {
      const model = rv.model;
      if (model.type === "Legend" && model.visible && rv.bbox && model.items.some(i => i.visible) &&
          glyphs.some(g => g.x1 > g.x0 && g.y1 > g.y0 && overlap(rv.bbox, g))) {
        problems.push(`${name}: its legend lies on the curves`);
      }
      if (model.type === "Legend" && model.visible && rv.bbox && (rv.bbox.x0 < -slack || rv.bbox.x1 > box.width + slack)) {
        problems.push(`${name}: its legend is wider than the plot`);
      }
      colourBar = colourBar || model.type === "ColorBar";
    }
    if (title && width(title, font(plot.title)) > box.width - frame.x0 + slack) {
      problems.push(`${name}: its title is wider than the plot`);
    }
    for (const av of view.axis_views) {
      const axis = av.model, horizontal = av.dimension === 0;
      const room = horizontal ? frame.width : frame.height;
      if (axis.visible && axis.axis_label && width(axis.axis_label, font({text_font_style: axis.axis_label_text_font_style,
          text_font_size: axis.axis_label_text_font_size, text_font: axis.axis_label_text_font})) > room + slack) {
        problems.push(`${name}: its axis label "${axis.axis_label}" is longer than the axis`);
      }
      if (!axis.visible || !axis.major_label_text_font_size) continue;
      const ticks = av.tick_coords.major[av.dimension];
      const labels = ticks.length ? av.compute_labels(ticks).items.map(item => String(item.text ?? "")) : [];
      const exponent = labels.find(label => /e[+-]?\\d/.test(label));
      if (exponent) problems.push(`${name}: tick label "${exponent}"`);
      const log = (horizontal ? plot.x_scale : plot.y_scale).type === "LogScale";
      const prefixed = labels.find(label => { const m = label.match(si); return m && (log || subUnit.includes(m[1])); });
      if (prefixed) problems.push(`${name}: tick label "${prefixed}" reads as an SI prefix`);
      const overrides = axis.major_label_overrides;
      const names = (horizontal ? plot.x_range : plot.y_range).type === "FactorRange" ||
        (overrides instanceof Map ? overrides.size : Object.keys(overrides ?? {}).length) > 0;
      if (!names && glyphs.length && labels.length < 3) {  // an empty plot's axes have nothing to read yet
        problems.push(`${name}: fewer than three tick labels on its ${horizontal ? "x" : "y"} axis (${labels})`);
      }
      if (new Set(labels).size < labels.length) problems.push(`${name}: two ticks read the same (${labels})`);
    }
    const images = [...view.renderer_views.values()].some(rv => rv.model.type === "GlyphRenderer" &&
      rv.model.glyph.type === "Image");
    const keyNear = keys.some(k => k.top >= box.top - slack &&
      k.left < box.right && k.right > box.left);
    if (images && !colourBar && !keyNear) problems.push(`${name}: an image without a colour key`);
  }
  for (const text of new Set(texts)) {
    const found = text.match(tex);
    if (found) problems.push(`raw TeX "${text.slice(Math.max(0, found.index - 20), found.index + 20).trim()}"`);
  }
  const inScreen = (b) => b && b.top >= 0 && b.left >= 0 && b.bottom <= innerHeight + slack && b.right <= innerWidth + slack;
  if (!inScreen(state)) problems.push("the state is not in the first screen");
  if (!inScreen(lead)) problems.push("the lead view is not in the first screen");
  return problems;
}
"""


#: What ``LEGIBILITY_JS`` is called with.
ARGUMENTS = [SLACK, SI_PREFIX, SUB_UNIT_PREFIXES, RAW_TEX]


#: Whether every plot shown has been painted as it is now laid out: after the next two frames (a resize seen by the
#: browser schedules its paint), each shown plot view's paints done (``ready``, within a second: a paint still under
#: way answers false, and the caller asks again), its first paint finished, and the axes of a plot whose glyphs hold
#: data ticked for it. A plot whose view was just built or just moved, or whose data just came, holds its data but
#: not yet its axes' ticks until its next paint; a plot whose axes stay without ticks is reported once the wait is
#: over, as every other defect.
PAINTED_JS = """
async () => {
  await new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)));
  const plots = Array.from(Bokeh.documents[0].views_manager.query(view => view.model.type === "Figure" ||
    view.model.type === "Plot")).filter(view => {
      const box = view.el.getBoundingClientRect();
      return box.width > 0 && box.height > 0;
    });
  const painted = await Promise.race([Promise.all(plots.map(view => view.ready)).then(() => true),
                                      new Promise(done => setTimeout(() => done(false), 1000))]);
  const holdsData = (view) => [...view.renderer_views.values()].some(rv => rv.model.type === "GlyphRenderer" &&
    rv.model.visible && rv.glyph && rv.glyph.index && Number.isFinite(rv.glyph.bounds().x0) &&
    Number.isFinite(rv.glyph.bounds().y0));
  const ticked = (view) => !holdsData(view) || view.axis_views.every(av => !av.model.visible ||
    av.tick_coords.major[av.dimension].length > 0);
  return painted && plots.every(view => view.has_finished() && ticked(view));
}
"""


def legibility_problems(page: Page) -> list[str]:
    """The legibility defects of the page as it shows now (``LEGIBILITY_JS``), scrolled to the top, once every plot
    has been painted as it is laid out (``PAINTED_JS``, within ``TIMEOUT_MS``)."""
    page.evaluate("() => { for (const el of document.querySelectorAll('*')) el.scrollTop = 0; }")
    deadline = time.monotonic() + TIMEOUT_MS / 1000
    while not page.evaluate(PAINTED_JS) and time.monotonic() < deadline:
        page.wait_for_timeout(200)
    return page.evaluate(LEGIBILITY_JS, ARGUMENTS)


def built_and_stepped(page: Page, entry: dict) -> None:
    """Load the preset ``entry``, wait until its run is built, take a step and wait until it is drawn."""
    page.get_by_label("Preset", exact=True).select_option(label=entry["name"])
    expect(page.get_by_text(entry["description"][:40])).to_be_visible()
    page.get_by_role("button", name="Load preset", exact=True).click()
    expect(page.get_by_label("Target", exact=True)).to_have_value(entry["config"]["target"])
    expect(page.locator(".run-status")).to_contain_text("steps 0 ")
    page.get_by_role("button", name="Step", exact=True).click()
    # OPAD's presets enumerate the exact posterior (2^20 models for variable selection) before the first step:
    # minutes on a loaded machine
    expect(page.locator(".run-status")).not_to_contain_text("steps 0 ", timeout=5 * TIMEOUT_MS)
    page.wait_for_function(TRACE_DRAWN_JS, timeout=TIMEOUT_MS)


@pytest.mark.parametrize("width, height", [(1280, 720), (1000, 720)])
def test_every_preset_is_legible(page: Page, width: int, height: int):
    page.set_viewport_size({"width": width, "height": height})
    problems = []
    for entry in PRESETS:
        built_and_stepped(page, entry)
        problems += [f"{entry['name']} at {width} px: {problem}" for problem in legibility_problems(page)]
    assert not problems, "\n".join(problems)


#: The first plot drawn with a legend outside its data (above or beside it), as ``LEGEND_PLOT`` finds it.
LEGEND_PLOT = """
Array.from(Bokeh.documents[0].views_manager.query(view => view.model.type === "Figure" ||
  view.model.type === "Plot")).map(view => view.model).find(plot => [...plot.above, ...plot.right].some(item => item.type === "Legend") &&
    plot.renderers.some(r => r.data_source && Object.values(r.data_source.data).some(column => column.length > 0)))
"""
#: Plants defects of every kind the check looks for: in the legend plot as drawn, its legend repeated on the curves
#: and a title far wider than the plot; on a log axis (g(t)'s) a tick read as "1k"; on the trace's axes, ticks
#: read as "…m" (a value below one with an SI prefix) and a single tick; raw TeX in a line of the page (inside a
#: shadow root, as Panel draws its panes) and in an axis label.
PLANT_DEFECTS_JS = """
() => {
  const plot = %s;
  const legend = [...plot.above, ...plot.right].find(item => item.type === "Legend");
  const Legend = Bokeh.Models.get("Legend");
  plot.add_layout(new Legend({items: legend.items, location: "center"}), "center");
  plot.title.text = "a title that no plot of this page is wide enough for ".repeat(8);
  const plots = Array.from(Bokeh.documents[0].views_manager.query(view => view.model.type === "Figure"))
    .map(view => view.model);
  const formatter = (code) => new (Bokeh.Models.get("CustomJSTickFormatter"))({code});
  const xaxis = (p) => p.below.find(item => item.type.endsWith("Axis"));
  const yaxis = (p) => p.left.find(item => item.type.endsWith("Axis"));
  const logPlot = plots.find(p => p.x_scale.type === "LogScale");
  xaxis(logPlot).formatter = formatter("return tick >= 1000 ? tick / 1000 + 'k' : String(tick);");
  yaxis(logPlot).axis_label = "planted \\\\beta";
  const trace = plots.find(p => p.renderers.some(r => r.data_source && r.data_source.data.lp_mean));
  yaxis(trace).formatter = formatter("return (tick * 1000).toFixed(0) + 'm';");
  xaxis(trace).ticker = new (Bokeh.Models.get("CustomJSTicker"))({major_code: "return [(cb_data.start + cb_data.end) / 2];"});
  const deep = (root, selector) => root.querySelector(selector) ||
    [...root.querySelectorAll("*")].filter(el => el.shadowRoot).map(el => deep(el.shadowRoot, selector)).find(Boolean);
  const key = deep(document, ".trace-key");
  const line = document.createElement("span");
  line.textContent = "planted e^{-2βJ}";
  (key.shadowRoot ?? key).append(line);
}
""" % LEGEND_PLOT.strip()
#: What the check says of each planted defect (a part of its sentence).
PLANTED = ("its legend lies on the curves", "its title is wider than the plot", 'tick label "1k" reads as an SI prefix',
           'm" reads as an SI prefix', "fewer than three tick labels on its x axis", 'raw TeX "planted e^{-2βJ}"',
           'raw TeX "planted \\beta"', "the state is not in the first screen", "the lead view is not in the first screen")


def test_the_check_finds_each_kind_of_defect_it_looks_for(page: Page):
    """The check is not vacuous: on a comparison preset with a log axis (a balancing function) it reports
    nothing, and it reports a legend laid onto the curves, a title wider than its plot, ticks read as SI prefixes
    on a log axis and below one, an axis with a single tick, raw TeX in the page and in a plot, and the state and
    lead view pushed below a short window's first screen."""
    page.set_viewport_size({"width": 1280, "height": 720})
    built_and_stepped(page, next(entry for entry in PRESETS if entry["config"].get("compare_sampler")
                                 and entry["config"]["sampler"] == "lsb"))
    page.get_by_role("button", name="Start", exact=True).click()
    page.wait_for_function(f"() => Boolean({LEGEND_PLOT.strip()})", timeout=TIMEOUT_MS)
    page.get_by_role("button", name="Pause", exact=True).click()
    assert legibility_problems(page) == []
    page.evaluate(PLANT_DEFECTS_JS)
    page.set_viewport_size({"width": 1280, "height": 260})
    page.wait_for_function(f"() => {{ const found = ({LEGIBILITY_JS.strip()})({json.dumps(ARGUMENTS)}).join('\\n'); "
                           f"return {json.dumps(PLANTED)}.every(defect => found.includes(defect)); }}",
                           timeout=TIMEOUT_MS)  # BokehJS lays the plot out again first
    problems = "\n".join(legibility_problems(page))
    for defect in PLANTED:
        assert defect in problems, problems
