"""The run panel at the sidebar's top: the error alert, Start/Pause/Step/Reset, the status line, and the live
β slider with its note.

Errors quote the user's keys, values and file names, so the alert is an HTML pane styled as Panel's danger
alert and fed through ``plain``. The status line is redrawn at every flush (``update_status``) but at most
every ``STATUS_SECONDS`` while the run's phase stays the same. Its phase is the worker's (``RunSession.status``:
"ready" until the run first steps, what a first step sets up while it does) once the run's first snapshot
arrived, "building the run…" until then; before the first step its evaluations are named the set-up's.
"""

from __future__ import annotations

import math
import time

import panel as pn
import param
from panel.io.resources import CDN_DIST

import targets
from engine.client import RunClient
from engine.numbers import number

from .plain import plain

#: Least time between two redraws of the status line while the run's phase stays the same (seconds).
STATUS_SECONDS = 0.25
#: The look of Panel's alerts, for the error pane (an HTML pane, so that no message is read as Markdown).
ALERT_CSS = f"{CDN_DIST}css/alerts.css"


def _si(value: float) -> str:
    """A count or rate for the status line: from 1000 on with an SI prefix (27.23k, 1.5M), below as ``number``
    writes it, never in exponent notation; "–" for none."""
    if not math.isfinite(value):
        return "–"
    for unit, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(value) >= scale:
            return f"{number(value / scale)}{unit}"
    return number(value)


class RunPanel(pn.viewable.Viewer):
    """The run's buttons, its status line and errors, and its live β, bound to one ``RunClient``."""

    client = param.ClassSelector(class_=RunClient)
    shows_failure = param.Callable(doc="The failure the run shown is a preset meant to show ('' if none); the "
                                       "status line warns of it.")

    def __init__(self, **params):
        super().__init__(**params)
        self._status_phase, self._status_at = "", -float("inf")
        self.live_beta = pn.widgets.FloatSlider(label="β (live)", start=0.0, end=1.0, step=0.005, value=0.5,
                                                visible=False, sizing_mode="stretch_width")
        self.live_beta_note = pn.pane.Markdown(
            "Moving β takes the running chains to the new temperature: the run goes on from their states "
            "(recorded in the configuration, so it replays).", visible=False, styles={"font-size": "0.85em"})
        self.start = pn.widgets.Button(label="Start", color="success", width=80)
        self.pause = pn.widgets.Button(label="Pause", color="warning", width=80)
        self.step = pn.widgets.Button(label="Step", color="default", width=70)
        self.reset = pn.widgets.Button(label="Reset", color="default", width=80)
        # HTML, not Markdown: the status is redrawn at every flush and Markdown parsing costs ~5 ms.
        self.status = pn.pane.HTML("", sizing_mode="stretch_width", styles={"font-family": "monospace"},
                                   css_classes=["run-status"])
        # An HTML pane styled as Panel's danger alert (pn.pane.Alert is Markdown): errors quote the user's input.
        self.alert = pn.pane.HTML("", visible=False, sizing_mode="stretch_width", stylesheets=[ALERT_CSS],
                                  css_classes=["alert", "alert-danger", "run-error"])

        self.start.on_click(lambda event: self.client.start())
        self.pause.on_click(lambda event: self.client.pause())
        self.step.on_click(lambda event: self.client.step())
        self.reset.on_click(lambda event: self.client.reset())
        self.client.param.watch(self._show_error, "error")
        self.client.param.watch(self._show_live_beta, "info")
        self.live_beta.param.watch(lambda event: self.client.set_beta(event.new), "value_throttled")
        self.client.param.watch(self.update_status, ["status", "building", "compiling"])

        self._show_error()  # a first run refused before these widgets watched the client
        self.update_status()

    def _show_error(self, event=None) -> None:
        self.alert.object = plain(self.client.error)
        self.alert.visible = bool(self.client.error)

    def _show_live_beta(self, event=None) -> None:
        """The β slider, for a run whose target has an inverse temperature, at the run's current β."""
        config = self.client.config
        spec = targets.target_class(config.target).param.objects().get("beta") if config is not None else None
        self.live_beta.visible = self.live_beta_note.visible = spec is not None
        if spec is None:  # hidden, and as a fresh page holds it
            self.live_beta.param.update(label="β (live)", end=1.0, value=0.5)
            return
        beta = config.beta_changes[-1][1] if config.beta_changes else config.target_params.get("beta", spec.default)
        critical = (config.target == "ising_lattice" and config.target_params.get("ndim", 2) == 2
                    and config.target_params.get("J", 1.0) == 1.0)
        self.live_beta.label = "β (live) · critical β_c ≈ 0.4407" if critical else "β (live)"
        self.live_beta.param.update(end=max(1.0, 1.5 * beta), value=beta)

    def update_status(self, *events) -> None:
        """Redraw the status line: at once when the phase changes, else at most every ``STATUS_SECONDS``
        (the explorer calls this at every flush, so the latest status is always shown soon)."""
        client = self.client
        status = client.status
        phase = ("compiling the samplers (once after an install or an edit)…" if client.compiling
                 else "building the run…" if client.building or (client.info is not None and not client.drawn)
                 else status.phase)
        # before the first step every evaluation was the set-up's
        evaluations = (f"evaluations {status.n_evals:,} in set-up" if status.n_steps == 0
                       else f"evaluations {_si(status.n_evals)}")
        text = (f"<b>{phase}</b> · steps {status.n_steps:,} · {evaluations} · "
                f"{_si(status.steps_per_second)} steps/s · acceptance {_si(status.acceptance)} · "
                f"{status.seconds:.1f} s sampling")
        failure = self.shows_failure()
        if failure:
            text += f"<br><b>⚠ this preset shows a failure:</b> {failure}"
        if status.barely_moves:
            text += (f"<br><b>⚠ the chain barely moves</b> (acceptance {_si(status.acceptance)}): its traces, ESS and "
                     "autocorrelation say little about the target")
        now = time.monotonic()
        if text == self.status.object or (phase == self._status_phase and now - self._status_at < STATUS_SECONDS):
            return
        self._status_phase, self._status_at = phase, now
        self.status.object = text

    def __panel__(self):
        return pn.Column(
            self.alert,
            pn.Row(self.start, self.pause, self.step, self.reset),
            self.status,
            self.live_beta, self.live_beta_note,
            sizing_mode="stretch_width",
        )
