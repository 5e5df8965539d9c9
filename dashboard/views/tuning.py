"""Tuning of DMALA's step size, DLMC's time or PAS's path length, live: what is tuned, toward what, and when it froze.

During ``burn_in`` steps the sampler moves one kernel parameter toward a target
acceptance rate (``samplers.gradient.acceptance_tuning``), and the chain is adaptive
MCMC meanwhile; then the value is frozen and the chain is exact. One status line
says which, drawn from the ``TuningState`` the worker sends.
"""

from __future__ import annotations

import panel as pn

from engine.snapshot import RunInfo, Snapshot, TuningState, number

from .base import LiveView, tuning_line

NAMES = {"step_size": "step size", "path_length": "path length L"}
#: Parameters the sampler uses rounded to a whole number (``PathAuxiliary._length``).
WHOLE = {"path_length"}


def tuning_status(state: TuningState) -> str:
    """Adapting (with the warning that the chain is adaptive MCMC meanwhile) or frozen, with the value in force."""
    name = NAMES.get(state.parameter, state.parameter)
    value = f"{round(state.value):,}" if state.parameter in WHOLE else number(state.value)
    return tuning_line(state.adapting, f"the {name} (now {value})", state.step, state.burn_in,
                       state.target_acceptance, state.frozen_at, f"{name} = {value}")


class TuningView(LiveView):
    """The status of a sampler tuning its step size or path length."""

    title = "Tuning toward an acceptance rate"

    def __init__(self, **params):
        super().__init__(**params)
        self.status = pn.pane.HTML("", sizing_mode="stretch_width", css_classes=["tuning-status"])

    @classmethod
    def applies(cls, info: RunInfo) -> bool:
        return info.capabilities.tunes

    def reconfigure(self, info: RunInfo) -> None:
        self.status.object = ""

    def update(self, snapshot: Snapshot) -> None:
        if snapshot.tuning is not None:
            self.status.object = tuning_status(snapshot.tuning)

    def __panel__(self):
        return self.status
