"""Bayesian variable selection: posterior inclusion probabilities as bars, MCMC vs OPAD vs OPAD+ vs exact.

For a ``bvs`` target every predictor j gets four bars: P(γ_j = 1) estimated
from the chains' frequencies (MCMC), from the visited states reweighted ∝ p̃
(OPAD), from the visited and proposed states (OPAD+), and exactly by
enumerating all 2^m inclusion vectors (OPAD paper §4.2, Fig. 2). For the
synthetic data the predictors of the generating model γ* are marked. A line
of text gives each estimate's largest error. Drawn from the run's
``OpadSnapshot`` (see ``dashboard.views.snapshot``).
"""

from __future__ import annotations

import numpy as np
import panel as pn
from bokeh.models import ColumnDataSource, FactorRange
from bokeh.plotting import figure
from bokeh.transform import dodge

from engine.snapshot import KINDS, RunInfo, Snapshot, wide_number

from .base import LiveView, plain
from .conventions import legend_outside, number_ticks
from .kl import COLORS

SERIES = (*KINDS, "exact")
BAR_COLORS = {**COLORS, "exact": "#444444"}
BAR_LABELS = {"mcmc": "MCMC", "opad": "OPAD", "opad_plus": "OPAD+", "exact": "exact"}
WIDTH = 0.2


def bar_columns(names: list[str], marginals: dict, truth: np.ndarray | None) -> dict:
    """Source columns: predictor names, one column per estimate, and γ* (NaN where not in it or unknown)."""
    blank = np.full(len(names), np.nan)
    columns = {"name": list(names), **{kind: marginals.get(kind, blank) for kind in SERIES}}
    columns["truth"] = np.where(truth == 1, 1.04, np.nan) if truth is not None else blank
    return columns


def largest_errors(marginals: dict, quantity: str) -> str:
    """Largest absolute error of each estimate of ``quantity`` against the exact marginals."""
    exact = marginals["exact"]
    parts = [f"{BAR_LABELS[kind]} {wide_number(np.abs(marginals[kind] - exact).max())}" for kind in KINDS]
    return f"largest error of {quantity}: " + " · ".join(parts)


class InclusionView(LiveView):
    """Inclusion probability of every predictor under the three approximations and exactly."""

    title = "Variable selection: inclusion probabilities"

    def __init__(self, **params):
        super().__init__(**params)
        self.source = ColumnDataSource(bar_columns([], {}, None))
        self.figure = figure(height=320, sizing_mode="stretch_width", x_range=FactorRange(), y_range=(0, 1.1),
                             title="posterior inclusion probabilities P(γⱼ = 1 | y)", y_axis_label="probability",
                             tools="save,hover", tooltips=[("predictor", "@name"), *((BAR_LABELS[k], f"@{k}{{0.000}}")
                                                                                       for k in SERIES)])
        self.figure.toolbar.logo = None
        for offset, kind in zip((-1.5, -0.5, 0.5, 1.5), SERIES):
            self.figure.vbar(x=dodge("name", offset * WIDTH, range=self.figure.x_range), top=kind, width=WIDTH,
                             source=self.source, color=BAR_COLORS[kind], legend_label=BAR_LABELS[kind])
        self.figure.scatter("name", "truth", source=self.source, marker="inverted_triangle", size=9, color="black",
                            legend_label="in γ* (synthetic data)")
        legend_outside(self.figure, rows=2)  # outside the plot: the bars reach the top
        number_ticks(self.figure.yaxis)
        self.figure.xaxis.major_label_orientation = 0.8
        self.status = pn.pane.HTML("", sizing_mode="stretch_width")
        self._layout = pn.Column(self.status, pn.pane.Bokeh(self.figure, sizing_mode="stretch_width"),
                                 sizing_mode="stretch_width")
        self._info: RunInfo | None = None

    @classmethod
    def applies(cls, info: RunInfo) -> bool:
        return info.bvs is not None and info.opad_tracked

    def reconfigure(self, info: RunInfo) -> None:
        self._info = info
        names = list(info.bvs.predictor_names)
        self.figure.x_range.factors = names
        self.source.data = plain(bar_columns(names, {}, info.bvs.true_inclusion))
        self.status.object = "Inclusion probabilities appear after the first steps (exact values by enumeration)."

    def update(self, snapshot: Snapshot) -> None:
        if snapshot.opad is None or not snapshot.opad.marginals:
            return
        bvs = self._info.bvs
        self.source.data = plain(bar_columns(list(bvs.predictor_names), snapshot.opad.marginals,
                                             bvs.true_inclusion))
        self.status.object = largest_errors(snapshot.opad.marginals, "P(γⱼ = 1)")

    def __panel__(self):
        return self._layout
