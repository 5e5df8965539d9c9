"""What a sweep runs: ``Task``s — usually ``RunSpec``s (one run, identified by a hash of its description) — and
``Sweep`` (a named set of them).

A run's identity is the SHA-256 of its canonical JSON description — the
``RunConfig`` (whose ``seed`` is the run's replicate number, not its random
stream), the number of steps and what is recorded — so the same run has the
same id in every sweep, on every machine, and a changed setting is a new run.
Its sampler's seed is drawn from ``SeedSequence([sweep seed, run hash])``
(``run_seed``): it depends on nothing else, in particular not on the order in
which runs are executed or on how many workers execute them. (A run's chains
are vectorised inside one sampler and share its stream.)
"""

from __future__ import annotations

import hashlib
import itertools
import json
from abc import ABC, abstractmethod
from dataclasses import dataclass


from engine.config import RunConfig


#: Version of the run description and result layout; part of every run's hash.
FORMAT = 2
#: What a run can trace at its trace points, besides the step, the evaluations and the CPU seconds so far:
#: log p̃ and the statistic of every chain, and a learned balancing function's parameters θ (LSB's, flattened).
TRACEABLE = ("log_prob", "statistic", "balancing")
#: How a run's chains can start: the target's random states, or over-dispersed ones (all zeros, all ones and
#: random states in turn, ``samplers.diagnostics.convergence.over_dispersed_starts``) as a long reference run needs.
STARTS = ("random", "over_dispersed")


class Task(ABC):
    """What a sweep runs, identified by its ``description()`` (a JSON dictionary; the ``label`` names it in tables
    and is not part of it): the run id is the first 80 bits of the SHA-256 of the description's canonical JSON,
    and two tasks are the same run when their ids are. ``RunSpec`` is the usual task, data that
    ``sweeps.perform`` runs; an experiment whose unit is not one configuration (several samplers given equal
    compute time in one process, say) defines its own, with a ``perform(sweep_seed)`` method. Either way a run's
    result is what is stored (arrays, numbers and strings), its random streams from
    ``run_seed(sweep_seed, run_id)`` only (``sweeps.runner.perform_task`` runs any task)."""

    label: str

    @abstractmethod
    def description(self) -> dict:
        """The canonical description the run id hashes."""

    @property
    def run_id(self) -> str:
        text = json.dumps(self.description(), sort_keys=True, separators=(",", ":"), ensure_ascii=True)
        return hashlib.sha256(text.encode()).hexdigest()[:20]

    def to_dict(self) -> dict:
        return {**self.description(), "label": self.label}

    def __eq__(self, other) -> bool:
        return isinstance(other, Task) and other.run_id == self.run_id

    def __hash__(self) -> int:
        return hash(self.run_id)


@dataclass(frozen=True, eq=False)
class RunSpec(Task):
    """One run: ``config`` (its ``seed`` numbers the replicate) stepped ``steps`` times.

    ``trace_points``: how many evenly spaced steps (step 0 and the last
    included; ``steps + 1`` or more is every step) keep what ``traced`` names for
    every chain — log p̃ and the configuration's statistic; ``state_every``:
    when > 0, every chain's state is kept every that many steps (step 0
    included); ``kl_checkpoints``: when > 0 (and the target can be
    enumerated), the exact KL(P‖π) of every chain's MCMC, OPAD and OPAD+
    estimates at that many log-spaced steps; ``start``: one of ``STARTS``;
    ``label``: the run's name in tables (not part of its id).
    """

    config: RunConfig
    steps: int
    trace_points: int = 200
    kl_checkpoints: int = 0
    label: str = ""
    traced: tuple[str, ...] = TRACEABLE
    state_every: int = 0
    start: str = "random"

    def __post_init__(self):
        if self.steps < 1 or self.trace_points < 2 or self.kl_checkpoints < 0:
            raise ValueError(f"a run needs steps ≥ 1, trace_points ≥ 2 and kl_checkpoints ≥ 0; got {self.steps}, "
                             f"{self.trace_points}, {self.kl_checkpoints}")
        if not set(self.traced) <= set(TRACEABLE) or self.start not in STARTS or self.state_every < 0:
            raise ValueError(f"a run traces some of {TRACEABLE}, starts from one of {STARTS} and keeps states "
                             f"every ≥ 0 steps; got {self.traced}, {self.start!r}, {self.state_every}")

    def description(self) -> dict:
        """The canonical description the run id hashes (the label excepted)."""
        return {"format": FORMAT, "config": self.config.to_dict(), "steps": self.steps,
                "trace_points": self.trace_points, "kl_checkpoints": self.kl_checkpoints,
                "traced": list(self.traced), "state_every": self.state_every, "start": self.start}

    @classmethod
    def from_dict(cls, data: dict) -> RunSpec:
        if data.get("format", FORMAT) != FORMAT:
            raise ValueError(f"run format {data.get('format')} is not {FORMAT}")
        return cls(RunConfig.from_dict(data["config"]), int(data["steps"]), int(data.get("trace_points", 200)),
                   int(data.get("kl_checkpoints", 0)), str(data.get("label", "")),
                   tuple(data.get("traced", TRACEABLE)), int(data.get("state_every", 0)),
                   str(data.get("start", "random")))


@dataclass(frozen=True)
class Sweep:
    """A named set of independent runs (``Task``s, usually ``RunSpec``s) and the seed their streams derive from."""

    name: str
    seed: int
    runs: tuple[Task, ...]

    def __post_init__(self):
        ids = [run.run_id for run in self.runs]
        if len(set(ids)) != len(ids):
            raise ValueError(f"sweep {self.name!r} lists the same run twice")
        if not self.name or any(char in self.name for char in "/\\") or self.name.startswith("."):
            raise ValueError(f"a sweep's name must be a plain directory name; got {self.name!r}")

    def to_dict(self) -> dict:
        return {"name": self.name, "seed": self.seed, "runs": [run.to_dict() for run in self.runs]}

    @classmethod
    def from_dict(cls, data: dict) -> Sweep:
        """A sweep of ``RunSpec``s from its ``to_dict()``."""
        return cls(str(data["name"]), int(data["seed"]), tuple(RunSpec.from_dict(run) for run in data["runs"]))


def grid(base: dict, axes: dict[str, list], steps: int, replicates: int = 1, **spec) -> tuple[RunSpec, ...]:
    """The runs of every combination of ``axes`` (``RunConfig`` keys → values) over ``base``, each replicated
    ``replicates`` times (``seed`` 0, 1, …: the replicate number; ``run_seed`` makes the streams)."""
    keys = list(axes)
    runs = []
    for values in itertools.product(*(axes[key] for key in keys)):
        for replicate in range(replicates):
            config = RunConfig.from_dict({**base, **dict(zip(keys, values)), "seed": replicate})
            label = ", ".join(f"{key}={value}" for key, value in zip(keys, values))
            runs.append(RunSpec(config, steps, label=f"{label} #{replicate}" if replicates > 1 else label, **spec))
    return tuple(runs)
