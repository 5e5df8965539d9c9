"""A race: the sampler bake-off (``sweeps.bakeoff``) on the session's target, in a process of its own, streamed.

``Race(engine, owner)`` is one session's race (model code: no Panel). ``start(settings)``
starts a process — from the same ``forkserver`` the engine starts its workers
from, so it begins with the samplers imported and their kernels loaded — that
runs the bake-off serially (``workers=0``) at a small budget (``RaceSettings``:
``BUDGET`` target evaluations per run, or another of ``BUDGETS``, ``SEEDS`` seeds × ``CHAINS`` chains). When
no sampler's chains settled on every seed at that budget (``summary``'s "nothing settled": the race cannot
answer its question), it races again at the next larger budget (``RaceSettings.raised``: the larger of
``BUDGETS``, then ``LARGEST``), and every snapshot says at which budget it was measured and which budgets were
raised from. A raised race gives each run a time allowance (``SECONDS_PER_RUN``): a sampler whose runs at the
last budget project (their CPU seconds per evaluation × the next budget, tuning included) to more than that is
not raced again; it has lost at the larger budget, as a sampler whose chains did not settle has, and the
snapshot names it with its projection (``RaceSnapshot.out_of_time``). So a race ends with a verdict on a target
where only a cheap kernel settles. Measured on the default segmentation (2 partly shared cores): no sampler
settles at 3,000, 10,000 or 30,000 evaluations (43, 107 and 287 s); at 100,000 GWG, FLSB, DMALA and PAS were
projected at 24–33 CPU s a run and not raced, the 11 other kernels were (169 s), and Swendsen–Wang won: its
chains settled on every seed, no other kernel's did (606 s in all). The allowance is CPU time on this server,
so which samplers are raced at a raised budget depends on the machine; the snapshot says which were not, and
why. It runs at the lowest OS priority and within one run's memory (as a sampler worker:
``worker.sample_at_low_priority``, an address-space limit of its start-up size
plus ``Budget.run_bytes``), its stored runs in a temporary directory that is
removed when the race ends. After each run the process sends the bake-off so far
as a ``RaceSnapshot`` — the ranking with intervals, the verdict, what was
skipped or failed, runs done of the total: small and picklable — through a
pipe; ``poll()``, called from the page's periodic flush, takes what arrived
without waiting.

A server runs at most ``MAX_RACES`` races at once, and none when its sampler
workers and races together would exceed ``Budget.max_workers``; each race books
``Budget.run_bytes`` with the engine (``Engine.reserve`` under the key
``-owner``, beside the session's own run), so a race never takes memory that the
sessions' runs hold. ``start`` refuses with the reason in ``message`` when
the server is busy. ``stop()`` (a new race, Stop, the session's end) returns at
once: it terminates the process and gives back the race's place and booking
(as ``Engine.release`` does a worker's: the process is ending), and a daemon
thread waits for the process — killing it if SIGTERM did not end it within
``STOP_SECONDS``, as for a stopped process — and then removes its stored runs.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import shutil
import tempfile
import threading
import time
from dataclasses import dataclass, field

import samplers as registry
from engine.config import RunConfig
from engine.engine import STOP_SECONDS, Engine, ServerBusy, end_process, in_background
from engine.forkserver import start_forkserver
from engine.uploads import format_bytes
from engine.worker import describe, limit_memory, sample_at_low_priority
from sweeps.bake_off import SUBSPACE, bakeoff, fixed_weight
from sweeps.bake_off.summary import NOTHING_SETTLED, RANKED_BY
from sweeps.bake_off.task import TUNING_SHARE, variants

__all__ = ["BUDGET", "BUDGETS", "LARGEST", "SECONDS_PER_RUN", "TUNING_SHARE", "Race", "RaceSettings", "RaceSnapshot",
           "RankedRow"]

#: Target evaluations of each measured run (after a tuning burn-in of a fifth more). Measured headless on 2 shared
#: cores: the 1-D Ising chain's race (OPAD Fig. 1 preset) took 13 CPU s and Swendsen–Wang won, the RBM digits' 14 s
#: and PAS won; the default segmentation's took 36 s and no sampler settled (nor at 10,000 or 30,000: 104 and 276 s).
BUDGET = 3000
#: The budgets a page offers: the default, and more for chains that have not settled in it (a race takes
#: about as many times longer).
BUDGETS = (BUDGET, 10_000, 30_000)
#: The budget a race raises itself to after the largest of ``BUDGETS`` (not offered: started there, the gradient
#: samplers alone would take over 20 minutes of a core on the default segmentation).
LARGEST = 100_000
#: CPU seconds a run of a raised race may be projected to take (module docstring).
SECONDS_PER_RUN = 20.0
#: The axis the budget is counted on: target evaluations count the same on every machine.
AXIS = "evaluations"
#: Independent seeds of every sampler: the fewest the strict verdict accepts (``samplers.diagnostics.verdicts``).
SEEDS = 5
#: Chains of every run (a split-R̂ needs at least 3).
CHAINS = 4
#: Most races one server process runs at once.
MAX_RACES = 2

#: The races running in this server process.
_RUNNING: set[int] = set()
_RUNNING_LOCK = threading.Lock()


@dataclass(frozen=True)
class RaceSettings:
    """What a race runs: the target (a registered name and its parameters, as a ``RunConfig`` holds them) and the
    bake-off's budget, axis, seeds, chains, statistic, samplers (``"all"``, or names) and sweep seed."""

    target: str
    target_params: dict = field(default_factory=dict)
    budget: int = BUDGET
    axis: str = AXIS
    seeds: int = SEEDS
    chains: int = CHAINS
    statistic: str = "log_prob"
    samplers: str | tuple[str, ...] = "all"
    seed: int = 0

    def names(self) -> tuple[str, ...]:
        """The samplers it races, skipped ones included: every registered one for ``"all"``."""
        return tuple(registry.available()) if self.samplers == "all" else tuple(self.samplers)

    def raised(self) -> tuple[int, ...]:
        """The budgets a race raises to, in turn, while no sampler settles (module docstring)."""
        return tuple(budget for budget in (*BUDGETS, LARGEST) if budget > self.budget)

    @classmethod
    def of(cls, config: RunConfig, budget: int = BUDGET) -> RaceSettings:
        """A race on ``config``'s target with ``budget`` evaluations per run."""
        return cls(config.target, dict(config.target_params), budget)

    def build_target(self):
        return RunConfig(target=self.target, target_params=self.target_params).build_target()


