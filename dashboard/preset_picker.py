"""The preset picker: the preset select, Load preset, and the preset's name, description and failure.

The selection follows the run shown: when that run is a preset (opened from a link, a file or Load preset
alike) the preset is selected, so that the name and description beside the run are its own. Otherwise the
pane first says what the run shown is — the page's opening run (``DEFAULT_RUN``), a custom run
(``CUSTOM_RUN``), each with its target, sampler and chains, or another preset — and then, below a rule, the
selected preset under ``NOT_LOADED``: a description is never printed as if it were the run shown's. Preset
texts are the project's own (``engine.presets``), never the user's, so they are Markdown. The presets' run
configurations the picker compares a run with are made once per server (``comparable_presets``: 10 ms a page
otherwise); a preset loaded into a run gets a fresh one.
"""

from __future__ import annotations

import functools

import panel as pn
import param

from engine.client import RunClient
from engine.config import RunConfig
from engine.presets import Preset, load_presets, preset_of

#: Above the selected preset's name and description while the run shown is not that preset.
NOT_LOADED = "Selected preset, not the run shown: Load preset runs it."
#: What the run shown is when it is none of the presets (edited, or a link to a custom run).
CUSTOM_RUN = "Custom run: the run shown matches none of the presets."
#: What the run shown is when it is the page's opening run (``RunConfig()``, no preset).
DEFAULT_RUN = "The run shown is the page's default run, none of the presets."
#: The page's default run, as a configuration's dictionary.
DEFAULT_CONFIG = RunConfig().to_dict()


class ComparedPreset:
    """A preset as ``preset_of`` compares a run with it: its run configuration made once and only read."""

    def __init__(self, preset: Preset):
        self._config = preset.run_config()

    def run_config(self) -> RunConfig:
        return self._config


@functools.cache
def comparable_presets() -> dict[str, ComparedPreset]:
    """The presets as ``preset_of`` compares runs with them, made once per server and shared by its pages."""
    return {name: ComparedPreset(preset) for name, preset in load_presets().items()}


class PresetPicker(pn.viewable.Viewer):
    """The presets, which of them the run shown is, and a button that runs the one selected."""

    client = param.ClassSelector(class_=RunClient)
    run = param.Callable(doc="run(config): apply a configuration and show it in the sidebar once it is built.")

    def __init__(self, **params):
        super().__init__(**params)
        self._presets = load_presets()
        self._preset_of: tuple = (None, 0, "")  # (a run's configuration, its β changes, the preset it is)
        self.preset = pn.widgets.Select(label="Preset", options=list(self._presets),
                                        description="Named configurations that reproduce the papers' experiments.")
        self.load_preset = pn.widgets.Button(label="Load preset", color="primary")
        self.preset_info = pn.pane.Markdown("", styles={"font-size": "0.85em"})

        self.load_preset.on_click(self._on_load_preset)
        self.preset.param.watch(self._show_preset_info, "value")
        self.client.param.watch(self._show_run_preset, "config")
        self._show_run_preset()

    def _on_load_preset(self, event=None) -> None:
        self.run(self._presets[self.preset.value].run_config())

    def _show_run_preset(self, event=None) -> None:
        """Select the preset the run shown is (opened from a link, a file or Load preset alike), so that the name and
        description beside the run are its own; a custom run keeps the selection and is said to be custom."""
        name = self._running_preset()
        if name and name != self.preset.value:
            self.preset.value = name  # its watcher shows the preset's info
        else:
            self._show_preset_info()

    def _show_preset_info(self, event=None) -> None:
        """The preset's full name (the drop-down cuts long ones), its description, and the failure it shows; when it
        is not the run shown, first what the run shown is (``_run_shown``) and, below a rule, that it is not."""
        preset = self._presets.get(self.preset.value)
        if preset is None:
            self.preset_info.object = ""
            return
        failure = f"\n\n**⚠ Meant to show a failure:** {preset.shows_failure}" if preset.shows_failure else ""
        selected = f"**{self.preset.value}**\n\n{preset.description}{failure}"
        running = self._running_preset()
        if running == self.preset.value:
            self.preset_info.object = selected
            return
        shown = "" if self.client.config is None else f"{self._run_shown(running)}\n\n---\n\n"
        self.preset_info.object = f"{shown}*{NOT_LOADED}*\n\n{selected}"

    def _run_shown(self, running: str) -> str:
        """What the run shown is, when it is not the selected preset: another preset (``running``), or the page's
        default run or a custom run with its target, sampler and chains."""
        if running:
            return f"The run shown is the preset **{running}**."
        config = self.client.config
        # the default run has no target parameters: a run with some (an uploaded model) is never serialised here
        opening = not config.target_params and config.to_dict() == DEFAULT_CONFIG
        return (f"**{DEFAULT_RUN if opening else CUSTOM_RUN}** It samples `{config.target}` with `{config.sampler}`, "
                f"{config.n_chains:,} chain{'' if config.n_chains == 1 else 's'}.")

    def _running_preset(self) -> str:
        """The name of the preset the run shown is, as loaded (not since edited, nor its β moved live); '' if none."""
        config = self.client.config
        changes = len(config.beta_changes) if config is not None else 0
        if self._preset_of[0] is not config or self._preset_of[1] != changes:
            self._preset_of = (config, changes, preset_of(config, comparable_presets()))
        return self._preset_of[2]

    def running_failure(self) -> str:
        """The failure the run shows, when it is a preset meant to show one ('' otherwise)."""
        name = self._running_preset()
        return self._presets[name].shows_failure if name else ""

    def __panel__(self):
        return pn.Column(self.preset, self.load_preset, self.preset_info, sizing_mode="stretch_width")
