"""The sidebar: presets, target and sampler with their parameters, run settings, run buttons,
status line, errors, and export/import of configurations.

Widgets hold *draft* values; ``Apply`` turns them into a ``RunConfig`` and asks the
session's run (``model.client.RunClient``) to switch. An invalid draft (bad
value, unsupported target/sampler pair, unparsable upload, over the server's
memory budget) is refused with the reason shown in the page — as plain text
(``plain``): messages quote the user's keys, values and file names — and the
previous run keeps going (or stays paused). A preset, a configuration file or
an uploaded model file is shown in the widgets (and the file named as the one
in use) once its run has been built, never when it is refused. Uploaded files
and configurations are read and checked in a thread (``off_the_loop``), so
that a file at the size limit never stalls the server for other sessions.
"""

from __future__ import annotations

import asyncio
import functools
import io
import math
import time
from concurrent.futures import ThreadPoolExecutor

import panel as pn
import param
from panel.io.resources import CDN_DIST

import samplers
import targets
from engine.client import RunClient
from engine.config import MAX_CONFIG_BYTES, RunConfig
from engine.export import run_record_json, trace_csv
from engine.numbers import number
from engine.presets import load_presets, preset_of
from engine.snapshot import AXES
from engine.statistics import LABELS, statistic_names
from engine.stored_runs import config_from_stored_run, is_stored_run
from engine.uploads import UPLOAD_HINTS, UPLOAD_TYPES, excerpt, format_bytes, parse_upload

from .forms import ParamForm
from .plain import plain
from .views.upload import LimitedFileInput

#: Least time between two redraws of the status line while the run's phase stays the same (seconds).
STATUS_SECONDS = 0.25
#: Under a preset's description while the run shown is not that preset (the page opens on the default run).
NOT_LOADED = "This preset is not the run shown: Load preset runs it."
#: Above the preset's description while the run shown is none of the presets (edited, or a link to a custom run).
CUSTOM_RUN = "Custom run: the run shown matches none of the presets."
#: Target parameters that are edited by upload or JSON rather than by a widget.
FILE_PARAMETERS = {"uai_text", "J", "h", "evidence", "weights", "visible_bias", "hidden_bias", "fn", "X", "y",
                   "data"}
#: Threads that read uploaded files and configurations, so that a 14 MB file never stalls the server's event loop
#: (a few seconds of parsing and checking); two, so that a class's uploads queue instead of sharing the GIL widely.
_READERS = ThreadPoolExecutor(max_workers=2, thread_name_prefix="file-reader")
#: The look of Panel's alerts, for the error pane (an HTML pane, so that no message is read as Markdown).
ALERT_CSS = f"{CDN_DIST}css/alerts.css"
#: What the configuration file input takes: a configuration (.json) or a run a sweep stored (.npz).
CONFIG_FILES = ".json,.npz"


async def off_the_loop(function, *args):
    """``function(*args)`` in a reader thread: meanwhile the server's event loop answers every other session."""
    return await asyncio.get_running_loop().run_in_executor(_READERS, function, *args)


def _refused_unless_read(read):
    """``read`` (a reader of an uploaded file) with every error it raises a ``ValueError`` that says why: a
    hostile file may break a library's reader in ways nobody listed, and its refusal still reaches the page."""
    @functools.wraps(read)
    def reading(*args):
        try:
            return read(*args)
        except ValueError:
            raise
        except Exception as error:
            raise ValueError(f"the file could not be read ({type(error).__name__}: {excerpt(str(error))})") from error

    return reading


@_refused_unless_read
def _model_file(target: str, upload: dict, limits) -> dict:
    """The target parameters an uploaded model file holds (``ValueError`` if it is unusable)."""
    return parse_upload(target, upload.get("name", ""), LimitedFileInput.contents(upload), limits)


@_refused_unless_read
def _configuration(upload: dict) -> RunConfig:
    """The configuration an uploaded configuration file or stored run holds, checked (``ValueError`` if not)."""
    data = LimitedFileInput.contents(upload)
    return config_from_stored_run(data) if is_stored_run(data) else RunConfig.from_json(data)


