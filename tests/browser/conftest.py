"""Fixtures for the end-to-end browser tests.

One in-process Panel server per test session serves ``app.py`` itself (so the
page is composed exactly as ``make serve`` composes it) on 127.0.0.1 at a free
port; one headless Debian Chromium is driven by playwright's sync API; every
test gets a fresh browser context and page (one new server session), whose
sampler runs in a worker process of its own.

Serving in-process lets the tests inspect the server's engine for the
sessions' worker processes, and see the server's exceptions: an exception
logged by the server (e.g. in a callback) during a test fails it, as does a
JavaScript error in the page. Sessions are destroyed soon after their page
closes because the server checks for unused sessions every 500 ms.
"""

from __future__ import annotations

import logging
import os
import socket
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
APP_PATH = Path(__file__).resolve().parents[2] / "app.py"
#: Timeout of every playwright action, wait and ``expect`` assertion (ms): generous, so that a loaded
#: machine is only slower, never failing (tests wait on states, never on how fast they come).
TIMEOUT_MS = 60_000
#: How long the server keeps a session without connections (ms) and how often it checks.
SESSION_LIFETIME_MS = 500


def require_chromium() -> None:
    """Skip the calling test module when ``/usr/bin/chromium`` is missing, except when the ``CI`` environment
    variable is set: there a missing browser is an error (``.ci/run`` installs Debian's chromium). Call it at the
    top of a browser test module, before it imports playwright."""
    if os.path.exists(CHROMIUM):
        return
    if os.environ.get("CI"):
        pytest.fail(f"CI is set but {CHROMIUM} is missing: install Debian's chromium "
                    "(apt-get install -y chromium chromium-driver)", pytrace=False)
    pytest.skip(f"{CHROMIUM} is missing (apt-get install -y chromium chromium-driver); "
                "set CI to make this an error", allow_module_level=True)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class ServerErrors(logging.Handler):
    """Collects ERROR records logged in this process (the in-process server's exceptions)."""

    #: Noise from pages that closed while the server was still writing to them.
    IGNORED = ("WebSocketClosedError", "StreamClosedError", "Failed sending message as connection was closed")

    def __init__(self):
        super().__init__(logging.ERROR)
        self.records: list[str] = []
        self.setFormatter(logging.Formatter("%(name)s: %(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        text = self.format(record)
        if not any(ignored in text for ignored in self.IGNORED):
            self.records.append(text)

    def take(self) -> list[str]:
        """The errors collected so far (and forget them)."""
        records, self.records = self.records, []
        return records


@pytest.fixture(scope="session")
def server_url():
    """Base URL of the dashboard served in-process (the page is at ``<url>/app``)."""
    import panel as pn

    from dashboard.serving import allow_long_links

    allow_long_links()  # as `make serve` does (--setup serve_setup.py)
    port = _free_port()
    server = pn.serve(
        {"app": str(APP_PATH)},
        port=port,
        address="127.0.0.1",
        threaded=True,
        show=False,
        start=True,
        liveness=True,
        # Bokeh's names: pn.serve silently ignores check_unused_sessions=/unused_session_lifetime=
        # (the `panel serve` CLI spellings), leaving Bokeh's defaults of 17 s and 15 s.
        check_unused_sessions_milliseconds=SESSION_LIFETIME_MS,
        unused_session_lifetime_milliseconds=SESSION_LIFETIME_MS,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while True:  # pn.serve returns before the port listens
        try:
            with urllib.request.urlopen(f"{url}/liveness", timeout=1) as response:
                if response.status == 200:
                    break
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        if time.monotonic() > deadline:
            server.stop()
            pytest.fail(f"the Panel server did not answer {url}/liveness within 30 s")
        time.sleep(0.1)
    # One INFO record per session per flush (10 Hz) would flood the reports of failed tests.
    periodic_logger = logging.getLogger("panel.io.callbacks.PeriodicCallback")
    periodic_level = periodic_logger.level
    periodic_logger.setLevel(logging.WARNING)
    try:
        yield url
    finally:
        periodic_logger.setLevel(periodic_level)
        server.stop()
        server.join(timeout=30)  # stop() returns early; join before anything else touches pn.state


@pytest.fixture(scope="package")
def browser():
    """Headless Debian Chromium (playwright gives it a fresh temporary profile directory), closed once the browser
    tests are done: playwright's synchronous API keeps an asyncio loop registered as running in the main thread
    while it is open, and Panel would hand the other tests' asynchronous callbacks to that loop, where they never
    run."""
    from playwright.sync_api import expect, sync_playwright

    expect.set_options(timeout=TIMEOUT_MS)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM,
            args=CHROMIUM_ARGS,
            timeout=60_000,
        )
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture
def context(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    context.set_default_timeout(TIMEOUT_MS)
    try:
        yield context
    finally:
        context.close()


@pytest.fixture
def server_errors():
    """Exceptions the server logs during the test; any left at teardown fail the test."""
    handler = ServerErrors()
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        yield handler
    finally:
        root.removeHandler(handler)
    errors = handler.take()
    assert not errors, "the server logged errors:\n" + "\n\n".join(errors)


@pytest.fixture
def page(context, server_url, server_errors):
    """A new page showing the dashboard, connected to its session (websocket open, document loaded).

    JavaScript errors raised in the page fail the test at teardown.
    """
    page = context.new_page()
    page_errors: list[str] = []
    page.on("pageerror", lambda error: page_errors.append(str(error)))
    with page.expect_console_message(lambda m: "Websocket connection 0 is now open" in m.text, timeout=60_000):
        page.goto(f"{server_url}/app", timeout=60_000)
    page.wait_for_function("() => window.Bokeh && Bokeh.documents && Bokeh.documents.length > 0",
                           timeout=TIMEOUT_MS)
    page.get_by_role("button", name="Start", exact=True).wait_for(state="visible")
    yield page
    if not page.is_closed():
        page.close()
    assert not page_errors, f"JavaScript errors in the page: {page_errors}"
