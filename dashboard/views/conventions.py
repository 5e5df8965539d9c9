"""Plot conventions every view follows, so that each plot reads at a glance on a projector.

- Legends sit outside the data area (``legend_outside``): above the plot, in a row, or beside it; a key shared
  by several plots is a line of text above them (``key``), which wraps in a narrow window.
- Titles fit their plot (``fit_title``): wrapped onto lines that a narrow plot holds, never cut.
- Ticks read as numbers (``number_ticks``, ``integer_ticks``, ``log_ticks``): integers as integers, large
  numbers in engineering notation with an SI prefix and a unit (200k steps, 1.3 ms), never "2.000e+5".
- Numbers in text are whole from 1000 on (8430, 12,345), four significant digits written out below
  (0.0000123), never "8.43e+03" (``number``, defined in ``engine.numbers`` so that the worker's texts,
  the comparison's verdict, use it too).
- A trace is one tangle-free summary (``TRACE_LINES``): the mean over the chains, their band when there are
  several, at most ``TRACE_LINES`` single chains drawn faint, and the magnetisation of a cluster sampler, whose
  moves flip the sign of whole domains, as |m| (``engine.statistics.folds_sign``, which the comparison
  of two samplers follows too).
"""

from __future__ import annotations

import textwrap

from bokeh.models import (BasicTicker, CDSView, ColumnDataSource, CustomJSFilter, CustomJSTickFormatter, Legend,
                          LogTicker)

#: Width of a character of a title or an axis label (px, bold 9–10 pt).
CHAR_PIXELS = 8
#: Characters of a title line: a plot on a 1000 px window may be 300 px wide.
TITLE_CHARS = 300 // CHAR_PIXELS
#: Fewest pixels between two tick labels (a label of up to five characters, and room around it).
TICK_PIXELS = 50
#: Fewest ticks an axis asks for: with two, a range such as [−180, 20] gets its only tick at 0.
MIN_TICKS = 3
#: Font size of every legend's labels.
LEGEND_FONT = "8pt"
#: Single chains a trace draws beside the mean (and band) of all of them.
TRACE_LINES = 4
#: Opacity of those single chains: they are examples, the mean is the message.
CHAIN_ALPHA = 0.45
#: Most points of a single chain's line (``thinned``).
THIN_POINTS = 150
#: Every k-th row of the source, k chosen so that at most THIN_POINTS remain, and always the last one.
THIN_JS = """
const n = source.get_length();
const k = Math.max(1, Math.ceil(n / THIN_POINTS));
return Array.from({length: n}, (_, i) => i % k === 0 || i === n - 1);
"""

#: Engineering notation in JavaScript: one SI prefix for the axis (k from 10⁴, M, G; m, µ below 0.01; on a log
#: axis, PER_TICK, one per tick), as many decimals as the ticks have (at most 6), then the unit; never exponent
#: notation (``toFixed`` writes numbers below 10²¹ out).
ENGINEERING_JS = """
const own = PER_TICK;
const a = own ? Math.abs(tick) : Math.max(...ticks.map(Math.abs));
let scale = 1, prefix = "";
for (const [size, name] of [[1e9, "G"], [1e6, "M"], [1e4, "k"]]) {
  if (a >= size) { scale = name === "k" ? 1e3 : size; prefix = name; break; }
}
if (a > 0 && a < 1e-2) { [scale, prefix] = a >= 1e-3 ? [1e-3, "m"] : [1e-6, "µ"]; }
const shown = (own ? [tick] : ticks).map(t => t / scale);
let decimals = 0;
while (decimals < 6 && shown.some(t => Math.abs(t * 10 ** decimals - Math.round(t * 10 ** decimals)) > 1e-6)) decimals++;
return tick === 0 ? "0" : (tick / scale).toFixed(decimals) + prefix + UNIT;
"""


def fit_title(fig, text: str) -> None:
    """Give ``fig`` the title ``text``, wrapped onto lines of at most ``TITLE_CHARS`` characters."""
    fig.title.text = textwrap.fill(text, TITLE_CHARS, break_long_words=False)


def fit_axis_label(axis, text: str, pixels: int) -> None:
    """Label ``axis`` (a Bokeh axis or splattable list) with ``text``, wrapped to the ``pixels`` it spans."""
    axis.axis_label = textwrap.fill(text, max(8, pixels // CHAR_PIXELS), break_long_words=False)


def legend_outside(fig, place: str = "above", rows: int | str = "auto") -> Legend:
    """Move the figure's legend out of the data area (``above``/``below`` in ``rows`` rows, ``right``/``left`` in
    a column), in the legends' font size; the legend."""
    legend = fig.legend[0]
    legend.update(orientation="horizontal" if place in ("above", "below") else "vertical", location="top_left",
                  nrows=rows,
                  label_text_font_size=LEGEND_FONT, background_fill_alpha=0.0, border_line_alpha=0.0,
                  padding=2, margin=2, spacing=8, glyph_width=16)
    if legend in fig.center:
        fig.center.remove(legend)
    if legend not in getattr(fig, place):
        fig.add_layout(legend, place)
    return legend


def key(items) -> str:
    """A legend above one or more plots (HTML): each ``(label, colour, thickness)`` of ``items`` as a swatch of that
    colour and thickness (px) before its label; the line wraps between items."""
    swatch = ("<span style='white-space:nowrap;margin-right:14px'><span style='display:inline-block;width:18px;"
              "height:{}px;background:{};vertical-align:middle;margin-right:4px'></span>{}</span>")
    return ("<span style='font-size:0.85em'>"
            + " ".join(swatch.format(thickness, colour, label) for label, colour, thickness in items) + "</span>")


def engineering(unit: str = "", per_tick: bool = False) -> CustomJSTickFormatter:
    """Tick labels in engineering notation with ``unit`` after the number (``ENGINEERING_JS``); ``per_tick`` on a
    log axis, whose ticks span decades."""
    return CustomJSTickFormatter(code=ENGINEERING_JS.replace("UNIT", repr(f" {unit}" if unit else ""))
                                 .replace("PER_TICK", "true" if per_tick else "false"))


def number_ticks(*axes, unit: str = "", pixels: int | None = None) -> None:
    """Label the ticks of every axis in ``axes`` (Bokeh axes or splattable lists) in engineering notation; on an
    axis at least ``pixels`` long, at most a label every ``TICK_PIXELS`` (and at least ``MIN_TICKS`` asked for)."""
    for axis in axes:
        axis.formatter = engineering(unit)
        if pixels is not None:
            axis.ticker.desired_num_ticks = max(MIN_TICKS, pixels // TICK_PIXELS)


def integer_ticks(*axes, unit: str = "", pixels: int | None = None) -> None:
    """Ticks only at integers (steps, path lengths, counts), labelled as ``number_ticks`` labels them."""
    for axis in axes:
        axis.ticker = BasicTicker(min_interval=1)
    number_ticks(*axes, unit=unit, pixels=pixels)


def log_ticks(*axes) -> None:
    """Log axes labelled at 1, 2 and 5 of every decade, in engineering notation."""
    for axis in axes:
        axis.ticker = LogTicker(mantissas=[1, 2, 5])
        axis.formatter = engineering(per_tick=True)


def thinned(source: ColumnDataSource) -> CDSView:
    """A view of ``source`` that keeps at most ``THIN_POINTS`` of its rows, evenly spaced (computed in the browser,
    as rows stream in): single chains drawn through it stay lines, not a block."""
    return CDSView(filter=CustomJSFilter(code=THIN_JS.replace("THIN_POINTS", str(THIN_POINTS))))
