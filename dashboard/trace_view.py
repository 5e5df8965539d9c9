"""Energy traces: log p̃ and the chosen statistic of every chain, live.

One Bokeh ``ColumnDataSource`` holds the run's decimated history (see
``dashboard.buffer``): new points are ``stream``ed, and when the history is
decimated the source is replaced once. The x axis is steps or target
evaluations (a toggle; the LSB paper plots against evaluations). At most
``MAX_LINES`` chains are drawn.
"""

from __future__ import annotations

import numpy as np
import panel as pn
import param
from bokeh.models import ColumnDataSource
from bokeh.palettes import Category10_10
from bokeh.plotting import figure

from .run_model import RunModel
from .statistics import LABELS

MAX_LINES = 10
X_AXES = {"steps": "step", "target evaluations": "n_evals"}


def history_columns(history: dict, n_lines: int) -> dict:
    """Bokeh source columns from buffer history columns."""
    columns = {"step": history["step"], "n_evals": history["n_evals"]}
    for i in range(n_lines):
        columns[f"lp{i}"] = history["log_prob"][:, i]
        columns[f"st{i}"] = history["statistic"][:, i]
    return columns


class TraceView(pn.viewable.Viewer):
    """log p̃ and statistic traces of every chain against steps or evaluations."""

    model = param.ClassSelector(class_=RunModel)

    def __init__(self, **params):
        super().__init__(**params)
        self.x_axis = pn.widgets.RadioButtonGroup(label="x axis", options=list(X_AXES), value="steps",
                                                  color="light")
        self.x_axis.param.watch(self._on_x_axis, "value")
        self._layout = pn.Column(sizing_mode="stretch_width")
        self.model.param.watch(self._rebuild, "config")
        self._rebuild()

    def _rebuild(self, *events) -> None:
        n_lines = min(self.model.sampler.n_chains, MAX_LINES)
        self._n_lines = n_lines
        # Start empty: the next drain of the (fresh) buffer delivers every point from step 0.
        empty = {key: np.zeros((0,) + column.shape[1:]) for key, column in self.model.buffer.history().items()}
        self.source = ColumnDataSource(history_columns(empty, n_lines))
        x_field = X_AXES[self.x_axis.value]
        statistic = self.model.config.statistic
        self._figures = [self._figure("log p̃(x)", "lp", x_field)]
        if statistic != "log_prob":
            self._figures.append(self._figure(LABELS[statistic], "st", x_field, x_range=self._figures[0].x_range))
        self._layout[:] = [self.x_axis, *[pn.pane.Bokeh(f, sizing_mode="stretch_width") for f in self._figures]]

    def _figure(self, label: str, prefix: str, x_field: str, x_range=None):
        fig = figure(height=230, sizing_mode="stretch_width", tools="pan,wheel_zoom,box_zoom,reset",
                     x_axis_label=self.x_axis.value, y_axis_label=label, **({"x_range": x_range} if x_range else {}))
        for i in range(self._n_lines):
            fig.line(x=x_field, y=f"{prefix}{i}", source=self.source, line_width=1.2, alpha=0.75,
                     color=Category10_10[i % 10])
        fig.toolbar.logo = None
        return fig

    def _on_x_axis(self, event) -> None:
        field = X_AXES[event.new]
        with pn.io.hold():  # widget callbacks may run without the document lock
            for fig in self._figures:
                fig.xaxis.axis_label = event.new
                for renderer in fig.renderers:
                    renderer.glyph.x = field

    def update(self, drained) -> None:
        """Append (or, after decimation, replace) the history points of a ``Drained`` read."""
        if drained.full_history is not None:
            self.source.data = history_columns(drained.full_history, self._n_lines)
        elif drained.new_history is not None and len(drained.new_history["step"]):
            self.source.stream(history_columns(drained.new_history, self._n_lines))

    def __panel__(self):
        return self._layout

