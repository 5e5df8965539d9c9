"""The run engine: starts each session's worker, in a process of its own or in-process, within the budget.

``Engine(budget, in_process=False)`` starts workers as processes forked from
a ``forkserver`` that has imported the samplers and targets once (a worker
then starts in tens of milliseconds), and ``Engine(in_process=True)`` runs
the very same worker loop in a thread of this process (notebooks, tests):
one protocol, one code path. The engine keeps the server's ledger: how many
workers live and how much memory their runs were estimated to hold;
``reserve`` refuses a run that does not fit, with "server busy" when the
server is full. ``shared_engine(budget)`` is the one engine of a served
dashboard (every session's script asks for it; the first call creates it).

Nothing here waits on the caller's thread (the server's event loop) for a
process to end: ``WorkerHandle.stop`` closes the pipe and hands the waiting
— a grace period, terminate, a second wait, kill — to a daemon thread
(``in_background``). The ledger lets go of a stopped worker at once, not when
its process is gone: the process is ending (it reads the closed pipe as its
end, or is killed within ``STOP_SECONDS`` twice), so counting it would only
refuse a class "server busy" for seconds after pages close, while the
memory it still holds meanwhile is one run's, for at most those seconds
(a worker that stopped answering is killed at once, ``Engine.end``).
"""

from __future__ import annotations

import multiprocessing
import os
import queue
import threading
from dataclasses import dataclass, field
from multiprocessing.connection import Connection

from .budget import Budget
from .forkserver import start_forkserver
from .uploads import format_bytes
from .worker import run_process, serve


#: How long a stopped worker or race gets to end by itself, and then after SIGTERM, before it is killed (seconds).
STOP_SECONDS = 2.0


class ServerBusy(RuntimeError):
    """The server runs as many workers, or as much memory, as its budget allows."""


