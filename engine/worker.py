"""The worker: one session's run, driven by messages, in a process of its own (or a thread, in-process).

The protocol (tuples on a ``multiprocessing`` pipe; ``engine.client``
is the other end):

client → worker
    ``("configure", request, RunConfig, max_particles)`` build a new run (the next snapshot holds everything)
    ``("start",)`` ``("pause",)`` ``("step", n)`` ``("speed", steps_per_second)`` ``("freeze",)``
    ``("display", Display)`` which chain (and slice, and running mean) the snapshots draw
    ``("replay", chain)`` pause, make one move and send it for slow motion
    ``("beta", β)`` go on at inverse temperature β from the chains' states (recorded in the config)
    ``("want",)`` send one snapshot as soon as something changed
    ``("ping",)`` the session is still there (sent when it has had nothing else to say for a while)
    the session closes its end of the pipe when it is done with the worker (the worker reads that as its end)
worker → client
    ``("info", RunInfo)`` a run was built; ``("refused", message, request)`` a command was refused and the
    run goes on (``request`` names a refused ``configure``, else None);
    ``("failed", message)`` the run stopped with an error; ``("snapshot", Snapshot, handled)`` with the
    number of commands (other than ``want`` and ``ping``) handled before it; ``("replay", MoveReplay)``;
    ``("status", run, Status)`` before a step that sets the run up (``RunSession.setting_up``: its first
    step, OPAD's enumeration), which may take seconds — sent whether or not a snapshot is wanted (it is tiny);
    ``("alive",)`` the heartbeat: sent whenever the worker has sent nothing else for ``ALIVE_SECONDS``

The first snapshot after a command is quick (``RunSession.snapshot``: the
status, new trace points and states, none of the slow parts), so a click's
effect never waits for the diagnostics of a worker that gets little CPU.

Flow control: the client asks for the next snapshot only when it has taken the
previous one, so at most one snapshot is in flight, and a slow browser
makes the worker send less often, never queue more — the trace buffer keeps
what happened meanwhile in bounded memory. Sends go through a thread of their
own, so that a large snapshot never stalls the sampler.

The heartbeat comes from that sending thread, not from the loop, so that it
goes on while the loop waits or is inside a long step (a Python step lets
the thread in every few milliseconds). A compiled kernel holds the
interpreter's lock for as long as it runs, so a very long kernel call
delays the heartbeat too: the client tells a busy worker from a hung one by
the processor time it uses (``RunClient.poll``).

In a process of its own (``run_process``), the worker builds its first run
and sends its first snapshot at the server's priority (a page loads as fast
on a busy server as on an idle one), then samples at niceness 19: the
server, at 0, outweighs 68 such workers on a core, so a class of 30 hardly
slows a click (the idle scheduling class would starve the workers whenever
another program keeps the cores busy). It has a hard address-space limit of
its start-up size plus the run budget (an allocation past it raises
``MemoryError``, which fails the run with a message, or ends only this
process), and ends when it has heard nothing from its session for
``idle_seconds``.
"""

from __future__ import annotations

import os

# One thread per worker for the numeric libraries: a server runs many workers on few cores.
# Set before numpy or torch is first imported in the worker's process (the forkserver preloads this module).
for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

import queue  # noqa: E402
import resource  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402
import traceback  # noqa: E402

import samplers  # noqa: E402,F401  (imported here so that a forkserver preloads every sampler and target)
import targets  # noqa: E402,F401
from samplers.common.warmup import kernels_ready, warm_up  # noqa: E402

from .uploads import format_bytes  # noqa: E402
from .config import RunConfig  # noqa: E402
from .session import RunSession  # noqa: E402
from .snapshot import Display  # noqa: E402

#: Longest wait for a command while nothing runs (seconds); bounds how late the idle check is.
IDLE_POLL_SECONDS = 0.25
#: Longest the worker stays silent while it lives (seconds): the heartbeat's period when it has nothing else to send.
ALIVE_SECONDS = 1.0
#: Niceness of a sampling worker: the lowest priority that still gets CPU when other programs keep every core busy
#: (the idle scheduling class would starve it then).
NICENESS = 19


def sample_at_low_priority() -> None:
    """Give every thread of this process the niceness ``NICENESS`` (on Linux a niceness is per thread).

    One way only: an unprivileged process cannot raise its priority again.
    """
    threads = os.listdir("/proc/self/task") if os.path.isdir("/proc/self/task") else ["0"]
    for thread in threads:
        try:
            os.setpriority(os.PRIO_PROCESS, int(thread), NICENESS)
        except (ProcessLookupError, PermissionError):
            pass  # a thread that just ended


def describe(error: BaseException) -> str:
    """A one-line reason for a page, never a traceback or file contents: a ``ValueError``'s message as it is (the
    library's refusals of a setting are written for a reader), any other exception's type and message."""
    if isinstance(error, MemoryError):
        return "the run ran out of its memory budget (MemoryError); use fewer chains or a smaller model"
    text = str(error).strip().splitlines()[0] if str(error).strip() else ""
    text = text if len(text) <= 300 else text[:300] + "…"
    if isinstance(error, ValueError) and text:
        return text
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


