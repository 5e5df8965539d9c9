"""Tuning of the intracluster walks, live: γ, the walk length and the acceptance against the step.

For an ``intracluster`` sampler with ``adapt`` (``samplers.intracluster.walk_adaptation``)
three small figures share the step axis: the bias γ (γ = 1 is the paper's
γ = β), the continuous walk length κ, and the mean acceptance probability of
the moves with the target acceptance dashed; a dotted marker shows where the
values were frozen, and a status line says what the sampler is doing. Each
curve ends at the value in force (``drawn_columns``), which the status prints
once frozen. Drawn from the ``AdaptationState`` the worker sends when the
tuning history grew.
"""

from __future__ import annotations

import numpy as np
import panel as pn
from bokeh.models import ColumnDataSource, Span
from bokeh.plotting import figure

from engine.snapshot import AdaptationState, RunInfo, Snapshot, wide_number

from .balancing import thinned
from .base import LiveView, plain, tuning_line
from .conventions import count_range, integer_ticks, number_ticks

TRACES = {"gamma": ("bias γ (γ = 1: the paper's γ = β)", "γ"), "walk_length": ("walk length κ", "κ"),
          "acceptance": ("mean acceptance probability", "ᾱ")}


def drawn_columns(state: AdaptationState) -> dict:
    """The tuning history (thinned), then the values in force at the state's step: its γ and its walk length (the
    longest of a range), with no acceptance measured there. The history's rows precede the last updates, so
    without that point the γ and walk length the status prints would not be on the plot."""
    history = thinned(state.history)
    steps = np.asarray(history["step"])
    if len(steps) and steps[-1] >= state.step:
        return history
    now = {"step": state.step, "gamma": state.gamma, "walk_length": float(np.max(state.walk_length)),
           "acceptance": np.nan}
    return {name: np.append(np.asarray(history[name], dtype=float), now[name]) for name in ("step", *TRACES)}


def adaptation_status(state: AdaptationState) -> str:
    """What the tuning is doing: adapting (with the warning that the chain is adaptive MCMC meanwhile) or frozen."""
    return tuning_line(state.adapting, "γ and the walk length", state.step, state.burn_in, state.target_acceptance,
                       state.frozen_at, f"γ = {wide_number(state.gamma)}, walk length {state.walk_length}")


class AdaptationView(LiveView):
    """γ, κ and the acceptance of an adapting intracluster sampler against the step."""

    title = "Tuning the walks (γ, walk length)"

    def __init__(self, **params):
        super().__init__(**params)
        self.source = ColumnDataSource({name: [] for name in ("step", *TRACES)})
        self.figures, self.frozen_markers = [], []
        for column, (title, label) in TRACES.items():
            fig = figure(height=170, sizing_mode="stretch_width", title=title, x_axis_label="step",
                         y_axis_label=label, x_range=count_range(), tools="pan,wheel_zoom,box_zoom,reset")
            fig.toolbar.logo = None
            integer_ticks(fig.xaxis)
            number_ticks(fig.yaxis, pixels=170 - 90)
            fig.line("step", column, source=self.source, line_width=2)
            marker = Span(location=0, dimension="height", line_color="firebrick", line_dash="dotted", line_width=2,
                          visible=False)
            fig.add_layout(marker)
            self.figures.append(fig)
            self.frozen_markers.append(marker)
        self.target_line = Span(location=0.3, dimension="width", line_color="gray", line_dash="dashed")
        self.figures[-1].add_layout(self.target_line)
        self.status = pn.pane.HTML("", sizing_mode="stretch_width", css_classes=["adaptation-status"])
        self._layout = pn.Column(self.status, *(pn.pane.Bokeh(fig, sizing_mode="stretch_width") for fig in self.figures),
                                 sizing_mode="stretch_width")

    @classmethod
    def applies(cls, info: RunInfo) -> bool:
        return info.capabilities.adapts_walks

    def reconfigure(self, info: RunInfo) -> None:
        self.source.data = {name: [] for name in self.source.data}
        for marker in self.frozen_markers:
            marker.visible = False
        self.status.object = ""

    def update(self, snapshot: Snapshot) -> None:
        state = snapshot.adaptation
        if state is None:
            return
        self.target_line.location = state.target_acceptance
        self.source.data = plain(drawn_columns(state))
        for marker in self.frozen_markers:
            marker.visible = state.frozen_at is not None
            marker.location = state.frozen_at or 0
        self.status.object = adaptation_status(state)

    def __panel__(self):
        return self._layout
