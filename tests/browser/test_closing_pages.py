"""Pages that close while their runs stream leave no traceback in the server's log (``dashboard.closed_pages``).

Each round opens two pages in one browser context, starts both runs and
closes the context while the server writes their updates: before
``quiet_closed_pages`` the log got "Task exception was never retrieved" with
a ``WebSocketClosedError`` traceback for about one page in two.
"""

from __future__ import annotations

import gc
import logging

import pytest

from .conftest import TIMEOUT_MS, require_chromium

require_chromium()

from playwright.sync_api import expect  # noqa: E402

pytestmark = pytest.mark.browser

#: Rounds of two pages each.
ROUNDS = 4


class Tracebacks(logging.Handler):
    """Records of this process that carry a traceback or report an exception nobody retrieved."""

    def __init__(self):
        super().__init__(logging.DEBUG)
        self.records: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        text = record.getMessage()
        if record.exc_info or "Traceback" in text or "never retrieved" in text:
            self.records.append(f"{record.name}: {text} {record.exc_info and record.exc_info[1]!r}")


def test_closing_pages_writes_no_traceback(browser, server_url):
    log = Tracebacks()
    root = logging.getLogger()
    root.addHandler(log)
    try:
        for _ in range(ROUNDS):
            context = browser.new_context()
            for _ in range(2):
                page = context.new_page()
                page.goto(f"{server_url}/app", timeout=TIMEOUT_MS)
                page.get_by_role("button", name="Start", exact=True).click(timeout=TIMEOUT_MS)
                expect(page.locator(".run-status")).to_contain_text("running", timeout=TIMEOUT_MS)
            context.close()  # while both pages' runs stream
        page = browser.new_page()  # the server still serves: its sessions of the closed pages have ended
        page.goto(f"{server_url}/app", timeout=TIMEOUT_MS)
        page.get_by_role("button", name="Start", exact=True).wait_for(state="visible", timeout=TIMEOUT_MS)
        page.close()
        gc.collect()  # an unretrieved exception is reported when its task is collected
    finally:
        root.removeHandler(log)
    assert not log.records, "\n".join(log.records)
