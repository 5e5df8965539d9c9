"""Sharing a run and opening one: copy the link to the run, download its configuration or traces, and import a
configuration file or a run a sweep stored.

An imported file is read and checked off the event loop (``file_reading``); a refusal is shown in the page,
and an accepted configuration is run and shown in the sidebar once it is built (the ``run`` callback).
"""

from __future__ import annotations

import io

import panel as pn
import param

from engine.client import RunClient
from engine.config import MAX_CONFIG_BYTES, RunConfig
from engine.export import run_record_json, trace_csv
from engine.stored_runs import config_from_stored_run, is_stored_run

from .file_reading import off_the_loop, refused_unless_read, report_refusals
from .views.upload import LimitedFileInput

#: What the configuration file input takes: a configuration (.json) or a run a sweep stored (.npz).
CONFIG_FILES = ".json,.npz"


@refused_unless_read
def _configuration(upload: dict) -> RunConfig:
    """The configuration an uploaded configuration file or stored run holds, checked (``ValueError`` if not)."""
    data = LimitedFileInput.contents(upload)
    return config_from_stored_run(data) if is_stored_run(data) else RunConfig.from_json(data)


class SharePanel(pn.viewable.Viewer):
    """The link, the downloads and the configuration import of one ``RunClient``'s run."""

    client = param.ClassSelector(class_=RunClient)
    run = param.Callable(doc="run(config): apply a configuration and show it in the sidebar once it is built.")

    def __init__(self, **params):
        super().__init__(**params)
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
        self.import_config.param.watch(self._on_import, "upload")
        report_refusals(self.import_config, self.client)

    async def _on_import(self, event) -> None:
        """Run a configuration file or a stored run (read and checked off the event loop)."""
        try:
            config = await off_the_loop(_configuration, event.new)
        except ValueError as error:
            if event.new is event.obj.upload:  # not replaced by a later file while it was read
                self.client.error = str(error)
            return
        if event.new is event.obj.upload:
            self.run(config)

    def _config_file(self) -> io.StringIO:
        return io.StringIO(run_record_json(self.client.config, self.client.frozen))

    def _traces_file(self) -> io.StringIO:
        return io.StringIO(trace_csv(self.client.history) if self.client.history else "")

    def __panel__(self):
        return pn.Column(self.copy_link, self.export_config, self.export_traces, self.import_config,
                         sizing_mode="stretch_width")
