"""The web server's own limits, set before it starts: a link too long for the app reaches the app.

A page's address carries its run (``?run=``, ``model.links``), and the
page's websocket handshake carries it once more, inside Bokeh's session
token. Tornado reads at most 64 kB of a request's head by default and drops
a longer one without an answer, so a link of some tens of kB gave a blank
page and one of 100 kB the browser's "This page isn't working": the app's
own check (``MAX_LINK_CHARS``) never ran. ``allow_long_links()`` raises
Tornado's limit above any address a browser sends (Chromium's longest is
2 MB), so that every link reaches the app, which refuses one too long with
its own message. ``make serve`` calls it through ``serve_setup.py``
(``panel serve --setup``); servers started from Python call it first.
"""

from __future__ import annotations

from tornado.httpserver import HTTPServer

#: Longest address a browser sends (Chromium's limit, bytes).
MAX_BROWSER_URL_BYTES = 2 * 2**20
#: Most bytes of a request's head (request line and headers) the server reads: the address, or the
#: session token that holds it again (zlib, then base64 twice: about twice as long), with room to spare.
MAX_HEADER_BYTES = 4 * MAX_BROWSER_URL_BYTES


def allow_long_links() -> None:
    """Let every HTTP server made from now on in this process read request heads of ``MAX_HEADER_BYTES``."""
    HTTPServer.configure(None, max_header_size=MAX_HEADER_BYTES)
