"""Energy traces: log p̃ and the chosen statistic of the chains, live, readable with many chains.

One Bokeh ``ColumnDataSource`` holds the run's decimated history (see
``engine.buffer``): new points are ``stream``ed, and when the history is
decimated the source is replaced once. The x axis is steps or target
evaluations (a toggle; the LSB paper plots against evaluations). Each figure
draws the mean over all chains (thick), the band that holds the middle 80 % of
them (10th to 90th percentile, shaded), and the first ``MAX_LINES`` chains as
faint thin lines through at most ``conventions.THIN_POINTS`` points, so 20 chains
read as a mean, a spread and a few examples rather than a tangle
(``conventions``); a single chain is drawn alone, and the magnetisation of a
cluster sampler as |m|. Their key is a line of text above the plots, off the
curves.
"""

from __future__ import annotations

import numpy as np
import panel as pn
from bokeh.models import ColumnDataSource
from bokeh.palettes import Category10_10
from bokeh.plotting import figure

from engine.snapshot import LABELS, RunInfo, Snapshot, folds_sign

from .base import LiveView, plain
from .conventions import CHAIN_ALPHA
from .conventions import TRACE_LINES as MAX_LINES
from .conventions import count_range, fit_axis_label, integer_ticks, key, number_ticks, thinned

#: The band's percentiles over the chains.
BAND = (10, 90)
BAND_COLOUR = "#9aa5b1"
#: The trace's title until the run takes its first step (one line of ``conventions.TITLE_CHARS``).
WAITING = "Press Start or Step"  # short: a 270 px plot (a 1000 px window) shows it whole
X_AXES = {"steps": "step", "target evaluations": "n_evals"}
#: Height of a trace figure, and the pixels of it its y axis spans.
HEIGHT = 200
PLOT_PIXELS = HEIGHT - 80
#: Narrowest width of a trace's data area (px), beside the state in a 1000 px window.
MIN_WIDTH = 220


def history_columns(history: dict, n_lines: int, fold: bool = False) -> dict:
    """Bokeh source columns from buffer history columns: the first ``n_lines`` chains, and the mean and band
    (``BAND`` percentiles) over all of them; the statistic as its absolute value when ``fold``."""
    columns = {"step": history["step"], "n_evals": history["n_evals"]}
    for prefix, name in (("lp", "log_prob"), ("st", "statistic")):
        values = np.abs(history[name]) if fold and name == "statistic" else history[name]
        for i in range(n_lines):
            columns[f"{prefix}{i}"] = values[:, i]
        if len(values):
            columns[f"{prefix}_mean"] = values.mean(axis=1)
            columns[f"{prefix}_low"], columns[f"{prefix}_high"] = np.percentile(values, BAND, axis=1)
        else:
            columns[f"{prefix}_mean"] = columns[f"{prefix}_low"] = columns[f"{prefix}_high"] = np.zeros(0)
    return columns


