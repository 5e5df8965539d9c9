"""The target of a bake-off as data a sweep can ship and hash: ``TargetSource`` (a registry name and parameters).

A user's target arrives as a built ``Target`` (a registered model,
``targets.from_log_prob(fn, dim)``), a registry name, couplings (a matrix J, or
(J, h)), or a file (``.uai`` Markov network, ``.npz``/``.csv`` couplings, read
as the dashboard reads uploads, with limits for a file of the user's own:
``LOCAL_FILE_LIMITS``). Every form becomes a registry name and the
target's parameters; each run of the sweep rebuilds the target from them in
its own process (Dask ships a ``from_log_prob`` function with cloudpickle).

A run's id hashes ``description()``, which identifies the target without
holding it:

* the SHA-256 of the canonical JSON of its JSON-able parameters (arrays as
  lists; for a ``.uai`` file its text, so the file's bytes decide);
* for parameters that are functions (``fn``, ``grad``), which JSON cannot
  hold: the target's dimension and its log p̃ on ``PROBES`` fixed states
  (uniform bits from seed 0), hashed at full precision. Two functions equal on
  these states share stored runs — a changed model changes its values there
  with probability one in practice, but not in principle: a results directory
  is the user's to clear when they change their function that way.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

import targets
from engine.config import to_jsonable
from engine.uploads import UploadLimits, parse_upload
from targets.base import Target

#: Fixed states on which a function-valued target is probed for its identity.
PROBES = 64
#: A local file is the user's own, not a stranger's upload: no size limit on the file, and its arrays may take up to
#: 16 GB decompressed (a guard against a zip bomb, not against a large model).
LOCAL_FILE_LIMITS = UploadLimits(file_bytes=2**62, decompressed_bytes=16 * 10**9)
#: File suffixes read as targets, and the registered target each becomes.
FILE_TARGETS = {".uai": "markov_network", ".npz": "boltzmann", ".csv": "boltzmann"}


def _digest(value) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


@dataclass(frozen=True, eq=False)
class TargetSource:
    """A registered target's name and parameters (functions allowed): what a run rebuilds its target from."""

    name: str
    params: dict = field(default_factory=dict)

    def build(self) -> Target:
        return targets.make(self.name, **self.params)

    def description(self) -> dict:
        """What a run id hashes to identify the target (see the module docstring)."""
        plain = {key: to_jsonable(value) for key, value in self.params.items() if not callable(value)}
        out = {"target": self.name, "params_sha256": _digest(plain)}
        functions = sorted(key for key, value in self.params.items() if callable(value))
        if functions:
            target = self.build()
            probes = np.random.default_rng(0).integers(0, 2, size=(PROBES, target.dim), dtype=np.uint8)
            out |= {"functions": functions, "dim": target.dim,
                    "probe_sha256": _digest([float(v).hex() for v in target.log_prob(probes)])}
        return out


def as_source(target, target_params: dict | None = None) -> TargetSource:
    """A ``TargetSource`` from what a user has (see the module docstring); ``target_params`` go with a name."""
    if isinstance(target, TargetSource):
        return target
    if isinstance(target, Target):
        return TargetSource(target.registry_name, {key: value for key, value in target.param.values().items()
                                                   if key != "name"})
    if isinstance(target, tuple):
        couplings, field_ = target
        return TargetSource("boltzmann", {"J": np.asarray(couplings, dtype=float), "h": np.asarray(field_, float)})
    if isinstance(target, np.ndarray):
        return TargetSource("boltzmann", {"J": np.asarray(target, dtype=float)})
    if isinstance(target, (str, Path)) and Path(target).suffix.lower() in FILE_TARGETS:
        path = Path(target)
        name = FILE_TARGETS[path.suffix.lower()]
        return TargetSource(name, {**parse_upload(name, path.name, path.read_bytes(), LOCAL_FILE_LIMITS),
                                   **(target_params or {})})
    if isinstance(target, str):
        targets.target_class(target)  # an unknown name says which names there are
        return TargetSource(target, dict(target_params or {}))
    raise ValueError(f"a bake-off's target is a Target, a registered name, couplings J or (J, h), or a "
                     f"{'/'.join(FILE_TARGETS)} file; got {type(target).__name__}")
