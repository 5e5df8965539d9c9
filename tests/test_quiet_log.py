"""The served sessions' event loop drops the reports of writes to closed pages, and only those
(``dashboard.closed_pages.quiet_closed_pages``; ``tests/browser/test_closing_pages.py`` closes real pages)."""

from __future__ import annotations

import asyncio

from tornado.websocket import WebSocketClosedError

from dashboard.closed_pages import quiet_closed_pages


def test_only_unretrieved_writes_to_closed_pages_are_dropped():
    async def failing(error: Exception):
        raise error

    async def report() -> list:
        loop = asyncio.get_running_loop()
        seen = []
        loop.set_exception_handler(lambda loop, context: seen.append(context["exception"]))
        quiet_closed_pages()
        quiet_closed_pages()  # idempotent: one handler, not a chain of them
        closed, other = WebSocketClosedError(), RuntimeError("a bug")
        for error in (closed, other):
            task = loop.create_task(failing(error))
            await asyncio.wait([task])
            loop.call_exception_handler({"message": "Task exception was never retrieved", "exception": error,
                                         "future": task})
            task.exception()  # retrieved here: its collection reports nothing more
        loop.call_exception_handler({"message": "a write failed", "exception": closed})  # not a task's report
        return seen

    assert [type(error) for error in asyncio.run(report())] == [RuntimeError, WebSocketClosedError]
