"""The target contract shared by every model in the explorer.

A target is an unnormalised distribution p̃ over binary vectors x ∈ {0,1}^d.
States are ``uint8`` arrays with a leading batch axis, one row per chain;
models written in spins use s = 2x − 1.

Counting and pictures
---------------------
A target counts its evaluations (``targets.counting``: the public methods
``log_prob``, ``flip_log_ratio``, ``delta_log_prob``… validate, count by one
rule for every target, and call the model's uncounted ``_log_prob``,
``_flip_log_ratio``, ``_delta_log_prob``… defined here), and says how its state
is drawn (``targets.picture``). Subclasses implement the uncounted
``_log_prob`` and may override the local methods with faster exact versions.

Immutability
------------
A target is immutable once built: samplers cache log p̃ of their states, so a
target that changed under them would silently make those caches wrong. Setting
a parameter raises ``TypeError`` (``param.update`` too), and every numpy array
the target stores — its copies of array-valued parameters and the arrays
``_build()`` makes — is read-only. ``with_params(**changes)`` builds a new
target instead. Only the evaluation counter ``n_evals`` changes.

Size
----
``estimate_size(params)`` tells, from the constructor's parameters alone and
without building anything, the state dimension and the bytes of array data the
built target will hold, so that a caller (the dashboard) can refuse a model
that would exhaust memory before allocating it; ``nbytes`` measures the same
quantity on a built target.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterator
from typing import Any

import numpy as np
import param
from scipy import sparse

from .counting import CountedEvaluations
from .picture import Picture

#: The largest dimension for which ``enumerate()`` lists all 2^d states.
MAX_ENUMERATE_DIM = 24


def flip(x: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """Return a copy of the batch ``x`` with bit ``idx[c]`` flipped in row ``c``."""
    out = x.copy()
    rows = np.arange(x.shape[0])
    out[rows, idx] ^= 1
    return out


def all_states(dim: int) -> np.ndarray:
    """All 2^dim binary states as a ``(2^dim, dim)`` uint8 array, bit 0 most significant.

    Filled a column at a time, so the peak is the result plus one column of
    codes (2^dim × 9 bytes), not a 2^dim × dim table of int64 (3.2 GB at d = 24).
    """
    codes = np.arange(2**dim, dtype=np.int64)
    states = np.empty((codes.size, dim), dtype=np.uint8)
    for bit in range(dim):
        states[:, bit] = (codes >> (dim - 1 - bit)) & 1
    return states


@dataclasses.dataclass(frozen=True)
class TargetSize:
    """What a target will hold once built (see ``Target.estimate_size``).

    ``dim`` is the state dimension d; ``model_bytes`` the bytes of array data
    the target keeps (its read-only copies of array parameters and the arrays
    it builds), the quantity ``Target.nbytes`` measures.
    """

    dim: int
    model_bytes: int


def array_shape(value) -> tuple[int, ...]:
    """Shape of an array, sparse matrix or nested list, without converting it.

    A nested list is taken as rectangular: its shape is read along the first
    elements (a ragged list is rejected later, by the target's validation).
    """
    dims = []
    while isinstance(value, (list, tuple)):
        dims.append(len(value))
        value = value[0] if value else None
    return (*dims, *getattr(value, "shape", ()))


def stored_bytes(value) -> int:
    """Bytes of the read-only copy a target keeps of an array parameter (see ``_frozen_copy``).

    A numpy array is copied as it is, a nested list becomes float64, and a sparse
    matrix becomes CSR (bounded by 16 bytes per stored entry plus 8 per row);
    ``None`` and other values count 0.
    """
    if isinstance(value, np.ndarray):
        return value.nbytes
    if sparse.issparse(value):
        return 16 * value.nnz + 8 * (value.shape[0] + 1)
    if isinstance(value, list):
        return 8 * math.prod(array_shape(value))
    return 0


def _is_array_param(spec: param.Parameter | None) -> bool:
    """True for parameters holding arrays: untyped ``param.Parameter`` (J, h, X, y, data) or an ndarray selector."""
    return type(spec) is param.Parameter or (isinstance(spec, param.ClassSelector) and spec.class_ is np.ndarray)


def _freeze(array: np.ndarray) -> np.ndarray:
    array.flags.writeable = False
    return array


def _frozen_copy(value):
    """A read-only copy of an array parameter, so that neither the caller nor anyone else can change it.

    numpy arrays are copied (unless already a read-only array owning its data,
    e.g. another target's copy, which is shared); nested lists of numbers (or
    booleans) become float64 arrays; sparse matrices become CSR copies with
    read-only arrays. Other values (None, data frames, lists of anything else,
    ragged lists) are returned as they are, for the target's validation to judge.
    """
    if isinstance(value, list):
        try:
            array = np.array(value)
        except (TypeError, ValueError):
            return value
        return _freeze(array.astype(np.float64)) if array.dtype.kind in "biuf" else value
    if isinstance(value, np.ndarray):
        return value if value.base is None and not value.flags.writeable else _freeze(value.copy())
    if sparse.issparse(value):
        copy = value.tocsr(copy=True)
        for array in (copy.data, copy.indices, copy.indptr):
            _freeze(array)
        return copy
    return value


def _is_tensor(value) -> bool:
    return type(value).__module__.startswith("torch") and hasattr(value, "untyped_storage")


def _held_arrays(value, seen: set[int]) -> Iterator[Any]:
    """The numpy arrays and torch tensors reachable from ``value``, each object once.

    Follows containers, dataclasses, scipy sparse matrices and objects of this
    package (e.g. a Markov network's factor groups), not callables or other objects.
    """
    if id(value) in seen:
        return
    seen.add(id(value))
    if isinstance(value, np.ndarray) or _is_tensor(value):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _held_arrays(item, seen)
    elif isinstance(value, (list, tuple, set, frozenset)):
        for item in value:
            yield from _held_arrays(item, seen)
    elif not isinstance(value, type) and (sparse.issparse(value) or dataclasses.is_dataclass(value)
                                          or type(value).__module__.startswith("targets.")):
        yield from _held_arrays(vars(value), seen)


class Target(CountedEvaluations, Picture, param.Parameterized):
    """Base class of all targets: the model (validation, the uncounted log p̃ and its local ratios, enumeration,
    immutability, size), counted (``CountedEvaluations``) and pictured (``Picture``).

    Subclasses declare their parameters with ``param`` (bounds and docs become
    the dashboard's widgets), build their structure in ``_build()`` (called
    once, at construction), implement ``_log_prob`` and ``estimate_size``.
    """

    #: Name in the ``targets`` registry (set by subclasses).
    registry_name = ""
    #: True when ``value_and_grad`` is available (a differentiable extension of log p̃).
    differentiable = False

    def __init__(self, **params):
        cls = type(self)
        given = {key: cls._kept(key, value) for key, value in params.items()}
        super().__init__(**cls._resolve_params(dict(given)))
        self._given_params = given
        self.n_evals = 0
        self._build()
        self._freeze()

    def _freeze(self) -> None:
        """Make every stored numpy array read-only and every parameter constant (see ``__setattr__``)."""
        for array in _held_arrays(list(self._state()), set()):
            if isinstance(array, np.ndarray):
                array.flags.writeable = False
        for name in self.param:
            self.param[name].constant = True
        self._frozen_params = frozenset(self.param)

    def __setattr__(self, name: str, value) -> None:
        if name in self.__dict__.get("_frozen_params", ()):
            raise TypeError(f"targets are immutable once built: cannot set {name!r} of this "
                            f"{type(self).__name__}; make a new one, e.g. target.with_params({name}=...)")
        super().__setattr__(name, value)

    def __setstate__(self, state) -> None:
        super().__setstate__(state)
        self._freeze()  # a copy or an unpickled target is as immutable as the original

    def with_params(self, **changes) -> Target:
        """A new target of the same class, built from this one's constructor arguments updated with ``changes``.

        The way to "change" a target, which is immutable once built; this one is
        left as it is (its read-only arrays are shared, not copied).
        """
        return type(self)(**{**self._given_params, **changes})

    # -- structure -----------------------------------------------------------------
    @classmethod
    def _kept(cls, key: str, value):
        """What the target keeps of a constructor argument: a read-only copy of an array, a copy of a dict."""
        if key in cls.param and _is_array_param(cls.param[key]):
            return _frozen_copy(value)
        return dict(value) if isinstance(value, dict) else value

    @classmethod
    def _resolve_params(cls, params: dict) -> dict:
        """The constructor's parameters after inference from one another (DAG: n_nodes from data); as given here."""
        return params

    def _build(self) -> None:
        """Build the model's arrays from its parameters (validated here); called once, at construction."""

    def _state(self) -> Iterator[Any]:
        """Everything the target stores: its attributes and its parameter values."""
        yield from (value for key, value in vars(self).items() if key != "_param__private")
        yield from self.param.values().values()

    @property
    def nbytes(self) -> int:
        """Bytes of the array data this target holds (numpy arrays, sparse matrices, torch tensors).

        Counts its parameters' copies and the arrays it built, each buffer once (a
        view counts its base); Python objects (lists, strings, array headers) are not counted.
        """
        buffers = {}
        for array in _held_arrays(list(self._state()), set()):
            if isinstance(array, np.ndarray):
                while isinstance(array.base, np.ndarray):
                    array = array.base
                buffers["numpy", id(array)] = array.nbytes
            else:
                storage = array.untyped_storage()
                buffers["torch", storage.data_ptr()] = storage.nbytes()
        return sum(buffers.values())

    @classmethod
    def estimate_size(cls, params: dict) -> TargetSize:
        """The dimension and bytes (``nbytes``) of ``cls(**params)``, computed cheaply without building it.

        ``params`` is what the constructor would get (registry defaults where
        absent; arrays as numpy arrays, sparse matrices or nested lists). The
        bytes are an upper-ish estimate, within about 2× above ``nbytes`` and never
        below it, so that a caller can refuse a model too big for memory before
        allocating anything. Parameters the constructor would reject may raise
        ``ValueError`` / ``TypeError`` here, or only when building.
        """
        raise TypeError(f"{cls.__name__} must implement estimate_size")

    @classmethod
    def _estimate_params(cls, params: dict) -> dict:
        """Registry defaults updated with ``params`` (after ``_resolve_params``), non-array values validated.

        Unknown names raise ``TypeError`` as the constructor does; a value out of
        its parameter's bounds or type raises param's ``ValueError``.
        """
        unknown = sorted(set(params) - set(cls.param))
        if unknown:
            raise TypeError(f"{cls.__name__} has no parameter(s) {', '.join(map(repr, unknown))}")
        resolved = cls._resolve_params(dict(params))
        for key, value in resolved.items():
            if not _is_array_param(cls.param[key]):
                cls.param[key]._validate(value)
        return {key: spec.default for key, spec in cls.param.objects().items()} | resolved

    @property
    def dim(self) -> int:
        raise AttributeError(f"{type(self).__name__} does not define dim")

    def random_states(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` random states of non-zero probability, a sampler's default start: uniform bits here."""
        return rng.integers(0, 2, size=(n, self.dim), dtype=np.uint8)

    #: For sparse pairwise models, the tables a compiled sampler updates flip ratios from in its own
    #: kernel (see ``PairwiseBinaryModel.flip_tables``); None for every other target.
    flip_tables = None

    # -- validation ----------------------------------------------------------------
    def check_states(self, x) -> np.ndarray:
        """Return ``x`` as a 2-D uint8 batch of binary states, or raise ``ValueError``."""
        arr = np.asarray(x)
        if arr.ndim == 1:
            arr = arr[None, :]
        if arr.ndim != 2 or arr.shape[1] != self.dim:
            raise ValueError(
                f"states must have shape (n, {self.dim}) for target {self.registry_name!r}; got {np.shape(x)}"
            )
        if arr.dtype != np.uint8:
            if not (np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.bool_)):
                raise ValueError(f"states must be integer or boolean 0/1 arrays; got dtype {arr.dtype}")
            arr = arr.astype(np.uint8)
        if arr.size and arr.max() > 1:
            raise ValueError("states must contain only 0 and 1")
        return arr

    # -- the contract ----------------------------------------------------------------
    def _log_prob(self, x: np.ndarray) -> np.ndarray:
        raise TypeError(f"{type(self).__name__} must implement _log_prob")

    def _flip_log_ratio(self, x: np.ndarray, idx: np.ndarray, log_p: np.ndarray) -> np.ndarray:
        return self._log_prob(flip(x, idx)) - log_p

    def _delta_log_prob(self, x: np.ndarray, log_p: np.ndarray | None = None) -> np.ndarray:
        n, d = x.shape
        neighbours = np.repeat(x, d, axis=0)
        neighbours[np.arange(n * d), np.tile(np.arange(d), n)] ^= 1
        known = self._log_prob(x) if log_p is None else log_p
        return self._log_prob(neighbours).reshape(n, d) - known[:, None]

    def _delta_after_flip(self, x: np.ndarray, delta: np.ndarray, idx: np.ndarray, log_p: np.ndarray | None):
        values = self._delta_log_prob(flip(x, idx), log_p)
        sites = np.tile(np.arange(self.dim, dtype=np.int64), (values.shape[0], 1))
        return sites, values

    def _block_log_ratio(self, x: np.ndarray, sites: np.ndarray, values: np.ndarray,
                         log_p: np.ndarray | None = None) -> np.ndarray:
        n, m, _ = values.shape
        states = np.repeat(x[:, None, :], m, axis=1)
        rows = np.arange(n)[:, None, None]
        states[rows, np.arange(m)[None, :, None], sites[:, None, :]] = values
        known = self._log_prob(x) if log_p is None else log_p
        return self._log_prob(states.reshape(n * m, -1)).reshape(n, m) - known[:, None]

    def _value_and_grad(self, x: np.ndarray):
        raise TypeError(f"target {self.registry_name!r} has no differentiable extension (no gradient)")

    def enumerate(self):
        """All 2^d states and their log p̃ (uncounted): ``(states, log_p)``. Needs d ≤ 24."""
        if self.dim > MAX_ENUMERATE_DIM:
            raise ValueError(
                f"enumerate() needs dim <= {MAX_ENUMERATE_DIM}; target {self.registry_name!r} has dim {self.dim}"
            )
        states = all_states(self.dim)
        log_p = np.concatenate(
            [self._log_prob(chunk) for chunk in np.array_split(states, max(1, len(states) // 65536))]
        )
        return states, log_p


def state_codes(x: np.ndarray) -> np.ndarray:
    """Integer code of each row (bit 0 most significant), the row's index in ``all_states``."""
    x = np.asarray(x)
    d = x.shape[-1]
    if d > 62:
        raise ValueError(f"state_codes needs dim <= 62; got {d}")
    weights = np.left_shift(np.int64(1), np.arange(d - 1, -1, -1, dtype=np.int64))
    return x.astype(np.int64) @ weights
