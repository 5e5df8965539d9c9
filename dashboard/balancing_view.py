"""The balancing-function view: g(t) of the sampler over the four classic functions, and how it is learned.

Top: g(t) on log–log axes over t ∈ [1e-3, 1e3] — the four classic functions
dashed, the sampler's current g solid. For LSB/FLSB the solid curve is
g_θ as it learns, redrawn live.

Below, for a learning sampler only: the objective L̂ (the case-(b) bound of
the LSB paper, Eq. 5) and η against the step, LSB1's mixture weights against
the step, a vertical marker at the step where θ was frozen, a status line (with
a warning when "keep adapting" makes the chain adaptive MCMC) and a
"Freeze now" button.

HoloViews ``DynamicMap``s fed by ``Pipe`` streams: a refresh sends new data,
and HoloViews patches the existing Bokeh sources instead of re-rendering the
plots. ``refresh()`` is cheap to call at every flush; it redraws at most every
``LIVE_SECONDS`` and only what changed.
"""

from __future__ import annotations

import time

import holoviews as hv
import holoviews.plotting.bokeh  # noqa: F401  (registers the Bokeh backend used by .opts)
import numpy as np
import panel as pn
import param

from samplers.balancing import BALANCING, FORMULAS

from .run_model import LearningState, RunModel

LOG_T = np.linspace(np.log(1e-3), np.log(1e3), 241)
T = np.exp(LOG_T)
CLASSIC_STYLE = {"line_dash": "dashed", "line_width": 1.5, "alpha": 0.7}
LIVE_SECONDS = 0.5
#: Most points drawn per learning trace (the learner keeps up to 4,096).
HISTORY_POINTS = 800
WEIGHT_COLUMNS = [f"w_{name}" for name in BALANCING]
#: Options of the learning-trace overlays; their curves are ``framewise`` (every update rescales the axes).
TRACE_OPTS = dict(responsive=True, height=160, show_grid=True)


def classic_curves() -> list[hv.Curve]:
    return [
        hv.Curve((T, np.exp(log_g(LOG_T))), "t", "g(t)", label=f"{name}: {FORMULAS[name]}").opts(**CLASSIC_STYLE)
        for name, log_g in BALANCING.items()
    ]


