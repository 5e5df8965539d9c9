"""Set-up of the dashboard's web server before it starts: long links reach the app, and the server starts warm.

A page's address carries its run (``?run=``, ``engine.links``), and the
page's websocket handshake carries it once more, inside Bokeh's session
token. Tornado reads at most 64 kB of a request's head by default and drops
a longer one without an answer, so a link of some tens of kB gave a blank
page and one of 100 kB the browser's "This page isn't working": the app's
own check (``MAX_LINK_CHARS``) never ran. ``allow_long_links()`` raises
Tornado's limit above any address a browser sends (Chromium's longest is
2 MB), so that every link reaches the app, which refuses one too long with
its own message. It also puts ``LongLinkGuard`` in front of the app: a
request whose link is longer than a link is read (``engine.links``) gets a
redirect to the app's address that carries only the link's length, so no
page is built around 2 MB of query (that cost every other session 1.2 s);
the page it leads to shows the default run and why. Every other request for
the app's page waits there for its turn (``turns.TURNS.admit_page``: one
page's document built at a time, first come first served), so that a class
opening the link at once gets its pages as they are built, not all at the
end. ``make serve`` calls it
through ``serve_setup.py`` (``panel serve --setup``); servers started from
Python call it first.

``warm_up()`` does, once and before the server accepts a connection, what
the first session would otherwise do in its own request, on the server's
event loop: start the workers' forkserver (``engine.forkserver``; it imports
the samplers, torch and arviz-stats and loads the compiled kernels in a
process of its own, while this one goes on), import the dashboard (Panel's and
Bokeh's modules and the samplers, without torch or arviz-stats, which only
workers use: about a second), and build one explorer offline, without a
page: its run, in a worker forked from that forkserver, its views from the
run's first snapshot, and its template's Bokeh document, which the first
page would otherwise pay for with the first-use costs of every model class
it holds. Without it the first session imported all of that on the event
loop, then its worker's launch waited there for the forkserver's preload
(every other page with it): the first page showed its Start button 5.6 s
after it was opened on a quiet 2-core machine, 25 s when the kernels had to
be compiled, 41 s on a loaded machine. With it the first page is as quick as
any later one, about 1 s (``python -m benchmarks classroom --sessions 0``
prints both). ``serve_setup.py`` runs it after ``allow_long_links()``; the
server then answers a few seconds later (a minute when it compiles), warm.

Last, the warm-up freezes what the server holds then (``gc.freeze``: the
modules, classes and caches every session shares, about 300,000 objects),
so that the full garbage collection Panel runs after every session's end
(``panel.io.document._garbage_collect``, on the event loop) scans only the
sessions' own objects: it took 0.26–0.41 CPU s on a warm server beside two
busy processes, and nothing measurable once frozen. What is frozen is never
collected, so the warm-up collects its own garbage first.
"""

from __future__ import annotations

import gc
import logging
import time

from urllib.parse import urlsplit

from tornado import httputil
from tornado.httpserver import HTTPServer

from engine.links import long_link_redirect

from .turns import TURNS

#: Longest address a browser sends (Chromium's limit, bytes).
MAX_BROWSER_URL_BYTES = 2 * 2**20
#: Most bytes of a request's head (request line and headers) the server reads: the address, or the
#: session token that holds it again (zlib, then base64 twice: about twice as long), with room to spare.
MAX_HEADER_BYTES = 4 * MAX_BROWSER_URL_BYTES


#: The app's page (Panel names its route after the script, app.py): a request for it builds a page's document.
PAGE_PATH = "/app"


