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
import math
import re
from collections.abc import Iterator
from typing import Any

import numpy as np
import param

import samplers
import targets
from samplers.base import Sampler
from targets.base import Target

from .statistics import statistic_names
from .uploads import DEFAULT_LIMITS, UploadLimits, excerpt, format_bytes

#: Largest configuration file accepted from a user (bytes).
MAX_CONFIG_BYTES = 14_000_000
#: Deepest nesting of arrays and objects in a configuration (a coupling matrix sits 4 levels deep).
MAX_CONFIG_DEPTH = 32
#: Most digits of an integer in a configuration file (2**64 has 20).
MAX_INTEGER_DIGITS = 20
#: Longest name (target, sampler, statistic, choice of a selector) read from a configuration.
MAX_NAME_CHARS = 100
#: Sampler parameters that define the state space, shared with a comparison sampler that has them.
SHARED_SPACE_PARAMETERS = ("n_active", "reference")
#: Key of an exported run's frozen kernel (``export.run_record_json``): read past on import, never applied.
RECORD_KEY = "frozen"
#: Keys of a configuration dictionary.
CONFIG_KEYS = ("target", "target_params", "sampler", "sampler_params", "n_chains", "seed",
               "steps_per_second", "statistic", "opad", "opad_neighbours", "compare_sampler", "compare_params",
               "compare_axis", "beta_changes")
#: Most changes of β one run records (the β slider adds one per move of the slider).
MAX_BETA_CHANGES = 10_000


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


# -- reading a configuration a user supplies ---------------------------------------------------------
class _BadConfig(ValueError):
    """A refusal whose message is complete, passed on as it is."""


