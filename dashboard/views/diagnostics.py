"""Diagnostics table: acceptance, ESS, R̂, ESS per evaluation and per second (refreshed about once a second)."""

from __future__ import annotations

import math

import pandas as pd
import panel as pn
import param

from ..model.run_model import RunModel
from ..model.statistics import LABELS


def _format(value) -> str:
    if isinstance(value, float) and math.isnan(value):
        return "–"
    if isinstance(value, int):
        return f"{value:,}"
    return f"{value:.4g}"


class DiagnosticsView(pn.viewable.Viewer):
    """Mixing diagnostics of the traced statistic over the recent window."""

    model = param.ClassSelector(class_=RunModel)

    def __init__(self, **params):
        super().__init__(**params)
        self._table = pn.pane.DataFrame(pd.DataFrame(), index=False, sizing_mode="stretch_width")
        self._caption = pn.pane.Markdown("", margin=(0, 10))
        self.refresh()

    def refresh(self) -> None:
        values = self.model.diagnostics()
        self._table.object = pd.DataFrame({"diagnostic": list(values), "value": [_format(v) for v in values.values()]})
        self._caption.object = (f"Statistic: *{LABELS[self.model.config.statistic]}*, over the last "
                                f"{values['window (steps)']:,} steps (rank-normalised ESS and R̂, Vehtari et al. 2021).")

    def __panel__(self):
        return pn.Column(self._caption, self._table, sizing_mode="stretch_width")
