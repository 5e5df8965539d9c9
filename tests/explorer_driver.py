"""Driving an ``Explorer`` by hand in tests: its periodic flush is called until the page shows a state.

The worker runs in-process (``Engine(in_process=True)``); every wait is on a
state with a generous timeout, never on how much work fits in a time window.
"""

from __future__ import annotations

import base64
import time

from dashboard.explorer import Explorer
from dashboard.views.upload import LimitedFileInput
from engine.client import RunClient
from engine.config import RunConfig

#: Longest wait for a run to reach a state (seconds): generous, so that a slow machine never fails a test.
TIMEOUT = 60.0


def built(client: RunClient) -> bool:
    """Whether the client's latest configuration has been built by its worker."""
    return client.info is not None and not client.building


def settle(app: Explorer, condition) -> None:
    """Flush until ``condition()`` holds."""
    end = time.monotonic() + TIMEOUT
    while True:
        app.flush()
        if condition():
            return
        assert time.monotonic() < end, "the dashboard did not reach the expected state"
        time.sleep(0.01)


def make_explorer(config: RunConfig) -> Explorer:
    """An explorer whose first run has been built."""
    app = Explorer(config)
    settle(app, lambda: built(app.client))
    return app


def view(app: Explorer, kind: type):
    """The explorer's live view of class ``kind`` (built once it applied to a run)."""
    return app.views[kind]


def card(app: Explorer, kind: type):
    """The card of the explorer's live views of class ``kind`` (built once it applied to a run)."""
    return app.cards[kind]


def shown(app: Explorer, kind: type) -> bool:
    """Whether the card of the views of class ``kind`` shows (a card never built does not)."""
    return kind in app.cards and app.cards[kind].visible


def applied(app: Explorer, config: RunConfig) -> None:
    """Apply ``config`` through the controls and wait until its run is built."""
    assert app.controls.apply(config)
    settle(app, lambda: built(app.client) and app.client.config is config)


def advance(app: Explorer, n: int) -> None:
    """Take ``n`` steps (the Step button ``n`` times) and flush until they are shown."""
    target = app.client.status.n_steps + n
    app.client.step(n)
    settle(app, lambda: app.client.status.n_steps >= target)


def upload(file_input: LimitedFileInput, name: str, data: bytes) -> None:
    """What the browser sends after a file was chosen."""
    serial = file_input.upload.get("serial", 0) + 1
    file_input.upload = {"name": name, "data": base64.b64encode(data).decode(), "serial": serial}
