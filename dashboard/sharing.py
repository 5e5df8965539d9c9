"""Sharing a run and opening one: copy the link to the run, download its configuration or traces, and import a
configuration file, a configuration archive or a run a sweep stored.

The configuration downloads as JSON, or — when it holds arrays too large for JSON, such as an uploaded coupling
matrix — as a configuration archive (``engine.config_archive``: ``run-config.npz``, the JSON and each large array
as an ``.npy`` entry); the button's label and the file's name say which, and change with the run. The file is
written in a reader thread (numpy and zlib let go of the GIL) while the button says it is being prepared: a
3000 × 3000 matrix used to be written as a 117 MB JSON list on the server's event loop, stalling every page for
seconds. An imported file is read and checked off the event loop, in a reader process when served
(``file_reading``); a refusal is shown in the page, and an accepted configuration is run and shown in the sidebar
once it is built (the ``run`` callback).
"""

from __future__ import annotations

import io

import panel as pn
import param

from engine.client import RunClient
from engine.config import MAX_CONFIG_BYTES
from engine.export import ARCHIVE_FILENAME, JSON_FILENAME, run_record_file, run_record_filename, trace_csv
from engine.reading import read_configuration

from .file_reading import off_the_loop, report_refusals
from .views.upload import LimitedFileInput

#: What the configuration file input takes: a configuration (.json), or a configuration archive or a run a sweep
#: stored (.npz).
CONFIG_FILES = ".json,.npz"
#: The configuration download's label, by the name of the file it gives.
DOWNLOAD_LABELS = {JSON_FILENAME: "Download configuration (JSON)",
                   ARCHIVE_FILENAME: "Download configuration archive (.npz: JSON with its arrays)"}
#: The download's label while its file is written.
PREPARING_LABEL = "Preparing the configuration file…"


class SharePanel(pn.viewable.Viewer):
    """The link, the downloads and the configuration import of one ``RunClient``'s run."""

    client = param.ClassSelector(class_=RunClient)
    run = param.Callable(doc="run(config): apply a configuration and show it in the sidebar once it is built.")

    def __init__(self, **params):
        super().__init__(**params)
        self.export_config = pn.widgets.FileDownload(callback=self._config_file, filename=JSON_FILENAME,
                                                     label=DOWNLOAD_LABELS[JSON_FILENAME], color="light")
        self.export_traces = pn.widgets.FileDownload(callback=self._traces_file, filename="run-traces.csv",
                                                     label="Download traces (CSV)", color="light")
        # a configuration file, a configuration archive or a run a sweep stored (.npz), replayed step for step
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
        self.client.param.watch(self._name_config_file, "config")
        self._name_config_file()
        report_refusals(self.import_config, self.client)

    async def _on_import(self, event) -> None:
        """Run a configuration file, a configuration archive or a stored run (read and checked off the event
        loop: in a reader process unless the session's worker runs in this one)."""
        try:
            config = await off_the_loop(read_configuration, event.new["data"],
                                        process=not self.client.engine.in_process)
        except ValueError as error:
            if event.new is event.obj.upload:  # not replaced by a later file while it was read
                self.client.error = str(error)
            return
        if event.new is event.obj.upload:
            self.run(config)

    def _name_config_file(self, event=None) -> None:
        """Say which file the configuration download gives for the run shown (from its arrays' shapes alone)."""
        if self.client.config is not None:
            filename = run_record_filename(self.client.config)
            self.export_config.param.update(filename=filename, label=DOWNLOAD_LABELS[filename])

    async def _config_file(self) -> io.BytesIO:
        """The configuration's file (``engine.export.run_record_file``), written in a reader thread."""
        config, frozen = self.client.config, self.client.frozen
        self.export_config.label = PREPARING_LABEL
        try:
            data = await off_the_loop(run_record_file, config, frozen)
        finally:
            self._name_config_file()
        self.export_config.filename = run_record_filename(config)  # the file's kind, should the run have changed
        return io.BytesIO(data)

    def _traces_file(self) -> io.StringIO:
        return io.StringIO(trace_csv(self.client.history) if self.client.history else "")

    def __panel__(self):
        return pn.Column(self.copy_link, self.export_config, self.export_traces, self.import_config,
                         sizing_mode="stretch_width")
