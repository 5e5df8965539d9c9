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
"""

from __future__ import annotations

import multiprocessing
import threading
from dataclasses import dataclass

from .budget import Budget
from .forkserver import start_forkserver
from .uploads import format_bytes
from .worker import run_process, serve


class ServerBusy(RuntimeError):
    """The server runs as many workers, or as much memory, as its budget allows."""


@dataclass
class WorkerHandle:
    """One worker: its end of the pipe and its process (or thread)."""

    connection: object
    runner: object  # multiprocessing.Process or threading.Thread

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

    def stop(self, timeout: float = 2.0) -> None:
        """Ask the worker to close, then make sure it is gone (terminate, then kill, a process)."""
        try:
            self.connection.send(("close",))
        except (OSError, EOFError, ValueError):
            pass
        self.runner.join(timeout)
        if isinstance(self.runner, multiprocessing.process.BaseProcess):
            end_process(self.runner, timeout)
        self.connection.close()


def end_process(process: multiprocessing.process.BaseProcess, timeout: float) -> None:
    """Make sure ``process`` is gone: terminate it if it still runs, then kill it if it still does, waiting up to
    ``timeout`` seconds after each."""
    for signal_it in (process.terminate, process.kill):
        if process.is_alive():
            signal_it()
            process.join(timeout)


class Engine:
    """Starts workers and keeps the ledger of their memory estimates."""

    def __init__(self, budget: Budget | None = None, in_process: bool = False):
        self.budget = budget or Budget()
        self.in_process = in_process
        self._lock = threading.Lock()
        self._reserved: dict[int, int] = {}  # id of a client → bytes its run was estimated to hold
        self._workers: dict[int, WorkerHandle] = {}
        # The forkserver starts now (unless a served dashboard's warm-up started it already, ``dashboard.serving``)
        # and preloads beside the server, rather than in the first session's request (``model.forkserver``).
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
        """Stop ``owner``'s worker and free its booking."""
        with self._lock:
            handle = self._workers.pop(owner, None)
            self._reserved.pop(owner, None)
        if handle is not None:
            handle.stop()

    def shutdown(self) -> None:
        """Stop every worker (tests; a server's workers also end with their sessions or when idle)."""
        for owner in list(self._workers):
            self.release(owner)


_SHARED: Engine | None = None
_SHARED_LOCK = threading.Lock()


def shared_engine(budget: Budget | None = None) -> Engine:
    """The engine of this server process (created by the first call, with its ``budget``)."""
    global _SHARED
    with _SHARED_LOCK:
        if _SHARED is None:
            _SHARED = Engine(budget)
        return _SHARED