class LongLinkGuard(httputil.HTTPMessageDelegate):
    """One request on its way to the app: one whose link is too long to read is answered here with a redirect
    (``engine.links.long_link_redirect``) as soon as its head has arrived; one for the app's page goes on to
    ``app`` in its turn (``TURNS.admit_page``); every other goes on at once."""

    def __init__(self, app: httputil.HTTPMessageDelegate, connection: httputil.HTTPConnection):
        self.app = app
        self.connection = connection
        self.answered = False

    def headers_received(self, start_line, headers):
        location = long_link_redirect(start_line.path) if start_line.method == "GET" else None
        if location is None:
            if start_line.method == "GET" and urlsplit(start_line.path).path.rstrip("/") == PAGE_PATH:
                return self._in_turn(start_line, headers)
            return self.app.headers_received(start_line, headers)
        self.answered = True
        self.connection.write_headers(httputil.ResponseStartLine("HTTP/1.1", 303, "See Other"),
                                      httputil.HTTPHeaders({"Location": location, "Content-Length": "0"}))
        self.connection.finish()
        return None

    async def _in_turn(self, start_line, headers) -> None:
        """Hand a page's request to the app when its document may be built (Tornado reads nothing more of the
        connection until this returns)."""
        await TURNS.admit_page()
        await _maybe(self.app.headers_received(start_line, headers))

    def data_received(self, chunk: bytes):
        return None if self.answered else self.app.data_received(chunk)

    def finish(self) -> None:
        if not self.answered:
            self.app.finish()

    def on_connection_close(self) -> None:
        if not self.answered:
            self.app.on_connection_close()


async def _maybe(result) -> None:
    """Await what a delegate returned, if it returned something to await."""
    if result is not None:
        await result


class GuardedHTTPServer(HTTPServer):
    """Tornado's HTTP server with every request passing ``LongLinkGuard`` first."""

    def start_request(self, server_conn, request_conn) -> httputil.HTTPMessageDelegate:
        return LongLinkGuard(super().start_request(server_conn, request_conn), request_conn)


def allow_long_links() -> None:
    """Let every HTTP server made from now on in this process read request heads of ``MAX_HEADER_BYTES``, and
    answer a link too long to read with a redirect (``LongLinkGuard``)."""
    HTTPServer.configure(GuardedHTTPServer, max_header_size=MAX_HEADER_BYTES)


#: Longest wait for the warm-up's run (seconds): its worker waits for the forkserver, which compiles the samplers'
#: kernels when their disk cache is stale (after an edit: tens of seconds on a slow machine).
WARM_UP_TIMEOUT = 300.0

log = logging.getLogger(__name__)


def warm_up(timeout: float = WARM_UP_TIMEOUT) -> dict[str, float]:
    """Start the forkserver and build one explorer offline (module docstring); the seconds each phase took.

    Runs before the server starts, so nothing here competes with a page. The
    offline explorer's run and worker are its own (a private engine, shut
    down at the end), so the server's budget and its ledger start empty. A
    warm-up that fails is logged and the server starts all the same: the
    first page then pays what the warm-up did not.
    """
    seconds: dict[str, float] = {}
    started = time.perf_counter()

    def lap(phase: str) -> None:
        seconds[phase] = time.perf_counter() - started - sum(seconds.values())

    from engine.forkserver import start_forkserver

    start_forkserver()  # first: it preloads in its own process while this one imports
    lap("forkserver started")
    try:
        from bokeh.document import Document
        from panel.io.document import _cleanup_doc  # what `panel serve --warm` frees a warm-up document with

        from engine.engine import Engine

        from .explorer import Explorer

        lap("imports")
        engine = Engine()
        try:
            explorer = Explorer(engine=engine)
            # The run is built in a worker forked from the forkserver (so this waits for its preload), and its
            # first snapshot builds the views (``Explorer._on_info``) and is drawn into them.
            if not explorer.client.wait_for(lambda client: client.info is not None and not client.awaiting, timeout):
                raise TimeoutError(f"no run within {timeout:.0f} s: {explorer.client.error or 'no answer'}")
            lap("run and views")
            explorer.flush()
            document = Document()
            explorer.template().server_doc(document)
            _cleanup_doc(document)
            lap("page document")
            explorer.close()
        finally:
            engine.shutdown()  # the warm-up's worker, also after an explorer that failed half-way
    except Exception as error:  # noqa: BLE001 — a failed warm-up must not keep the server from starting
        log.warning("dashboard warm-up failed (the first page will be slower): %s: %s", type(error).__name__, error)
    gc.collect()  # the warm-up's own garbage, before what is left is frozen
    gc.freeze()
    lap("objects frozen")
    seconds["total"] = time.perf_counter() - started
    return seconds
