"""The KL view: exact KL(P‖π) of MCMC, OPAD and OPAD+ against iterations, live (OPAD paper, Fig. 1).

Both axes are logarithmic, labelled in powers of ten. For each approximation
two things are drawn, both labelled in the legend: the approximation built
from all chains pooled (solid, bold), and the approximations of the single
chains — every chain's curve faint, their mean across chains (dashed) and the
band between the 2.5 % and 97.5 % quantiles across chains. Pooling n chains
is n times the samples, so the pooled curves lie below the per-chain ones, and
the ratios between them differ.

The line of text below the plot is about the pooled curves, and says so: the
step of their last point, the value each ends at, and the ratios MCMC/OPAD and
MCMC/OPAD+ of those values (the paper reports one to three orders of
magnitude). Every number it prints is the end of a drawn pooled curve or a
ratio of two of them; tiny values read as powers of ten (``wide_number``).

The curves come from the run's ``OpadSnapshot`` (log-spaced checkpoints, so
a long run draws a few hundred points per chain). KL values below ``FLOOR``
— OPAD+ reaches exactly 0 once it holds every state — are drawn at the floor,
and the text says so. Like the other live views, the figure is built once per
session and only the ``ColumnDataSource``s change (see ``dashboard.views.base``).
"""

from __future__ import annotations

import numpy as np
import panel as pn
from bokeh.models import ColumnDataSource, Legend, LegendItem
from bokeh.plotting import figure

from engine.snapshot import KINDS, OpadSnapshot, RunInfo, Snapshot, wide_number

from .base import LiveView, plain
from .conventions import fit_title, legend_outside, log_ticks

FLOOR = 1e-10
COLORS = {"mcmc": "#d62728", "opad": "#1f77b4", "opad_plus": "#2ca02c"}
SHORT = {"mcmc": "MCMC", "opad": "OPAD", "opad_plus": "OPAD+"}
#: What the three approximations and the two kinds of curve are (the legend gives each approximation its colour).
KEY = ("<span style='font-size:0.85em'>MCMC: the chains' frequencies; OPAD: the visited states weighted ∝ p̃; "
       "OPAD+: the visited and proposed states weighted ∝ p̃. Solid: one approximation from all chains pooled; "
       "faint: each chain's own, dashed their mean and shaded the 95 % of chains between.</span>")


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
    """Mean across the single chains and its 2.5–97.5 % quantile band, per checkpoint."""
    values = np.maximum(kl[:, :-1], FLOOR)
    lower, upper = np.quantile(values, [0.025, 0.975], axis=1)
    return {"step": steps, "mean": values.mean(axis=1), "lower": lower, "upper": upper}


def pooled(steps: np.ndarray, kl: np.ndarray) -> dict:
    """The pooled chains' curve (the last column), drawn at ``FLOOR`` where it is below."""
    return {"step": steps, "kl": np.maximum(kl[:, -1], FLOOR)}


#: The KL card's text before the run's first KL checkpoint (the status line may already count a step or two).
NO_STEP_YET = "KL(P‖π) is computed at checkpoints of the run, spaced evenly in log steps; the first is on its way."


def summary(snapshot: OpadSnapshot) -> str:
    """The pooled curves' step and last values and the MCMC/OPAD and MCMC/OPAD+ ratios of those values: what the
    plot shows, in a line of text (and the store's warning when it is full)."""
    if not len(snapshot.steps):
        return NO_STEP_YET
    latest = {kind: float(snapshot.kl[kind][-1, -1]) for kind in KINDS}

    def value(kind):
        return (f"{SHORT[kind]} {wide_number(latest[kind])}" if latest[kind] >= FLOOR else
                f"{SHORT[kind]} {wide_number(latest[kind])} (drawn at {wide_number(FLOOR)})")

    def ratio(kind):
        return (f"MCMC/{SHORT[kind]} {wide_number(latest['mcmc'] / latest[kind])}×" if latest[kind] > 0
                else f"MCMC/{SHORT[kind]} ∞: exact")

    text = (f"All chains pooled (solid curves), step {int(snapshot.steps[-1]):,}: KL {value('mcmc')} · "
            f"{value('opad')} ({ratio('opad')}) · {value('opad_plus')} ({ratio('opad_plus')})")
    if snapshot.full:
        text += f"<br>⚠ {snapshot.full}"
    return text


