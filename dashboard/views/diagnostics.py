"""Diagnostics table: acceptance, ESS, R̂, ESS per evaluation and per second (computed by the worker about once a second)."""

from __future__ import annotations

import math

import pandas as pd
import panel as pn

from engine.snapshot import ESS_DEFINITIONS, LABELS, RunInfo, Snapshot, number

from .base import LiveView

#: Largest R̂ at which chains count as agreeing (Vehtari et al. 2021 recommend R̂ < 1.01).
AGREED_RHAT = 1.01


def _format(value, name: str = "") -> str:
    """A table value as printed: R-hat to two decimals (9.00, not 9), other numbers by ``number``."""
    if isinstance(value, str):
        return value
    if isinstance(value, float) and math.isnan(value):
        return "–"
    if isinstance(value, int):
        return f"{value:,}"
    return f"{value:.2f}" if name == "R-hat" else number(value)


def _as_shown(value: float, name: str = "") -> float:
    """``value`` as the table prints it (NaN before there are diagnostics)."""
    return value if math.isnan(value) else float(_format(value, name).replace(",", ""))


def notes(values: dict, n_chains: int) -> list[str]:
    """What an unusual ESS or R̂ of the table means, with the run's numbers, compared as the table prints them.

    An ESS above the number of draws it is computed from (negatively correlated draws), and an R̂ above
    ``AGREED_RHAT`` (chains that disagree); nothing otherwise.
    """
    said = []
    window, ess, rhat = values["window (steps)"], values[ESS_DEFINITIONS[0]], values["R-hat"]
    draws = window * n_chains
    if _as_shown(ess) > draws:
        said.append(f"ESS {_format(ess)} is more than the {window:,} × {n_chains} = {draws:,} draws it comes from: "
                    "successive values are negatively correlated (antithetic: a move tends to undo the previous "
                    "one's deviation), so their mean varies less than that of as many independent draws.")
    if _as_shown(rhat, "R-hat") > AGREED_RHAT:
        said.append(f"R-hat {_format(rhat, 'R-hat')} is above {AGREED_RHAT} (Vehtari et al. 2021): the {n_chains} chains do "
                    "not yet agree on the statistic's distribution — still drifting, or in different modes — so "
                    "the ESS says little yet.")
    return said


class DiagnosticsView(LiveView):
    """Mixing diagnostics of the traced statistic over the recent window."""

    title = "Diagnostics"

    def __init__(self, **params):
        super().__init__(**params)
        self._table = pn.pane.DataFrame(pd.DataFrame(), index=False, sizing_mode="stretch_width")
        self._caption = pn.pane.Markdown("", margin=(0, 10))
        self._statistic, self._n_chains = "log_prob", 1

    def reconfigure(self, info: RunInfo) -> None:
        self._statistic, self._n_chains = info.statistic, info.n_chains
        self._table.object = pd.DataFrame()
        self._caption.object = "Diagnostics appear once the chains have taken a few steps."

    def update(self, snapshot: Snapshot) -> None:
        values = snapshot.diagnostics
        if values is None:
            return
        self._table.object = pd.DataFrame({"diagnostic": list(values), "value": [_format(v, k) for k, v in values.items()]})
        self._caption.object = (f"Statistic: *{LABELS[self._statistic]}*, over the last "
                                f"{values['window (steps)']:,} steps. Three ESS definitions: rank-normalised over all "
                                f"chains (Vehtari et al. 2021); DISCS's per chain over the second half (choose the "
                                f"Hamming statistic for their protocol); the LSB authors' truncated window."
                                + "".join(f"\n\n⚠ {note}" for note in notes(values, self._n_chains)))

    def __panel__(self):
        return pn.Column(self._caption, self._table, sizing_mode="stretch_width")
