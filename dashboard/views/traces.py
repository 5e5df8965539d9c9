"""Energy traces: log p̃ and the chosen statistic of every chain, live.

One Bokeh ``ColumnDataSource`` holds the run's decimated history (see
``dashboard.model.buffer``): new points are ``stream``ed, and when the history is
decimated the source is replaced once. The x axis is steps or target
evaluations (a toggle; the LSB paper plots against evaluations). At most
``MAX_LINES`` chains are drawn.
"""

from __future__ import annotations

import numpy as np
import panel as pn
from bokeh.models import ColumnDataSource
from bokeh.palettes import Category10_10
from bokeh.plotting import figure

from ..model.snapshot import RunInfo, Snapshot
from ..model.statistics import LABELS
from .base import LiveView, plain

MAX_LINES = 10
X_AXES = {"steps": "step", "target evaluations": "n_evals"}


def history_columns(history: dict, n_lines: int) -> dict:
    """Bokeh source columns from buffer history columns."""
    columns = {"step": history["step"], "n_evals": history["n_evals"]}
    for i in range(n_lines):
        columns[f"lp{i}"] = history["log_prob"][:, i]
        columns[f"st{i}"] = history["statistic"][:, i]
    return columns


class TraceView(LiveView):
    """log p̃ and statistic traces of every chain against steps or evaluations.

    The two figures and their ``MAX_LINES`` lines are built once per session; a
    new run replaces the source's data and shows as many lines as it has chains,
    so the browser's document does not accumulate discarded models.
    """

    title = "Traces"

    def __init__(self, **params):
        super().__init__(**params)
        self.x_axis = pn.widgets.RadioButtonGroup(label="x axis", options=list(X_AXES), value="steps",
                                                  color="light")
        self.x_axis.param.watch(self._on_x_axis, "value")
        self.source = ColumnDataSource(self._empty_columns(MAX_LINES))
        self._log_prob_figure = self._figure("log p̃(x)", "lp")
        self._statistic_figure = self._figure("statistic", "st", x_range=self._log_prob_figure.x_range)
        self._figures = [self._log_prob_figure, self._statistic_figure]
        statistic_pane = pn.pane.Bokeh(self._statistic_figure, sizing_mode="stretch_width")
        self._layout = pn.Column(self.x_axis, pn.pane.Bokeh(self._log_prob_figure, sizing_mode="stretch_width"),
                                 statistic_pane, sizing_mode="stretch_width")
        self._n_lines = 0

    @staticmethod
    def _empty_columns(n_lines: int) -> dict:
        empty = np.zeros(0)
        return history_columns({"step": empty, "n_evals": empty, "log_prob": np.zeros((0, n_lines)),
                                "statistic": np.zeros((0, n_lines))}, n_lines)

    def _figure(self, label: str, prefix: str, x_range=None):
        fig = figure(height=230, sizing_mode="stretch_width", tools="pan,wheel_zoom,box_zoom,reset",
                     x_axis_label=self.x_axis.value, y_axis_label=label, **({"x_range": x_range} if x_range else {}))
        for i in range(MAX_LINES):
            fig.line(x=X_AXES[self.x_axis.value], y=f"{prefix}{i}", source=self.source, line_width=1.2, alpha=0.75,
                     color=Category10_10[i % 10])
        fig.toolbar.logo = None
        return fig

    def reconfigure(self, info: RunInfo) -> None:
        """Empty the traces for a new run (its first snapshot delivers every point from step 0)."""
        self._n_lines = min(info.n_chains, MAX_LINES)
        self.source.data = self._empty_columns(MAX_LINES)
        for fig in self._figures:
            for i, renderer in enumerate(fig.renderers):
                renderer.visible = i < self._n_lines
        statistic = info.statistic
        self._statistic_figure.yaxis.axis_label = LABELS[statistic]
        self._statistic_figure.visible = statistic != "log_prob"

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
            self.source.data = plain(self._padded(snapshot.full_history))
        elif snapshot.new_history is not None and len(snapshot.new_history["step"]):
            self.source.stream(plain(self._padded(snapshot.new_history)))

    def _padded(self, history: dict) -> dict:
        """Source columns for all ``MAX_LINES`` lines; lines beyond the run's chains stay NaN (hidden)."""
        columns = history_columns(history, self._n_lines)
        blank = np.full(len(history["step"]), np.nan)
        for i in range(self._n_lines, MAX_LINES):
            columns[f"lp{i}"] = columns[f"st{i}"] = blank
        return columns

    def __panel__(self):
        return self._layout