@dataclass
class WorkerHandle:
    """One worker: its end of the pipe and its process (or thread). ``send`` hands a message to the handle's
    sending thread: pickling and writing a configuration that holds an uploaded model (up to hundreds of MB), or
    writing to a worker that stopped reading, never holds up the caller (the server's event loop)."""

    connection: object
    runner: object  # multiprocessing.Process or threading.Thread
    _outbox: queue.SimpleQueue = field(default_factory=queue.SimpleQueue, init=False, repr=False)

    def __post_init__(self) -> None:
        # The sending thread writes through a pipe end of its own (a duplicate): closing ours (``stop``) never
        # pulls it from under a write, and the worker reads its end's close once both are closed.
        in_background(self._send_all, Connection(os.dup(self.connection.fileno())), name="worker-sender")

    def send(self, message: tuple) -> None:
        """Send ``message`` to the worker without waiting; messages arrive in the order they were sent. A worker
        that is gone is found by the reader (``RunClient.poll``), not here."""
        self._outbox.put(message)

    def close(self) -> None:
        """Close our ends of the pipe: the reader's at once, the sending thread's once it has sent what it holds."""
        self._outbox.put(None)
        self.connection.close()

    def _send_all(self, pipe: Connection) -> None:
        """The sending thread: every message of the outbox in turn, until ``stop`` (None) or a broken pipe (the
        worker is gone); then its pipe end is closed."""
        try:
            while (message := self._outbox.get()) is not None:
                pipe.send(message)
        except OSError:
            pass
        finally:
            pipe.close()

    @property
    def alive(self) -> bool:
        return self.runner.is_alive()

    @property
    def exit_reason(self) -> str:
        """Why a worker process ended ('' while it lives, or for a thread)."""
        code = getattr(self.runner, "exitcode", None)
        if code is None or self.alive:
            return ""
        if code < 0:
            signal = {9: "SIGKILL — killed from outside or by the system for memory", 11: "SIGSEGV",
                      6: "SIGABRT", 15: "SIGTERM"}.get(-code, f"signal {-code}")
            return f"the run's worker process was ended ({signal})"
        return f"the run's worker process ended (exit code {code})"

    def activity(self) -> tuple[str, int] | None:
        """The state of the worker's process (of its main thread, the loop: "R" running or waiting for a processor,
        "S" sleeping, "D" waiting for the disk, "T" or "t" stopped…) and the processor time it has used so far (clock
        ticks), read from ``/proc``; None for a thread, or when it cannot be read (the process is gone)."""
        pid = getattr(self.runner, "pid", None)
        if pid is None:
            return None
        try:
            with open(f"/proc/{pid}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()  # after the command name, which may hold spaces
        except OSError:
            return None
        return fields[0], int(fields[11]) + int(fields[12])  # state, user and system time

    def stop(self, grace: float = STOP_SECONDS, patience: float = STOP_SECONDS) -> threading.Thread:
        """Close the pipe (the worker reads that as its end) and return at once; a daemon thread waits ``grace``
        seconds for a process to end by itself, terminates it, waits ``patience`` seconds, and kills it
        (``end_process``). Returns that thread. A thread worker ends by itself at its next look at the pipe."""
        self.close()
        if isinstance(self.runner, multiprocessing.process.BaseProcess):
            return in_background(end_process, self.runner, grace, patience, name="worker-reaper")
        return in_background(self.runner.join, name="worker-reaper")


def in_background(work, *args, name: str) -> threading.Thread:
    """Run ``work(*args)`` in a daemon thread of its own (waiting for a process, removing its files) and return it."""
    thread = threading.Thread(target=work, args=args, name=name, daemon=True)
    thread.start()
    return thread


def end_process(process: multiprocessing.process.BaseProcess, grace: float, patience: float) -> None:
    """Make sure ``process`` is gone: wait ``grace`` seconds for it to end by itself, terminate it, wait
    ``patience`` seconds more, then kill it and wait until it is gone. Blocks: call it through ``in_background``."""
    process.join(grace)
    if process.is_alive():
        process.terminate()
        process.join(patience)
    if process.is_alive():
        process.kill()  # SIGKILL also ends a stopped process (a SIGTERM waits until it is continued)
        process.join()


class Engine:
    """Starts workers and keeps the ledger of their memory estimates."""

    def __init__(self, budget: Budget | None = None, in_process: bool = False):
        self.budget = budget or Budget()
        self.in_process = in_process
        self._lock = threading.Lock()
        self._reserved: dict[int, int] = {}  # id of a client → bytes its run was estimated to hold
        self._workers: dict[int, WorkerHandle] = {}
        self._reapers: list[threading.Thread] = []  # threads making sure stopped workers are gone (``shutdown``)
        # The forkserver starts now (unless a served dashboard's warm-up started it already, ``dashboard.serving``)
        # and preloads beside the server, rather than in the first session's request (``engine.forkserver``).
        self._context = None if in_process else start_forkserver()

    # -- the ledger ----------------------------------------------------------------------------------------
    def _prune(self) -> None:
        """Forget workers that ended (their sessions keep their bookings until ``release``: they restart them)."""
        for owner in [owner for owner, handle in self._workers.items() if not handle.alive]:
            del self._workers[owner]

    @property
    def n_workers(self) -> int:
        with self._lock:
            self._prune()
            return len(self._workers)

    def reserve(self, owner: int, run_bytes: int) -> None:
        """Book ``run_bytes`` for ``owner``'s run (replacing its previous booking), or ``ServerBusy``."""
        with self._lock:
            self._prune()
            others = sum(size for who, size in self._reserved.items() if who != owner)
            if others + run_bytes > self.budget.total_bytes:
                raise ServerBusy(f"server busy: the runs of other sessions hold {format_bytes(others)} of the "
                                 f"server's {format_bytes(self.budget.total_bytes)}; this run needs "
                                 f"{format_bytes(run_bytes)}. Try again in a minute, or pick a smaller run.")
            self._reserved[owner] = run_bytes

    # -- workers -----------------------------------------------------------------------------------------------
    def launch(self, owner: int) -> WorkerHandle:
        """A new worker for ``owner`` (which has none alive), or ``ServerBusy``."""
        with self._lock:
            self._prune()
            if len(self._workers) >= self.budget.max_workers:
                raise ServerBusy(f"server busy: {len(self._workers)} sessions are running samplers, the most "
                                 f"this server allows. Try again in a minute.")
            if self._context is None:
                mine, theirs = multiprocessing.Pipe()
                runner = threading.Thread(target=serve, args=(theirs, self.budget.idle_seconds),
                                          name=f"worker-{owner:x}", daemon=True)
            else:
                mine, theirs = self._context.Pipe()
                runner = self._context.Process(target=run_process, name=f"sampler-worker-{owner:x}", daemon=True,
                                               args=(theirs, self.budget.run_bytes, self.budget.idle_seconds))
            runner.start()
            if self._context is not None:
                theirs.close()  # the worker holds its own copy; ours must go so that its death reads as EOF
            handle = WorkerHandle(mine, runner)
            self._workers[owner] = handle
            return handle

    def release(self, owner: int) -> None:
        """Stop ``owner``'s worker (without waiting for it, ``WorkerHandle.stop``) and free its place and booking."""
        with self._lock:
            handle = self._workers.pop(owner, None)
            self._reserved.pop(owner, None)
        if handle is not None:
            self._reaping(handle.stop())

    def end(self, owner: int, handle: WorkerHandle) -> None:
        """End ``owner``'s worker ``handle``, which stopped answering: its place is free at once and its process is
        killed without a grace period, in the background. ``owner`` keeps its booking (it restarts its run)."""
        with self._lock:
            if self._workers.get(owner) is handle:
                del self._workers[owner]
        self._reaping(handle.stop(grace=0.0, patience=0.0))

    def _reaping(self, reaper: threading.Thread) -> None:
        with self._lock:
            self._reapers = [thread for thread in self._reapers if thread.is_alive()] + [reaper]

    def shutdown(self) -> None:
        """Stop every worker and wait until their processes are gone (tests; a server's workers also end with
        their sessions or when idle)."""
        for owner in list(self._workers):
            self.release(owner)
        for reaper in list(self._reapers):
            reaper.join()


_SHARED: Engine | None = None
_SHARED_LOCK = threading.Lock()


def shared_engine(budget: Budget | None = None) -> Engine:
    """The engine of this server process (created by the first call, with its ``budget``)."""
    global _SHARED
    with _SHARED_LOCK:
        if _SHARED is None:
            _SHARED = Engine(budget)
        return _SHARED
