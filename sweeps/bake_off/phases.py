"""The two phases of one bake-off run: tuning a sampler's kernel, then measuring the frozen kernel.

Budgets are spent on one axis (``AXES``): the sampler's target evaluations
(over all chains, as the sampler counts them), the CPU seconds of its steps
(``sweeps.perform.CpuClock``), or its steps. A phase steps until its budget is
used (at least ``MIN_STEPS`` steps; the last step may overshoot by one step's
cost, and the used amount is what is recorded).

**Tuning** (``tune``), from the target's random states:

1. *Acceptance (DISCS)*: a sampler with a burn-in (``burn_in`` parameter:
   DMALA's α, DLMC's h and PAS's L tuned toward 57.4 % acceptance by
   Robbins–Monro, ``samplers.gradient.acceptance_tuning``; LSB/FLSB's learned g) adapts
   until its share of the tuning budget is used, then ``freeze()``s; its
   ``frozen_params()`` are the acceptance-tuned kernel a*. A sampler without a
   burn-in has nothing to tune and spends nothing.
2. *Efficiency*: for a sampler with a tuned parameter v (``tuned_parameter``),
   pilot runs of fixed kernels, each from the same states (the chains at the
   freeze) with the same seed (common random numbers: the pilots' errors move
   together, so their differences are sharper than each value), for an equal
   share of the other half of the tuning budget, estimate
   what a user buys, the ESS of log p̃ per unit of the axis,

       efficiency(v) = ESS(log p̃ over the pilot's chains and steps) / (budget used),

   (``samplers.diagnostics.ess.ess`` with ``method="mean"``, over all chains: without rank
   normalisation, less noisy on short traces of a discrete f), not a proxy such
   as the expected jump distance, which can stay flat where ESS moves. The
   values tried: the grid a*·2^k, |k| ≤ ``OCTAVES`` (bounds clipped; integers
   rounded; a value the target refuses, such as PAS's L beyond the dimension,
   left out), then up to ``EXTEND`` octaves further while the best is the
   grid's edge, then the half-octaves around the best (its neighbours for an
   integer). The tuned value maximises a parabola fitted to log efficiency
   against log v over the values within ``FIT_OCTAVES`` of the best tried
   (pilots are short, and their ESS noisy: the fit averages them; the best
   tried when the fit has no maximum among them); every value tried with its
   efficiency and acceptance is the tuning curve. The pilots never spend more
   than their half: a pilot takes at least ``MIN_STEPS`` steps, so when the
   half cannot pay ``MIN_STEPS`` steps of each planned pilot, fewer values are
   tried (the coarse grid's middle ones first), and none when it cannot pay
   three (the efficiency-tuned kernel is then the acceptance-tuned one, and
   ``Tuning.note`` says so).

   When the acceptance target is not reached (``AcceptanceTuned``: the recent
   acceptance ends more than 5 points from it, as DLMC's 57.4 % on models
   where E_π[α] exceeds it for every h), the
   acceptance-tuned value is wherever the drift stopped: the efficiency search
   then starts from the requested value instead, and ``Tuning.note`` says so
   with the acceptance measured at the freeze.

**Measuring** (``measure``): the frozen kernel is built afresh from its
JSON-able record (what the report prints; a replay builds the same kernel)
with chains from over-dispersed starts (``samplers.diagnostics.convergence``) and run for
the budget. Every chain's statistic and its Hamming distance to DISCS's fixed
reference state are kept with the step, evaluations and CPU seconds so far, on
``KEEP_DRAWS``–2·``KEEP_DRAWS`` evenly spaced steps (``ThinnedTrace``: a run
whose length is not known in advance keeps every step until the trace is full,
then every other one, and so on). ESS is therefore at most that many draws per
chain.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

import samplers
from engine.session import to_jsonable_params
from engine.statistics import available_statistics
from samplers.common.adaptive import Adaptive
from samplers.diagnostics.convergence import over_dispersed_starts
from samplers.diagnostics.ess import ess, hamming_distance, hamming_reference
from targets.base import Target

from ..perform import CpuClock

#: The axes a budget can be spent on.
AXES = ("evaluations", "seconds", "steps")
#: The fewest steps a phase takes, whatever its budget (a split-R̂ and an ESS need draws).
MIN_STEPS = 16
#: The efficiency grid spans the acceptance-tuned value × 2^k for |k| ≤ OCTAVES.
OCTAVES = 3
#: Octaves the efficiency search may go past the grid's edge while efficiency still rises there.
EXTEND = 2
#: Pilot runs the efficiency search plans: the grid, the extension and the two values around the best.
PILOTS = 2 * OCTAVES + 1 + EXTEND + 2
#: The efficiency-tuned value maximises a parabola through the values tried within this many octaves of the best.
FIT_OCTAVES = 2
#: A measured run keeps between KEEP_DRAWS and 2·KEEP_DRAWS evenly spaced draws of every chain.
KEEP_DRAWS = 10_000
#: A burn-in long enough never to end by itself: the tuning phase freezes the sampler when its budget is used.
UNTIL_FROZEN = 10 ** 15


class Meter:
    """Steps a sampler and says how much of a budget on ``axis`` it has used since the meter started."""

    def __init__(self, sampler, axis: str):
        if axis not in AXES:
            raise ValueError(f"axis must be one of {AXES}; got {axis!r}")
        self.sampler, self.axis = sampler, axis
        self.steps, self._evals, self.wall, self._clock = 0, sampler.n_evals, 0.0, CpuClock()

    @property
    def evals(self) -> int:
        return self.sampler.n_evals - self._evals

    def seconds(self) -> float:
        """CPU seconds of the steps so far (``CpuClock``: their wall time at this process's share of the CPU)."""
        return self._clock.cpu_seconds(self.wall)

    def used(self) -> float:
        if self.axis == "seconds":
            return self.seconds()
        return float(self.evals if self.axis == "evaluations" else self.steps)

    def within(self, budget: float):
        """Step until ``budget`` is used (and at least ``MIN_STEPS`` steps), yielding the step count after each."""
        while self.steps < MIN_STEPS or (used := self.used()) < budget:
            if self.steps >= MIN_STEPS and used == 0:
                raise ValueError(f"{self.sampler.registry_name} spends nothing on the {self.axis} axis; use another")
            started = time.perf_counter()
            self.sampler.step(record=False)
            self.wall += time.perf_counter() - started
            self.steps += 1
            yield self.steps


class ThinnedTrace:
    """Rows at steps 0, e, 2e, … with e doubling (every other row dropped) whenever 2·``keep`` rows are held."""

    def __init__(self, keep: int):
        self.keep, self.every, self.rows = keep, 1, []

    def wants(self, step: int) -> bool:
        return step % self.every == 0

    def add(self, row: tuple) -> None:
        self.rows.append(row)
        if len(self.rows) >= 2 * self.keep:
            self.rows, self.every = self.rows[::2], 2 * self.every


@dataclass
class Tuning:
    """What a tuning phase found: the acceptance-tuned (DISCS) kernel, the efficiency-tuned one (None without a
    tuned parameter), the tuning curve (values tried in increasing order, their efficiency and acceptance), the
    budget spent, and what the tuning could not do as planned (``note``, "" when nothing)."""

    acceptance_kernel: dict
    efficiency_kernel: dict | None
    parameter: str
    grid: np.ndarray
    grid_efficiency: np.ndarray
    grid_acceptance: np.ndarray
    used: float
    evals: int
    note: str = ""


def tuned_parameter(name: str) -> str:
    """The parameter a sampler tunes toward an acceptance rate ("" for none)."""
    return getattr(samplers.sampler_class(name), "tuned_parameter", "")


def kernel_record(params: dict) -> dict:
    """A kernel's parameters as their JSON record."""
    return to_jsonable_params(params)


class EfficiencySearch:
    """The efficiency tuning's pilot runs (module docstring): ``try_value`` runs one, ``best`` is the best so far."""

    def __init__(self, target: Target, name: str, kernel: dict, start: np.ndarray, seed: int, axis: str,
                 pilot_budget: float):
        self.target, self.name, self.kernel, self.start, self.seed = target, name, kernel, start, seed
        self.axis, self.pilot_budget = axis, pilot_budget
        self.cls = samplers.sampler_class(name)
        self.parameter = tuned_parameter(name)
        self.low, self.high = self.cls.param[self.parameter].bounds
        self.integer = isinstance(self.cls.param[self.parameter].default, int)
        self.tried: dict[float, tuple[float, float]] = {}  # value → (efficiency, acceptance)
        self.used = 0.0
        self.evals = 0

    def value(self, raw: float) -> float:
        """``raw`` within the parameter's bounds (rounded, at least 1, for an integer)."""
        value = min(max(raw, self.low), self.high)
        return float(max(round(value), max(self.low, 1))) if self.integer else float(value)

    def try_value(self, raw: float) -> None:
        """One pilot run of the fixed kernel at ``raw`` (as ``value`` makes it), unless tried or refused."""
        value = self.value(raw)
        if value in self.tried:
            return
        try:
            fixed = samplers.make(self.name, self.target, **{**self.kernel, self.parameter: self._typed(value)},
                                  n_chains=self.start.shape[0], seed=self.seed + 1, init=self.start)
        except ValueError:  # a value the target does not allow (PAS's L beyond the dimension)
            return
        meter = Meter(fixed, self.axis)
        trace, accepted = [fixed.log_p.copy()], 0
        for _ in meter.within(self.pilot_budget):
            trace.append(fixed.log_p.copy())
            accepted += np.count_nonzero(fixed.last_accepted)
        self.tried[value] = (ess(np.array(trace).T, method="mean") / meter.used(),
                             accepted / (meter.steps * self.start.shape[0]))
        self.used, self.evals = self.used + meter.used(), self.evals + meter.evals

    def _typed(self, value: float):
        return int(value) if self.integer else value

    @property
    def best(self) -> float:
        return max(self.tried, key=lambda value: self.tried[value][0])

    def fitted_best(self) -> float:
        """The maximum of a parabola fitted (least squares) to log efficiency against log₂ v over the values tried
        within ``FIT_OCTAVES`` of the best, which averages the pilots' noise; the best tried when fewer than three
        values are there, the parabola opens upward or its maximum lies outside them."""
        best = self.best
        near = [v for v in self.tried if abs(np.log2(v / best)) <= FIT_OCTAVES and self.tried[v][0] > 0]
        if len(near) < 3:
            return best
        u = np.log2(near)
        c, b, _ = np.polyfit(u, np.log([self.tried[v][0] for v in near]), 2)
        if not c < 0 or not u.min() <= -b / (2 * c) <= u.max():
            return best
        return self.value(2.0 ** (-b / (2 * c)))

    def search(self, centre: float, pilots: int) -> dict:
        """Try at most ``pilots`` values: the grid around ``centre`` (its middle first), the extension past an
        edge, the values around the best; the efficiency-tuned kernel."""
        order = sorted(range(-OCTAVES, OCTAVES + 1), key=abs)
        for k in order[:pilots]:
            self.try_value(centre * 2.0 ** k)
        for _ in range(EXTEND):
            edge = self.best
            if len(self.tried) >= pilots or edge not in (min(self.tried), max(self.tried)) or len(self.tried) < 2:
                break
            self.try_value(edge * (2.0 if edge == max(self.tried) else 0.5))
        best = self.best
        for raw in ((best - 1, best + 1) if self.integer else (best / 2 ** 0.5, best * 2 ** 0.5)):
            if len(self.tried) < pilots:
                self.try_value(raw)
        return {**self.kernel, self.parameter: self._typed(self.fitted_best())}

    def curve(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        values = np.array(sorted(self.tried), dtype=float)
        return values, np.array([self.tried[v][0] for v in values]), np.array([self.tried[v][1] for v in values])


def acceptance_note(sampler, requested) -> str:
    """Why the acceptance-tuned value is no target's (``AcceptanceTuned.acceptance_target_reached`` is False), and
    where the efficiency search starts instead: the ``requested`` value."""
    return (f"the {sampler.target_acceptance:.1%} acceptance target was not reached: acceptance "
            f"{sampler.tuning_acceptance:.1%} at the freeze, where {sampler.tuned_parameter} had drifted to "
            f"{sampler.tuned_value:g}; the efficiency search starts from the requested {requested:g} instead")


def tune(target: Target, name: str, params: dict, chains: int, seed: int, axis: str, budget: float,
         efficiency: bool = True) -> Tuning:
    """The tuning phase (module docstring) within ``budget`` on ``axis``; ``efficiency=False`` stops after the
    acceptance tuning."""
    cls = samplers.sampler_class(name)
    parameter = tuned_parameter(name)
    empty = np.zeros(0)
    if "burn_in" not in cls.param:
        return Tuning(kernel_record(params), None, "", empty, empty, empty, 0.0, 0)
    sampler = samplers.make(name, target, **{**params, "burn_in": UNTIL_FROZEN}, n_chains=chains, seed=seed)
    meter = Meter(sampler, axis)
    for _ in meter.within(budget / 2 if parameter else budget):  # the same with or without the efficiency search
        pass
    sampler.freeze()
    acceptance_kernel = kernel_record({**params, **sampler.frozen_params()}) if isinstance(sampler, Adaptive) \
        else kernel_record(params)
    used, evals = meter.used(), meter.evals
    requested = params.get(parameter, cls.param[parameter].default) if parameter else None
    reached = not parameter or sampler.acceptance_target_reached() is not False
    note = "" if reached else acceptance_note(sampler, requested)
    if not (parameter and efficiency):
        return Tuning(acceptance_kernel, None, "", empty, empty, empty, used, evals, note)
    step_cost = used / meter.steps
    pilots = min(PILOTS, int(budget / 2 // (MIN_STEPS * step_cost))) if step_cost > 0 else PILOTS
    if pilots < 3:
        note = "; ".join(filter(None, [note, f"no efficiency search: its half of the budget pays {pilots} pilot "
                                             f"runs of {MIN_STEPS} steps, fewer than 3"]))
        return Tuning(acceptance_kernel, acceptance_kernel, parameter, empty, empty, empty, used, evals, note)
    search = EfficiencySearch(target, name, acceptance_kernel, sampler.states.copy(), seed, axis,
                              budget / 2 / pilots)
    efficiency_kernel = search.search(float(acceptance_kernel[parameter] if reached else requested), pilots)
    return Tuning(acceptance_kernel, efficiency_kernel, parameter, *search.curve(), used + search.used,
                  evals + search.evals, note)


def measure(target: Target, name: str, kernel: dict, chains: int, seed: int, axis: str, budget: float,
            statistic: str) -> dict:
    """The measuring phase (module docstring): the trace arrays, the acceptance and the budget used."""
    starts = over_dispersed_starts(target.dim, chains, np.random.default_rng(seed))
    sampler = samplers.make(name, target, **kernel, n_chains=chains, seed=seed, init=starts)
    if getattr(sampler, "adapting", False):
        raise ValueError(f"the kernel {kernel} of {name} still adapts; a measured kernel must be frozen")
    f = available_statistics(target)[statistic]
    reference = hamming_reference(target.dim)
    meter = Meter(sampler, axis)
    trace = ThinnedTrace(KEEP_DRAWS)

    def row(step: int) -> tuple:
        return (step, meter.evals, meter.wall, np.array(f(sampler.states, sampler.log_p), dtype=np.float64),
                hamming_distance(sampler.states, reference).astype(np.float64))

    trace.add(row(0))
    accepted = 0
    for step in meter.within(budget):
        accepted += int(np.count_nonzero(sampler.last_accepted))
        if trace.wants(step):
            trace.add(row(step))
    steps, evals, walls, values, distances = (np.array(column) for column in zip(*trace.rows))
    seconds = meter.seconds()
    to_cpu = seconds / meter.wall if meter.wall else 0.0  # one conversion for every row: the times increase
    return {"trace_step": steps, "trace_evals": evals, "trace_seconds": walls * to_cpu, "trace_statistic": values,
            "trace_hamming": distances, "acceptance": accepted / (meter.steps * chains), "steps": meter.steps,
            "evals": meter.evals, "step_seconds": seconds, "used": float(meter.used())}
