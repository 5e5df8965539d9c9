"""Plot conventions every view follows, so that each plot reads at a glance on a projector.

- Legends sit outside the data area (``legend_outside``): above the plot, in a row, or beside it; a key shared
  by several plots is a line of text above them (``key``), which wraps in a narrow window.
- Titles fit their plot (``fit_title``): wrapped onto lines that a narrow plot holds, never cut.
- Ticks read as numbers (``number_ticks``, ``integer_ticks``, ``log_ticks``): at least ``MIN_TICKS`` on every
  axis of numbers; integers as integers; large counts with an SI prefix (200k steps), never "2.000e+5"; nothing
  below one with an SI prefix (a probability, a KL divergence or a ratio of 0.001 is never "1m"), tiny values
  and log axes as powers of ten (10⁻³, 2 × 10⁻⁴), as ``engine.numbers`` writes them in text.
- Numbers in text are whole from 1000 on (8430, 12,345), four significant digits written out below,
  never "8.43e+03" (``number``, defined in ``engine.numbers`` so that the worker's texts, the comparison's
  verdict, use it too); a quantity that may be tiny (a KL divergence, an error, a probability) as a power of ten
  beyond 10⁻⁴ (1.3 × 10⁻⁶, ``wide_number``), never "0.000001271".
- A trace is one tangle-free summary (``TRACE_LINES``): the mean over the chains, their band when there are
  several, at most ``TRACE_LINES`` single chains drawn faint, and the magnetisation of a cluster sampler, whose
  moves flip the sign of whole domains, as |m| (``engine.statistics.folds_sign``, which the comparison
  of two samplers follows too).
"""

from __future__ import annotations

import textwrap

from bokeh.models import (CDSView, ColumnDataSource, CustomJSFilter, CustomJSTicker, CustomJSTickFormatter,
                          DataRange1d, Legend)

#: Width of a character of a title or an axis label (px, bold 9–10 pt).
CHAR_PIXELS = 8
#: Characters of a title line: a plot on a 1000 px window may be 300 px wide.
TITLE_CHARS = 300 // CHAR_PIXELS
#: Fewest pixels between two tick labels (a label of up to five characters, and room around it).
TICK_PIXELS = 50
#: Fewest ticks on an axis of numbers: with two, a range such as [−180, 20] gets its only tick at 0, and two
#: ticks such as 0.50 and 0.55 hardly say where a value lies.
MIN_TICKS = 3
#: Ticks an axis of unknown length asks for (Bokeh's default).
DESIRED_TICKS = 6
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

#: Superscript digits in JavaScript (``SUPERSCRIPT[c]``), as ``engine.numbers`` writes powers of ten in text.
SUPERSCRIPT_JS = 'const SUPERSCRIPT = {"-": "⁻", "0": "⁰", "1": "¹", "2": "²", "3": "³", "4": "⁴", "5": "⁵", "6": "⁶", ' \
                 '"7": "⁷", "8": "⁸", "9": "⁹"};\nconst power = (e) => "10" + [...String(e)].map(c => SUPERSCRIPT[c]).join("");\n'

#: Engineering notation in JavaScript: k from 10⁴, M, G for the whole axis (counts: 200k steps), a power of ten
#: for an axis whose ticks are all below 10⁻³ (2 × 10⁻⁴), no SI prefix below one (probabilities, KL, ratios: "1m"
#: would read as a unit); as many decimals as the ticks have (at most 6), never exponent notation (``toFixed``
#: writes numbers below 10²¹ out).
ENGINEERING_JS = SUPERSCRIPT_JS + """
const a = Math.max(...ticks.map(Math.abs));
let scale = 1, suffix = "";
for (const [size, name] of [[1e9, "G"], [1e6, "M"], [1e4, "k"]]) {
  if (a >= size) { scale = name === "k" ? 1e3 : size; suffix = name; break; }
}
if (a > 0 && a < 1e-3) { const e = Math.floor(Math.log10(a)); scale = 10 ** e; suffix = " × " + power(e); }
const shown = ticks.map(t => t / scale);
let decimals = 0;
while (decimals < 6 && shown.some(t => Math.abs(t * 10 ** decimals - Math.round(t * 10 ** decimals)) > 1e-6)) decimals++;
return tick === 0 ? "0" : (tick / scale).toFixed(decimals) + suffix;
"""

#: Powers of ten in JavaScript, for log axes (probabilities, KL, ratios, counts spanning decades): 10⁻³, 2 × 10⁻³,
#: 1, 10³; an axis whose ticks all lie within 0.01…999 written out (0.01, 0.1, 1, 10); no SI prefix; the fewest
#: significant digits that tell the ticks apart.
POWERS_JS = SUPERSCRIPT_JS + """
const written = ticks.every(t => t >= 0.01 && t < 1000);
const label = (t, digits) => {
  if (!(t > 0) || written) return String(Number(t.toPrecision(digits)));
  let e = Math.floor(Math.log10(t) + 1e-9);
  let m = Number((t / 10 ** e).toPrecision(digits));
  if (m >= 10) { m /= 10; e += 1; }
  return e === 0 ? String(m) : m === 1 ? power(e) : `${m} × ${power(e)}`;
};
let digits = 1;
while (digits < 6 && new Set(ticks.map(t => label(t, digits))).size < ticks.length) digits++;
return label(tick, digits);
"""