class TraceView(LiveView):
    """log p̃ and statistic traces of every chain against steps or evaluations.

    The figures are made for the run the view is built for: the statistic's
    only when it is not log p̃ itself, a line for each chain drawn singly
    (at most ``MAX_LINES``), a band when there are several chains.
    """

    title = "Traces"

    def __init__(self, **params):
        super().__init__(**params)
        self.x_axis = pn.widgets.RadioButtonGroup(label="x axis", options=list(X_AXES), value="steps",
                                                  color="light")
        self.x_axis.param.watch(self._on_x_axis, "value")
        self.source = ColumnDataSource(self._empty_columns(0))
        self._thinned = thinned(self.source)
        self.key = pn.pane.HTML("", sizing_mode="stretch_width", css_classes=["trace-key"], margin=(0, 10))
        self.chain_lines: list[list] = []  # per figure, its single-chain line renderers
        self._figures: list = []
        self._log_prob_figure = self._statistic_figure = None  # made for the run (``reconfigure``)
        self._layout = pn.Column(self.x_axis, self.key, sizing_mode="stretch_width")
        self._n_lines = 0
        self._fold = False

    @staticmethod
    def _empty_columns(n_lines: int) -> dict:
        empty = np.zeros(0)
        return history_columns({"step": empty, "n_evals": empty, "log_prob": np.zeros((0, n_lines)),
                                "statistic": np.zeros((0, n_lines))}, n_lines)

    def _figure(self, label: str, prefix: str, band: bool, x_range=None):
        # The x axis starts at 0 (the run's start), so a fresh run is not drawn on an axis from −1 to 1, and
        # holds three integer ticks from the first step on.
        fig = figure(height=HEIGHT, sizing_mode="stretch_width", tools="pan,wheel_zoom,box_zoom,reset",
                     x_axis_label=self.x_axis.value, y_axis_label=label, x_range=x_range or count_range())
        x = X_AXES[self.x_axis.value]
        if band:
            fig.varea(x=x, y1=f"{prefix}_low", y2=f"{prefix}_high", source=self.source, fill_color=BAND_COLOUR,
                      fill_alpha=0.35)
        lines = [fig.line(x=x, y=f"{prefix}{i}", source=self.source, view=self._thinned, line_width=1,
                          alpha=CHAIN_ALPHA, color=Category10_10[i % 10]) for i in range(self._n_lines)]
        fig.line(x=x, y=f"{prefix}_mean", source=self.source, line_width=3, color="black")
        integer_ticks(fig.xaxis, pixels=MIN_WIDTH)  # 100k, not 1.000e+5
        number_ticks(fig.yaxis, pixels=PLOT_PIXELS)
        fig.toolbar.logo = None
        self.chain_lines.append(lines)
        self._figures.append(fig)
        return fig

    def reconfigure(self, info: RunInfo) -> None:
        """The run's figures, empty (its first snapshot delivers every point from step 0)."""
        several = info.n_chains > 1
        self._n_lines = min(info.n_chains, MAX_LINES) if several else 0  # one chain: its mean is the chain
        self.source.data = self._empty_columns(self._n_lines)
        self.key.object = key([("mean of the chains", "black", 3), (f"{BAND[0]}–{BAND[1]} % of them", BAND_COLOUR, 10),
                               (f"{self._n_lines} single chains", Category10_10[0], 1)] if several
                              else [("the chain", "black", 3)])
        self._log_prob_figure = self._figure("log p̃(x)", "lp", several)
        self._log_prob_figure.title.text = WAITING
        statistic = info.statistic
        self._fold = folds_sign(info.sampler, statistic)
        if statistic != "log_prob":  # else the statistic is log p̃ itself: one trace plot
            self._statistic_figure = self._figure("statistic", "st", several, x_range=self._log_prob_figure.x_range)
            label = LABELS[statistic]
            fit_axis_label(self._statistic_figure.yaxis, f"|{label}|" if self._fold else label, PLOT_PIXELS)
        self._layout.extend(pn.pane.Bokeh(fig, sizing_mode="stretch_width") for fig in self._figures)

    def _on_x_axis(self, event) -> None:
        field = X_AXES[event.new]
        with pn.io.hold():  # widget callbacks may run without the document lock
            for fig in self._figures:
                fig.xaxis.axis_label = event.new
                for renderer in fig.renderers:
                    renderer.glyph.x = field

    def update(self, snapshot: Snapshot) -> None:
        """Append (or, after decimation, replace) the snapshot's history points."""
        if snapshot.full_history is not None:
            self.source.data = plain(history_columns(snapshot.full_history, self._n_lines, self._fold))
        elif snapshot.new_history is not None and len(snapshot.new_history["step"]):
            self.source.stream(plain(history_columns(snapshot.new_history, self._n_lines, self._fold)))
        started = snapshot.status.n_steps > 0
        if started == bool(self._log_prob_figure.title.text):
            self._log_prob_figure.title.text = "" if started else WAITING

    def __panel__(self):
        return self._layout

