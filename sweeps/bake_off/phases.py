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
   the grid v ∈ {a*·2^k : |k| ≤ ``OCTAVES``} (bounds clipped; integers
   rounded; a value the target refuses, such as PAS's L beyond the dimension,
   left out), each value a fixed kernel run from the same states (the chains
   at the freeze) for a seventh of the other half of the tuning budget. Its
   efficiency is the expected Hamming jump distance per unit of the axis,

       ESJD(v) = Σ_t Σ_chains ‖x_t − x_{t−1}‖₁ / (budget used),

   and the tuned value maximises it. The grid (values, ESJD, acceptance) is the
   tuning curve.

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
from samplers.diagnostics.ess import hamming_distance, hamming_reference
from targets.base import Target

from ..perform import CpuClock

#: The axes a budget can be spent on.
AXES = ("evaluations", "seconds", "steps")
#: The fewest steps a phase takes, whatever its budget (a split-R̂ and an ESS need draws).
MIN_STEPS = 16
#: The efficiency grid spans the acceptance-tuned value × 2^k for |k| ≤ OCTAVES.
OCTAVES = 3
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
    tuned parameter), the tuning curve, the chains' states at the freeze and the budget spent."""

    acceptance_kernel: dict
    efficiency_kernel: dict | None
    parameter: str
    grid: np.ndarray
    grid_efficiency: np.ndarray
    grid_acceptance: np.ndarray
    used: float
    evals: int


def tuned_parameter(name: str) -> str:
    """The parameter a sampler tunes toward an acceptance rate ("" for none)."""
    return getattr(samplers.sampler_class(name), "tuned_parameter", "")


def kernel_record(params: dict) -> dict:
    """A kernel's parameters as their JSON record."""
    return to_jsonable_params(params)


def _grid(sampler_class, parameter: str, centre: float) -> np.ndarray:
    low, high = sampler_class.param[parameter].bounds
    values = np.clip(centre * 2.0 ** np.arange(-OCTAVES, OCTAVES + 1), low, high)
    if isinstance(sampler_class.param[parameter].default, int):
        values = np.maximum(np.round(values), max(low, 1))
    return np.unique(values)


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
    for _ in meter.within(budget / 2 if parameter else budget):  # the same with or without the efficiency grid
        pass
    sampler.freeze()
    acceptance_kernel = kernel_record({**params, **sampler.frozen_params()}) if isinstance(sampler, Adaptive) \
        else kernel_record(params)
    used, evals = meter.used(), meter.evals
    if not (parameter and efficiency):
        return Tuning(acceptance_kernel, None, "", empty, empty, empty, used, evals)
    start = sampler.states.copy()
    integer = isinstance(cls.param[parameter].default, int)
    kept, efficiencies, acceptances = [], [], []
    for k, value in enumerate(_grid(cls, parameter, float(acceptance_kernel[parameter]))):
        value = int(value) if integer else float(value)
        try:
            fixed = samplers.make(name, target, **{**acceptance_kernel, parameter: value}, n_chains=chains,
                                  seed=seed + k + 1, init=start)
        except ValueError:  # a value the target does not allow (PAS's L beyond the dimension)
            continue
        meter = Meter(fixed, axis)
        jumps = accepted = 0
        previous = fixed.states.copy()
        for _ in meter.within(budget / 2 / (2 * OCTAVES + 1)):
            jumps += np.count_nonzero(fixed.states != previous)
            accepted += np.count_nonzero(fixed.last_accepted)
            previous[:] = fixed.states
        kept.append(value)
        efficiencies.append(jumps / meter.used())
        acceptances.append(accepted / (meter.steps * chains))
        used, evals = used + meter.used(), evals + meter.evals
    grid = np.array(kept, dtype=float)
    best = grid[int(np.argmax(efficiencies))]
    efficiency_kernel = {**acceptance_kernel, parameter: int(best) if integer else float(best)}
    return Tuning(acceptance_kernel, efficiency_kernel, parameter, grid, np.array(efficiencies),
                  np.array(acceptances), used, evals)


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
