"""Two samplers side by side at equal compute time: energy against compute seconds, and its autocorrelation.

When a run has a comparison sampler (``RunConfig.compare_sampler``, e.g.
intracluster moves against Kawasaki swaps), both advance in the run's thread
for the same time inside their steps (``run_model.CompanionRun``). Left: the
energy E = −log p̃ of chain 0 of each against its compute seconds. Right: the
energy autocorrelation against compute-time lag, averaged over chains, from
the second half of each trace (Hamze & de Freitas, Figs. 2–4: "as a function
of computational time, not iteration"). A line of text gives moves per second,
acceptance and the integrated autocorrelation time in seconds of each, and
their ratio. Plain Bokeh sources, redrawn at most every ``LIVE_SECONDS``.
"""

from __future__ import annotations

import numpy as np
import panel as pn
import param
from bokeh.models import ColumnDataSource
from bokeh.plotting import figure

from samplers.diagnostics import autocorrelation_in_time, integrated_time

from ..model.run_model import RunModel
from .throttle import Throttle

LIVE_SECONDS = 1.0
#: Points of the compute-time grid the autocorrelation is computed on.
GRID_POINTS = 400
COLORS = ("#1f77b4", "#d62728")


def energy_columns(history: dict) -> dict:
    """Compute seconds and chain 0's energy −log p̃ from a trace history."""
    return {"seconds": history["seconds"], "energy": -history["log_prob"][:, 0]}


def time_acf(history: dict, grid_step: float) -> tuple[np.ndarray, np.ndarray]:
    """Energy autocorrelation against compute-time lag over the second half of the trace."""
    seconds = history["seconds"]
    half = seconds.size // 2
    if seconds.size < 16 or seconds[-1] <= seconds[half]:
        return np.zeros(0), np.zeros(0)
    return autocorrelation_in_time(seconds[half:], -history["log_prob"][half:], grid_step)


def summary(name: str, history: dict, lags: np.ndarray, acf: np.ndarray, acceptance: float) -> tuple[str, float]:
    """One sampler's line of text, and its integrated autocorrelation time in seconds."""
    seconds = float(history["seconds"][-1]) if history["seconds"].size else 0.0
    steps = int(history["step"][-1]) if history["step"].size else 0
    tau = integrated_time(lags, acf)
    rate = f"{steps / seconds:,.0f}" if seconds > 0 else "–"
    tau_text = f"{tau:.3g} s" if np.isfinite(tau) else "not yet resolved"
    return (f"<b>{name}</b>: {steps:,} steps in {seconds:.2f} s of compute ({rate}/s), acceptance {acceptance:.3g}, "
            f"energy autocorrelation time {tau_text}", tau)


class ComparisonView(pn.viewable.Viewer):
    """Energy traces and compute-time autocorrelations of the run's sampler and its comparison sampler."""

    model = param.ClassSelector(class_=RunModel)

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
        self.throttle = Throttle(LIVE_SECONDS)
        self.model.param.watch(self._reconfigure, "config")
        self._reconfigure()

    @property
    def applies(self) -> bool:
        return self.model.companion is not None

    def _names(self) -> tuple[str, str]:
        return self.model.config.sampler, self.model.config.compare_sampler

    def _reconfigure(self, *events) -> None:
        with pn.io.hold():
            for source in (*self.energy_sources, *self.acf_sources):
                source.data = {key: [] for key in source.data}
            legend = self.energy_figure.legend[0]
            for item, name, role in zip(legend.items, self._names(), ("run", "comparison")):
                item.label = {"value": name or role}
            self.status.object = ""
        self.throttle.reset()
        self.refresh()

    def refresh(self) -> None:
        """Redraw both samplers' traces and autocorrelations (at most every ``LIVE_SECONDS``)."""
        if not self.applies or not self.throttle.due():
            return
        buffers = [self.model.buffer, self.model.companion.buffer]
        histories = [buffer.history() for buffer in buffers]
        span = min(float(h["seconds"][-1]) for h in histories)
        grid_step = span / 2 / GRID_POINTS if span > 0 else 0.0
        lines, taus = [], []
        for buffer, history, energy, acf_source, name in zip(buffers, histories, self.energy_sources,
                                                              self.acf_sources, self._names()):
            energy.data = energy_columns(history)
            lags, acf = time_acf(history, grid_step) if grid_step > 0 else (np.zeros(0), np.zeros(0))
            acf_source.data = {"lag": lags, "acf": acf}
            recent = buffer.recent()
            accepted = recent["accepted"][1:].sum() / max(1, (len(recent["accepted"]) - 1) * buffer.n_chains)
            line, tau = summary(name, history, lags, acf, float(accepted))
            lines.append(line)
            taus.append(tau)
        if all(np.isfinite(taus)):
            lines.append(f"autocorrelation-time ratio {self._names()[1]} / {self._names()[0]}: "
                         f"{taus[1] / taus[0]:.3g}× (above 1: {self._names()[0]} mixes faster per compute second)")
        self.status.object = "<br>".join(lines)

    def __panel__(self):
        return self._layout