@dataclass(frozen=True)
class RankedRow:
    """One sampler kernel's line of the ranking: its rate (geometric mean over seeds) and 95 % interval."""

    sampler: str
    setting: str
    seeds: int
    unusable: int  # seeds whose ESS is not usable in a verdict (chains not settled)
    lower_bound: int  # seeds whose ESS is only a lower bound (as large as its draws)
    rate: float
    low: float
    high: float


@dataclass(frozen=True)
class RaceSnapshot:
    """The bake-off so far (``summary``'s table and verdict, and what was skipped or failed), as a page needs it.
    The verdict's fields are "" (and NaN) with fewer than two samplers; ``ratio`` is the leader's ESS rate over the
    runner-up's, per seed (geometric mean, low, high of the 95 % interval; NaN where there is none: ``ratio_seeds``
    seeds shared, ``unknown_seeds`` of them without a finite ratio); ``lost``: (sampler, seeds its chains did not
    settle on, its seeds) of the samplers that lost by not settling; ``out_of_time``: sampler → the CPU seconds a run
    at this budget was projected to take, of the samplers not raced at it for taking over ``SECONDS_PER_RUN``."""

    target: str
    dim: int
    measure: str  # what the rows rank by, e.g. "ESS per 1k evals"
    rows: tuple[RankedRow, ...]
    done: int  # runs stored or failed at this budget
    total: int  # runs of the whole race at this budget
    budget: int  # the evaluations per run this bake-off measured
    raised_from: tuple[int, ...]  # the smaller budgets raced before, at which no sampler settled
    winner: str | None
    headline: str  # the outcome in a few words (``Verdict.headline``)
    outcome: str  # ``Verdict.outcome``: "wins", "tie", "no interval" or "nothing settled"
    leader: str
    runner_up: str
    runner_up_lost: bool  # the runner-up is a sampler that did not settle (the leader is ahead of all by that)
    ratio: tuple[float, float, float]
    ratio_seeds: int
    unknown_seeds: int
    lost: tuple[tuple[str, int, int], ...]
    skipped: dict[str, str]
    failed: dict[str, str]
    finished: bool
    out_of_time: dict[str, float] = field(default_factory=dict)


