"""The sidebar: the run's draft (target and sampler with their parameters, run settings, a model file, Apply),
composed with the sidebar's other parts.

``Controls`` holds the draft and assembles the sidebar from viewers bound to the same ``RunClient``, each with
one job: ``RunPanel`` (errors, the run buttons, the status line, live β), ``PresetPicker`` (presets) and
``SharePanel`` (the link, downloads, configuration import). Widgets hold *draft* values; ``Apply`` turns them
into a ``RunConfig`` and asks the session's run (``engine.client.RunClient``) to switch. An invalid draft (bad
value, unsupported target/sampler pair, unparsable upload, over the server's memory budget) is refused with
the reason shown in the page — as plain text (``plain``): messages quote the user's keys, values and file
names — and the previous run keeps going (or stays paused). A preset, a configuration file or an uploaded
model file is shown in the widgets (and the file named as the one in use) once its run has been built, never
when it is refused: the picker and the import hand their configurations to ``_apply_and_show`` for that.
Uploaded model files are read and checked in a thread (``file_reading``), so that a file at the size limit
never stalls the server for other sessions.
"""

from __future__ import annotations

import panel as pn
import param

import samplers
import targets
from engine.budget import Estimate, check
from engine.client import RunClient
from engine.config import RunConfig
from engine.reading import read_model_file
from engine.snapshot import AXES
from engine.statistics import LABELS, statistic_names
from engine.uploads import UPLOAD_HINTS, UPLOAD_TYPES, excerpt, format_bytes

from .file_reading import off_the_loop, report_refusals
from .forms import ParamForm
from .plain import plain
from .preset_picker import PresetPicker
from .run_panel import RunPanel
from .sharing import CONFIG_FILES, SharePanel
from .views.upload import LimitedFileInput

#: ``CONFIG_FILES`` is re-exported: the serving benchmarks import it from here.
__all__ = ["CONFIG_FILES", "Controls"]

#: Target parameters that are edited by upload or JSON rather than by a widget.
FILE_PARAMETERS = {"uai_text", "J", "h", "evidence", "weights", "visible_bias", "hidden_bias", "fn", "X", "y",
                   "data"}


class Controls(pn.viewable.Viewer):
    """The sidebar, bound to one ``RunClient``: the run's draft and Apply, composed with the run panel, the
    preset picker and the sharing panel."""

    client = param.ClassSelector(class_=RunClient)

    def __init__(self, **params):
        super().__init__(**params)
        self._target_forms: dict[str, ParamForm] = {}
        self._sampler_forms: dict[str, ParamForm] = {}
        self._file_params: dict[str, dict] = {}
        self._compare_params: dict = {}  # from a preset or configuration file; shared space parameters are automatic
        self._show_when_built: tuple | None = None  # (a configuration asked for, the upload note once it is built)
        self._limits = self.client.engine.budget.uploads

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

        self.target.param.watch(self._on_target, "value")
        self.sampler.param.watch(self._on_sampler, "value")
        self.upload.param.watch(self._on_upload, "upload")
        report_refusals(self.upload, self.client)
        self.apply_button.on_click(lambda event: self.apply())
        self.speed.param.watch(lambda event: self.client.set_speed(event.new or 0.0), "value")
        self.client.param.watch(self._on_built, "config")
        self.show_config(self.client.requested)

        self.presets = PresetPicker(client=self.client, run=self._apply_and_show)
        self.runs = RunPanel(client=self.client, shows_failure=self.presets.running_failure)
        self.sharing = SharePanel(client=self.client, run=self._apply_and_show)
        self._first_screen = [self.runs, pn.layout.Divider(), self.presets]
        self._draft = [pn.layout.Divider(),
                       self.target, self.target_params, self.upload, self.upload_note,
                       self.sampler, self.sampler_params,
                       self.n_chains, self.seed, self.statistic, self.compare, self.compare_axis, self.opad,
                       self.opad_neighbours, self.apply_button,
                       self.speed,
                       pn.layout.Divider(),
                       self.sharing]
        self._layout = pn.Column(*self._first_screen, *self._draft, sizing_mode="stretch_width")

    def hold_back_the_draft(self) -> None:
        """Leave the draft's widgets and the sharing panel out of the sidebar until ``show_the_draft``: a served
        page is sent with its run's buttons and the presets, and the rest of the sidebar (most of a page's
        models) is added after, in a turn of the server's event loop of its own."""
        self._layout[:] = self._first_screen

    def show_the_draft(self) -> None:
        """Put the draft's widgets and the sharing panel under the presets (once)."""
        if len(self._layout) == len(self._first_screen):
            with pn.io.hold(freeze=True):  # one recomputation of the document's models
                self._layout.extend(self._draft)

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
        self.upload.accept = ",".join(accepted or ())
        self.upload_note.object = "" if not accepted else (
            f"Upload {UPLOAD_HINTS[name]} ({', '.join(accepted)}, at most {format_bytes(self._limits.file_bytes)}); "
            "it is applied at once." if not self._file_params.get(name) else "Using the uploaded model file.")
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
        """Set every widget to ``config`` (after a preset or a configuration file was loaded), in forms made afresh
        for it: the sidebar then reads as a fresh page's on that run, whatever was drafted before. The page's models
        are recomputed once, when all is set, not at each form replaced (eight times: 0.5 s of the server for a
        large model, while every other session waited)."""
        with pn.io.hold(freeze=True):
            self._target_forms.pop(config.target, None)
            self._sampler_forms.pop(config.sampler, None)
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
    def apply(self, config: RunConfig | None = None, estimate: Estimate | None = None) -> bool:
        """Ask for a run of ``config`` (default: the widgets' draft; ``estimate``: its budget check if made
        already); a refusal is shown in the page."""
        try:
            config = config or self.draft()
        except ValueError as error:
            self.client.error = str(error)
            return False
        return self.client.apply(config, estimate)

    def _apply_and_show(self, config: RunConfig, upload_note: str = "", estimate: Estimate | None = None) -> None:
        """Apply a preset, a loaded configuration or an uploaded file's; show it in the widgets (and
        ``upload_note``, HTML, under the upload button) once it is built — never when it is refused."""
        if self.apply(config, estimate):
            self._show_when_built = (config, upload_note)

    def _on_built(self, event) -> None:
        if event.new is not None and self._show_when_built is not None and event.new is self._show_when_built[0]:
            upload_note, self._show_when_built = self._show_when_built[1], None
            with pn.io.hold():
                self.show_config(event.new)
                if upload_note:
                    self.upload_note.object = upload_note

    async def _on_upload(self, event) -> None:
        """Run the uploaded file's model (read, and its run's memory estimated, off the event loop: both read the
        whole file); it is the file in use (Apply sends it) once its run is built."""
        name, target = event.new.get("name", ""), self.target.value
        elsewhere = not self.client.engine.in_process  # a served session's reader processes
        try:
            params = await off_the_loop(read_model_file, target, name, event.new["data"], self._limits,
                                        process=elsewhere)
            if event.new is not event.obj.upload:  # replaced by a later file while it was read: that one counts
                return
            if self.target.value != target:
                raise ValueError(f"{excerpt(name, 60)} was read as a model of {target}, and the target is now "
                                 f"{self.target.value}: upload it again for this target")
            config = self.draft(params)
            estimate = await off_the_loop(check, config, self.client.engine.budget, process=elsewhere)
        except ValueError as error:
            if event.new is event.obj.upload:
                self.client.error = str(error)
            return
        if event.new is event.obj.upload:
            self._apply_and_show(config, f"Using uploaded <b>{plain(name)}</b>.", estimate)

    def __panel__(self):
        return self._layout
