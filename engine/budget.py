"""A run's memory, estimated before anything is allocated, and the server's budget (model code).

A served dashboard runs every session's sampler in a worker process of its
own (``engine.worker``). Before a worker builds a configuration,
``estimate(config, budget)`` adds up what the run will hold, from the
parameters alone:

* the target (``Target.estimate_size``: couplings, tables, data);
* the sampler and the comparison sampler (``Sampler.estimated_bytes``:
  states, flip-ratio caches, sum-trees, learning state);
* the traces (``TraceBuffer.estimated_bytes``: history, recent window, latest
  states and their running mean);
* the scratch of scoring all d neighbours of every chain at once on a black
  box (n·d states of d bytes);
* OPAD's exact KL (targets with d ≤ 24): the enumeration of all 2^d states
  and the particle store, whose capacity is cut to what the budget leaves
  (never more than 2^d or ``MAX_PARTICLES`` distinct states).

``check`` refuses a configuration over the per-run budget with a message
that says what would need the memory. The estimate is the first line of
defence; the worker's hard memory limit (``Budget.run_bytes`` above its
start-up size) is the second, so a wrong estimate still ends only that run.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field

import samplers
import targets
from samplers.balanced.locally_balanced import LocallyBalanced
from samplers.intracluster.walks import Intracluster
from samplers.opad.particle_index import words_per_state
from targets.base import MAX_ENUMERATE_DIM, Target

from .buffer import TraceBuffer
from .config import RunConfig
from .opad_tracker import MAX_PARTICLES
from .uploads import DEFAULT_LIMITS, UploadLimits, format_bytes

#: One gigabyte: sizes are decimal everywhere (``uploads.format_bytes``, the README), so 2 GB reads "2 GB".
GB = 10**9
#: Fewest distinct states an OPAD store may hold before tracking is not worth it.
MIN_PARTICLES = 10_000


@dataclass(frozen=True)
class Budget:
    """What one server lets its sessions use (set by ``panel serve app.py --args …``, see ``app.py``)."""

    run_bytes: int = 2 * GB  # one run's estimate, and its worker's hard limit above start-up size
    total_bytes: int = 16 * GB  # all runs of the server together
    max_workers: int = 40  # concurrent sessions with a run
    idle_seconds: float = 120.0  # a worker that hears nothing from its session for this long ends
    uploads: UploadLimits = field(default_factory=lambda: DEFAULT_LIMITS)


class BudgetExceeded(ValueError):
    """A configuration needs more memory than the budget allows."""


@dataclass(frozen=True)
class Estimate:
    """Bytes a run will hold, by part, and the particle capacity of its OPAD store (0 without OPAD)."""

    parts: dict
    opad_particles: int = 0

    @property
    def total(self) -> int:
        return int(sum(self.parts.values()))

    def describe(self) -> str:
        largest = sorted(self.parts.items(), key=lambda item: -item[1])
        return ", ".join(f"{name} {format_bytes(size)}" for name, size in largest if size >= 1e6) or "small"


def _particle_bytes(n_chains: int, dim: int) -> int:
    """Bytes per distinct state in a ``ParticleStore``: visit and proposal counts per chain and pooled
    (int32), log p̃, the state's 64-bit words and two 16-byte hash slots per particle of capacity; ×3 for
    capacity doubling and the copy while it grows."""
    return 3 * (8 * (n_chains + 1) + 8 + 8 * words_per_state(dim) + 32)


def _enumeration_bytes(dim: int) -> int:
    """Peak bytes of enumerating 2^d states with their log p̃ and probabilities (and one column of codes)."""
    return 2**dim * (dim + 3 * 8 + 8)


def _neighbourhood_bytes(config: RunConfig, n_chains: int, dim: int) -> int:
    """Scratch of scoring every single-flip neighbour at once on a target without local ratios (a black box).

    Locally balanced samplers (and LSB) and intracluster moves score all d
    neighbours of each chain; a target that keeps the generic
    ``Target._delta_log_prob`` materialises those n·d states (d bytes each)
    and their log p̃ to do it.
    """
    names = [config.sampler] + ([config.compare_sampler] if config.compare_sampler else [])
    scores_all = any(issubclass(samplers.sampler_class(name), (LocallyBalanced, Intracluster)) for name in names)
    generic = targets.target_class(config.target)._delta_log_prob is Target._delta_log_prob
    return n_chains * dim * (dim + 16) if scores_all and generic else 0


def estimate(config: RunConfig, budget: Budget) -> Estimate:
    """What ``config`` will hold once built and running, from its parameters alone."""
    size = targets.target_class(config.target).estimate_size(config.target_params)
    n, d = config.n_chains, size.dim
    sampler_params = {**config.sampler_params, **({"record_neighbours": True} if config.opad_neighbours else {})}
    parts = {
        "target": size.model_bytes,
        f"sampler ({n} chains × {d:,} bits)": samplers.sampler_class(config.sampler).estimated_bytes(
            n, d, sampler_params),
        "traces": TraceBuffer.estimated_bytes(n, d),
        "scoring all neighbours at once": _neighbourhood_bytes(config, n, d),
    }
    if config.compare_sampler:
        parts["comparison sampler"] = samplers.sampler_class(config.compare_sampler).estimated_bytes(
            n, d, config.compare_params) + TraceBuffer.estimated_bytes(n, d)
    particles = 0
    if config.opad and d <= MAX_ENUMERATE_DIM:
        parts["OPAD enumeration of 2^d states"] = _enumeration_bytes(d)
        per_particle = _particle_bytes(n, d)
        left = budget.run_bytes - sum(parts.values())
        particles = int(min(MAX_PARTICLES, 2**d, max(MIN_PARTICLES, left // per_particle)))
        parts["OPAD particle store"] = particles * per_particle
    return Estimate(parts, particles)


def check(config: RunConfig, budget: Budget) -> Estimate:
    """The estimate of ``config``, or ``BudgetExceeded`` saying what does not fit in one run's budget."""
    found = estimate(config, budget)
    if found.total > budget.run_bytes:
        advice = "use fewer chains or a smaller model"
        if any(name.startswith("OPAD") for name in found.parts):
            advice += ", or turn OPAD tracking off"
        raise BudgetExceeded(f"this run would need about {format_bytes(found.total)} of memory "
                             f"({found.describe()}); one run may use {format_bytes(budget.run_bytes)} "
                             f"on this server: {advice}")
    return found


