"""The balancing-function view: g(t) of the sampler next to the four classic functions.

Drawn on log–log axes over t ∈ [1e-3, 1e3] with HoloViews (a slow view: it is
redrawn at most once a second, and only when the curve changed — learned
balancing functions change while they learn).
"""

from __future__ import annotations

import holoviews as hv
import holoviews.plotting.bokeh  # noqa: F401  (registers the Bokeh backend used by .opts)
import numpy as np
import panel as pn
import param

from samplers.balancing import BALANCING, FORMULAS

from .run_model import RunModel

LOG_T = np.linspace(np.log(1e-3), np.log(1e3), 241)
CLASSIC_STYLE = {"line_dash": "dashed", "line_width": 1.5, "alpha": 0.7}


def classic_curves() -> list[hv.Curve]:
    t = np.exp(LOG_T)
    return [
        hv.Curve((t, np.exp(log_g(LOG_T))), "t", "g(t)", label=f"{name}: {FORMULAS[name]}").opts(**CLASSIC_STYLE)
        for name, log_g in BALANCING.items()
    ]


class BalancingView(pn.viewable.Viewer):
    """g(t) of the current sampler (solid) over the four classic balancing functions (dashed)."""

    model = param.ClassSelector(class_=RunModel)

    def __init__(self, **params):
        super().__init__(**params)
        self._classic = hv.Overlay(classic_curves())
        self._pane = pn.pane.HoloViews(sizing_mode="stretch_width", height=340)
        self._last = None
        self.model.param.watch(self.refresh, "config")
        self.refresh()

    @property
    def applies(self) -> bool:
        return self.model.has_balancing_function

    def refresh(self, *events) -> None:
        """Redraw if the sampler's curve changed (cheap to call every second)."""
        if not self.applies:
            self._last = None
            return
        log_g = self.model.balancing_curve(LOG_T)
        if self._last is not None and np.array_equal(log_g, self._last):
            return
        self._last = log_g
        current = hv.Curve((np.exp(LOG_T), np.exp(log_g)), "t", "g(t)",
                           label=f"{self.model.sampler.registry_name}: current g").opts(line_width=3, color="black")
        self._pane.object = (self._classic * current).opts(
            logx=True, logy=True, responsive=True, legend_position="top_left", legend_opts={"label_text_font_size": "8pt"}, title="balancing function g(t)",
            show_grid=True)

    def __panel__(self):
        return self._pane
