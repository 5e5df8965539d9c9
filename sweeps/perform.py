"""One run of a sweep, start to finish, in whatever process executes it: ``perform(spec, sweep_seed)``.

The run's sampler is built from the spec's ``RunConfig`` with the seed
``run_seed(sweep seed, run id)`` (its chains started as ``spec.start`` says)
and stepped ``spec.steps`` times. At ``trace_points`` evenly spaced steps
(step 0 included) it records the step, the target evaluations and the
sampler's CPU seconds so far, and what ``spec.traced`` names: for every chain
log p̃ and the configuration's statistic, and a learning sampler's parameters
θ of its balancing function (``balancing_state``, flattened; LSB1's four
mixture logits show what it selects while it learns). It also records the acceptance rate
over all steps, the kernel an adaptive sampler froze to (``frozen``, as the
dashboard's export records it), every chain's state every ``state_every`` steps and, when
``kl_checkpoints`` > 0, the exact KL(P‖π) of every chain's MCMC, OPAD and
OPAD+ estimates at log-spaced steps (a ``ParticleStore`` fed every step
record; the target must be small enough to enumerate). The process loads the
compiled kernels once, before its first run is timed. Timings are CPU seconds
of this process for the sampler's steps and for the store's bookkeeping
(``CpuClock``), and the wall time of the whole run; they are the only
entries that differ between two executions of the same run (``TIMING_KEYS``).
"""

from __future__ import annotations

import json
import platform
import time

import numba
import numpy as np

from engine.capabilities import Capabilities
from engine.config import RunConfig
from engine.opad_tracker import tracking_problem
from engine.session import frozen_record
from engine.statistics import available_statistics
from samplers.common.warmup import kernels_ready, warm_up
from samplers.diagnostics.convergence import over_dispersed_starts
from samplers.opad.store import KINDS, ParticleStore

#: Result entries measured rather than computed: they differ between executions of the same run.
TIMING_KEYS = ("step_seconds", "store_seconds", "wall_seconds", "trace_seconds")


def checkpoints(steps: int, count: int = 7) -> list[int]:
    """``count`` log-spaced steps from 10 (or ``steps`` if fewer) to ``steps``, without repeats."""
    return sorted({int(round(v)) for v in np.geomspace(min(10, steps), steps, count)})


def versions() -> str:
    """The versions a result was computed with (JSON)."""
    return json.dumps({"python": platform.python_version(), "numpy": np.__version__, "numba": numba.__version__})


def traced_steps(steps: int, points: int) -> np.ndarray:
    """The steps a run of ``steps`` steps traces: ``points`` evenly spaced from 0 to ``steps``, without repeats."""
    return np.unique(np.linspace(0, steps, min(points, steps + 1)).round().astype(np.int64))


class CpuClock:
    """CPU seconds of parts of a loop timed with the wall clock.

    Each part is timed with ``time.perf_counter`` (about 50 ns a read, where a
    CPU-time clock is a system call of about 0.6 µs: a third of a particle
    store's bookkeeping on a 15 µs step) and converted with the share of the
    wall time this process has run since the clock started: CPU seconds /
    wall seconds, read from ``time.process_time`` once per conversion. Time
    spent waiting for a core on a shared machine therefore does not count.
    """

    def __init__(self):
        self._cpu, self._wall = time.process_time(), time.perf_counter()

    def cpu_seconds(self, wall_seconds: float) -> float:
        """``wall_seconds`` of a part of the loop as CPU seconds."""
        elapsed = time.perf_counter() - self._wall
        return wall_seconds * (time.process_time() - self._cpu) / elapsed if elapsed > 0 else 0.0


def run_seed(sweep_seed: int, run_id: str) -> int:
    """The seed of a run's sampler: from ``SeedSequence`` on (sweep seed, the run hash's 80 bits)."""
    words = [int(run_id[i:i + 4], 16) for i in range(0, len(run_id), 4)]
    return int(np.random.SeedSequence([sweep_seed, *words]).generate_state(1, dtype=np.uint32)[0])


