"""The session's side of a run: commands to its worker, snapshots back, and what the page shows of it.

``RunClient`` is what the controls and the explorer talk to (model code, no
Panel import). ``apply(config)`` checks the configuration against the
server's budget before anything is allocated (``engine.budget``), books its
memory with the engine and sends it to the session's worker, which builds it
and answers with a ``RunInfo`` (then ``info`` and ``config`` change) or with
the reason it refused (then ``error`` says why, and the previous run goes
on). ``start``, ``pause``, ``step``, ``reset``, ``set_speed``, ``freeze``,
``show`` and ``replay`` are messages; nothing waits for the worker.
``poll()`` — the explorer calls it from its periodic callback — takes what
the worker sent and asks for the next snapshot (one in flight at most).

A worker that dies (killed for memory, a crash) takes only its own run with
it: ``error`` says why, and the next Start, Step or Reset starts a new
worker with the last configuration that was built. So does a worker process
that stops answering (stopped from outside, stuck): it sends at least a
heartbeat every ``worker.ALIVE_SECONDS``, and when ``poll`` has heard
nothing for ``SILENT_SECONDS`` it looks at the process — one that is
stopped, or that has neither used the processor nor waited for one for
``SILENT_SECONDS`` more, is ended at once without anyone waiting for it
(``Engine.end``), and ``error`` says so. One that computes (or would, on a
busy server) is inside a long step — a compiled kernel holds the
interpreter's lock, so its heartbeat waits — and goes on. Nothing here waits
for a process: ``close`` returns at once (``WorkerHandle.stop``).
"""

from __future__ import annotations

import itertools
import time
from dataclasses import fields, replace

import numpy as np
import param

from .budget import Estimate, check
from .config import CONFIG_KEYS, RunConfig
from .engine import Engine, ServerBusy, WorkerHandle
from .snapshot import Display, RunInfo, Snapshot, Status

_owners = itertools.count(1)
#: Longest silence towards the worker (seconds) before ``poll`` says the session is still there.
HEARTBEAT_SECONDS = 5.0
#: Silence from a worker process (seconds) after which ``poll`` looks whether it still works (module docstring):
#: five heartbeats missed. A stopped worker is ended then, one stuck otherwise within twice this.
SILENT_SECONDS = 5.0
#: Longest wait for the exit code of a worker whose end of the pipe closed (seconds): it is already ending.
EXITING_SECONDS = 1.0


def merged_history(history: dict | None, snapshot: Snapshot) -> dict | None:
    """The whole decimated history after ``snapshot`` (bounded: decimation sends a full history)."""
    if snapshot.full_history is not None:
        return snapshot.full_history
    if snapshot.new_history is None or history is None:
        return history
    return {key: np.concatenate([history[key], snapshot.new_history[key]]) for key in history}


def latest_of(latest: Snapshot | None, snapshot: Snapshot) -> Snapshot:
    """Every field's latest value after ``snapshot`` (a snapshot's ``None`` fields are unchanged since the one before:
    the run's state is the latest non-``None`` value of each; its history is ``merged_history``'s)."""
    if latest is None:
        return snapshot
    return replace(latest, **{field.name: value for field in fields(snapshot)
                              if (value := getattr(snapshot, field.name)) is not None})


