"""One run inside a worker: target, sampler, comparison sampler, OPAD tracker and traces (model code).

``RunSession`` is built from a ``RunConfig`` and driven by the worker's
loop (``engine.worker``): ``start``, ``pause``, ``step(n)`` and
``set_speed`` change what it wants to do, ``advance()`` runs one chunk of
steps (at most ``CHUNK_SECONDS`` or ``CHUNK_STEPS``) when it is ``busy``, and
``snapshot(display)`` packs what changed since the previous snapshot into an
immutable ``Snapshot``. Its ``Status.phase`` is ``READY`` until it first steps,
then "running" or "paused" ("failed" once it raised); while its next chunk
begins with a step that sets up what the run needs (``setting_up``: the first
step, or OPAD's first step after its tracker was made, which enumerates the
exact distribution) the phase says so (``STARTING``, ``ENUMERATING``), and the
worker sends that status before it takes the step.

The slower parts of a snapshot (ESS diagnostics,
learning curves, OPAD's KL and marginals, comparisons) are refreshed at most
every few seconds and, while the run goes on, within ``DISPLAY_SHARE`` of the
worker's CPU time: a worker of a class of 30 on two cores gets a few percent
of a core, and at a fixed refresh rate its diagnostics alone would take all of
it; the diagnostics are computed in a thread of their own (``engine.pacing``),
from a copy of the trace window. Nothing else is shared with another thread:
the sampler, its target and every cache live in the worker alone, and what
leaves it is a copy.
"""

from __future__ import annotations

import time
from contextlib import contextmanager

import numpy as np

from samplers.common.adaptive import Adaptive
from samplers.common.continuation import continue_on, derived_seed
from samplers.diagnostics.ess import discs_ess, ess, lsb_authors_ess, rhat
from samplers.diagnostics.inspection import inspect_move

from .buffer import TraceBuffer, chunk_of, trace_row
from .capabilities import Capabilities
from .comparison import CompanionRun, compare
from .config import RunConfig, to_jsonable
from .images import as_image
from .move_replay import MoveReplay
from .numbers import number
from .opad_tracker import OpadTracker, tracking_problem
from .pacing import CpuShare, Every, InBackground
from .snapshot import (ESS_DEFINITIONS, LOG_T, AdaptationState, BvsInfo, DagInfo, Display, LearningState, RunInfo,
                       Snapshot, Status, TemperingState, TuningState)
from .statistics import available_statistics
from .uploads import check_energies

#: Longest chunk of steps between two looks at the worker's commands (seconds), and most steps in it.
CHUNK_SECONDS = 0.02
CHUNK_STEPS = 256
#: Least time between two refreshes of the slower parts of a snapshot (seconds).
DIAGNOSTICS_SECONDS = 1.0
LEARNING_SECONDS = 0.5
OPAD_SECONDS = 0.5
COMPARISON_SECONDS = 1.0
INSPECTION_SECONDS = 0.5


#: Phases of ``Status`` besides "running", "paused" and "failed": a run built and never stepped; its first step
#: under way; OPAD's first step after a new tracker, which enumerates the target's states (``OpadTracker``).
READY = "ready"
STARTING = "starting: computing the first step…"
ENUMERATING = "building the exact distribution for OPAD's KL…"

#: Most of a running worker's CPU time its snapshots may take (the parts above are skipped past it; the status and
#: new trace points are always sent).
DISPLAY_SHARE = 0.1


#: What the samplers say when a chain's random initial state has probability zero (``samplers.base``), and what the
#: page says instead: no ``init=`` on the page, but a seed, the chains and the model.
ZERO_PROBABILITY_START = "an initial state has zero probability"
ZERO_PROBABILITY_ON_THE_PAGE = (
    "a chain's random starting state has probability zero under this target (a factor or a constraint of the "
    "model excludes it), and a chain cannot start there: try another seed or fewer chains (each chain draws "
    "its starting state from the seed), or a model that gives every state some probability")


@contextmanager
def in_the_pages_words():
    """Say a library's refusal that names an option the page has not in the page's own words."""
    try:
        yield
    except ValueError as error:
        if ZERO_PROBABILITY_START in str(error):
            raise ValueError(ZERO_PROBABILITY_ON_THE_PAGE) from None
        raise