def perform(spec, sweep_seed: int) -> dict:
    """Run ``spec``, a ``sweeps.RunSpec`` (see the module docstring); the result as a dictionary of arrays and
    numbers."""
    if not kernels_ready():
        warm_up()  # load the compiled kernels once per process, before anything is timed
    started_wall = time.perf_counter()
    seed = run_seed(sweep_seed, spec.run_id)
    config = RunConfig.from_dict({**spec.config.to_dict(), "seed": seed})
    target, sampler = config.build()
    if spec.start == "over_dispersed":
        sampler.reset(over_dispersed_starts(target.dim, sampler.n_chains, np.random.default_rng(seed)))
    statistic = available_statistics(target)[config.statistic]
    store = None
    if spec.kl_checkpoints:
        problem = tracking_problem(target)
        if problem:
            raise ValueError(f"KL checkpoints: {problem}")
        store = ParticleStore(target, scored_neighbours=config.opad_neighbours)
        store.exact()  # log Z by enumeration, once and untimed: the reference of the KL, not bookkeeping
    traced = set(traced_steps(spec.steps, spec.trace_points).tolist())
    marks = set(checkpoints(spec.steps, spec.kl_checkpoints)) if store is not None else set()
    rows, kl_rows, kept_states = [], [], []
    accepted = 0
    clock = CpuClock()
    step_wall = store_wall = 0.0
    for k in range(spec.steps + 1):
        if k:
            started = time.perf_counter()
            record = sampler.step(record=store is not None)
            step_wall += time.perf_counter() - started
            accepted += int(np.count_nonzero(sampler.last_accepted))
            if store is not None:
                feeding = time.perf_counter()  # after the acceptance count, which is neither step nor store
                store.update(record)
                if k in marks:
                    store.flush()
                    kl_rows.append(store.kl_table(range(sampler.n_chains)))
                store_wall += time.perf_counter() - feeding
        if k in traced:
            rows.append((k, sampler.n_evals, clock.cpu_seconds(step_wall),
                         sampler.log_p.copy() if "log_prob" in spec.traced else None,
                         np.array(statistic(sampler.states, sampler.log_p), dtype=np.float64)
                         if "statistic" in spec.traced else None,
                         _flat_balancing(sampler) if "balancing" in spec.traced else None))
        if spec.state_every and k % spec.state_every == 0:
            kept_states.append(sampler.states.copy())
    step, evals, seconds, log_prob, values, balancing = zip(*rows)
    result = {"spec": json.dumps(spec.to_dict(), sort_keys=True), "sweep_seed": sweep_seed, "sampler_seed": seed,
              "trace_step": np.array(step), "trace_evals": np.array(evals), "trace_seconds": np.array(seconds),
              "acceptance": accepted / (spec.steps * sampler.n_chains), "versions": versions(),
              "step_seconds": clock.cpu_seconds(step_wall), "store_seconds": clock.cpu_seconds(store_wall)}
    if "log_prob" in spec.traced:
        result["trace_log_prob"] = np.array(log_prob)
    if "statistic" in spec.traced:
        result["trace_statistic"] = np.array(values)
    if "balancing" in spec.traced:
        result["trace_balancing"] = np.array(balancing)
    frozen = frozen_record(sampler) if Capabilities.of(sampler).adapts else None
    if frozen is not None:
        result["frozen"] = json.dumps(frozen)  # the kernel an adaptive sampler froze to
    if kept_states:
        result["states"] = np.array(kept_states)  # (snapshots, chains, dim)
    if store is not None:
        table = np.array(kl_rows)  # (checkpoints, kinds, chains)
        result |= {"kl_step": np.array(sorted(marks)), "n_particles": store.n_particles, "store_bytes": store.nbytes,
                   **{f"kl_{kind}": table[:, j] for j, kind in enumerate(KINDS)}}
    result["wall_seconds"] = time.perf_counter() - started_wall
    return result


def _flat_balancing(sampler) -> np.ndarray:
    """θ of the sampler's learned balancing function, flattened (empty for a sampler that learns none)."""
    state = sampler.balancing_state() if hasattr(sampler, "balancing_state") else {}
    return np.concatenate([np.ravel(np.asarray(value, dtype=np.float64)) for value in state.values()] or [np.empty(0)])
