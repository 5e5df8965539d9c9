"""A quiet log for a class: the reports of writes to pages that had closed are dropped.

``quiet_closed_pages()`` keeps the server's log free of the tracebacks of pages that
closed while the server wrote to them. Panel writes a document's changes as
one Tornado write per part of a message and awaits them later; when a page
has gone, the first write finds its socket reset, the next one raises at
once, and Panel drops the writes it had already started, unawaited: each
ended with ``WebSocketClosedError`` and was logged as "Task exception was
never retrieved" with a traceback (86 in a class's log). No check before a
flush avoids it — the socket is found closed inside the write — so the
served sessions' event loop drops exactly those reports, and reports every
other exception as before.
"""

from __future__ import annotations

import asyncio

from tornado.iostream import StreamClosedError
from tornado.websocket import WebSocketClosedError


def _is_write_to_closed_page(context: dict) -> bool:
    """Whether an event loop's exception report is that of a write to a page that had closed, never awaited."""
    future = context.get("future")
    return (isinstance(context.get("exception"), (WebSocketClosedError, StreamClosedError))
            and future is not None and future.done() and not future.cancelled())


def quiet_closed_pages() -> None:
    """Make the running event loop (the server's) drop the reports of writes to closed pages (module docstring),
    and pass every other report on to the handler it had; idempotent. Called as a served session starts."""
    loop = asyncio.get_running_loop()
    previous = loop.get_exception_handler()
    if getattr(previous, "drops_closed_pages", False):
        return

    def handler(loop: asyncio.AbstractEventLoop, context: dict) -> None:
        if _is_write_to_closed_page(context):
            return
        if previous is None:
            loop.default_exception_handler(context)
        else:
            previous(loop, context)

    handler.drops_closed_pages = True
    loop.set_exception_handler(handler)
