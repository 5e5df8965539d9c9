"""Tuning of the intracluster walks, live: γ, the walk length and the acceptance against the step.

For an ``intracluster`` sampler with ``adapt`` (``samplers.walk_adaptation``)
three small figures share the step axis: the bias γ (γ = 1 is the paper's
γ = β), the continuous walk length κ, and the mean acceptance probability of
the moves with the target acceptance dashed; a dotted marker shows where the
values were frozen, and a status line says what the sampler is doing. Plain
Bokeh sources, redrawn at most every ``LIVE_SECONDS`` when the history grew.
"""

from __future__ import annotations

import panel as pn
import param
from bokeh.models import ColumnDataSource, Span
from bokeh.plotting import figure

from .balancing import thinned
from ..model.run_model import RunModel
from .throttle import Throttle

LIVE_SECONDS = 0.5
TRACES = {"gamma": ("bias γ (γ = 1: the paper's γ = β)", "γ"), "walk_length": ("walk length κ", "κ"),
          "acceptance": ("mean acceptance probability", "ᾱ")}


def adaptation_status(sampler) -> str:
    """What the tuning is doing: adapting (with the warning that the chain is adaptive MCMC meanwhile) or frozen."""
    if sampler.adapting:
        return (f"<b>adapting</b> γ and the walk length: step {sampler.n_steps:,} of burn-in {sampler.burn_in:,} "
                f"(target acceptance {sampler.target_acceptance:g}); meanwhile the chain is adaptive MCMC")
    return (f"<b>frozen</b> at step {sampler.frozen_at:,}: γ = {sampler.gamma:.3g}, walk length "
            f"{sampler.walk_length}; exact intracluster moves from here on")


class AdaptationView(pn.viewable.Viewer):
    """γ, κ and the acceptance of an adapting intracluster sampler against the step."""

    model = param.ClassSelector(class_=RunModel)

    def __init__(self, **params):
        super().__init__(**params)
        self.source = ColumnDataSource({name: [] for name in ("step", *TRACES)})
        self.figures, self.frozen_markers = [], []
        for column, (title, label) in TRACES.items():
            fig = figure(height=170, sizing_mode="stretch_width", title=title, x_axis_label="step",
                         y_axis_label=label, tools="pan,wheel_zoom,box_zoom,reset")
            fig.toolbar.logo = None
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
        self.throttle = Throttle(LIVE_SECONDS)
        self._drawn_rows = None
        self.model.param.watch(self._reconfigure, "config")
        self._reconfigure()

    @property
    def applies(self) -> bool:
        history = getattr(self.model.sampler, "adaptation_history", None)
        return history is not None and history() is not None

    def _reconfigure(self, *events) -> None:
        with pn.io.hold():
            self.source.data = {name: [] for name in self.source.data}
            for marker in self.frozen_markers:
                marker.visible = False
            if self.applies:
                self.target_line.location = self.model.sampler.target_acceptance
            self.status.object = ""
        self._drawn_rows = None
        self.throttle.reset()
        self.refresh()

    def refresh(self) -> None:
        """Redraw when the history grew or the sampler froze (at most every ``LIVE_SECONDS``)."""
        if not self.applies or not self.throttle.due():
            return
        sampler = self.model.sampler
        history = sampler.adaptation_history()
        rows = (len(history["step"]), sampler.frozen_at)
        if rows != self._drawn_rows:
            self._drawn_rows = rows
            self.source.data = thinned(history)
            for marker in self.frozen_markers:
                marker.visible = sampler.frozen_at is not None
                marker.location = sampler.frozen_at or 0
        self.status.object = adaptation_status(sampler)

    def __panel__(self):
        return self._layout
