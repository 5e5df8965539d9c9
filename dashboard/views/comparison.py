"""Two samplers side by side at equal compute time: energy against compute seconds, and its autocorrelation.

When a run has a comparison sampler (``RunConfig.compare_sampler``, e.g.
intracluster moves against Kawasaki swaps), both advance in the run's worker
for the same time inside their steps (``model.comparison``). Left: the
energy E = −log p̃ of chain 0 of each against its compute seconds. Right: the
energy autocorrelation against compute-time lag, averaged over chains
(Hamze & de Freitas, Figs. 2–4). A line of text gives moves per second,
acceptance and the integrated autocorrelation time in seconds of each, and
their ratio. Drawn from the ``ComparisonState`` the worker sends about once a
second.
"""

from __future__ import annotations

import panel as pn
from bokeh.models import ColumnDataSource
from bokeh.plotting import figure

from ..model.snapshot import RunInfo, Snapshot
from .base import LiveView, plain

COLORS = ("#1f77b4", "#d62728")


class ComparisonView(LiveView):
    """Energy traces and compute-time autocorrelations of the run's sampler and its comparison sampler."""

    title = "Side by side at equal compute time"

    def __init__(self, **params):
        super().__init__(**params)
        self.energy_sources = [ColumnDataSource({"seconds": [], "energy": []}) for _ in COLORS]
        self.acf_sources = [ColumnDataSource({"lag": [], "acf": []}) for _ in COLORS]
        self.energy_figure = figure(height=300, sizing_mode="stretch_width", title="energy against compute time",
                                    x_axis_label="compute seconds", y_axis_label="E = −log p̃ (chain 0)",
                                    tools="pan,wheel_zoom,box_zoom,reset,save")
        self.acf_figure = figure(height=300, sizing_mode="stretch_width", y_range=(-0.2, 1.05),
                                 title="energy autocorrelation against compute-time lag",
                                 x_axis_label="lag (compute seconds)", y_axis_label="autocorrelation",
                                 tools="pan,wheel_zoom,box_zoom,reset,save")
        for energy, acf, color, role in zip(self.energy_sources, self.acf_sources, COLORS, ("run", "comparison")):
            self.energy_figure.line("seconds", "energy", source=energy, color=color, legend_label=role)
            self.acf_figure.line("lag", "acf", source=acf, color=color, line_width=2)
        for fig in (self.energy_figure, self.acf_figure):
            fig.toolbar.logo = None
        self.status = pn.pane.HTML("", sizing_mode="stretch_width", css_classes=["comparison-status"])
        self._layout = pn.Column(self.status, pn.Row(pn.pane.Bokeh(self.energy_figure, sizing_mode="stretch_width"),
                                                     pn.pane.Bokeh(self.acf_figure, sizing_mode="stretch_width"),
                                                     sizing_mode="stretch_width"),
                                 sizing_mode="stretch_width")

    @classmethod
    def applies(cls, info: RunInfo) -> bool:
        return bool(info.companion)

    def reconfigure(self, info: RunInfo) -> None:
        for source in (*self.energy_sources, *self.acf_sources):
            source.data = {key: [] for key in source.data}
        legend = self.energy_figure.legend[0]
        for item, name in zip(legend.items, (info.sampler, info.companion)):
            item.label = {"value": name}
        self.status.object = ""

    def update(self, snapshot: Snapshot) -> None:
        state = snapshot.comparison
        if state is None:
            return
        for source, columns in zip(self.energy_sources, state.energy):
            source.data = plain(columns)
        for source, columns in zip(self.acf_sources, state.acf):
            source.data = plain(columns)
        self.status.object = "<br>".join(state.lines)

    def __panel__(self):
        return self._layout