def _si(value: float) -> str:
    """A count or rate for the status line: from 1000 on with an SI prefix (27.23k, 1.5M), below as ``number``
    writes it, never in exponent notation; "–" for none."""
    if not math.isfinite(value):
        return "–"
    for unit, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(value) >= scale:
            return f"{number(value / scale)}{unit}"
    return number(value)


class Controls(pn.viewable.Viewer):
    """Everything in the sidebar, bound to one ``RunClient``."""

    client = param.ClassSelector(class_=RunClient)

    def __init__(self, **params):
        super().__init__(**params)
        self._presets = load_presets()
        self._preset_of: tuple = (None, 0, "")  # (a run's configuration, its β changes, the preset it is)
        self._target_forms: dict[str, ParamForm] = {}
        self._sampler_forms: dict[str, ParamForm] = {}
        self._file_params: dict[str, dict] = {}
        self._compare_params: dict = {}  # from a preset or configuration file; shared space parameters are automatic
        self._show_when_built: tuple | None = None  # (a configuration asked for, the upload note once it is built)
        self._status_phase, self._status_at = "", -float("inf")
        self._limits = self.client.engine.budget.uploads

        self.preset = pn.widgets.Select(label="Preset", options=list(self._presets),
                                        description="Named configurations that reproduce the papers' experiments.")
        self.load_preset = pn.widgets.Button(label="Load preset", color="primary")
        self.preset_info = pn.pane.Markdown("", styles={"font-size": "0.85em"})

        self.target = pn.widgets.Select(label="Target", options=targets.available())
        self.target_params = pn.Column(margin=0, sizing_mode="stretch_width")
        self.upload = LimitedFileInput(max_bytes=self._limits.file_bytes)
        self.upload_note = pn.pane.HTML("", styles={"font-size": "0.85em"})  # HTML: it names the user's file

        self.sampler = pn.widgets.Select(label="Sampler", options=samplers.available())
        self.sampler_params = pn.Column(margin=0, sizing_mode="stretch_width")

        config_params = RunConfig.param
        self.n_chains = pn.widgets.IntInput(label="chains", start=config_params.n_chains.bounds[0],
                                            end=config_params.n_chains.bounds[1], description=config_params.n_chains.doc)
        self.seed = pn.widgets.IntInput(label="seed", start=0, end=config_params.seed.bounds[1],
                                        description=config_params.seed.doc)
        self.statistic = pn.widgets.Select(label="summary statistic", description="Statistic traced for every chain.")
        self.speed = pn.widgets.FloatInput(label="speed cap (steps/s, 0 = as fast as possible)", start=0,
                                           end=config_params.steps_per_second.bounds[1], step=10,
                                           description=config_params.steps_per_second.doc)
        self.compare = pn.widgets.Select(label="compare with",
                                         options={"(none)": "", **{name: name for name in samplers.available()}},
                                         description=config_params.compare_sampler.doc)
        self.compare_axis = pn.widgets.Select(label="at equal",
                                              options={f"{unit}s": axis for axis, (_, unit) in AXES.items()},
                                              description=config_params.compare_axis.doc)
        self.opad = pn.widgets.Checkbox(label="track OPAD / OPAD+ (exact KL, d ≤ 24)")
        self.opad_neighbours = pn.widgets.Checkbox(label="OPAD+ with every scored neighbour (locally balanced, LSB)")
        self.apply_button = pn.widgets.Button(label="Apply settings", color="primary",
                                              description="Build the target and sampler above and restart the run.")

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

        self.export_config = pn.widgets.FileDownload(callback=self._config_file, filename="run-config.json",
                                                     label="Download configuration (JSON)", color="light")
        self.export_traces = pn.widgets.FileDownload(callback=self._traces_file, filename="run-traces.csv",
                                                     label="Download traces (CSV)", color="light")
        # a configuration file, or a run a sweep stored (.npz), replayed step for step
        self.import_config = LimitedFileInput(accept=CONFIG_FILES, max_bytes=MAX_CONFIG_BYTES)
        # The page URL carries the run (``Explorer.follow_in_url``); copying it is the browser's job.
        self.copy_link = pn.widgets.Button(label="Copy link to this run", color="default",
                                           description="The page's address replays this run step for step.")
        self.copy_link.js_on_click(code="""
            const href = window.location.href;
            if (navigator.clipboard && window.isSecureContext) { navigator.clipboard.writeText(href); }
            else { window.prompt("Copy this link to the run:", href); }
        """)

        self.load_preset.on_click(self._on_load_preset)
        self.preset.param.watch(self._show_preset_info, "value")
        self.target.param.watch(self._on_target, "value")
        self.sampler.param.watch(self._on_sampler, "value")
        self.upload.param.watch(self._on_upload, "upload")
        self.import_config.param.watch(self._on_import, "upload")
        for file_input in (self.upload, self.import_config):
            file_input.param.watch(self._on_refused_file, "refused")
        self.apply_button.on_click(lambda event: self.apply())
        self.speed.param.watch(lambda event: self.client.set_speed(event.new or 0.0), "value")
        self.start.on_click(lambda event: self.client.start())
        self.pause.on_click(lambda event: self.client.pause())
        self.step.on_click(lambda event: self.client.step())
        self.reset.on_click(lambda event: self.client.reset())
        self.client.param.watch(self._show_error, "error")
        self.client.param.watch(self._on_built, "config")
        self.client.param.watch(self._show_run_preset, "config")
        self.client.param.watch(self._show_live_beta, "info")
        self.live_beta.param.watch(lambda event: self.client.set_beta(event.new), "value_throttled")
        self.client.param.watch(self.update_status, ["status", "building", "compiling"])

        self.show_config(self.client.requested)
        self._show_error()  # a first run refused before these widgets watched the client
        self._show_run_preset()
        self.update_status()

    # -- drafts ---------------------------------------------------------------------------
    def _form(self, forms: dict, name: str, cls) -> ParamForm:
        if name not in forms:
            forms[name] = ParamForm(cls, resolve=samplers.sampler_class)
        return forms[name]

    def _on_target(self, event=None) -> None:
        name = self.target.value
        cls = targets.target_class(name)
        self.target_params[:] = [self._form(self._target_forms, name, cls).panel]
        accepted = UPLOAD_TYPES.get(name)
        self.upload.visible = self.upload_note.visible = bool(accepted)
        if accepted:
            self.upload.accept = ",".join(accepted)
            self.upload_note.object = (f"Upload {UPLOAD_HINTS[name]} ({', '.join(accepted)}, at most "
                                       f"{format_bytes(self._limits.file_bytes)}); it is applied at once."
                                       if not self._file_params.get(name) else "Using the uploaded model file.")
        options = {LABELS[key]: key for key in statistic_names(cls)}
        self.statistic.options = options
        if self.statistic.value not in options.values():
            self.statistic.value = "log_prob"

    def _on_sampler(self, event=None) -> None:
        name = self.sampler.value
        self.sampler_params[:] = [self._form(self._sampler_forms, name, samplers.sampler_class(name)).panel]

    def draft(self, file_params: dict | None = None) -> RunConfig:
        """The configuration the widgets describe (not yet validated against each other), with the target's
        parameters from the file in use (or from ``file_params``, a file just uploaded)."""
        if file_params is None:
            file_params = self._file_params.get(self.target.value, {})
        target_form = self._form(self._target_forms, self.target.value, targets.target_class(self.target.value))
        sampler_form = self._form(self._sampler_forms, self.sampler.value, samplers.sampler_class(self.sampler.value))
        return RunConfig(
            target=self.target.value,
            target_params={**target_form.values(), **file_params},
            sampler=self.sampler.value,
            sampler_params=sampler_form.values(),
            n_chains=self.n_chains.value,
            seed=self.seed.value,
            steps_per_second=self.speed.value or 0.0,
            statistic=self.statistic.value,
            opad=self.opad.value,
            opad_neighbours=self.opad_neighbours.value,
            compare_sampler=self.compare.value,
            compare_params=self._compare_params,
            compare_axis=self.compare_axis.value,
        )

    def show_config(self, config: RunConfig) -> None:
        """Set every widget to ``config`` (after a preset or a configuration file was loaded)."""
        self.target.value = config.target
        self._file_params[config.target] = {k: v for k, v in config.target_params.items() if k in FILE_PARAMETERS}
        self._on_target()
        self._target_forms[config.target].set_values(config.target_params)
        self.sampler.value = config.sampler
        self._on_sampler()
        self._sampler_forms[config.sampler].set_values(config.sampler_params)
        self.n_chains.value, self.seed.value = config.n_chains, config.seed
        self.speed.value, self.statistic.value = config.steps_per_second, config.statistic
        self.opad.value, self.opad_neighbours.value = config.opad, config.opad_neighbours
        self.compare.value, self._compare_params = config.compare_sampler, dict(config.compare_params)
        self.compare_axis.value = config.compare_axis

    # -- actions ------------------------------------------------------------------------------
    def apply(self, config: RunConfig | None = None) -> bool:
        """Ask for a run of ``config`` (default: the widgets' draft); a refusal is shown in the page."""
        try:
            config = config or self.draft()
        except ValueError as error:
            self.client.error = str(error)
            return False
        return self.client.apply(config)

    def _apply_and_show(self, config: RunConfig, upload_note: str = "") -> None:
        """Apply a preset, a loaded configuration or an uploaded file's; show it in the widgets (and
        ``upload_note``, HTML, under the upload button) once it is built — never when it is refused."""
        if self.apply(config):
            self._show_when_built = (config, upload_note)

    def _on_built(self, event) -> None:
        if event.new is not None and self._show_when_built is not None and event.new is self._show_when_built[0]:
            upload_note, self._show_when_built = self._show_when_built[1], None
            with pn.io.hold():
                self.show_config(event.new)
                if upload_note:
                    self.upload_note.object = upload_note

    def _show_live_beta(self, event=None) -> None:
        """The β slider, for a run whose target has an inverse temperature, at the run's current β."""
        config = self.client.config
        spec = targets.target_class(config.target).param.objects().get("beta") if config is not None else None
        self.live_beta.visible = self.live_beta_note.visible = spec is not None
        if spec is None:
            return
        beta = config.beta_changes[-1][1] if config.beta_changes else config.target_params.get("beta", spec.default)
        critical = (config.target == "ising_lattice" and config.target_params.get("ndim", 2) == 2
                    and config.target_params.get("J", 1.0) == 1.0)
        self.live_beta.label = "β (live) · critical β_c ≈ 0.4407" if critical else "β (live)"
        self.live_beta.end = max(1.0, 1.5 * beta)
        self.live_beta.value = beta

    def _on_load_preset(self, event=None) -> None:
        self._apply_and_show(self._presets[self.preset.value].run_config())

    def _show_run_preset(self, event=None) -> None:
        """Select the preset the run shown is (opened from a link, a file or Load preset alike), so that the name and
        description beside the run are its own; a custom run keeps the selection and is said to be custom."""
        name = self._running_preset()
        if name and name != self.preset.value:
            self.preset.value = name  # its watcher shows the preset's info
        else:
            self._show_preset_info()

    def _show_preset_info(self, event=None) -> None:
        """The preset's full name (the drop-down cuts long ones), its description, and the failure it shows; whether
        it is the run shown, and that the run shown is a custom run when it is none of the presets."""
        preset = self._presets.get(self.preset.value)
        if preset is None:
            self.preset_info.object = ""
            return
        failure = f"\n\n**⚠ Meant to show a failure:** {preset.shows_failure}" if preset.shows_failure else ""
        running = self._running_preset()
        loaded = "" if running == self.preset.value else f"\n\n*{NOT_LOADED}*"
        custom = f"**{CUSTOM_RUN}**\n\n" if self.client.config is not None and not running else ""
        self.preset_info.object = f"{custom}**{self.preset.value}**\n\n{preset.description}{failure}{loaded}"

    def _running_preset(self) -> str:
        """The name of the preset the run shown is, as loaded (not since edited, nor its β moved live); '' if none."""
        config = self.client.config
        changes = len(config.beta_changes) if config is not None else 0
        if self._preset_of[0] is not config or self._preset_of[1] != changes:
            self._preset_of = (config, changes, preset_of(config, self._presets))
        return self._preset_of[2]

    def _running_failure_preset(self) -> str:
        """The failure the run shows, when it is a preset meant to show one."""
        name = self._running_preset()
        return self._presets[name].shows_failure if name else ""

    def _on_refused_file(self, event) -> None:
        refused = event.new
        self.client.error = (f"{refused['name']} is {format_bytes(refused['size'])}; files up to "
                             f"{format_bytes(event.obj.max_bytes)} are accepted here. It was not sent.")

    async def _on_upload(self, event) -> None:
        """Run the uploaded file's model (read off the event loop); it is the file in use (Apply sends it) once
        its run is built."""
        name, target = event.new.get("name", ""), self.target.value
        try:
            params = await off_the_loop(_model_file, target, event.new, self._limits)
            if event.new is not event.obj.upload:  # replaced by a later file while it was read: that one counts
                return
            if self.target.value != target:
                raise ValueError(f"{excerpt(name, 60)} was read as a model of {target}, and the target is now "
                                 f"{self.target.value}: upload it again for this target")
            config = self.draft(params)
        except ValueError as error:
            if event.new is event.obj.upload:
                self.client.error = str(error)
            return
        self._apply_and_show(config, f"Using uploaded <b>{plain(name)}</b>.")

    async def _on_import(self, event) -> None:
        """Run a configuration file or a stored run (read and checked off the event loop)."""
        try:
            config = await off_the_loop(_configuration, event.new)
        except ValueError as error:
            if event.new is event.obj.upload:  # not replaced by a later file while it was read
                self.client.error = str(error)
            return
        if event.new is event.obj.upload:
            self._apply_and_show(config)

    def _config_file(self) -> io.StringIO:
        return io.StringIO(run_record_json(self.client.config, self.client.frozen))

    def _traces_file(self) -> io.StringIO:
        return io.StringIO(trace_csv(self.client.history) if self.client.history else "")

    def _show_error(self, event=None) -> None:
        self.alert.object = plain(self.client.error)
        self.alert.visible = bool(self.client.error)

    # -- status ----------------------------------------------------------------------------------
    def update_status(self, *events) -> None:
        """Redraw the status line: at once when the phase changes, else at most every ``STATUS_SECONDS``
        (the explorer calls this at every flush, so the latest status is always shown soon)."""
        status = self.client.status
        phase = ("compiling the samplers (once after an install or an edit)…" if self.client.compiling
                 else "building the run…" if self.client.building else status.phase)
        text = (f"<b>{phase}</b> · steps {status.n_steps:,} · evaluations {_si(status.n_evals)} · "
                f"{_si(status.steps_per_second)} steps/s · acceptance {_si(status.acceptance)} · "
                f"{status.seconds:.1f} s sampling")
        failure = self._running_failure_preset()
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
            pn.layout.Divider(),
            self.preset, self.load_preset, self.preset_info,
            pn.layout.Divider(),
            self.target, self.target_params, self.upload, self.upload_note,
            self.sampler, self.sampler_params,
            self.n_chains, self.seed, self.statistic, self.compare, self.compare_axis, self.opad, self.opad_neighbours,
            self.apply_button,
            self.speed,
            pn.layout.Divider(),
            self.copy_link, self.export_config, self.export_traces, self.import_config,
            sizing_mode="stretch_width",
        )