def parse_size(text: str) -> int:
    """'2GB', '512MB', '10 MB', '1.5GiB' or a number of bytes → bytes."""
    units = {"": 1, "B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12,
             "KIB": 2**10, "MIB": 2**20, "GIB": 2**30, "TIB": 2**40}
    cleaned = text.strip().upper().replace(" ", "")
    number = cleaned.rstrip("KMGTIB")
    unit = cleaned[len(number):]
    if unit not in units:
        raise ValueError(f"not a size: {text!r} (write e.g. 2GB or 512MB)")
    return int(float(number) * units[unit])


def budget_from_arguments(arguments: list[str] | None = None) -> Budget:
    """The server's budget from ``panel serve app.py --args …`` (``sys.argv`` by default)."""
    parser = argparse.ArgumentParser(prog="panel serve app.py --args", description="The dashboard's budget.")
    defaults = Budget()
    parser.add_argument("--max-workers", type=int, default=defaults.max_workers)
    parser.add_argument("--run-memory", type=parse_size, default=defaults.run_bytes)
    parser.add_argument("--total-memory", type=parse_size, default=defaults.total_bytes)
    parser.add_argument("--upload-limit", type=parse_size, default=defaults.uploads.file_bytes)
    parser.add_argument("--idle-seconds", type=float, default=defaults.idle_seconds)
    options = parser.parse_args(sys.argv[1:] if arguments is None else arguments)
    uploads = UploadLimits(file_bytes=options.upload_limit, decompressed_bytes=defaults.uploads.decompressed_bytes)
    return Budget(run_bytes=options.run_memory, total_bytes=options.total_memory, max_workers=options.max_workers,
                  idle_seconds=options.idle_seconds, uploads=uploads)
