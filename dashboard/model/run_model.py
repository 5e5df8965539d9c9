"""A live run: one sampler thread per session, controlled by start/pause/step/reset.

``RunModel`` owns the target, the sampler and a background thread that steps
the sampler and writes into a bounded ``TraceBuffer``. It never touches Panel
or Bokeh: views call ``poll()`` from their own periodic callback, which drains
the buffer and refreshes the model's status parameters there (on the UI side),
so param events never fire from the sampler thread.

Threading: one ``threading.Lock`` guards the sampler. The thread holds it for
one chunk of steps (≤ 20 ms or 256 steps), then releases it. A plain lock is
not fair — a thread that releases and re-acquires it in a loop can starve
others — so UI-side operations announce themselves (``_exclusive``) and the
sampler thread waits for them before its next chunk: pause, reset and a
configuration change wait at most one chunk. Reads for display never take the
sampler lock; they use the buffer's snapshots. ``close()`` stops and joins the
thread; the dashboard calls it when the browser session ends.
"""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
import param

from samplers.diagnostics import ess, rhat

from .buffer import Chunk, Drained, TraceBuffer
from .config import RunConfig
from .move_replay import MoveReplay
from .opad_tracker import OpadSnapshot, OpadTracker, tracking_problem
from .statistics import available_statistics

#: Longest a chunk of steps holds the sampler lock (seconds) and most steps in it.
CHUNK_SECONDS = 0.02
CHUNK_STEPS = 256
#: Pause after each chunk (seconds): releases the GIL so the web server's thread,
#: which does many short I/O waits, is not starved by CPU-bound sampler threads.
YIELD_SECONDS = 0.001
#: One chunk at a time across all runs in the process. Python threads share one GIL,
#: so concurrent sampler threads gain no throughput; taking turns means the server
#: thread competes with one sampler at a time instead of all of them, which keeps
#: page loads and clicks prompt when several sessions are sampling.
_CHUNK_TURN = threading.Lock()


def _row_of(sampler, seconds: float, statistic) -> tuple:
    """One trace row: step, evaluations, compute seconds, log p̃ and statistic per chain, acceptances."""
    return (sampler.n_steps, sampler.n_evals, seconds, sampler.log_p.copy(),
            statistic(sampler.states, sampler.log_p), int(sampler.last_accepted.sum()))


def _chunk_of(rows: list[tuple]) -> Chunk:
    step, n_evals, seconds, log_prob, statistic, accepted = zip(*rows)
    return Chunk(np.array(step), np.array(n_evals), np.array(seconds), np.array(log_prob),
                 np.array(statistic, dtype=np.float64), np.array(accepted))


class CompanionRun:
    """A second sampler on the same target, advanced in the run's thread for the same compute time.

    After each chunk of the main sampler, ``advance(seconds)`` steps the
    companion until its own compute time (time inside ``step()``) has grown by
    as much as the main sampler's did, so both traces cover equal compute and
    can be compared against compute time (Hamze & de Freitas, Figs. 2–4).
    Its trace goes to its own bounded ``buffer``.
    """

    #: Most companion steps per chunk (a companion much faster than the main sampler).
    MAX_STEPS = 20_000

    def __init__(self, sampler, statistic):
        self.sampler = sampler
        self._statistic = statistic
        self.seconds = 0.0
        self._owed = 0.0
        self.buffer = TraceBuffer(sampler.n_chains)
        self.buffer.push(_chunk_of([self._row()]), sampler.states)

    def _row(self) -> tuple:
        return _row_of(self.sampler, self.seconds, self._statistic)

    def advance(self, seconds: float) -> None:
        """Step until the companion has spent ``seconds`` more (carrying over any shortfall or excess)."""
        self._owed += seconds
        rows = []
        while self._owed > 0 and len(rows) < self.MAX_STEPS:
            started = time.perf_counter()
            self.sampler.step(record=False)
            stepped = time.perf_counter() - started
            self.seconds += stepped
            self._owed -= stepped
            rows.append(self._row())
        if rows:
            self.buffer.push(_chunk_of(rows), self.sampler.states)


