"""The balancing-function view: g(t) of the sampler over the four classic functions, and how it is learned.

Left: g(t) on log–log axes over t ∈ [1e-3, 1e3] — the four classic functions
dashed, the sampler's current g solid. For LSB/FLSB the solid curve is g_θ as
it learns, redrawn live.

Right, for a learning sampler only: the objective L̂ (the case-(b) bound of the
LSB paper, Eq. 5) and η against the step, LSB1's mixture weights against the
step, a dotted marker at the step where θ was frozen, a status line (with a
warning when "keep adapting" makes the chain adaptive MCMC) and a
"Freeze now" button.

Like the other live views, the Bokeh figures are built once per session and
only their ``ColumnDataSource``s change. (A HoloViews ``DynamicMap`` + ``Pipe``
version of this view cost 100–400 ms of the server thread per update; setting
a source's data costs about a millisecond.) The worker sends the learning
state at most every half second, and only when it changed.
"""

from __future__ import annotations

import numpy as np
import panel as pn
from bokeh.models import ColumnDataSource, Span
from bokeh.palettes import Category10_4
from bokeh.plotting import figure

from engine.snapshot import BALANCING, FORMULAS, LOG_T, LearningState, RunInfo, Snapshot

from .base import LiveView, plain
from .conventions import count_range, integer_ticks, legend_outside, log_ticks, number_ticks

T = np.exp(LOG_T)
#: Most points drawn per learning trace (the learner keeps up to 4,096).
HISTORY_POINTS = 500
WEIGHT_COLUMNS = [f"w_{name}" for name in BALANCING]
HISTORY_COLUMNS = ["step", "loss", "eta", *WEIGHT_COLUMNS]


