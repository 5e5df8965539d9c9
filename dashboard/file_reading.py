"""Uploaded files read off the server's event loop, and every refusal of one said in the page.

A file at the size limit takes seconds to parse and check. ``off_the_loop`` reads it elsewhere, so that
the server answers every other session meanwhile: in a reader thread, or — with ``process=True``, for the
readers of ``engine.reading``, which must not import Panel — in a reader process. A thread is not enough
for parsers that hold the GIL (``json.loads``, pure-Python parsers): while a 13 MB configuration or a
4.5 MB ``.uai`` was parsed in a thread, a click of another page took 1.4–2.6 s in a browser, and a
simulated click (50 hand-overs of the GIL) 0.3–0.5 s; in a process, the event loop only waits on a future.
The reader processes (at most ``READER_PROCESSES``) are started on first use from the workers' forkserver
(``engine.forkserver``), which has imported the engine, so they start warm; served sessions use them, and
a notebook or a test (``Engine(in_process=True)``) reads in a thread of its own process.

A hostile file may break a library's reader in ways nobody listed: the readers
(``engine.reading.refused_unless_read``) turn whatever they raise into a ``ValueError`` that says why. A file
the browser refused for its size never reaches the server: ``report_refusals`` says so. Each refusal reaches
the page through ``RunClient.error`` (shown as plain text: it quotes the file's name).
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from engine.client import RunClient
from engine.forkserver import start_forkserver
from engine.uploads import format_bytes

from .views.upload import LimitedFileInput

__all__ = ["off_the_loop", "report_refusals"]

#: Threads that read uploaded files and configurations, and hand files to the reader processes: two, so that a
#: class's uploads queue instead of sharing the GIL widely.
_READERS = ThreadPoolExecutor(max_workers=2, thread_name_prefix="file-reader")
#: Most reader processes.
READER_PROCESSES = 2
_processes: ProcessPoolExecutor | None = None


def _submitted(function, *args):
    """``function(*args)`` submitted to the reader processes, started on first use (in a reader thread: starting
    a process waits for the forkserver)."""
    global _processes
    if _processes is None:
        _processes = ProcessPoolExecutor(max_workers=READER_PROCESSES, mp_context=start_forkserver())
    return _processes.submit(function, *args)


async def off_the_loop(function, *args, process: bool = False):
    """``function(*args)`` in a reader thread, or in a reader process with ``process``; meanwhile the server's
    event loop answers every other session. A reader process that died (killed, out of memory) is refused with
    a ``ValueError``, and the next file gets fresh processes."""
    global _processes
    loop = asyncio.get_running_loop()
    if not process:
        return await loop.run_in_executor(_READERS, function, *args)
    try:
        return await asyncio.wrap_future(await loop.run_in_executor(_READERS, _submitted, function, *args))
    except BrokenProcessPool:
        broken, _processes = _processes, None
        if broken is not None:
            broken.shutdown(wait=False)
        raise ValueError("the process reading the file stopped before it was read; try again") from None


def report_refusals(file_input: LimitedFileInput, client: RunClient) -> None:
    """Have ``client.error`` say so whenever ``file_input`` refuses a file in the browser for its size."""
    def refused(event) -> None:
        refused = event.new
        client.error = (f"{refused['name']} is {format_bytes(refused['size'])}; files up to "
                        f"{format_bytes(event.obj.max_bytes)} are accepted here. It was not sent.")

    file_input.param.watch(refused, "refused")