@dataclass(frozen=True)
class LearningState:
    """A snapshot of a learning sampler for display."""

    history: dict  # step, loss, eta (and LSB1's w_*) arrays
    learning: bool
    frozen_at: int | None
    burn_in: int
    keep_adapting: bool
    skipped: int
    parametrization: str


class RunModel(param.Parameterized):
    """A configured sampler run with a background thread; headless and thread-safe."""

    config = param.ClassSelector(class_=RunConfig, doc="The configuration being run.")
    running = param.Boolean(False, doc="Whether the sampler thread is stepping.")
    error = param.String("", doc="Why the last change was refused ('' when it was accepted).")
    n_steps = param.Integer(0, doc="Steps taken (as of the last poll).")
    n_evals = param.Integer(0, doc="Target evaluations (as of the last poll).")
    seconds = param.Number(0.0, doc="Time spent sampling, pauses excluded.")
    steps_per_second = param.Number(0.0, doc="Measured sampling speed.")
    acceptance = param.Number(float("nan"), doc="Acceptance rate over the recent window.")

    def __init__(self, config: RunConfig | None = None, **params):
        config = config or RunConfig()
        super().__init__(config=config, **params)
        self._lock = threading.Lock()
        self._go = threading.Event()
        self._closing = False
        self._pending_steps = 0
        self._thread: threading.Thread | None = None
        self._ui_waiting = 0
        self._rate_reference = (0, time.perf_counter())
        target, sampler = config.build()
        self._install(target, sampler, config.build_companion(target), config)

    # -- configuration ------------------------------------------------------------------
    def _install(self, target, sampler, companion, config) -> None:
        """Make (target, sampler, companion, config) current and restart the traces (lock held or not started)."""
        self.target, self.sampler, self._config = target, sampler, config
        self._statistic = available_statistics(target)[config.statistic]
        self.buffer = TraceBuffer(sampler.n_chains)
        self.opad_problem = tracking_problem(target) if config.opad else "OPAD tracking is off for this run"
        self.tracker = None if self.opad_problem else OpadTracker(
            target, scored_neighbours=config.opad_neighbours, support=getattr(sampler, "in_support", None))
        self.companion = None if companion is None else CompanionRun(companion, self._statistic)
        self._active_seconds = 0.0
        self._pace_origin = None
        self.buffer.push(_chunk_of([self._row()]), sampler.states)

    @contextmanager
    def _exclusive(self):
        """Hold the sampler lock from the UI side, ahead of the sampler thread's next chunk."""
        self._ui_waiting += 1
        try:
            with self._lock:
                yield
        finally:
            self._ui_waiting -= 1

    def apply(self, config: RunConfig) -> bool:
        """Switch to ``config`` (a fresh run). If it is invalid, keep the current run and set ``error``."""
        try:
            target, sampler = config.build()
            companion = config.build_companion(target)
        except ValueError as error:
            self.error = str(error)
            return False
        with self._exclusive():
            self._install(target, sampler, companion, config)
        self.param.update(config=config, error="")  # watchers run outside the lock
        return True

    def reset(self) -> None:
        """Restart the current configuration from its seed (the same run again)."""
        self.apply(self.config)

    # -- control ----------------------------------------------------------------------------
    def start(self) -> None:
        self._ensure_thread()
        with self._exclusive():
            self.running = True
            self._pace_origin = None
        self._go.set()

    def pause(self) -> None:
        with self._exclusive():
            self.running = False
            self._pending_steps = 0
            self._go.clear()

    def step(self, n: int = 1) -> None:
        """Take ``n`` more steps in the background, then stop."""
        self._ensure_thread()
        with self._exclusive():
            self._pending_steps += n
        self._go.set()

    def set_speed(self, steps_per_second: float) -> None:
        """Change the speed cap live (0 = as fast as possible); the run goes on."""
        with self._exclusive():
            self._config.steps_per_second = steps_per_second
            self._pace_origin = None

    def close(self) -> None:
        """Stop and join the sampler thread (idempotent)."""
        self._closing = True
        self._go.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
        self.running = False

    @property
    def thread_alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def wait_idle(self, timeout: float = 10.0) -> bool:
        """Block until pending single steps are done (for tests and scripts)."""
        end = time.perf_counter() + timeout
        while time.perf_counter() < end:
            with self._exclusive():
                if self._pending_steps == 0:
                    return True
            time.sleep(0.005)
        return False

    # -- the sampler thread -------------------------------------------------------------------
    def _ensure_thread(self) -> None:
        if self._closing:
            raise RuntimeError("this run has been closed")
        if self._thread is None:
            self._thread = threading.Thread(target=self._loop, name=f"sampler-{id(self):x}", daemon=True)
            self._thread.start()

    def _loop(self) -> None:
        while True:
            self._go.wait()
            if self._closing:
                return
            wait = self._pace_wait()
            if wait > 0:
                time.sleep(min(wait, 0.05))
                continue
            while self._ui_waiting:
                time.sleep(0.0005)
            with _CHUNK_TURN, self._lock:
                if not self.running and self._pending_steps == 0:
                    self._go.clear()
                    continue
                self._advance_chunk()
            time.sleep(YIELD_SECONDS)

    def _pace_wait(self) -> float:
        """Seconds to wait before the next step to respect the speed cap (0 if none)."""
        cap = self._config.steps_per_second
        if not cap or self._pace_origin is None or not self.running:
            return 0.0
        origin_time, origin_steps = self._pace_origin
        due = origin_time + (self.sampler.n_steps - origin_steps) / cap
        return due - time.perf_counter()

    def _row(self) -> tuple:
        return _row_of(self.sampler, self._active_seconds, self._statistic)

    def _advance_chunk(self) -> None:
        """Run steps for up to one chunk (lock held), then push them to the buffer."""
        chunk_start = last = time.perf_counter()
        if self._pace_origin is None:
            self._pace_origin = (chunk_start, self.sampler.n_steps)
        rows = []
        budget = 0.0  # seconds spent inside the sampler's steps this chunk
        while len(rows) < CHUNK_STEPS and last - chunk_start < CHUNK_SECONDS:
            if not self.running:
                if self._pending_steps == 0:
                    break
                self._pending_steps -= 1
            elif self._pace_wait() > 0:
                break
            started = time.perf_counter()
            record = self.sampler.step(record=self.tracker is not None)
            stepped = time.perf_counter() - started
            self._active_seconds += stepped
            budget += stepped
            if record is not None:
                self.tracker.update(record)
                self.tracker.checkpoint(self.sampler.n_steps)
            last = time.perf_counter()
            rows.append(self._row())
        if rows:
            self.buffer.push(_chunk_of(rows), self.sampler.states)
            if self.tracker is not None:
                self.tracker.publish(self.sampler.n_steps)
        if self.companion is not None and budget > 0:
            self.companion.advance(budget)

    # -- reading (UI side) ----------------------------------------------------------------------
    def poll(self) -> Drained:
        """Drain the buffer and refresh the status parameters; call from the UI's periodic callback."""
        drained = self.buffer.drain()
        now = time.perf_counter()
        previous_steps, previous_time = self._rate_reference
        if drained.n_steps < previous_steps:  # a reset happened
            previous_steps = 0
        elapsed = now - previous_time
        if elapsed >= 0.5 or drained.n_steps < self.n_steps:
            rate = (drained.n_steps - previous_steps) / elapsed if self.running else 0.0
            self._rate_reference = (drained.n_steps, now)
            self.steps_per_second = max(rate, 0.0)
        self.param.update(n_steps=drained.n_steps, n_evals=drained.n_evals, seconds=drained.seconds,
                          acceptance=drained.acceptance)
        return drained

    def diagnostics(self) -> dict:
        """Mixing diagnostics of the statistic over the recent window (full resolution).

        ESS and R̂ are the rank-normalised estimators of Vehtari et al. (2021)
        over all chains; per-evaluation and per-second rates divide by the
        evaluations and sampling time spent inside the window.
        """
        recent = self.buffer.recent()
        n = len(recent["step"])
        result = {"window (steps)": n, "acceptance": float("nan"), "ESS": float("nan"), "R-hat": float("nan"),
                  "ESS per 1000 evaluations": float("nan"), "ESS per second": float("nan")}
        if n < 8:
            return result
        draws = recent["statistic"].T
        value = ess(draws)
        evals = recent["n_evals"][-1] - recent["n_evals"][0]
        seconds = recent["seconds"][-1] - recent["seconds"][0]
        result.update({
            "acceptance": float(recent["accepted"][1:].sum() / ((n - 1) * self.sampler.n_chains)),
            "ESS": value,
            "R-hat": rhat(draws) if self.sampler.n_chains > 1 else float("nan"),
            "ESS per 1000 evaluations": 1000 * value / evals if evals else float("nan"),
            "ESS per second": value / seconds if seconds > 0 else float("nan"),
        })
        return result

    @property
    def replays_moves(self) -> bool:
        """Whether the sampler records its moves' walks (intracluster moves) for slow motion."""
        return hasattr(self.sampler, "last_walk")

    def replay_next_move(self, chain: int) -> MoveReplay:
        """Pause, take one step (in the sampler thread) and return ``chain``'s move frame by frame."""
        if not self.replays_moves:
            raise ValueError(f"{self.config.sampler} does not record its moves' walks")
        self.pause()
        with self._exclusive():
            start = self.sampler.states[chain].copy()
        self.step(1)
        if not self.wait_idle():
            raise RuntimeError("the step did not finish")
        with self._exclusive():
            return MoveReplay.from_sampler(start, self.sampler, chain)

    def opad_snapshot(self) -> OpadSnapshot | None:
        """The latest OPAD snapshot (lock-free), or None when OPAD is not tracked (see ``opad_problem``)."""
        return None if self.tracker is None else self.tracker.snapshot

    @property
    def learns_balancing(self) -> bool:
        """Whether the sampler learns its balancing function (LSB, FLSB with a learned parametrisation)."""
        return getattr(self.sampler, "learner", None) is not None

    def learning_state(self) -> LearningState | None:
        """What the learner has done so far (lock-free snapshot), or None for a fixed balancing function."""
        sampler = self.sampler
        learner = getattr(sampler, "learner", None)
        if learner is None:
            return None
        return LearningState(history=learner.history.snapshot(), learning=sampler.learning,
                             frozen_at=sampler.frozen_at, burn_in=sampler.burn_in,
                             keep_adapting=sampler.keep_adapting, skipped=learner.skipped,
                             parametrization=sampler.parametrization)

    def freeze(self) -> None:
        """Stop learning the balancing function now (the chain is exact MCMC from here on)."""
        if self.learns_balancing:
            with self._exclusive():
                self.sampler.freeze()

    @property
    def has_balancing_function(self) -> bool:
        return hasattr(self.sampler, "log_g")

    def balancing_curve(self, log_t: np.ndarray) -> np.ndarray:
        """log g(t) of the current sampler's (possibly learned) balancing function.

        Called from the UI while the sampler runs, without the sampler lock:
        ``log_g`` must only read the function's parameters (fixed functions are
        pure; a learned one reads a consistent snapshot of its parameters).
        """
        return np.asarray(self.sampler.log_g(log_t), dtype=np.float64)