def moves_per_step(sampler) -> int:
    """Moves ``sampler`` makes a step while it learns: an LSB sampler's ``learning_moves`` (the authors' iteration
    of two LSB2 moves, ``samplers.lsb.self_balancing``), one for every other sampler."""
    return getattr(sampler, "learning_moves", 1)


def _rates(value: float, steps: int, evals: int, seconds: float) -> dict:
    return {"per step": value / steps if steps else float("nan"),
            "per 1000 evaluations": 1000 * value / evals if evals else float("nan"),
            "per second": value / seconds if seconds > 0 else float("nan")}


def diagnostics(recent: dict) -> dict:
    """Mixing diagnostics of the traced statistic over the recent window (``TraceBuffer.recent()``).

    Three definitions of ESS, each with its rate per step, per 1000 target
    evaluations and per second of sampling (over the part of the window it uses):

    * ``ESS``: rank-normalised bulk ESS over all chains (Vehtari et al. 2021),
      with split-R̂;
    * DISCS's: each chain's ESS over the second half of the window, mean ± std
      over chains (``samplers.diagnostics.ess.discs_ess``; DISCS traces the Hamming
      distance to a random reference state, the ``hamming`` statistic);
    * the LSB authors' windowed, truncated ESS (``lsb_authors_ess``) with
      lags = min(500, window/4), mean ± std over chains.
    """
    n = len(recent["step"])
    result = {"window (steps)": n, "acceptance": float("nan"), "R-hat": float("nan"), ESS_DEFINITIONS[0]: float("nan")}
    if n < 16:
        return result
    draws = recent["statistic"].T
    half = n // 2
    spent = {key: (recent[key][-1] - recent[key][0], recent[key][-1] - recent[key][half])
             for key in ("n_evals", "seconds")}
    result["acceptance"] = float(recent["accepted"][1:].sum() / ((n - 1) * draws.shape[0]))
    result["R-hat"] = rhat(draws)
    per_chain = {ESS_DEFINITIONS[1]: (discs_ess(draws), 1),
                 ESS_DEFINITIONS[2]: (lsb_authors_ess(draws, min(500, n // 4)), 0)}
    pooled = ess(draws)
    result[ESS_DEFINITIONS[0]] = pooled
    for rate, value in _rates(pooled, n - 1, spent["n_evals"][0], spent["seconds"][0]).items():
        result[f"{ESS_DEFINITIONS[0]} {rate}"] = value
    for name, (values, second_half) in per_chain.items():
        result[name] = f"{number(np.mean(values))} ± {number(float(f'{np.std(values):.2g}'))}"  # spread: 2 digits
        steps = n - 1 - half if second_half else n - 1
        for rate, value in _rates(float(np.mean(values)), steps, spent["n_evals"][second_half],
                                  spent["seconds"][second_half]).items():
            result[f"{name} {rate}"] = value
    return result


def to_jsonable_params(params: dict) -> dict:
    """Sampler parameters as JSON values (arrays as lists, tuples as lists)."""
    return {key: list(value) if isinstance(value, tuple) else to_jsonable(value) for key, value in params.items()}


def frozen_record(sampler) -> dict | None:
    """The kernel an adaptive sampler froze to, as a run records it — ``{"at_step": n, "sampler_params": {...}}``
    (``samplers.common.adaptive``) — or None while it still adapts."""
    frozen = sampler.frozen_params()
    if frozen is None:
        return None
    return {"at_step": sampler.frozen_at, "sampler_params": to_jsonable_params(frozen)}


class RunSession:
    """A configured run: the sampler and everything fed from it, advanced chunk by chunk."""

    def __init__(self, config: RunConfig, run: int, request: int, max_particles: int):
        self.config = config
        self.run = run
        self.request = request
        if config.target == "boltzmann" and config.target_params.get("J") is not None:
            check_energies(config.target_params["J"], config.target_params.get("h"))
        with in_the_pages_words():
            target, sampler = config.build()
        self.target, self.sampler = target, sampler
        self.capabilities = Capabilities.of(sampler)
        self._statistic = available_statistics(target)[config.statistic]
        self.buffer = TraceBuffer(sampler.n_chains)
        self.opad_problem = tracking_problem(target) if config.opad else "OPAD tracking is off for this run"
        self._max_particles = max_particles
        self.tracker = None if self.opad_problem else self._new_tracker()
        self._scheduled = [tuple(change) for change in config.beta_changes]  # β changes still to come (a replay)
        self._changes_made = 0
        self._sent_changes = None
        with in_the_pages_words():
            companion = config.build_companion(target)
        self.companion = None if companion is None else CompanionRun(companion, self._statistic, config.compare_axis)
        self.running = False
        self.failed = ""
        self._pending_steps = 0
        self._active_seconds = 0.0
        self._pace_origin = None
        self._rate_reference = (0, time.perf_counter())
        self._steps_per_second = 0.0
        self._sent_learning = None
        # the step at which each rate-limited part that applies to this run was last sent
        self._sent_at = {"diagnostics": -1}
        if self.tracker is not None:
            self._sent_at["opad"] = -1
        if self.capabilities.adapts:
            self._sent_at["adaptive"] = -1
        if self.capabilities.tempers:
            self._sent_at["tempering"] = -1
        if self.companion is not None:
            self._sent_at["comparison"] = -1
        self._diagnostics_due = Every(DIAGNOSTICS_SECONDS)
        self._learning_due = Every(LEARNING_SECONDS)
        self._tempering_due = Every(LEARNING_SECONDS)
        self._inspection_due = Every(INSPECTION_SECONDS)
        self._display_cpu = CpuShare(DISPLAY_SHARE)
        self._diagnosing = InBackground()  # the ESS of 30 chains takes tens of ms: never in a command's way
        self.inspected_chain: int | None = None  # the chain whose moves are recorded for the inspector
        self._last_move = None  # (chain, state before, record) of its latest step
        self._sent_move = None
        self._opad_due = Every(OPAD_SECONDS)
        self._comparison_due = Every(COMPARISON_SECONDS)
        self.buffer.push(chunk_of([self._row()]), sampler.states)

    # -- what the views are told once ----------------------------------------------------------
    def info(self) -> RunInfo:
        target = self.target
        inputs = {}
        if hasattr(target, "ground_truth"):
            inputs = {"ground_truth": (target.ground_truth > 0).astype(np.float32),
                      "observation": np.asarray(target.observation, dtype=np.float32)}
        bvs = dag = None
        if target.registry_name == "bvs":
            bvs = BvsInfo(tuple(target.predictor_names), target.true_inclusion)
        if target.registry_name == "dag":
            dag = DagInfo(tuple(target.node_names), np.asarray(target.edge_pairs), target.true_adjacency)
        return RunInfo(run=self.run, request=self.request, sampler=self.config.sampler,
                       target_name=target.registry_name,
                       dim=target.dim, n_chains=self.sampler.n_chains, image_shape=target.image_shape,
                       image_positions=target.image_positions, image_axes=target.image_axes,
                       capabilities=self.capabilities, statistic=self.config.statistic,
                       opad_problem=self.opad_problem, companion=self.config.compare_sampler,
                       compare_axis=self.config.compare_axis, inputs=inputs,
                       moves_per_step=(moves_per_step(self.sampler),
                                       moves_per_step(self.companion.sampler) if self.companion else 1),
                       bvs=bvs, dag=dag, log_g=self._log_g() if self.capabilities.has_balancing_function else None,
                       hidden_units=target.n_hidden if target.registry_name == "rbm" else 0)

    def _log_g(self) -> np.ndarray:
        return np.asarray(self.sampler.log_g(LOG_T), dtype=np.float64)

    # -- control --------------------------------------------------------------------------------------
    @property
    def busy(self) -> bool:
        """Whether there are steps to take now (running, or single steps pending) and the run has not failed."""
        return not self.failed and (self.running or self._pending_steps > 0)

    @property
    def setting_up(self) -> str:
        """The phase of a run about to take a step that sets it up ('' when it takes no step now, or an ordinary
        one): ``ENUMERATING`` for the first step of an OPAD tracker (its first checkpoint enumerates the target),
        else ``STARTING`` for the run's first step."""
        if not self.busy:
            return ""
        if self.tracker is not None and self.sampler.n_steps == self._tracked_from:
            return ENUMERATING
        return STARTING if self.sampler.n_steps == 0 else ""

    def start(self) -> None:
        self.running = True
        self._pace_origin = None

    def pause(self) -> None:
        self.running = False
        self._pending_steps = 0

    def step(self, n: int = 1) -> None:
        """Take ``n`` more steps, then stop."""
        self._pending_steps += max(0, int(n))

    def set_speed(self, steps_per_second: float) -> None:
        """Change the speed cap (0 = as fast as possible); the run goes on."""
        self.config.steps_per_second = steps_per_second
        self._pace_origin = None

    def freeze(self) -> None:
        """Stop adapting (learning g, or tuning the walks) now: the chain is exact MCMC from here on."""
        if isinstance(self.sampler, Adaptive):
            self.sampler.freeze()
            if "adaptive" in self._sent_at:
                self._sent_at["adaptive"] = -1  # the next snapshot shows the freeze

    def follow(self, display: Display) -> None:
        """Record the shown chain's moves for the proposal inspector while it is open (``display.inspect``)."""
        inspected = min(display.chain, self.sampler.n_chains - 1) if display.inspect else None
        if inspected != self.inspected_chain:
            self.inspected_chain, self._last_move = inspected, None

    def _new_tracker(self) -> OpadTracker:
        """A tracker from the current step on (its first checkpoint, at the next step, enumerates the target)."""
        self._tracked_from = self.sampler.n_steps
        return OpadTracker(self.target, scored_neighbours=self.config.opad_neighbours,
                           support=getattr(self.sampler, "in_support", None), max_particles=self._max_particles)

    def set_beta(self, beta: float) -> None:
        """Go on at inverse temperature β from the chains' current states (``samplers.common.continuation``); the change
        is recorded in ``config.beta_changes`` at the current step, so the configuration replays the run."""
        if "beta" not in self.target.param:
            raise ValueError(f"{self.config.target} has no inverse temperature β")
        step = self.sampler.n_steps
        changes = [change for change in self.config.beta_changes if change[0] != step]
        self._change_beta(float(beta))
        self.config.beta_changes = [*changes, [step, float(beta)]]

    def _change_beta(self, beta: float) -> None:
        """The target at β, the sampler (and the comparison sampler) continued on it, OPAD tracking afresh."""
        target = self.target.with_params(beta=beta)
        self._changes_made += 1
        sampler = continue_on(self.sampler, target, derived_seed(self.config.seed, 2 * self._changes_made))
        if self.companion is not None:
            self.companion.sampler = continue_on(self.companion.sampler, target,
                                                 derived_seed(self.config.seed, 2 * self._changes_made + 1))
        self.target, self.sampler, self._last_move = target, sampler, None
        self._statistic = available_statistics(target)[self.config.statistic]
        if self.tracker is not None:  # OPAD's particles were weighted by the old p̃
            self.tracker = self._new_tracker()
            self._sent_at["opad"] = -1

    def _apply_scheduled_change(self) -> None:
        """Replaying a configuration: change β when the run reaches the step of the next recorded change."""
        while self._scheduled and self._scheduled[0][0] <= self.sampler.n_steps:
            self._change_beta(float(self._scheduled.pop(0)[1]))

    def pace_wait(self) -> float:
        """Seconds to wait before the next step to respect the speed cap (0 if none)."""
        cap = self.config.steps_per_second
        if not cap or self._pace_origin is None or not self.running:
            return 0.0
        origin_time, origin_steps = self._pace_origin
        return origin_time + (self.sampler.n_steps - origin_steps) / cap - time.perf_counter()

    # -- stepping -------------------------------------------------------------------------------------
    def _row(self) -> tuple:
        return trace_row(self.sampler, self._active_seconds, self._statistic)

    def advance(self) -> None:
        """Run steps for up to one chunk and push them to the buffer (and the companion for as much)."""
        chunk_start = last = time.perf_counter()
        steps_before, evals_before = self.sampler.n_steps, self.sampler.n_evals
        if self._pace_origin is None:
            self._pace_origin = (chunk_start, self.sampler.n_steps)
        rows = []
        spent = 0.0  # seconds inside the sampler's steps this chunk
        while len(rows) < CHUNK_STEPS and last - chunk_start < CHUNK_SECONDS:
            if not self.running:
                if self._pending_steps == 0:
                    break
                self._pending_steps -= 1
            elif self.pace_wait() > 0:
                break
            if self._scheduled:
                self._apply_scheduled_change()
            inspected = self.inspected_chain
            before = None if inspected is None else self.sampler.states[inspected].copy()
            started = time.perf_counter()
            record = self.sampler.step(record=self.tracker is not None or inspected is not None)
            stepped = time.perf_counter() - started
            if inspected is not None:
                self._last_move = (inspected, before, record)
            self._active_seconds += stepped
            spent += stepped
            if self.tracker is not None:
                self.tracker.update(record)
                self.tracker.checkpoint(self.sampler.n_steps)
            last = time.perf_counter()
            rows.append(self._row())
        if rows:
            self.buffer.push(chunk_of(rows), self.sampler.states)
        if self.companion is not None:
            gained = {"seconds": spent, "steps": self.sampler.n_steps - steps_before,
                      "evaluations": self.sampler.n_evals - evals_before}[self.companion.axis]
            if gained > 0:
                self.companion.advance(gained)

    def replay_next_move(self, chain: int) -> MoveReplay:
        """Pause, take one step and return ``chain``'s move frame by frame (intracluster moves)."""
        if not self.capabilities.replays_moves:
            raise ValueError(f"{self.config.sampler} does not record its moves' walks")
        self.pause()
        chain = min(max(0, chain), self.sampler.n_chains - 1)
        start = self.sampler.states[chain].copy()
        self.step(1)
        while self.busy:
            self.advance()
        return MoveReplay.from_sampler(start, self.sampler, chain)

    # -- snapshots ------------------------------------------------------------------------------------
    def status(self) -> Status:
        drained_steps = self.sampler.n_steps
        now = time.perf_counter()
        previous_steps, previous_time = self._rate_reference
        if now - previous_time >= 0.5:
            rate = (drained_steps - previous_steps) / (now - previous_time) if self.running else 0.0
            self._rate_reference = (drained_steps, now)
            self._steps_per_second = max(rate, 0.0)
        phase = "failed" if self.failed else self.setting_up or (
            "running" if self.running else READY if drained_steps == 0 else "paused")
        return Status(phase=phase, n_steps=drained_steps, n_evals=self.sampler.n_evals,
                      seconds=self._active_seconds, steps_per_second=self._steps_per_second,
                      acceptance=self.buffer.recent_acceptance())

    def snapshot(self, display: Display, everything: bool = False, quick: bool = False) -> Snapshot:
        """What changed since the previous snapshot (``everything``: a first snapshot for fresh views).

        ``quick``: the answer to a command (a click), which waits for nothing slow — the status, the new trace
        points and the states, without the slow parts (a later snapshot carries them).
        """
        with self._display_cpu.spending():
            return self._snapshot(display, everything, refresh=not quick and self._display_allowed())

    def _snapshot(self, display: Display, everything: bool, refresh: bool) -> Snapshot:
        """``refresh``: whether the slow parts whose time has come are sent (``everything`` sends them all)."""
        drained = self.buffer.drain()
        if everything:
            drained.full_history, drained.new_history, drained.fresh_states = self.buffer.history(), None, True
        parts = {}
        if drained.fresh_states:
            chain = min(display.chain, self.sampler.n_chains - 1)
            states = self.buffer.latest_states()
            shape, positions = self.target.image_shape, self.target.image_positions
            parts["image"] = as_image(states[chain], shape, display.depth, positions)
            if display.mean:
                parts["mean_image"] = as_image(self.buffer.mean_state(chain), shape, display.depth, positions)
            if self.target.registry_name == "dag":
                parts["adjacency"] = self.target.adjacency(states[chain:chain + 1])[0]
            if self.target.registry_name == "rbm":
                parts["hidden_image"] = as_image(self.target.hidden_probabilities(states[chain])[0], None)
        parts.update(self._diagnostics(everything, refresh))
        if "opad" in self._sent_at and self._slow_part_due("opad", self._opad_due, everything, refresh):
            self.tracker.publish(self.sampler.n_steps)
            parts["opad"] = self.tracker.snapshot
        if "adaptive" in self._sent_at and self._slow_part_due("adaptive", self._learning_due, everything, refresh):
            parts.update(self._adaptive_parts(everything))
        move = self._last_move
        if move is not None and move is not self._sent_move and (
                everything or (refresh and self._inspection_due.due())):
            self._sent_move = move
            parts["inspection"] = inspect_move(self.sampler, move[1], move[2], move[0])
        if self.config.beta_changes != self._sent_changes or (everything and self.config.beta_changes):
            self._sent_changes = list(self.config.beta_changes)
            parts["beta_changes"] = tuple(tuple(change) for change in self._sent_changes)
        if "tempering" in self._sent_at and self._slow_part_due("tempering", self._tempering_due, everything, refresh):
            sampler = self.sampler
            parts["tempering"] = TemperingState(betas=sampler.betas, swap_acceptance=sampler.swap_acceptance.copy(),
                                                base=sampler.base, swap_every=sampler.swap_every,
                                                step=sampler.n_steps)
        if self.companion is not None and self._slow_part_due("comparison", self._comparison_due, everything, refresh):
            parts["comparison"] = compare((self.config.sampler, self.config.compare_sampler),
                                          (self.buffer, self.companion.buffer), self.companion.axis,
                                          self.config.statistic)
        return Snapshot(run=self.run, status=self.status(), new_history=drained.new_history,
                        full_history=drained.full_history, **parts)

    def _diagnostics(self, everything: bool, refresh: bool) -> dict:
        """The diagnostics part: computed at once for fresh views, else in the background (sent once finished)."""
        if everything:
            self._diagnosing.drop()
            self._sent_at["diagnostics"] = self.sampler.n_steps
            return {"diagnostics": diagnostics(self.buffer.recent())}
        if not self._diagnosing.busy and self._slow_part_due("diagnostics", self._diagnostics_due, False, refresh):
            self._diagnosing.start(diagnostics, self.buffer.recent())
        finished = self._diagnosing.take()
        if finished is None:
            return {}
        result, seconds = finished
        self._display_cpu.spent_elsewhere(seconds)
        return {"diagnostics": result}

    def _display_allowed(self) -> bool:
        """Whether the snapshots' slow parts may be refreshed: the run is not going on (nothing else wants the CPU),
        or they took at most ``DISPLAY_SHARE`` of its CPU so far."""
        return not self.running or self._display_cpu.allows()

    def _slow_part_due(self, part: str, every: Every, everything: bool, refresh: bool) -> bool:
        """Whether a rate-limited part is sent now: all are for fresh views; else it changed since it was last
        sent, slow parts are refreshed in this snapshot, and its time has come."""
        step = self.sampler.n_steps
        if not everything and (not refresh or self._sent_at[part] == step or not every.due()):
            return False
        self._sent_at[part] = step
        return True

    @property
    def unsent(self) -> bool:
        """Whether a rate-limited part has changed since it was last sent (a later snapshot will carry it)."""
        step = self.sampler.n_steps
        return (any(sent != step for sent in self._sent_at.values()) or self._last_move is not self._sent_move
                or self._diagnosing.busy)

    def _adaptive_parts(self, everything: bool) -> dict:
        """Learning / adaptation state when it changed, and the frozen kernel's parameters once frozen."""
        sampler, parts = self.sampler, {}
        if self.capabilities.learns_balancing:
            learner = sampler.learner
            history = learner.history.snapshot()
            mark = (len(history["step"]), history["step"][-1] if len(history["step"]) else -1, sampler.frozen_at)
            if everything or mark != self._sent_learning:
                self._sent_learning = mark
                parts["learning"] = LearningState(
                    history=history, log_g=self._log_g(),
                    adapting=sampler.adapting, frozen_at=sampler.frozen_at, burn_in=sampler.burn_in,
                    keep_adapting=sampler.keep_adapting, skipped=learner.skipped,
                    parametrization=sampler.parametrization, step=sampler.n_steps)
        if self.capabilities.adapts_walks:
            history = sampler.adaptation_history()
            mark = (len(history["step"]), sampler.frozen_at)
            if everything or mark != self._sent_learning:
                self._sent_learning = mark
                tuned = sampler.frozen_params() or {"gamma": sampler.adaptation.gamma,
                                                    "walk_length": sampler.adaptation.walk_length()}
                parts["adaptation"] = AdaptationState(
                    history=history, adapting=sampler.adapting, frozen_at=sampler.frozen_at,
                    burn_in=sampler.burn_in, gamma=float(tuned["gamma"]), walk_length=tuned["walk_length"],
                    target_acceptance=sampler.target_acceptance, step=sampler.n_steps)
        if self.capabilities.tunes:
            parts["tuning"] = TuningState(
                parameter=sampler.tuned_parameter, value=float(sampler.tuned_value), adapting=sampler.adapting,
                frozen_at=sampler.frozen_at, burn_in=sampler.burn_in, target_acceptance=sampler.target_acceptance,
                step=sampler.n_steps)
        frozen = frozen_record(sampler)
        if frozen is not None:
            parts["frozen"] = frozen
        return parts
