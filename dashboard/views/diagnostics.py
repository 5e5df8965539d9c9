"""Diagnostics table: acceptance, ESS, R̂, ESS per evaluation and per second (computed by the worker about once a second)."""

from __future__ import annotations

import math

import pandas as pd
import panel as pn

from ..model.snapshot import RunInfo, Snapshot
from ..model.statistics import LABELS
from .base import LiveView


def _format(value) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, float) and math.isnan(value):
        return "–"
    if isinstance(value, int):
        return f"{value:,}"
    return f"{value:.4g}"


class DiagnosticsView(LiveView):
    """Mixing diagnostics of the traced statistic over the recent window."""

    title = "Diagnostics"

    def __init__(self, **params):
        super().__init__(**params)
        self._table = pn.pane.DataFrame(pd.DataFrame(), index=False, sizing_mode="stretch_width")
        self._caption = pn.pane.Markdown("", margin=(0, 10))
        self._statistic = "log_prob"

    def reconfigure(self, info: RunInfo) -> None:
        self._statistic = info.statistic
        self._table.object = pd.DataFrame()
        self._caption.object = "Diagnostics appear once the chains have taken a few steps."

    def update(self, snapshot: Snapshot) -> None:
        values = snapshot.diagnostics
        if values is None:
            return
        self._table.object = pd.DataFrame({"diagnostic": list(values), "value": [_format(v) for v in values.values()]})
        self._caption.object = (f"Statistic: *{LABELS[self._statistic]}*, over the last "
                                f"{values['window (steps)']:,} steps. Three ESS definitions: rank-normalised over all "
                                f"chains (Vehtari et al. 2021); DISCS's per chain over the second half (choose the "
                                f"Hamming statistic for their protocol); the LSB authors' truncated window.")

    def __panel__(self):
        return pn.Column(self._caption, self._table, sizing_mode="stretch_width")