def thinned(history: dict, max_points: int = HISTORY_POINTS) -> dict:
    """Every k-th row of a learning history (and always the last), at most about ``max_points`` rows."""
    n = len(history["step"])
    stride = max(1, -(-n // max_points))
    keep = np.unique(np.append(np.arange(0, n, stride), n - 1)) if n else np.zeros(0, dtype=int)
    return {name: column[keep] for name, column in history.items()}


def _empty_history() -> dict:
    return {name: np.zeros(0) for name in ["step", "loss", "eta", *WEIGHT_COLUMNS]}


def _weight_curves(data: dict) -> hv.Overlay:
    return hv.Overlay([
        hv.Curve((data["step"], data.get(column, np.zeros(0))), "step", "weight", label=column[2:]).opts(framewise=True)
        for column in WEIGHT_COLUMNS
    ])


def learning_status(state: LearningState, step: int) -> str:
    """One line saying what the learner is doing, with a warning when it never stops."""
    if state.keep_adapting and state.learning:
        text = (f"<b>keep adapting</b> ({state.parametrization}, step {step:,}): ⚠ the chain is adaptive MCMC — "
                "its invariance is not guaranteed; press <i>Freeze now</i> before collecting samples")
    elif state.learning:
        text = f"<b>learning</b> {state.parametrization}: step {step:,} of burn-in K = {state.burn_in:,}"
    else:
        text = f"<b>frozen</b> at step {state.frozen_at:,}: exact locally balanced MCMC with the learned g"
    if state.skipped:
        text += f" · {state.skipped} non-finite update(s) undone"
    return text


class BalancingView(pn.viewable.Viewer):
    """g(t) of the current sampler (solid) over the classic functions (dashed), and its learning traces."""

    model = param.ClassSelector(class_=RunModel)

    def __init__(self, **params):
        super().__init__(**params)
        self._curve = hv.streams.Pipe(data=(T, T))
        self._history = hv.streams.Pipe(data=_empty_history())
        self._frozen = hv.streams.Pipe(data=[])
        current = hv.DynamicMap(lambda data: hv.Curve(data, "t", "g(t)", label="current g"), streams=[self._curve])
        self.g_plot = (hv.Overlay(classic_curves()) * current.opts(line_width=3, color="black")).opts(
            logx=True, logy=True, width=470, height=360, show_grid=True, title="balancing function g(t)",
            legend_position="top_left", legend_opts={"label_text_font_size": "8pt"})
        marker = hv.DynamicMap(hv.VLines, streams=[self._frozen]).opts(color="firebrick", line_dash="dotted",
                                                                     line_width=2, framewise=True)
        loss = hv.DynamicMap(lambda data: hv.Curve((data["step"], data["loss"]), "step", "L̂"), streams=[self._history])
        eta = hv.DynamicMap(lambda data: hv.Curve((data["step"], data["eta"]), "step", "η"), streams=[self._history])
        weights = hv.DynamicMap(_weight_curves, streams=[self._history])
        self.loss_plot = (loss.opts(color="black", framewise=True, tools=["hover"]) * marker).opts(
            title="objective L̂ (Eq. 5)", **TRACE_OPTS)
        self.eta_plot = (eta.opts(color="teal", framewise=True, tools=["hover"]) * marker).opts(title="η", **TRACE_OPTS)
        self.weights_plot = (weights * marker).opts(
            title="LSB1 weights softmax(θ)", legend_position="right", **TRACE_OPTS)
        self.freeze_button = pn.widgets.Button(label="Freeze now", color="warning", width=120)
        self.freeze_button.on_click(lambda event: self.model.freeze())
        self.status = pn.pane.HTML("", sizing_mode="stretch_width", css_classes=["learning-status"])
        self._g_pane = pn.pane.HoloViews(self.g_plot, width=480)
        self._trace_panes = pn.Column(pn.pane.HoloViews(self.loss_plot, sizing_mode="stretch_width"),
                                      pn.pane.HoloViews(self.eta_plot, sizing_mode="stretch_width"),
                                      sizing_mode="stretch_width")
        self._weights_pane = pn.pane.HoloViews(self.weights_plot, sizing_mode="stretch_width")
        self._controls = pn.Row(self.freeze_button, self.status, sizing_mode="stretch_width")
        self._learning = pn.Column(sizing_mode="stretch_width")
        self._layout = pn.Row(self._g_pane, self._learning, sizing_mode="stretch_width")
        self._last_refresh = -np.inf
        self._last_curve = None
        self._last_rows = None
        self.model.param.watch(self._reconfigure, "config")
        self._reconfigure()

    @property
    def applies(self) -> bool:
        return self.model.has_balancing_function

    def _reconfigure(self, *events) -> None:
        """Show the learning section only for a learning sampler, and redraw from scratch."""
        state = self.model.learning_state()
        children = []
        if state is not None:
            children += [self._controls, self._trace_panes]
            if state.parametrization == "lsb1":
                children.append(self._weights_pane)
        if children != list(self._learning):
            self._learning[:] = children
        self._last_curve = self._last_rows = None
        self._last_refresh = -np.inf
        self.refresh()

    def refresh(self, *events) -> None:
        """Redraw what changed, at most every ``LIVE_SECONDS`` (cheap to call at every flush)."""
        now = time.perf_counter()
        if not self.applies or now - self._last_refresh < LIVE_SECONDS:
            return
        self._last_refresh = now
        log_g = self.model.balancing_curve(LOG_T)
        if self._last_curve is None or not np.array_equal(log_g, self._last_curve):
            self._last_curve = log_g
            self._curve.send((T, np.exp(log_g)))
        state = self.model.learning_state()
        if state is None:
            return
        history = state.history
        rows = (len(history["step"]), history["step"][-1] if len(history["step"]) else -1, state.frozen_at)
        if rows != self._last_rows:
            self._last_rows = rows
            self._history.send(thinned(history))
            self._frozen.send([] if state.frozen_at is None else [state.frozen_at])
        self.status.object = learning_status(state, self.model.sampler.n_steps)
        self.freeze_button.disabled = not state.learning

    def __panel__(self):
        return self._layout