def snapshot(result, settings: RaceSettings, finished: bool, raised_from: tuple[int, ...] = (),
             out_of_time: dict[str, float] | None = None, skipped_before: dict[str, str] | None = None) -> RaceSnapshot:
    """A ``RaceSnapshot`` of a ``BakeoffResult`` measured at ``result.budget`` after ``raised_from``, with the samplers
    not raced at it for time (``out_of_time``) and those the first budget skipped (``skipped_before``). The total
    counts every kernel (``task.variants``) of every sampler that was raced at this budget, ``seeds`` times. A page
    races every sampler that applies, so a fixed-Hamming-weight sampler's reason is said without the library's
    advice of how to name it."""
    measure = RANKED_BY[result.axis]
    rows = tuple(RankedRow(str(name), str(row["setting"]), int(row["seeds"]), int(row["ESS not usable"]),
                           int(row["ESS a lower bound"]),
                           float(row[measure]), float(row[f"{measure} low"]), float(row[f"{measure} high"]))
                 for name, row in result.table.iterrows())
    total = settings.seeds * sum(len(variants(name)) for name in settings.names() if name not in result.skipped)
    done = sum(len(runs) for runs in result.runs.values()) + len(result.failed)
    said = result.verdict
    if said is None:
        judged = ("", "", "", "", False, (math.nan,) * 3, 0, 0, ())
    else:
        evidence = said.evidence
        judged = (said.headline, said.outcome, said.leader, said.runner_up, said.runner_up_lost,
                  (evidence.centre, evidence.low, evidence.high), evidence.n,
                  sum(not (math.isfinite(v) and v > 0) for v in evidence.values), said.unsettled)
    skipped = {name: SUBSPACE if fixed_weight(name) else reason
               for name, reason in {**(skipped_before or {}), **result.skipped}.items()}
    return RaceSnapshot(result.target_name, result.dim, measure, rows, done, total, int(result.budget), raised_from,
                        result.winner, *judged, skipped, dict(result.failed), finished, dict(out_of_time or {}))


def projected_seconds(result, budget: float) -> dict[str, float]:
    """Sampler → the CPU seconds its slowest run of ``result`` projects to at ``budget`` evaluations: its seconds per
    measured evaluation × ``budget`` × (1 + the tuning share)."""
    projected: dict[str, float] = {}
    for runs in result.runs.values():
        for run in runs:
            seconds = run.seconds / run.used * budget * (1 + TUNING_SHARE) if run.used else math.inf
            projected[run.sampler] = max(projected.get(run.sampler, 0.0), seconds)
    return projected


def run_race(connection, settings: RaceSettings, results: str, run_bytes: int) -> None:
    """Entry point of a race's process: memory limit and low priority, then the bake-off — again at the next budget
    while no sampler settles (module docstring) — each run's snapshot sent as ``("progress", RaceSnapshot)``, the
    last as ``("finished", RaceSnapshot)``, or ``("failed", reason)``; a page that is gone (a broken pipe) ends it
    quietly."""
    limit_memory(run_bytes)
    sample_at_low_priority()
    try:
        budgets, raised_from, out_of_time, skipped = (settings.budget, *settings.raised()), (), {}, {}
        at = settings
        for budget, larger in zip(budgets, (*budgets[1:], None)):
            at = dataclasses.replace(at, budget=budget)
            context = (raised_from, out_of_time, skipped)
            result = bakeoff(at.build_target(), at.samplers, at.budget, at.axis, at.seeds, chains=at.chains,
                             statistic=at.statistic, seed=at.seed, results=results, workers=0, progress=False,
                             on_result=functools.partial(_progress, connection, at, context))
            if larger is None or result.verdict is None or result.verdict.outcome != NOTHING_SETTLED:
                break
            projected = projected_seconds(result, larger)
            # a sampler with no measured run (every run failed) is raced again, and its failures said again
            raced = tuple(name for name in at.names() if name not in result.skipped
                          and projected.get(name, 0.0) <= SECONDS_PER_RUN)
            out_of_time = {**{name: seconds * larger / budget for name, seconds in out_of_time.items()},
                           **{name: seconds for name, seconds in projected.items() if name not in raced}}
            if not raced:
                break
            raised_from, skipped = raised_from + (budget,), {**skipped, **result.skipped}
            at = dataclasses.replace(at, samplers=raced)
        connection.send(("finished", snapshot(result, at, True, *context)))
    except MemoryError:
        _say(connection, ("failed", f"the race exceeded its memory limit ({format_bytes(run_bytes)})"))
    except Exception as error:  # noqa: BLE001 — the page says why; the server goes on
        _say(connection, ("failed", describe(error)))
    finally:
        connection.close()


def _progress(connection, settings: RaceSettings, context: tuple, partial) -> None:
    """Send the bake-off so far (``bakeoff``'s ``on_result``; ``context``: ``snapshot``'s arguments after
    ``finished``)."""
    connection.send(("progress", snapshot(partial, settings, False, *context)))


def _say(connection, message: tuple) -> None:
    """Send ``message`` unless the page's end of the pipe is gone."""
    try:
        connection.send(message)
    except (OSError, EOFError):
        pass


