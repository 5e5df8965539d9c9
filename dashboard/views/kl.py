"""The KL view: exact KL(P‖π) of MCMC, OPAD and OPAD+ against iterations, live (OPAD paper, Fig. 1).

Both axes are logarithmic. For each approximation every chain's curve is drawn
faint, and over them the mean across chains (bold) with the band between the
2.5 % and 97.5 % quantiles across chains. A line of text gives the latest
values of the pooled chains and the ratios MCMC/OPAD and MCMC/OPAD+, which the
paper reports to be one to three orders of magnitude.

The curves come from the run's ``OpadSnapshot`` (log-spaced checkpoints, so
a long run draws a few hundred points per chain). KL values below ``FLOOR``
— OPAD+ reaches exactly 0 once it holds every state — are drawn at the floor.
Like the other live views, the figure is built once per session and only the
``ColumnDataSource``s change (see ``dashboard.views.snapshot``).
"""

from __future__ import annotations

import numpy as np
import panel as pn
from bokeh.models import ColumnDataSource
from bokeh.plotting import figure

from engine.snapshot import KINDS, OpadSnapshot, RunInfo, Snapshot, number

from .base import LiveView, plain
from .conventions import legend_outside, log_ticks

FLOOR = 1e-10
COLORS = {"mcmc": "#d62728", "opad": "#1f77b4", "opad_plus": "#2ca02c"}
LABELS = {"mcmc": "MCMC (frequencies)", "opad": "OPAD (visited, ∝ p̃)", "opad_plus": "OPAD+ (visited ∪ proposed)"}


def chain_lines(steps: np.ndarray, kl: np.ndarray) -> dict:
    """One line through every chain's curve, the curves separated by NaN (the pooled last column is left out).

    A single line with breaks draws as a multi_line would, and goes to the page
    as two arrays instead of two per chain.
    """
    values = np.maximum(kl[:, :-1], FLOOR)
    n_chains = values.shape[1]
    gap = np.full((1, n_chains), np.nan)
    x = np.vstack([np.repeat(steps[:, None].astype(float), n_chains, axis=1), gap]).T.ravel()
    y = np.vstack([values, gap]).T.ravel()
    return {"x": x, "y": y}


def band(steps: np.ndarray, kl: np.ndarray) -> dict:
    """Mean across chains and its 2.5–97.5 % quantile band, per checkpoint."""
    values = np.maximum(kl[:, :-1], FLOOR)
    lower, upper = np.quantile(values, [0.025, 0.975], axis=1)
    return {"step": steps, "mean": values.mean(axis=1), "lower": lower, "upper": upper}


def summary(snapshot: OpadSnapshot) -> str:
    """The pooled chains' latest KL values, the MCMC/OPAD ratios and the store's size."""
    if not len(snapshot.steps):
        return "KL(P‖π) appears once the chains have taken a step."
    latest = {kind: float(snapshot.kl[kind][-1, -1]) for kind in KINDS}

    def ratio(kind):
        return f"{number(latest['mcmc'] / latest[kind])}×" if latest[kind] > 0 else "∞ (exact)"

    text = (f"step {int(snapshot.steps[-1]):,}, all chains pooled: KL MCMC {number(latest['mcmc'])} · "
            f"OPAD {number(latest['opad'])} (MCMC/OPAD {ratio('opad')}) · OPAD+ {number(latest['opad_plus'])} "
            f"(MCMC/OPAD+ {ratio('opad_plus')}) · {snapshot.n_particles:,} distinct states stored")
    if snapshot.full:
        text += f"<br>⚠ {snapshot.full}"
    return text


class KLView(LiveView):
    """KL(P‖π) of the three approximations per chain (faint) and across chains (mean and 95 % band)."""

    title = "OPAD: KL to the target"

    def __init__(self, **params):
        super().__init__(**params)
        self.figure = figure(height=380, sizing_mode="stretch_width", x_axis_type="log", y_axis_type="log",
                             title="KL(P‖π) against iterations", x_axis_label="iterations (steps per chain)",
                             y_axis_label="KL(P‖π)", tools="pan,wheel_zoom,box_zoom,reset,save")
        self.figure.toolbar.logo = None
        self.line_sources = {kind: ColumnDataSource({"x": [], "y": []}) for kind in KINDS}
        self.band_sources = {kind: ColumnDataSource(band(np.zeros(0), np.zeros((0, 2)))) for kind in KINDS}
        for kind in KINDS:
            color = COLORS[kind]
            self.figure.line("x", "y", source=self.line_sources[kind], color=color, alpha=0.15, line_width=1)
            self.figure.varea("step", "lower", "upper", source=self.band_sources[kind], color=color, alpha=0.15)
            self.figure.line("step", "mean", source=self.band_sources[kind], color=color, line_width=3,
                             legend_label=LABELS[kind])
        legend_outside(self.figure)
        log_ticks(self.figure.xaxis, self.figure.yaxis)
        self.status = pn.pane.HTML("", sizing_mode="stretch_width", css_classes=["kl-status"])
        self._layout = pn.Column(self.status, pn.pane.Bokeh(self.figure, sizing_mode="stretch_width"),
                                 sizing_mode="stretch_width")

    def reconfigure(self, info: RunInfo) -> None:
        """Empty curves; without OPAD tracking, say why instead (the card always shows)."""
        for kind in KINDS:
            self.line_sources[kind].data = {"x": [], "y": []}
            self.band_sources[kind].data = band(np.zeros(0), np.zeros((0, 2)))
        self.figure.visible = info.opad_tracked
        self.status.object = "" if info.opad_tracked else f"No KL curve: {info.opad_problem}."

    def update(self, snapshot: Snapshot) -> None:
        if snapshot.opad is not None:
            self.draw(snapshot.opad)

    def draw(self, snapshot: OpadSnapshot) -> None:
        if len(snapshot.steps):
            for kind in KINDS:
                self.line_sources[kind].data = plain(chain_lines(snapshot.steps, snapshot.kl[kind]))
                self.band_sources[kind].data = plain(band(snapshot.steps, snapshot.kl[kind]))
        self.status.object = summary(snapshot)

    def __panel__(self):
        return self._layout
