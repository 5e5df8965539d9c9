"""A Tornado server made as ``panel serve --setup serve_setup.py`` makes its server (``allow_long_links``), on a
free port in a thread of its own, for the tests of what the server does before a request reaches the app."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
from collections.abc import Iterator
from types import SimpleNamespace

from tornado import web
from tornado.httpserver import HTTPServer
from tornado.ioloop import IOLoop

from dashboard.serving import allow_long_links


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def guarded_server(routes: list) -> Iterator[SimpleNamespace]:
    """Serve ``routes`` (Tornado's handlers); yields the server, its port and its IOLoop (``add_callback`` runs
    a function in its thread)."""
    port = _free_port()
    ready = threading.Event()
    served = SimpleNamespace(port=port)

    def serve():
        asyncio.set_event_loop(asyncio.new_event_loop())
        loop = IOLoop.current()
        allow_long_links()
        try:
            server = HTTPServer(web.Application(routes))
        finally:
            HTTPServer.configure(None)
        served.loop, served.server = loop, server
        server.listen(port, "127.0.0.1")
        ready.set()
        loop.start()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    assert ready.wait(30), "the test's server did not start"
    try:
        yield served
    finally:
        served.loop.add_callback(served.loop.stop)
        thread.join(30)