#: Ticks on a linear axis, in JavaScript: 1, 2 or 5 × 10ᵏ apart (and at least MIN_STEP apart); the widest such
#: spacing that puts ``MIN_TICKS`` ticks in the range, then narrower ones while they put at most DESIRED there
#: (never a spacing that would put more than ten times DESIRED, or one lost in the numbers' precision).
LINEAR_TICKS_FUNCTION_JS = """
const linear_ticks = (lo, hi, min_step, desired) => {
  if (!(hi > lo) || !Number.isFinite(hi - lo)) return [];
  const at = (step) => {
    const ticks = [];
    for (let k = Math.ceil(lo / step - 1e-9); k * step <= hi + step * 1e-9; k++) ticks.push(k * step || 0);
    return ticks;
  };
  let best = [];
  const top = Math.ceil(Math.log10(hi - lo));
  for (let e = top; e >= top - 4; e--) {
    for (const m of [5, 2, 1]) {
      const step = m * 10 ** e;
      if (step < min_step) continue;
      if ((hi - lo) / step > 10 * desired || step < 1e-12 * Math.max(Math.abs(lo), Math.abs(hi))) return best;
      const ticks = at(step);
      if (best.length >= MIN_TICKS && ticks.length > desired) return best;
      best = ticks;
    }
  }
  return best;
};
const lo = Math.min(cb_data.start, cb_data.end), hi = Math.max(cb_data.start, cb_data.end);
"""
LINEAR_TICKS_JS = LINEAR_TICKS_FUNCTION_JS + "return linear_ticks(lo, hi, MIN_STEP, DESIRED);"

#: Ticks on a log axis, in JavaScript: powers of ten (every k-th decade from the first, at most DESIRED of them) if ``MIN_TICKS``
#: of them fall in the range, else 1, 2 and 5 of every decade, else 1 to 9 of it, else (a range narrower than a
#: factor of about 1.5) linear ticks.
LOG_TICKS_JS = LINEAR_TICKS_FUNCTION_JS + """
if (!(lo > 0) || !(hi > lo)) return [];
const first = Math.ceil(Math.log10(lo) - 1e-9), last = Math.floor(Math.log10(hi) + 1e-9);
let powers = null;
for (let stride = 1; stride <= Math.max(1, last - first + 1); stride++) {
  const ticks = [];
  for (let e = first; e <= last; e += stride) ticks.push(Number(`1e${e}`));
  if (ticks.length < MIN_TICKS) break;
  powers = ticks;
  if (ticks.length <= DESIRED) break;
}
if (powers) return powers;
for (const mantissas of [[1, 2, 5], [1, 2, 3, 4, 5, 6, 7, 8, 9]]) {
  const ticks = [];
  for (let e = first - 1; e <= last; e++) {
    for (const m of mantissas) {
      const t = Number(`${m}e${e}`);
      if (t >= lo * (1 - 1e-9) && t <= hi * (1 + 1e-9)) ticks.push(t);
    }
  }
  if (ticks.length >= MIN_TICKS) return ticks;
}
return linear_ticks(lo, hi, 0, DESIRED);
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


def _ticker(code: str, desired: int, min_step: float = 0) -> CustomJSTicker:
    """A ``CustomJSTicker`` running ``code`` (``LINEAR_TICKS_JS`` or ``LOG_TICKS_JS``) for ``desired`` ticks."""
    return CustomJSTicker(major_code=code.replace("MIN_TICKS", str(MIN_TICKS)).replace("DESIRED", str(desired))
                          .replace("MIN_STEP", repr(min_step)))


def _desired(pixels: int | None) -> int:
    """Ticks an axis of ``pixels`` asks for: one every ``TICK_PIXELS``, at least ``MIN_TICKS``; ``DESIRED_TICKS``
    on an axis of unknown length."""
    return DESIRED_TICKS if pixels is None else max(MIN_TICKS, pixels // TICK_PIXELS)


def number_ticks(*axes, pixels: int | None = None, min_step: float = 0) -> None:
    """Ticks on every linear axis of ``axes`` (Bokeh axes or splattable lists) in engineering notation
    (``ENGINEERING_JS``), at least ``MIN_TICKS`` of them and, on an axis ``pixels`` long, about one every
    ``TICK_PIXELS`` (``LINEAR_TICKS_JS``), at least ``min_step`` apart."""
    for axis in axes:
        axis.ticker = _ticker(LINEAR_TICKS_JS, _desired(pixels), min_step)
        axis.formatter = CustomJSTickFormatter(code=ENGINEERING_JS)


def integer_ticks(*axes, pixels: int | None = None) -> None:
    """Ticks only at integers (steps, path lengths, counts), labelled as ``number_ticks`` labels them; an axis
    from 0 on ``count_range`` holds at least ``MIN_TICKS`` of them from the first step."""
    number_ticks(*axes, pixels=pixels, min_step=1)


def count_range() -> DataRange1d:
    """The range of a count axis (steps, evaluations) from 0, at least ``MIN_TICKS`` + 1 wide: ``integer_ticks``
    then puts ``MIN_TICKS`` integers on it from the run's first step."""
    return DataRange1d(start=0, min_interval=MIN_TICKS + 1)


def log_ticks(*axes, pixels: int | None = None) -> None:
    """Ticks on log axes (``LOG_TICKS_JS``: powers of ten, or 1, 2 and 5 of each decade when fewer than
    ``MIN_TICKS`` powers fall in the range) labelled as powers of ten (``POWERS_JS``), never with an SI prefix."""
    for axis in axes:
        axis.ticker = _ticker(LOG_TICKS_JS, _desired(pixels))
        axis.formatter = CustomJSTickFormatter(code=POWERS_JS)


def thinned(source: ColumnDataSource) -> CDSView:
    """A view of ``source`` that keeps at most ``THIN_POINTS`` of its rows, evenly spaced (computed in the browser,
    as rows stream in): single chains drawn through it stay lines, not a block."""
    return CDSView(filter=CustomJSFilter(code=THIN_JS.replace("THIN_POINTS", str(THIN_POINTS))))
