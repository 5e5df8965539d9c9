"""Uploaded files read off the server's event loop, and every refusal of one said in the page.

A file at the size limit takes a few seconds to parse and check: ``off_the_loop`` reads it in a thread, so
that the server answers every other session meanwhile. A hostile file may break a library's reader in ways
nobody listed: ``refused_unless_read`` turns whatever it raises into a ``ValueError`` that says why. A file
the browser refused for its size never reaches the server: ``report_refusals`` says so. Each refusal reaches
the page through ``RunClient.error`` (shown as plain text: it quotes the file's name).
"""

from __future__ import annotations

import asyncio
import functools
from concurrent.futures import ThreadPoolExecutor

from engine.client import RunClient
from engine.uploads import excerpt, format_bytes

from .views.upload import LimitedFileInput

#: Threads that read uploaded files and configurations, so that a 14 MB file never stalls the server's event loop
#: (a few seconds of parsing and checking); two, so that a class's uploads queue instead of sharing the GIL widely.
_READERS = ThreadPoolExecutor(max_workers=2, thread_name_prefix="file-reader")


async def off_the_loop(function, *args):
    """``function(*args)`` in a reader thread: meanwhile the server's event loop answers every other session."""
    return await asyncio.get_running_loop().run_in_executor(_READERS, function, *args)


def refused_unless_read(read):
    """``read`` (a reader of an uploaded file) with every error it raises a ``ValueError`` that says why: a
    hostile file may break a library's reader in ways nobody listed, and its refusal still reaches the page."""
    @functools.wraps(read)
    def reading(*args):
        try:
            return read(*args)
        except ValueError:
            raise
        except Exception as error:
            raise ValueError(f"the file could not be read ({type(error).__name__}: {excerpt(str(error))})") from error

    return reading


def report_refusals(file_input: LimitedFileInput, client: RunClient) -> None:
    """Have ``client.error`` say so whenever ``file_input`` refuses a file in the browser for its size."""
    def refused(event) -> None:
        refused = event.new
        client.error = (f"{refused['name']} is {format_bytes(refused['size'])}; files up to "
                        f"{format_bytes(event.obj.max_bytes)} are accepted here. It was not sent.")

    file_input.param.watch(refused, "refused")