def thinned(history: dict, max_points: int = HISTORY_POINTS) -> dict:
    """Every k-th row of a learning history (and always the last), at most about ``max_points`` rows."""
    n = len(history["step"])
    stride = max(1, -(-n // max_points))
    keep = np.unique(np.append(np.arange(0, n, stride), n - 1)) if n else np.zeros(0, dtype=int)
    return {name: column[keep] for name, column in history.items()}


def history_columns(history: dict) -> dict:
    """Source columns for the learning traces; LSB1's weight columns are NaN for other parametrisations."""
    blank = np.full(len(history["step"]), np.nan)
    return {name: history.get(name, blank) for name in HISTORY_COLUMNS}


def learning_status(state: LearningState) -> str:
    """One line saying what the learner is doing, with a warning when it never stops."""
    step = state.step
    if state.keep_adapting and state.adapting:
        text = (f"<b>keep adapting</b> ({state.parametrization}, step {step:,}): ⚠ the chain is adaptive MCMC — "
                "its invariance is not guaranteed; press <i>Freeze now</i> before collecting samples")
    elif state.adapting:
        text = (f"<b>learning</b> {state.parametrization}: step {step:,} of burn-in K = {state.burn_in:,}; "
                "<i>Freeze now</i> fixes θ")
    else:
        text = f"<b>frozen</b> at step {state.frozen_at:,}: exact locally balanced MCMC with the learned g"
    if state.skipped:
        text += f" · {state.skipped} non-finite update(s) undone"
    return text


#: Narrowest width of g(t)'s plot (px): its legend's two columns and the log axes' ticks fit.
G_MIN_WIDTH = 250


def _trace_figure(title: str, y_label: str, height: int = 170):
    fig = figure(height=height, sizing_mode="stretch_width", title=title, x_axis_label="step", y_axis_label=y_label,
                 x_range=count_range(), tools="pan,wheel_zoom,box_zoom,reset,hover")
    fig.toolbar.logo = None
    integer_ticks(fig.xaxis)
    number_ticks(fig.yaxis, pixels=height - 90)  # η had 8 labels in its 80 px
    return fig


class BalancingView(LiveView):
    """g(t) of the current sampler (solid) over the classic functions (dashed), and its learning traces."""

    title = "Balancing function"

    def __init__(self, **params):
        super().__init__(**params)
        self.curve_source = ColumnDataSource({"t": T, "g": T})
        self.history_source = ColumnDataSource(history_columns({"step": np.zeros(0)}))
        self.g_figure = self._g_figure()
        self.frozen_markers = []
        self.loss_figure = self.eta_figure = self.weights_figure = None  # made for a learning run (``reconfigure``)
        self.freeze_button = pn.widgets.Button(label="Freeze now", color="warning", width=120, visible=False)
        self.freeze_button.on_click(lambda event: self.client.freeze())
        self.status = pn.pane.HTML("", sizing_mode="stretch_width", css_classes=["learning-status"], visible=False)
        self._learning = pn.Column(pn.Row(self.freeze_button, self.status, sizing_mode="stretch_width"),
                                   sizing_mode="stretch_width", min_width=G_MIN_WIDTH,
                                   styles={"flex": f"1 1 {G_MIN_WIDTH}px"})
        # g beside the learning traces, which go under it on a narrow screen
        self._layout = pn.FlexBox(
            pn.pane.Bokeh(self.g_figure, sizing_mode="stretch_width", min_width=G_MIN_WIDTH,
                          styles={"flex": f"1 1 {G_MIN_WIDTH}px"}),
            self._learning, sizing_mode="stretch_width")

    def _learning_figures(self, lsb1: bool) -> list:
        """The traces of a learning run: its objective and η, and for LSB1 the mixture's weights."""
        self.loss_figure = self._with_marker(_trace_figure("objective L̂ (Eq. 5)", "L̂"))
        self.loss_figure.line("step", "loss", source=self.history_source, color="black")
        self.eta_figure = self._with_marker(_trace_figure("η", "η"))
        self.eta_figure.line("step", "eta", source=self.history_source, color="teal")
        if not lsb1:
            return [self.loss_figure, self.eta_figure]
        self.weights_figure = self._with_marker(_trace_figure("LSB1 weights softmax(θ)", "weight", height=200))
        for column, color in zip(WEIGHT_COLUMNS, Category10_4):
            self.weights_figure.line("step", column, source=self.history_source, color=color, line_width=2,
                                     legend_label=FORMULAS[column[2:]])
        legend_outside(self.weights_figure, rows=2)
        return [self.loss_figure, self.eta_figure, self.weights_figure]

    def _g_figure(self):
        fig = figure(height=360, sizing_mode="stretch_width", min_width=G_MIN_WIDTH, x_axis_type="log",
                     y_axis_type="log", title="balancing function g(t)",
                     x_axis_label="t", y_axis_label="g(t)", x_range=(1e-3, 1e3), y_range=(1e-3, 1e3),
                     tools="pan,wheel_zoom,box_zoom,reset,hover")
        for (name, log_g), color in zip(BALANCING.items(), Category10_4):
            fig.line(T, np.exp(log_g(LOG_T)), color=color, line_dash="dashed", line_width=1.5, alpha=0.8,
                     legend_label=FORMULAS[name])
        fig.line("t", "g", source=self.curve_source, color="black", line_width=3, legend_label="current g")
        legend_outside(fig, rows=3)  # above the plot in two columns of formulas: it never covers the curves, and
        # fits the narrowest plot (beside the state on the first screen of a 1000 px window)
        log_ticks(fig.xaxis, fig.yaxis)
        fig.toolbar.logo = None
        return fig

    def _with_marker(self, fig):
        marker = Span(location=0, dimension="height", line_color="firebrick", line_dash="dotted", line_width=2,
                      visible=False)
        fig.add_layout(marker)
        self.frozen_markers.append(marker)
        return fig

    @classmethod
    def applies(cls, info: RunInfo) -> bool:
        return info.capabilities.has_balancing_function

    @classmethod
    def leads(cls, info: RunInfo) -> bool:
        """A run that learns g is about the function it learns."""
        return info.capabilities.learns_balancing

    def reconfigure(self, info: RunInfo) -> None:
        """Make the learning traces and controls for a learning sampler only; draw g as built."""
        learns = info.capabilities.learns_balancing
        self.freeze_button.visible = self.status.visible = learns
        if learns:
            figures = self._learning_figures(lsb1=info.capabilities.parametrization == "lsb1")
            self._learning.extend(pn.pane.Bokeh(fig, sizing_mode="stretch_width") for fig in figures)
        self.curve_source.data = plain({"t": T, "g": np.exp(info.log_g)})

    def update(self, snapshot: Snapshot) -> None:
        """Redraw g and the learning traces when the worker sent a new learning state."""
        state = snapshot.learning
        if state is None:
            return
        self.curve_source.data = plain({"t": T, "g": np.exp(state.log_g)})
        self.history_source.data = plain(history_columns(thinned(state.history)))
        for marker in self.frozen_markers:
            marker.visible = state.frozen_at is not None
            marker.location = state.frozen_at or 0
        self.status.object = learning_status(state)
        self.freeze_button.disabled = not state.adapting

    def __panel__(self):
        return self._layout
