"""Parallel tempering, live: the temperature ladder and how often neighbouring replicas exchange their states.

One bar per neighbouring pair (βₖ ↔ βₖ₊₁) with the mean acceptance
probability of their exchanges so far; a pair that rarely exchanges (below
``LOW_EXCHANGE``) is drawn red — the cold replica's states then hardly ever
come from the hot end of the ladder, and more replicas or a higher lowest β
would help. The views and diagnostics above show the cold replica (β₁ = 1),
the chain on the target itself. Drawn from the ``TemperingState`` the worker sends.
"""

from __future__ import annotations

import numpy as np
import panel as pn
from bokeh.models import ColumnDataSource, Range1d
from bokeh.plotting import figure

from engine.snapshot import RunInfo, Snapshot, TemperingState, number

from .base import LiveView
from .conventions import fit_axis_label, number_ticks

#: Below this mean exchange acceptance a pair is marked as a bottleneck of the ladder.
LOW_EXCHANGE = 0.1
#: Pixels of the figure's height its y axis spans (below it, the pairs' slanted labels).
PLOT_PIXELS = 110


def pair_labels(betas: np.ndarray) -> list[str]:
    """'β = 1 ↔ 0.71', … for each neighbouring pair of the ladder."""
    return [f"β {number(betas[k])} ↔ {number(betas[k + 1])}" for k in range(len(betas) - 1)]


def tempering_status(state: TemperingState) -> str:
    """One line: the ladder, the base sampler and the weakest exchange."""
    rates = state.swap_acceptance
    text = (f"{len(state.betas)} replicas of <b>{state.base}</b> on p̃^β, from β = 1 (the target itself, shown) down "
            f"to β = {number(state.betas[-1])} (a model's own β is multiplied by these), exchanges every "
            f"{state.swap_every} step(s)")
    if not np.any(np.isfinite(rates)):
        return text + "; no exchange yet"
    weakest = int(np.nanargmin(rates))
    text += f"; weakest pair {pair_labels(state.betas)[weakest]} accepts {rates[weakest]:.0%}"
    if rates[weakest] < LOW_EXCHANGE:
        text += " — a bottleneck: add replicas or raise the lowest β"
    return text


class TemperingView(LiveView):
    """Mean exchange acceptance of each neighbouring pair of replicas."""

    title = "Parallel tempering: exchanges between temperatures"

    def __init__(self, **params):
        super().__init__(**params)
        self.source = ColumnDataSource({"pair": [], "acceptance": [], "colour": []})
        self.figure = figure(height=220, sizing_mode="stretch_width", x_range=[], y_range=Range1d(0, 1),
                             tools="", toolbar_location=None)
        fit_axis_label(self.figure.yaxis, "mean exchange acceptance", PLOT_PIXELS)
        number_ticks(self.figure.yaxis)
        self.figure.vbar(x="pair", top="acceptance", width=0.7, color="colour", source=self.source)
        self.figure.xaxis.major_label_orientation = 0.5
        self.status = pn.pane.HTML("", sizing_mode="stretch_width", css_classes=["tempering-status"])
        self._layout = pn.Column(self.status, pn.pane.Bokeh(self.figure, sizing_mode="stretch_width"),
                                 sizing_mode="stretch_width")

    @classmethod
    def applies(cls, info: RunInfo) -> bool:
        return info.capabilities.tempers

    def reconfigure(self, info: RunInfo) -> None:
        self.source.data = {"pair": [], "acceptance": [], "colour": []}
        self.status.object = ""

    def update(self, snapshot: Snapshot) -> None:
        state = snapshot.tempering
        if state is None:
            return
        labels = pair_labels(state.betas)
        rates = np.nan_to_num(state.swap_acceptance, nan=0.0)
        self.figure.x_range.factors = labels
        self.source.data = {"pair": labels, "acceptance": rates.tolist(),
                            "colour": ["firebrick" if rate < LOW_EXCHANGE else "steelblue" for rate in rates]}
        self.status.object = tempering_status(state)

    def __panel__(self):
        return self._layout