#: A JSON string (escapes included), or an unterminated one running to the end of the text.
_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*(?:"|\\?\Z)', re.DOTALL)
#: Every byte but the four brackets (deleted before counting nesting).
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")


def _nesting_depth(text: str) -> int:
    """Deepest nesting of arrays and objects in JSON text, from its brackets outside strings (nothing parsed).

    Linear in the text, without recursion: strings are cut out by one regular
    expression, the other bytes but brackets deleted, and the running depth is
    a cumulative sum. For any text it bounds the depth ``json.loads`` reaches
    before it succeeds or fails.
    """
    brackets = _JSON_STRING.sub(b"", text.encode("utf-8", "surrogatepass")).translate(None, _NOT_BRACKETS)
    if not brackets:
        return 0
    codes = np.frombuffer(brackets, dtype=np.uint8)
    steps = np.where((codes == ord("[")) | (codes == ord("{")), np.int32(1), np.int32(-1))
    return int(np.cumsum(steps, dtype=np.int32).max())


def _json_int(token: str) -> int:
    digits = len(token.lstrip("-"))
    if digits > MAX_INTEGER_DIGITS:
        raise _BadConfig(f"the configuration holds an integer of {digits:,} digits; the limit is {MAX_INTEGER_DIGITS}")
    return int(token)


def _json_float(token: str) -> float:
    value = float(token)
    if math.isinf(value):
        raise _BadConfig(f"the number {excerpt(token, 30)} in the configuration is too large for a float")
    return value


def _json_constant(token: str) -> float:
    raise _BadConfig(f"{token} is not allowed in a configuration; numbers must be finite")


def _json_kind(value: Any) -> str:
    """How a value reads in JSON terms, for messages (never the value itself)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float, np.number)):
        return "a number"
    if isinstance(value, str):
        return f"a string of {len(value):,} characters" if len(value) > MAX_NAME_CHARS else "a string"
    if isinstance(value, (list, tuple)):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return f"a {type(value).__name__}"


def _names(keys: Any, shown: int = 5) -> list[str]:
    """Up to ``shown`` keys, each cut short (they come from the file)."""
    names = sorted(excerpt(key, 30) for key in keys)
    return names[:shown] + (["…"] if len(names) > shown else [])


def _is_array_valued(spec: param.Parameter) -> bool:
    """Parameters holding arrays: ``ClassSelector(np.ndarray)`` and plain ``Parameter`` (J, h, X, y, data, …)."""
    return (isinstance(spec, param.ClassSelector) and spec.class_ is np.ndarray) or type(spec) is param.Parameter


def _is_leaf(value: Any) -> bool:
    return not isinstance(value, (list, tuple, dict)) and not hasattr(value, "shape")


def _count_numbers(label: str, value: Any, numeric: bool) -> int:
    """Numbers in ``value`` (nested lists and objects), walked without recursion.

    With ``numeric`` (array-valued parameters), ``value`` must be null, a
    number or nested lists of numbers; arrays given from Python count their
    elements.
    """
    if numeric and _is_leaf(value) and not (value is None or isinstance(value, (int, float, np.number))):
        raise _BadConfig(f"{label} must hold only numbers; found {_json_kind(value)}")
    count, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if hasattr(item, "shape"):
            count += math.prod(item.shape)
            continue
        if not isinstance(item, (list, tuple, dict)):
            count += 1
            continue
        if depth > MAX_CONFIG_DEPTH:
            raise _BadConfig(f"{label} nests deeper than {MAX_CONFIG_DEPTH} levels")
        if numeric and isinstance(item, dict):
            raise _BadConfig(f"{label} must be a number or an array of numbers; found an object")
        items = list(item.values()) if isinstance(item, dict) else item
        nested = [x for x in items if not _is_leaf(x)]
        if numeric and len(nested) < len(items):
            odd = [x for x in items if _is_leaf(x) and not isinstance(x, (int, float, np.number))]
            if odd:
                raise _BadConfig(f"{label} must hold only numbers; found {_json_kind(odd[0])}")
        count += len(items) - len(nested)
        stack.extend((x, depth + 1) for x in nested)
    return count


def _check_value(label: str, spec: param.Parameter, value: Any) -> None:
    """``value`` must suit parameter ``spec`` (type first, with a message of ours, then param's own checks)."""
    if value is None:
        if spec.allow_None:
            return
        raise _BadConfig(f"{label} must not be null")
    if isinstance(spec, param.Boolean):
        if not isinstance(value, (bool, np.bool_)):
            raise _BadConfig(f"{label} must be true or false, not {_json_kind(value)}")
    elif isinstance(spec, param.Integer):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise _BadConfig(f"{label} must be an integer, not {_json_kind(value)}")
    elif isinstance(spec, param.Number):
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
            raise _BadConfig(f"{label} must be a number, not {_json_kind(value)}")
    elif isinstance(spec, param.String):
        if not isinstance(value, str):
            raise _BadConfig(f"{label} must be a string, not {_json_kind(value)}")
    elif isinstance(spec, param.Selector):
        if not isinstance(value, (str, int, float)) or (isinstance(value, str) and len(value) > MAX_NAME_CHARS):
            choices = excerpt(", ".join(map(str, spec.objects)), 160)
            raise _BadConfig(f"{label} must be one of {choices}; got {_json_kind(value)}")
    elif isinstance(spec, param.Dict):
        if not isinstance(value, dict):
            raise _BadConfig(f"{label} must be a JSON object, not {_json_kind(value)}")
    elif isinstance(spec, param.List):
        _check_beta_changes(label, value)
    if _is_array_valued(spec):
        return  # lists become arrays when the run is built; their contents are checked by _count_numbers
    try:
        spec._validate(value)
    except (ValueError, TypeError) as error:
        raise _BadConfig(f"invalid configuration: {excerpt(error, 200)}") from None


def _check_beta_changes(label: str, value: Any) -> None:
    """[[step, β], …]: at most ``MAX_BETA_CHANGES`` pairs of a step ≥ 0 (increasing) and a number β ≥ 0."""
    if not isinstance(value, list):
        raise _BadConfig(f"{label} must be a list of [step, β] pairs, not {_json_kind(value)}")
    if len(value) > MAX_BETA_CHANGES:
        raise _BadConfig(f"{label} holds {len(value):,} changes; the limit is {MAX_BETA_CHANGES:,}")
    previous = -1
    for item in value:
        if not (isinstance(item, (list, tuple)) and len(item) == 2 and isinstance(item[0], int)
                and not isinstance(item[0], bool) and isinstance(item[1], (int, float))
                and not isinstance(item[1], bool)):
            raise _BadConfig(f"{label}: each change must be a pair [step, β] of an integer and a number")
        if item[0] <= previous or not 0.0 <= item[1] <= 100.0:
            raise _BadConfig(f"{label}: steps must increase from 0 and each β lie in [0, 100]")
        previous = item[0]


def _check_parameters(label: str, owner: type[param.Parameterized], values: dict, budget: int,
                      limits: UploadLimits, extra: tuple[str, ...] = (), reserved: tuple[str, ...] = ()) -> int:
    """Check ``values`` against the parameters of ``owner``; returns the numbers they hold (at most ``budget``)."""
    known = [name for name in owner.param if name != "name"]
    for key, value in values.items():
        if key in reserved:
            raise _BadConfig(f"{label}: set {' and '.join(reserved)} at the top level of the configuration")
        if not isinstance(key, str) or (key not in known and key not in extra):
            raise _BadConfig(f"unknown parameter {excerpt(key, 40)!r} in {label}; expected some of "
                             f"{excerpt(', '.join([*known, *extra]), 160)}")
        spec = owner.param[key] if key in known else param.Parameter(None)
        name = f"{label}.{key}"
        _check_value(name, spec, value)
        count = _count_numbers(name, value, numeric=_is_array_valued(spec))
        if count > budget:
            raise _BadConfig(f"{name} holds {count:,} numbers ({format_bytes(8 * count)} as float64); "
                             f"the limit is {limits.max_elements:,} ({format_bytes(limits.decompressed_bytes)})")
        budget -= count
    return budget


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
                                     doc="A second sampler run on the same target for as much of compare_axis, "
                                         "side by side ('' for none).")
    compare_params = param.Dict(default={}, doc="Parameters of the comparison sampler.")
    compare_axis = param.Selector(default="seconds", objects=["seconds", "steps", "evaluations"],
                                  doc="What the comparison sampler gets as much of as the run's: compute seconds "
                                      "(the intracluster paper's accounting), steps (the LSB paper's iterations) or "
                                      "target evaluations.")

    beta_changes = param.List(default=[], doc="Changes of the target's β while the run went on, [[step, β], …] "
                                              "in step order: at that step the target becomes the same one at β and "
                                              "the run goes on from the chains' states (the β slider records them; "
                                              "samplers.common.continuation).")

    def to_dict(self) -> dict:
        values = {key: getattr(self, key) for key in CONFIG_KEYS}
        values["target_params"] = {k: to_jsonable(v) for k, v in self.target_params.items()}
        values["sampler_params"] = {k: to_jsonable(v) for k, v in self.sampler_params.items()}
        values["beta_changes"] = [[int(step), float(beta)] for step, beta in self.beta_changes]
        return values

    def array_elements(self) -> int:
        """Elements of the arrays (dense or sparse) among the target's and samplers' parameters, read from their
        shapes (nothing is converted): a lower bound on the numbers ``to_json()`` writes."""
        return sum(math.prod(value.shape) for params in (self.target_params, self.sampler_params, self.compare_params)
                   for value in params.values() if hasattr(value, "shape"))

    def to_json(self) -> str:
        return "".join(self.json_pieces())

    def json_pieces(self) -> Iterator[str]:
        """``to_json()`` piece by piece, written as it is read: a reader that needs only its start stops early."""
        return json.JSONEncoder(indent=2).iterencode(self.to_dict())

    @classmethod
    def from_dict(cls, data: dict, limits: UploadLimits = DEFAULT_LIMITS) -> RunConfig:
        """Validated configuration from a dictionary (raises ``ValueError`` with a short reason).

        Every value is checked against its parameter before anything is built:
        the top-level settings, and the target's and samplers' parameters
        (names, types, bounds); array-valued parameters must hold only numbers,
        at most ``limits.max_elements`` of them in all.
        """
        try:
            return cls._from_checked_dict(data, limits)
        except _BadConfig as error:
            raise ValueError(str(error)) from None
        except RecursionError:
            raise ValueError(f"the configuration nests deeper than {MAX_CONFIG_DEPTH} levels") from None

    @classmethod
    def _from_checked_dict(cls, data: dict, limits: UploadLimits) -> RunConfig:
        if not isinstance(data, dict):
            raise _BadConfig(f"a configuration must be a JSON object, not {_json_kind(data)}")
        if not isinstance(data.get(RECORD_KEY, {}), dict):
            raise _BadConfig(f"{RECORD_KEY} must be a JSON object")
        data = {key: value for key, value in data.items() if key != RECORD_KEY}  # informative, never applied
        unknown = [key for key in data if key not in CONFIG_KEYS]
        if unknown:
            raise _BadConfig(f"unknown configuration keys {_names(unknown)}; expected some of {list(CONFIG_KEYS)}")
        for key in ("target_params", "sampler_params", "compare_params"):
            if not isinstance(data.get(key, {}), dict):
                raise _BadConfig(f"{key} must be a JSON object")
        for key, value in data.items():
            if key not in ("target_params", "sampler_params", "compare_params"):
                if isinstance(value, str) and len(value) > MAX_NAME_CHARS:
                    raise _BadConfig(f"{key} is a string of {len(value):,} characters; the limit is {MAX_NAME_CHARS}")
                _check_value(key, cls.param[key], value)
        target = data.get("target", cls.param["target"].default)
        sampler = data.get("sampler", cls.param["sampler"].default)
        compare = data.get("compare_sampler", cls.param["compare_sampler"].default)
        budget = limits.max_elements
        budget = _check_parameters("target_params", targets.target_class(target), data.get("target_params", {}),
                                   budget, limits)
        for key, name in (("sampler_params", sampler), ("compare_params", compare)):
            if name:
                budget = _check_parameters(key, samplers.sampler_class(name), data.get(key, {}), budget, limits,
                                           extra=("init",), reserved=("n_chains", "seed"))
            else:  # parameters kept for a comparison sampler not chosen: unused, but still bounded
                budget -= _count_numbers(key, data.get(key, {}), numeric=False)
                if budget < 0:
                    raise _BadConfig(f"{key} hold too many numbers; the limit is {limits.max_elements:,} "
                                     f"({format_bytes(limits.decompressed_bytes)})")
        try:
            return cls(**data)
        except (ValueError, TypeError) as error:
            raise _BadConfig(f"invalid configuration: {excerpt(error, 200)}") from None

    @classmethod
    def from_json(cls, text: str | bytes, limits: UploadLimits = DEFAULT_LIMITS) -> RunConfig:
        """Configuration from JSON text a user supplies; any malformed input raises a short ``ValueError``.

        The text must be UTF-8, at most ``MAX_CONFIG_BYTES`` long and nest at
        most ``MAX_CONFIG_DEPTH`` levels (checked before parsing, so no
        ``RecursionError``); NaN, Infinity, numbers beyond float range and
        integers longer than ``MAX_INTEGER_DIGITS`` digits are refused.
        Messages quote at most a short excerpt of the text.
        """
        if len(text) > MAX_CONFIG_BYTES:
            raise ValueError(f"the configuration file is larger than {format_bytes(MAX_CONFIG_BYTES)}")
        if isinstance(text, (bytes, bytearray, memoryview)):
            try:
                text = bytes(text).decode("utf-8-sig")
            except UnicodeDecodeError as error:
                raise ValueError(f"the configuration is not UTF-8 text (byte 0x{error.object[error.start]:02x} "
                                 f"at position {error.start:,})") from None
        elif not isinstance(text, str):
            raise ValueError(f"a configuration must be JSON text, not a {type(text).__name__}")
        text = text.removeprefix("\ufeff")
        depth = _nesting_depth(text)
        if depth > MAX_CONFIG_DEPTH:
            raise ValueError(f"the configuration nests deeper than {MAX_CONFIG_DEPTH} levels ({depth:,})")
        try:
            data = json.loads(text, parse_int=_json_int, parse_float=_json_float, parse_constant=_json_constant)
        except _BadConfig as error:
            raise ValueError(str(error)) from None
        except json.JSONDecodeError as error:  # its message names the position, never the content
            raise ValueError(f"the configuration is not valid JSON: {error.msg} "
                             f"(line {error.lineno}, column {error.colno})") from None
        except RecursionError:
            raise ValueError(f"the configuration nests deeper than {MAX_CONFIG_DEPTH} levels") from None
        except ValueError as error:
            raise ValueError(f"the configuration is not valid JSON ({excerpt(error)})") from None
        return cls.from_dict(data, limits)

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
            if self.beta_changes and "beta" not in target.param:
                raise ValueError(f"beta_changes: {self.target} has no inverse temperature β")
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