class RunClient(param.Parameterized):
    """One session's run, seen from the server: configuration, status, errors, and the latest snapshots."""

    config = param.ClassSelector(class_=RunConfig, doc="The configuration of the current run (as built).")
    info = param.ClassSelector(class_=RunInfo, default=None, doc="What the current run is (None until built).")
    status = param.ClassSelector(class_=Status, default=Status(), doc="Where the current run stands.")
    error = param.String("", doc="Why the last request was refused or the run stopped ('' when all is well).")
    building = param.Boolean(False, doc="A configuration was sent and the worker has not answered yet.")
    compiling = param.Boolean(False, doc="The worker is compiling the samplers' kernels before it builds the run.")
    frozen = param.Dict(default=None, allow_None=True,
                        doc="Once adaptation stopped: the step and the sampler parameters of the frozen kernel.")
    replay = param.Parameter(default=None, doc="The latest slow-motion move (a MoveReplay).")
    commands = param.Integer(0, doc="Commands sent so far (a page may look for the answer sooner after one).")

    def __init__(self, engine: Engine, config: RunConfig | None = None, **params):
        super().__init__(**params)
        self.engine = engine
        self.owner = next(_owners)
        self._handle: WorkerHandle | None = None
        self._requests: dict[int, RunConfig] = {}
        self._serial = itertools.count(1)
        self._last_request = 0  # the newest request number handed out
        self._error_after = 0  # the newest request when ``error`` was last set: a build older than it keeps it
        self.param.watch(self._note_error, "error")
        self._wanting = False
        self._sent = 0  # commands sent to the current worker (other than want and ping)
        self._answered = 0  # of them, those the worker had handled when it took the latest snapshot
        self._run_drawn = False  # a snapshot of the current run has arrived
        self._said_at = time.monotonic()
        self._heard_at = time.monotonic()  # when the current worker last sent anything
        self._working: tuple[int, float] | None = None  # a silent worker's processor time, and when it last grew
        self._closed = False
        self._display = Display()
        self.history: dict | None = None
        self._latest: Snapshot | None = None  # the current run's latest of every field (``so_far``)
        self._first_run(config)

    @property
    def awaiting(self) -> bool:
        """Something the page waits for is due: a run being built, its first snapshot, or a command's effect
        (a snapshot taken after the worker handled every command sent to it)."""
        return self.building or (self.info is not None and not self.drawn) or self._answered < self._sent

    @property
    def drawn(self) -> bool:
        """Whether a snapshot of the current run has arrived (until then ``status`` is not yet the run's)."""
        return self.info is not None and self._run_drawn

    def so_far(self) -> Snapshot | None:
        """The current run so far as one snapshot (None before its first): the latest value of every field and the
        whole (decimated) history, which is what a view made after the run's first snapshots draws to catch up."""
        if self._latest is None:
            return None
        return replace(self._latest, new_history=None, full_history=self.history)

    @property
    def requested(self) -> RunConfig:
        """The configuration asked for last (built, or being built)."""
        return self._requests[max(self._requests)] if self._requests else self.config or RunConfig()

    # -- requests ------------------------------------------------------------------------------------------
    def _first_run(self, config: RunConfig | None) -> None:
        """Ask for ``config``'s run (the default's when None); when it is refused (over the budget), for the default
        run, with the reason in ``error`` — a page never waits for a run nobody builds."""
        if self.apply(config or RunConfig()) or config is None:
            return
        refusal = self.error
        if self.apply(RunConfig()):
            self.error = f"{refusal}. Here is the default run instead."

    def apply(self, config: RunConfig, estimate: Estimate | None = None) -> bool:
        """Ask for a fresh run of ``config``; False (and ``error`` says why) when it is refused at once.
        ``estimate``: ``budget.check(config, …)`` when the caller computed it already, off the event loop (an
        uploaded network's estimate reads every factor of its file: seconds for 350k factors)."""
        try:
            estimate = estimate or check(config, self.engine.budget)
            self.engine.reserve(self.owner, estimate.total)
            request = self._next_request()
            self._requests[request] = config
            self._send("configure", request, config, estimate.opad_particles)
        except (ValueError, ServerBusy) as error:
            self.error = str(error)
            return False
        self.building = True
        return True

    def reset(self) -> None:
        """The current configuration again from its seed (the same run again); after β was changed live, a run
        from the start at the current β."""
        if self.config is None:
            return
        if not self.config.beta_changes:
            self.apply(self.config)
            return
        beta = self.config.beta_changes[-1][1]
        values = {key: getattr(self.config, key) for key in CONFIG_KEYS}
        self.apply(RunConfig(**{**values, "target_params": {**self.config.target_params, "beta": beta},
                                "beta_changes": []}))

    def set_beta(self, beta: float) -> None:
        """Go on at inverse temperature β from the chains' current states (targets with a β)."""
        self._command("beta", float(beta))

    def start(self) -> None:
        self._run_command("start")

    def pause(self) -> None:
        self._run_command("pause")

    def step(self, n: int = 1) -> None:
        """Take ``n`` more steps, then stop."""
        self._run_command("step", int(n))

    def set_speed(self, steps_per_second: float) -> None:
        """Change the speed cap live (0 = as fast as possible); the run goes on."""
        if self.config is not None:
            self.config.steps_per_second = steps_per_second
        self._command("speed", float(steps_per_second))

    def freeze(self) -> None:
        """Stop adapting now (learning g, tuning the walks): exact MCMC from here on."""
        self._command("freeze")

    @property
    def display(self) -> Display:
        """What the snapshots draw (the last ``show``)."""
        return self._display

    def show(self, display: Display) -> None:
        """Which chain (slice, running mean) the snapshots draw, and whether the inspector follows its moves."""
        self._display = display
        self._command("display", display)

    def _fresh_display(self) -> None:
        """Draw a new run as a fresh page draws it: chain 0, the first slice, no running mean (the inspector goes on
        following moves while its card is open). Sent before the worker is asked for the new run's first
        snapshot, so that snapshot already draws it."""
        fresh = Display(inspect=self._display.inspect)
        if fresh != self._display:
            self.show(fresh)

    def replay_move(self, chain: int) -> None:
        """Pause, make one move and send it frame by frame (arrives in ``replay``)."""
        self._command("replay", int(chain))

    def _command(self, *message) -> bool:
        """Send ``message``; False (and ``error`` says why) when there is no worker for it."""
        try:
            self._send(*message)
        except ServerBusy as error:
            self.error = str(error)
            return False
        return True

    def _run_command(self, *message) -> None:
        """Start, Pause or Step: once sent, an earlier refusal is no longer news (a refusal of this one is)."""
        if self._command(*message):
            self.error = ""

    def _send(self, *message) -> None:
        """Send to the worker, starting one (with the last built configuration) when there is none."""
        if self._closed:
            raise ServerBusy("this session's run has been closed; reload the page for a new one")
        self._said_at = time.monotonic()
        if self._handle is None or not self._handle.alive:
            self._handle, self._wanting, self._sent, self._answered = self.engine.launch(self.owner), False, 0, 0
            self._heard_at, self._working = time.monotonic(), None
            if message[0] != "configure" and self.config is not None:
                request = self._next_request()
                self._requests[request] = self.config
                estimate = check(self.config, self.engine.budget)
                self._to_worker(("configure", request, self.config, estimate.opad_particles))
                self.building = True
            self._to_worker(("display", self._display))
        self._to_worker(message)
        self.commands += 1

    def _to_worker(self, message: tuple) -> None:
        self._handle.send(message)  # without waiting (``WorkerHandle.send``); a lost worker is found by ``poll``
        self._sent += 1

    # -- answers ---------------------------------------------------------------------------------------------
    def poll(self) -> list[Snapshot]:
        """Take everything the worker sent (snapshots in order) and ask for the next snapshot; end a worker that
        stopped answering (module docstring)."""
        snapshots = []
        handle = self._handle
        if handle is None:
            return snapshots
        try:
            heard = False
            while handle.connection.poll(0):
                kind, *payload = handle.connection.recv()
                heard = True
                snapshot = self._receive(kind, payload)
                if kind == "info":  # views now show the new run; snapshots of the old one are void. A later run
                    snapshots.clear()  # waits for the next poll: one page update never builds views for two runs
                    break  # (their models would reach the page half-described: "reference … isn't known")
                if snapshot is not None:
                    snapshots.append(snapshot)
            if not handle.alive:
                raise EOFError
            now = time.monotonic()
            if heard:
                self._heard_at, self._working = now, None
            elif now - self._heard_at > SILENT_SECONDS and self._stopped_answering(handle, now):
                self.engine.end(self.owner, handle)
                self._handle = None
                self._failed(f"the run's worker has not answered for {now - self._heard_at:.0f} s, so it was ended")
                return snapshots
            if not self._wanting:
                handle.send(("want",))
                self._wanting, self._said_at = True, time.monotonic()
            elif time.monotonic() - self._said_at > min(HEARTBEAT_SECONDS, self.engine.budget.idle_seconds / 4):
                handle.send(("ping",))
                self._said_at = time.monotonic()
        except (EOFError, OSError):
            self._lost()
        return snapshots

    def _stopped_answering(self, handle: WorkerHandle, now: float) -> bool:
        """Whether a worker that has been silent for ``SILENT_SECONDS`` has stopped answering: its process is stopped,
        or its loop has neither run nor waited for a processor, and it has used no processor time, for
        ``SILENT_SECONDS`` more. A process busy in a long step computes, or waits its turn on a busy server; a
        thread worker (in-process: it cannot be ended) is never judged."""
        activity = handle.activity()
        if activity is None:
            return False  # a thread, or a process that is gone (``alive`` says so at the next poll)
        state, processor_time = activity
        if state in ("T", "t"):
            return True
        if self._working is None or state == "R" or processor_time != self._working[0]:
            self._working = (processor_time, now)
            return False
        return now - self._working[1] > SILENT_SECONDS

    def _next_request(self) -> int:
        self._last_request = next(self._serial)
        return self._last_request

    def _note_error(self, event) -> None:
        self._error_after = self._last_request

    def _receive(self, kind: str, payload: list) -> Snapshot | None:
        if kind == "snapshot":
            self._wanting = False
            snapshot, self._answered = payload
            if self.info is None or snapshot.run != self.info.run:
                return None  # from a run that has been replaced
            self._run_drawn = True
            self.history = merged_history(self.history, snapshot)
            self._latest = latest_of(self._latest, snapshot)
            if snapshot.frozen is not None:
                self.frozen = snapshot.frozen
            if snapshot.beta_changes is not None and self.config is not None:
                self.config.beta_changes = [list(change) for change in snapshot.beta_changes]
            self.status = snapshot.status
            return snapshot
        if kind == "info":
            info: RunInfo = payload[0]
            config = self._requests.pop(info.request)
            self._requests = {key: value for key, value in self._requests.items() if key > info.request}
            self.history, self._latest, self._run_drawn = None, None, False
            # A run built now clears the errors of earlier requests, not one raised since it was asked for
            # (a file refused while the run was being built).
            error = self.error if self._error_after >= info.request else ""
            self._fresh_display()
            self.param.update(config=config, info=info, frozen=None, error=error, status=Status(),
                              building=bool(self._requests), compiling=False)
        elif kind == "status":
            run, status = payload
            if self.info is not None and run == self.info.run:  # what a step that sets the run up is doing
                self.status = status
        elif kind == "compiling":
            self.compiling = True
        elif kind == "refused":
            self.compiling = False
            message, request = payload
            if request is not None:
                self._requests.pop(request, None)
                self.building = bool(self._requests)
            self.error = message
        elif kind == "failed":
            self.error = f"The run stopped: {payload[0]}. Reset starts it again from its seed."
            self.status = replace(self.status, phase="failed")
        elif kind == "replay":
            self.replay = payload[0]
        return None

    def _lost(self) -> None:
        """The worker is gone (its end of the pipe closed, so its process is ending: the wait for its exit code is
        short): say why; the next command starts a new one with the last built configuration."""
        handle, self._handle = self._handle, None
        reason = "the run's worker stopped"
        if handle is not None:
            handle.runner.join(EXITING_SECONDS)
            reason = handle.exit_reason or reason
            handle.close()
        self._failed(reason)

    def _failed(self, reason: str) -> None:
        """The run's worker is gone for ``reason``: the page says so, and that the next command starts it again."""
        self._requests.clear()
        self.building = self.compiling = False
        self.status = replace(self.status, phase="failed")
        self.error = (f"{reason[0].upper()}{reason[1:]}. Other sessions are not affected; Start, Step or Reset "
                      f"starts this run again from its seed.")

    # -- scripts and tests -------------------------------------------------------------------------------------
    def wait_for(self, condition, timeout: float = 60.0, on_snapshot=None) -> bool:
        """Poll until ``condition(self)`` holds (True) or ``timeout`` seconds pass (False)."""
        end = time.monotonic() + timeout
        while True:
            for snapshot in self.poll():
                if on_snapshot is not None:
                    on_snapshot(snapshot)
            if condition(self):
                return True
            if time.monotonic() > end:
                return False
            time.sleep(0.01)

    def run_steps(self, n: int, timeout: float = 60.0) -> bool:
        """Take ``n`` steps from where the run stands and wait until they are reported."""
        self.wait_for(lambda client: client.info is not None and not client.building, timeout)
        target = self.status.n_steps + n
        self.step(n)
        return self.wait_for(lambda client: client.status.n_steps >= target, timeout)

    @property
    def worker_alive(self) -> bool:
        return self._handle is not None and self._handle.alive

    def close(self) -> None:
        """Stop the worker (without waiting for it) and free this session's booking (idempotent); the client starts
        no worker again."""
        self._closed = True
        self._handle = None
        self.engine.release(self.owner)