class Race:
    """One session's race (module docstring): ``state`` is "idle", "running", "finished", "stopped", "failed" or
    "refused", ``message`` says why for the last two, ``latest`` is the newest snapshot and ``seconds`` the time
    the race has run."""

    def __init__(self, engine: Engine, owner: int):
        self.engine = engine
        self.key = -owner  # the race's booking with the engine, beside the session's own run (``owner``)
        self.state = "idle"
        self.message = ""
        self.settings: RaceSettings | None = None
        self.latest: RaceSnapshot | None = None
        self._process = None
        self._connection = None
        self._results: str | None = None
        self._reaper = None  # the thread that makes sure the last race's process is gone and removes its runs
        self._started = self._ended = 0.0

    @property
    def seconds(self) -> float:
        if self.state == "idle":
            return 0.0
        return (time.monotonic() if self.state == "running" else self._ended) - self._started

    @property
    def process(self):
        """The race's process (None before the first race)."""
        return self._process

    @property
    def results(self) -> str | None:
        """The temporary directory of the race's stored runs (removed once its process is gone)."""
        return self._results

    def wait_ended(self, timeout: float | None = None) -> bool:
        """Wait until the last race's process is gone and its runs removed (scripts, tests; a page never waits):
        True when they are, False after ``timeout`` seconds."""
        if self._reaper is not None:
            self._reaper.join(timeout)
        return self._reaper is not None and not self._reaper.is_alive()

    def start(self, settings: RaceSettings) -> bool:
        """Stop the race that runs, then start one with ``settings``; False (and ``message`` says why) when the
        server is busy."""
        self.stop()
        budget = self.engine.budget
        with _RUNNING_LOCK:
            races, workers = len(_RUNNING), self.engine.n_workers
            if races >= MAX_RACES or workers + races >= budget.max_workers:
                return self._refuse(f"server busy: {races} race{'s' * (races != 1)} and {workers} sampler "
                                    f"run{'s' * (workers != 1)} are going on, the most this server allows. "
                                    "Try again in a minute.")
            try:
                self.engine.reserve(self.key, budget.run_bytes)
            except ServerBusy as error:
                return self._refuse(str(error))
            _RUNNING.add(self.key)
        context = start_forkserver()
        self._results = tempfile.mkdtemp(prefix="race-")
        self._connection, theirs = context.Pipe(duplex=False)
        self._process = context.Process(target=run_race, name=f"race-{-self.key:x}", daemon=True,
                                        args=(theirs, settings, self._results, budget.run_bytes))
        self.settings, self.latest, self.message = settings, None, ""
        self.state, self._started = "running", time.monotonic()
        self._process.start()
        theirs.close()  # the process holds its own copy; ours must go so that its end reads as EOF
        return True

    def _refuse(self, message: str) -> bool:
        self.state, self.message = "refused", message
        return False

    def poll(self) -> int:
        """Take what the race sent since the last call, without waiting: the number of messages taken (each run's
        snapshot, then the final one or the reason it failed; one for a process that ended without a word)."""
        taken = 0
        try:
            while self.state == "running" and self._connection.poll():
                kind, payload = self._connection.recv()
                taken += 1
                if kind == "failed":
                    self._end("failed", payload)
                    break
                self.latest = payload
                if kind == "finished":
                    self._end("finished")
        except (EOFError, OSError):  # the process closed its end: it is ending (the wait is for its exit code)
            self._process.join(STOP_SECONDS)
            self._end("failed", f"the race's process ended without a result (exit code {self._process.exitcode})")
            taken += 1
        return taken

    def stop(self) -> None:
        """Terminate the race that runs (nothing when none does), without waiting for its process."""
        if self.state == "running":
            self._end("stopped")

    def _end(self, state: str, message: str = "") -> None:
        """Close the pipe and give back the race's place and booking at once; in a daemon thread, make sure the
        process is gone (at once terminated when stopped, else after ``STOP_SECONDS`` to end by itself; killed if
        it outlives SIGTERM by as long) and remove its stored runs."""
        self.state, self.message, self._ended = state, message, time.monotonic()
        self._connection.close()
        self.engine.release(self.key)
        with _RUNNING_LOCK:
            _RUNNING.discard(self.key)
        grace = 0.0 if state == "stopped" else STOP_SECONDS
        self._reaper = in_background(_remove_when_gone, self._process, grace, self._results, name="race-reaper")


def _remove_when_gone(process, grace: float, results: str) -> None:
    """Make sure a race's ``process`` is gone (``end_process``), then remove its stored runs."""
    end_process(process, grace, STOP_SECONDS)
    shutil.rmtree(results, ignore_errors=True)

