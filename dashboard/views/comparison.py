"""Two samplers side by side at an equal share of one axis: their mean statistic, and its autocorrelation.

When a run has a comparison sampler (``RunConfig.compare_sampler``), both
advance in the run's worker for as much of the shared axis
(``RunConfig.compare_axis``: compute seconds, steps or target evaluations;
``engine.comparison``). Left: the chains' mean of the run's statistic — the
energy E = −log p̃ when it is log p̃ — against that axis. Right: its
autocorrelation against the lag on that axis, averaged over chains (Hamze &
de Freitas, Figs. 2–4, in compute seconds); the magnetisation as |m| when
either sampler is a cluster sampler (``engine.comparison.folds``). A line of text gives steps,
evaluations, compute, acceptance and the integrated autocorrelation time of
each, and their ratio. Drawn from the ``ComparisonState`` the worker sends
about once a second.
"""

from __future__ import annotations

import panel as pn
from bokeh.models import ColumnDataSource
from bokeh.plotting import figure

from engine.snapshot import AXES, LABELS, RunInfo, Snapshot, folds

from .base import LiveView, plain
from .conventions import fit_axis_label, fit_title, legend_outside, number_ticks

COLORS = ("#1f77b4", "#d62728")
#: Height of each figure, and the pixels of it its y axis spans.
HEIGHT = 300
PLOT_PIXELS = HEIGHT - 110
#: Narrowest width of each figure (px): its title's lines fit (``conventions.TITLE_CHARS``).
MIN_WIDTH = 320


def moves_at_equal_steps(info: RunInfo) -> str:
    """What equal steps mean in moves (``RunInfo.moves_per_step``): equal moves, or how many each makes a step while
    it learns ("" on another axis)."""
    if info.compare_axis != "steps":
        return ""
    (mine, theirs), names = info.moves_per_step, (info.sampler, info.companion)
    if mine == theirs:
        return f"; both make {mine if mine > 1 else 'one'} move{'s' if mine > 1 else ''} a step, so as many moves"
    return "; while it learns, " + " and ".join(f"{name} makes {moves} move{'s' if moves > 1 else ''} a step"
                                                  for name, moves in zip(names, (mine, theirs)))


class ComparisonView(LiveView):
    """The run's sampler and its comparison sampler: mean statistic and autocorrelation on a shared axis."""

    title = "Side by side: the run and a comparison sampler"

    def __init__(self, **params):
        super().__init__(**params)
        self.trace_sources = [ColumnDataSource({"x": [], "y": []}) for _ in COLORS]
        self.acf_sources = [ColumnDataSource({"lag": [], "acf": []}) for _ in COLORS]
        self.trace_figure = figure(height=HEIGHT, sizing_mode="stretch_width", tools="pan,wheel_zoom,box_zoom,reset,save")
        self.acf_figure = figure(height=HEIGHT, sizing_mode="stretch_width", y_range=(-0.2, 1.05),
                                 y_axis_label="autocorrelation", tools="pan,wheel_zoom,box_zoom,reset,save")
        for trace, acf, color, role in zip(self.trace_sources, self.acf_sources, COLORS, ("run", "comparison")):
            self.trace_figure.line("x", "y", source=trace, color=color, legend_label=role)
            self.acf_figure.line("lag", "acf", source=acf, color=color, line_width=2)
        legend_outside(self.trace_figure)
        for fig in (self.trace_figure, self.acf_figure):
            fig.toolbar.logo = None
            number_ticks(fig.xaxis, fig.yaxis)
        self.heading = pn.pane.HTML("", sizing_mode="stretch_width", css_classes=["comparison-heading"])
        self.status = pn.pane.HTML("", sizing_mode="stretch_width", css_classes=["comparison-status"])
        self._layout = pn.Column(self.heading, self.status,
                                 pn.FlexBox(*(pn.pane.Bokeh(fig, sizing_mode="stretch_width", min_width=MIN_WIDTH,
                                                            styles={"flex": f"1 1 {MIN_WIDTH}px"})
                                              for fig in (self.trace_figure, self.acf_figure)),
                                            sizing_mode="stretch_width"),  # one under the other when narrow
                                 sizing_mode="stretch_width")

    @classmethod
    def applies(cls, info: RunInfo) -> bool:
        return bool(info.companion)

    def reconfigure(self, info: RunInfo) -> None:
        for source in (*self.trace_sources, *self.acf_sources):
            source.data = {key: [] for key in source.data}
        legend = self.trace_figure.legend[0]
        for item, name in zip(legend.items, (info.sampler, info.companion)):
            item.label = {"value": name}
        axis = f"{AXES[info.compare_axis][1]}s"
        folded = folds((info.sampler, info.companion), info.statistic)
        label = LABELS.get(info.statistic, info.statistic)
        quantity = "E = −log p̃" if info.statistic == "log_prob" else f"|{label}|" if folded else label
        fit_title(self.trace_figure, f"mean {quantity} over chains against {axis}")
        self.trace_figure.xaxis.axis_label = axis
        fit_axis_label(self.trace_figure.yaxis, f"mean {quantity}", PLOT_PIXELS)
        fit_title(self.acf_figure, f"autocorrelation of {quantity} against the lag in {axis}")
        self.acf_figure.xaxis.axis_label = f"lag ({axis})"
        why = f" Both are compared on {quantity}: a cluster move flips the sign of whole domains." if folded else ""
        self.heading.object = (f"<b>{info.sampler}</b> and <b>{info.companion}</b> at equal {axis}: each gets as "
                               f"many {axis} as the other{moves_at_equal_steps(info)}.{why}")
        self.status.object = ""

    def update(self, snapshot: Snapshot) -> None:
        state = snapshot.comparison
        if state is None:
            return
        for source, columns in zip(self.trace_sources, state.trace):
            source.data = plain(columns)
        for source, columns in zip(self.acf_sources, state.acf):
            source.data = plain(columns)
        self.status.object = "<br>".join(state.lines)

    def __panel__(self):
        return self._layout