class KLView(LiveView):
    """KL(P‖π) of the three approximations from all chains pooled (solid) and per chain (faint, dashed mean and
    95 % band)."""

    title = "OPAD: KL to the target"

    @classmethod
    def leads(cls, info: RunInfo) -> bool:
        """A run whose OPAD approximations are tracked is about how close they come to π."""
        return info.opad_tracked

    def __init__(self, **params):
        super().__init__(**params)
        self.figure = None  # made for a run whose approximations are tracked (``reconfigure``)
        self.status = pn.pane.HTML("", sizing_mode="stretch_width", css_classes=["kl-status"])
        self._layout = pn.Column(self.status, sizing_mode="stretch_width")

    def _kl_figure(self):
        """The KL curves' figure, its sources kept by kind of approximation."""
        fig = figure(height=380, sizing_mode="stretch_width", x_axis_type="log", y_axis_type="log",
                     x_axis_label="iterations (steps per chain)", y_axis_label="KL(P‖π)",
                     tools="pan,wheel_zoom,box_zoom,reset,save")
        fit_title(fig, "KL(P‖π) against iterations")
        fig.toolbar.logo = None
        self.line_sources = {kind: ColumnDataSource({"x": [], "y": []}) for kind in KINDS}
        self.band_sources = {kind: ColumnDataSource(band(np.zeros(0), np.zeros((0, 2)))) for kind in KINDS}
        self.pooled_sources = {kind: ColumnDataSource(pooled(np.zeros(0), np.zeros((0, 1)))) for kind in KINDS}
        means = {}
        for kind in KINDS:
            color = COLORS[kind]
            fig.line("x", "y", source=self.line_sources[kind], color=color, alpha=0.15, line_width=1)
            fig.varea("step", "lower", "upper", source=self.band_sources[kind], color=color, alpha=0.15)
            means[kind] = fig.line("step", "mean", source=self.band_sources[kind], color=color, line_width=2,
                                   line_dash="dashed")
        # the pooled curves over everything, a marker at each checkpoint (the first checkpoint's values, which the
        # text prints, show before there is a line); in the legend one colour per approximation, its pooled curve
        # and its chains' mean (the key below the plot says which line is which): one row, narrow enough for half a
        # page
        items = []
        for kind in KINDS:
            source, color = self.pooled_sources[kind], COLORS[kind]
            curve = [fig.line("step", "kl", source=source, color=color, line_width=3.5),
                     fig.scatter("step", "kl", source=source, color=color, size=7)]
            items.append(LegendItem(label=SHORT[kind], renderers=[*curve, means[kind]]))
        fig.add_layout(Legend(items=items))
        legend_outside(fig, rows=1)
        log_ticks(fig.xaxis, fig.yaxis)
        return fig

    def reconfigure(self, info: RunInfo) -> None:
        """The key and the empty curves; without OPAD tracking, why there are none instead (the card always
        shows)."""
        if info.opad_tracked:
            self.figure = self._kl_figure()
            # the plot first, so that it is on the projector's first screen however long its numbers' line wraps
            self._layout.insert(0, pn.pane.Bokeh(self.figure, sizing_mode="stretch_width"))
            self._layout.append(pn.pane.HTML(KEY, sizing_mode="stretch_width", css_classes=["kl-key"]))
        self.status.object = NO_STEP_YET if info.opad_tracked else f"No KL curve: {info.opad_problem}."

    def update(self, snapshot: Snapshot) -> None:
        if snapshot.opad is not None and self.figure is not None:
            self.draw(snapshot.opad)

    def draw(self, snapshot: OpadSnapshot) -> None:
        if len(snapshot.steps):
            for kind in KINDS:
                self.line_sources[kind].data = plain(chain_lines(snapshot.steps, snapshot.kl[kind]))
                self.band_sources[kind].data = plain(band(snapshot.steps, snapshot.kl[kind]))
                self.pooled_sources[kind].data = plain(pooled(snapshot.steps, snapshot.kl[kind]))
        self.status.object = summary(snapshot)

    def __panel__(self):
        return self._layout