class Worker:
    """The loop: read commands, advance the run a chunk at a time, answer each ``want`` with a snapshot."""

    def __init__(self, connection, idle_seconds: float, after_first_snapshot=None):
        self.connection = connection
        self.idle_seconds = idle_seconds
        self._after_first_snapshot = after_first_snapshot
        self.session: RunSession | None = None
        self.display = Display()
        self._runs = 0
        self._handled = 0  # commands other than want and ping, in order of arrival
        self._answered = 0  # of them, those handled before the latest snapshot
        self._wanted = False
        self._changed = False
        self._everything = False
        self._outbox: queue.Queue = queue.Queue()
        self._sender = threading.Thread(target=self._send_loop, name="worker-sender", daemon=True)

    # -- sending ----------------------------------------------------------------------------------------
    def _send_loop(self) -> None:
        """Send what the loop put in the outbox, and ``("alive",)`` whenever it put nothing for ``ALIVE_SECONDS``."""
        while True:
            try:
                message = self._outbox.get(timeout=ALIVE_SECONDS)
            except queue.Empty:
                message = ("alive",)
            if message is None:
                return
            try:
                self.connection.send(message)
            except (BrokenPipeError, EOFError, OSError):
                return

    def send(self, *message) -> None:
        self._outbox.put(message)

    # -- commands ----------------------------------------------------------------------------------------
    def handle(self, command: tuple) -> None:
        """Carry out one command."""
        name, *args = command
        if name == "want":
            self._wanted = True
            return
        if name == "ping":
            return
        self._changed = True
        self._handled += 1
        if name == "configure":
            self._configure(*args)
        elif name == "display":
            self.display, self._everything = args[0], True
            if self.session is not None:
                self.session.follow(self.display)
        elif self.session is None:
            self.send("refused", "no run has been built yet", None)
        elif name == "replay":
            self._replay(*args)
        elif name == "beta":
            try:
                self.session.set_beta(*args)
            except ValueError as error:
                self.send("refused", str(error), None)
        else:
            {"start": self.session.start, "pause": self.session.pause, "step": self.session.step,
             "speed": self.session.set_speed, "freeze": self.session.freeze}[name](*args)

    def _configure(self, request: int, config: RunConfig, max_particles: int) -> None:
        if not kernels_ready():  # not forked from a warm forkserver: compile (or load) the kernels first
            self.send("compiling")
            warm_up()
        try:
            session = RunSession(config, self._runs + 1, request, max_particles)
        except Exception as error:  # noqa: BLE001 — any failure to build is the user's to read, the run goes on
            self.send("refused", describe(error), request)
            return
        self._runs += 1
        self.session, self._everything = session, True
        session.follow(self.display)
        self.send("info", session.info())

    def _replay(self, chain: int) -> None:
        try:
            self.send("replay", self.session.replay_next_move(chain))
        except ValueError as error:
            self.send("refused", str(error), None)

    # -- the loop ------------------------------------------------------------------------------------------
    def run(self) -> None:
        self._sender.start()
        heard = time.monotonic()
        try:
            while True:
                session = self.session
                busy = session is not None and session.busy
                wait = 0.0 if busy and session.pace_wait() <= 0 else (
                    min(session.pace_wait(), 0.05) if busy else IDLE_POLL_SECONDS)
                if self.connection.poll(wait):
                    while self.connection.poll(0):
                        self.handle(self.connection.recv())
                    heard = time.monotonic()
                elif time.monotonic() - heard > self.idle_seconds:
                    return
                self._advance()
                self._answer()
        except (EOFError, OSError):
            return  # the session closed its end of the pipe, or is gone
        finally:
            self._outbox.put(None)
            self._sender.join(timeout=5)

    def _advance(self) -> None:
        session = self.session
        if session is None or not session.busy or session.pace_wait() > 0:
            return
        if session.setting_up:  # a step that may take seconds: the page hears what it does, past flow control
            self.send("status", session.run, session.status())
        try:
            session.advance()
        except Exception as error:  # noqa: BLE001 — a failing run stops with its reason; the worker goes on
            session.failed = describe(error)
            session.pause()
            self.send("failed", session.failed)
        self._changed = True

    def _answer(self) -> None:
        """Send the snapshot asked for, once there is something new (quick when it answers a command)."""
        if not (self._wanted and self._changed and self.session is not None):
            return
        try:
            snapshot = self.session.snapshot(self.display, everything=self._everything,
                                             quick=self._handled > self._answered)
        except Exception as error:  # noqa: BLE001
            self.session.failed = describe(error)
            self.session.pause()
            self.send("failed", self.session.failed)
            return
        self._wanted = self._everything = False
        self._changed = self.session.unsent
        self._answered = self._handled
        self.send("snapshot", snapshot, self._handled)
        if self._after_first_snapshot is not None:
            self._after_first_snapshot()
            self._after_first_snapshot = None


def serve(connection, idle_seconds: float, after_first_snapshot=None) -> None:
    """Run a worker on ``connection`` until its session closes its end, or is gone, or the worker idles out."""
    Worker(connection, idle_seconds, after_first_snapshot).run()


def limit_memory(run_bytes: int) -> None:
    """Let this process take at most ``run_bytes`` more address space than it has now (a hard limit: beyond it,
    allocations raise ``MemoryError``)."""
    with open("/proc/self/statm") as statm:
        limit = int(statm.read().split()[0]) * resource.getpagesize() + run_bytes
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def run_process(connection, run_bytes: int, idle_seconds: float) -> None:
    """Entry point of a worker process: hard memory limit, then ``serve`` (low priority after the first snapshot)."""
    limit_memory(run_bytes)
    try:
        serve(connection, idle_seconds, sample_at_low_priority)
    except MemoryError:
        try:
            connection.send(("failed", f"the worker exceeded its memory limit ({format_bytes(run_bytes)} for a run)"))
        except (OSError, EOFError):
            pass
    except Exception:  # noqa: BLE001 — last resort: say why in the server log, not with the user's data
        traceback.print_exc(limit=5)
