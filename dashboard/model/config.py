"""A run's configuration as data: what to sample, how, with which seed.

A ``RunConfig`` names a target and a sampler from the registries with their
parameters, the number of chains, the seed, the speed cap and the summary
statistic. It round-trips through JSON (``to_json`` / ``from_json``) and
``build()`` turns it into a fresh target and sampler (and ``build_companion``
the optional second sampler run beside it for the same compute time), so the
same JSON always reproduces the same run step for step. Model code: no Panel import.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import param

import samplers
import targets
from samplers.base import Sampler
from targets.base import Target

from .statistics import statistic_names

#: Largest configuration file accepted from a user (bytes).
MAX_CONFIG_BYTES = 5_000_000
#: Sampler parameters that define the state space, shared with a comparison sampler that has them.
SHARED_SPACE_PARAMETERS = ("n_active", "reference")
#: Keys of a configuration dictionary.
CONFIG_KEYS = ("target", "target_params", "sampler", "sampler_params", "n_chains", "seed",
               "steps_per_second", "statistic", "opad", "opad_neighbours", "compare_sampler", "compare_params")


def to_jsonable(value: Any) -> Any:
    """Arrays (dense or sparse) become nested lists; everything else is left as it is."""
    if hasattr(value, "toarray"):
        value = value.toarray()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    return value


def _from_jsonable(cls: type[param.Parameterized], params: dict) -> dict:
    """Lists for array-valued parameters become arrays again."""
    out = {}
    for key, value in params.items():
        spec = cls.param[key] if key in cls.param else None
        wants_array = isinstance(spec, param.ClassSelector) and spec.class_ is np.ndarray
        out[key] = np.asarray(value, dtype=np.float64) if wants_array and value is not None else value
    return out


class RunConfig(param.Parameterized):
    """Everything that determines a run."""

    target = param.Selector(default="ising_segmentation", objects=targets.available(), doc="Target distribution.")
    target_params = param.Dict(default={}, doc="Parameters of the target (registry defaults where absent).")
    sampler = param.Selector(default="locally_balanced", objects=samplers.available(), doc="MCMC sampler.")
    sampler_params = param.Dict(default={}, doc="Parameters of the sampler other than n_chains and seed.")
    n_chains = param.Integer(8, bounds=(1, 256), doc="Number of chains run side by side.")
    seed = param.Integer(0, bounds=(0, 2**32 - 1), doc="Seed of the sampler (same seed, same run).")
    steps_per_second = param.Number(0.0, bounds=(0.0, 1e6),
                                    doc="Cap on sampler steps per second; 0 runs as fast as possible.")
    statistic = param.String("log_prob", doc="Summary statistic traced for every chain.")
    opad = param.Boolean(True, doc="Feed every step to an OPAD particle store and track the exact KL of MCMC, "
                                   "OPAD and OPAD+ (targets with d ≤ 24).")
    opad_neighbours = param.Boolean(False, doc="OPAD+ also holds every single-flip neighbour the sampler scored "
                                               "(locally_balanced and lsb only).")
    compare_sampler = param.Selector(default="", objects=["", *samplers.available()],
                                     doc="A second sampler run on the same target for the same compute time, "
                                         "side by side ('' for none).")
    compare_params = param.Dict(default={}, doc="Parameters of the comparison sampler.")

    def to_dict(self) -> dict:
        values = {key: getattr(self, key) for key in CONFIG_KEYS}
        values["target_params"] = {k: to_jsonable(v) for k, v in self.target_params.items()}
        values["sampler_params"] = {k: to_jsonable(v) for k, v in self.sampler_params.items()}
        return values

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2)

    @classmethod
    def from_dict(cls, data: dict) -> RunConfig:
        """Validated configuration from a dictionary (raises ``ValueError`` with the reason)."""
        if not isinstance(data, dict):
            raise ValueError("a configuration must be a JSON object")
        unknown = sorted(set(data) - set(CONFIG_KEYS))
        if unknown:
            raise ValueError(f"unknown configuration keys {unknown}; expected some of {list(CONFIG_KEYS)}")
        for key in ("target_params", "sampler_params"):
            if not isinstance(data.get(key, {}), dict):
                raise ValueError(f"{key} must be a JSON object")
        try:
            return cls(**data)
        except ValueError as error:
            raise ValueError(f"invalid configuration: {error}") from None

    @classmethod
    def from_json(cls, text: str | bytes) -> RunConfig:
        if len(text) > MAX_CONFIG_BYTES:
            raise ValueError(f"configuration file is larger than {MAX_CONFIG_BYTES:,} bytes")
        try:
            data = json.loads(text)
        except (json.JSONDecodeError, UnicodeDecodeError) as error:
            raise ValueError(f"configuration is not valid JSON: {error}") from None
        return cls.from_dict(data)

    def build_target(self) -> Target:
        cls = targets.target_class(self.target)
        return cls(**_from_jsonable(cls, self.target_params))

    def build(self) -> tuple[Target, Sampler]:
        """A fresh target and sampler for this configuration, or ``ValueError`` saying why not."""
        try:
            target = self.build_target()
            if self.statistic not in statistic_names(target):
                raise ValueError(f"statistic {self.statistic!r} is not available for {self.target}; "
                                 f"choose one of {statistic_names(target)}")
            sampler_params = dict(self.sampler_params)
            if self.opad_neighbours:
                if "record_neighbours" not in samplers.sampler_class(self.sampler).param:
                    raise ValueError(f"OPAD+ with all scored states needs a sampler that scores every neighbour "
                                     f"(locally_balanced or lsb); {self.sampler} does not")
                sampler_params["record_neighbours"] = True
            sampler = samplers.make(self.sampler, target, n_chains=self.n_chains, seed=self.seed, **sampler_params)
        except (TypeError, KeyError) as error:
            raise ValueError(f"{self.sampler} on {self.target}: {error}") from None
        return target, sampler

    def build_companion(self, target: Target) -> Sampler | None:
        """The comparison sampler on ``target`` (same chains and seed), None without one; ValueError if invalid.

        Parameters that fix the state space (``SHARED_SPACE_PARAMETERS``: the
        number of active bits and the reference state of fixed-distance
        samplers) are taken from the main sampler unless given, so that both
        sample the same distribution.
        """
        if not self.compare_sampler:
            return None
        companion_params = samplers.sampler_class(self.compare_sampler).param
        shared = {key: value for key, value in self.sampler_params.items()
                  if key in SHARED_SPACE_PARAMETERS and key in companion_params}
        try:
            return samplers.make(self.compare_sampler, target, n_chains=self.n_chains, seed=self.seed,
                                 **{**shared, **self.compare_params})
        except (TypeError, KeyError, ValueError) as error:
            raise ValueError(f"comparison sampler {self.compare_sampler} on {self.target}: {error}") from None
