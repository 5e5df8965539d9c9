"""The target contract shared by every model in the explorer.

A target is an unnormalised distribution p̃ over binary vectors x ∈ {0,1}^d.
States are ``uint8`` arrays with a leading batch axis, one row per chain;
models written in spins use s = 2x − 1.

Counting evaluations
--------------------
``n_evals`` counts *target evaluations*: the number of states whose p̃ — or
whose exact ratio p̃(x')/p̃(x) to an already known state — a sampler obtained.
It is the "queries to the oracle" axis of the LSB paper, and it is the same
rule for every target:

* ``log_prob(x)`` of n states costs n;
* ``flip_log_ratio(x, idx)`` (one flipped site per row) costs n;
* ``block_log_ratio(x, sites, values)`` costs n·m for m value patterns;
* ``delta_log_prob(x)`` — the ratios of all d single-flip neighbours — costs n·d;
* ``delta_after_flip`` costs the number of neighbour ratios that actually
  change: d per row for a black-box target, 1 + deg(i) on a sparse pairwise
  model (this is why a locally balanced step is O(1) evaluations on a lattice
  and O(d) on a black box, as in the LSB paper, §5.1);
* ``value_and_grad(x)`` of n states costs n (one forward/backward pass).

Subclasses implement the uncounted ``_log_prob`` and may override the local
methods with faster exact versions; the public methods count and validate.
"""

from __future__ import annotations

import numpy as np
import param

#: The largest dimension for which ``enumerate()`` lists all 2^d states.
MAX_ENUMERATE_DIM = 24


def flip(x: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """Return a copy of the batch ``x`` with bit ``idx[c]`` flipped in row ``c``."""
    out = x.copy()
    rows = np.arange(x.shape[0])
    out[rows, idx] ^= 1
    return out


def all_states(dim: int) -> np.ndarray:
    """All 2^dim binary states as a ``(2^dim, dim)`` uint8 array, bit 0 most significant."""
    codes = np.arange(2**dim, dtype=np.int64)
    shifts = np.arange(dim - 1, -1, -1, dtype=np.int64)
    return ((codes[:, None] >> shifts) & 1).astype(np.uint8)


class Target(param.Parameterized):
    """Base class of all targets: validation, evaluation counting, enumeration.

    Subclasses declare their parameters with ``param`` (bounds and docs become
    the dashboard's widgets), build their structure in ``_build()`` (called at
    construction and again whenever a parameter changes), and implement
    ``_log_prob``.
    """

    #: Name in the ``targets`` registry (set by subclasses).
    registry_name = ""
    #: True when ``value_and_grad`` is available (a differentiable extension of log p̃).
    differentiable = False

    def __init__(self, **params):
        super().__init__(**params)
        self.n_evals = 0
        self._build()
        watched = [p for p in self.param if p != "name"]
        if watched:
            self.param.watch(self._rebuild, watched)

    # -- structure -----------------------------------------------------------------
    def _build(self) -> None:
        """Build the model's arrays from its parameters (validated here)."""

    def _rebuild(self, *events) -> None:
        self._build()

    @property
    def dim(self) -> int:
        raise AttributeError(f"{type(self).__name__} does not define dim")

    @property
    def image_shape(self) -> tuple[int, ...] | None:
        """Shape to draw a state as an image (lattices), or ``None``."""
        return None

    def random_states(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` random states of non-zero probability, a sampler's default start: uniform bits here."""
        return rng.integers(0, 2, size=(n, self.dim), dtype=np.uint8)

    # -- counting ------------------------------------------------------------------
    def reset_evals(self) -> None:
        self.n_evals = 0

    def _count(self, n: int | np.integer) -> None:
        self.n_evals += int(n)

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

    def log_prob(self, x) -> np.ndarray:
        """Unnormalised log p̃(x) for a batch; shape ``(n,)``, float64. Costs n evaluations."""
        x = self.check_states(x)
        self._count(x.shape[0])
        return np.asarray(self._log_prob(x), dtype=np.float64)

    def _flip_log_ratio(self, x: np.ndarray, idx: np.ndarray, log_p: np.ndarray) -> np.ndarray:
        return self._log_prob(flip(x, idx)) - log_p

    def flip_log_ratio(self, x: np.ndarray, idx: np.ndarray, log_p: np.ndarray) -> np.ndarray:
        """log p̃(x with bit idx[c] flipped) − log p̃(x), per row; ``log_p`` = log p̃(x). Costs n."""
        self._count(x.shape[0])
        return self._flip_log_ratio(x, np.asarray(idx), log_p)

    def _delta_log_prob(self, x: np.ndarray) -> np.ndarray:
        n, d = x.shape
        neighbours = np.repeat(x, d, axis=0)
        neighbours[np.arange(n * d), np.tile(np.arange(d), n)] ^= 1
        return self._log_prob(neighbours).reshape(n, d) - self._log_prob(x)[:, None]

    def delta_log_prob(self, x) -> np.ndarray:
        """``(n, d)`` array of log p̃(x with bit i flipped) − log p̃(x). Costs n·d evaluations."""
        x = self.check_states(x)
        self._count(x.shape[0] * self.dim)
        return self._delta_log_prob(x)

    def delta_after_flip(self, x: np.ndarray, delta: np.ndarray, idx: np.ndarray):
        """Flip ratios of the states ``flip(x, idx)``, given those of ``x``.

        Returns ``(sites, values)``: for each row, the sites whose flip ratio
        changes and their new values (all d sites for a black-box target).
        Costs d evaluations per row here; sparse models override it.
        """
        values = self.delta_log_prob(flip(x, idx))
        sites = np.broadcast_to(np.arange(self.dim), values.shape)
        return sites, values

    def _block_log_ratio(self, x: np.ndarray, sites: np.ndarray, values: np.ndarray) -> np.ndarray:
        n, m, _ = values.shape
        states = np.repeat(x[:, None, :], m, axis=1)
        rows = np.arange(n)[:, None, None]
        states[rows, np.arange(m)[None, :, None], sites[:, None, :]] = values
        log_p = self._log_prob(x)
        return self._log_prob(states.reshape(n * m, -1)).reshape(n, m) - log_p[:, None]

    def block_log_ratio(self, x: np.ndarray, sites: np.ndarray, values: np.ndarray) -> np.ndarray:
        """log p̃(x with x[sites] = values[:, j]) − log p̃(x) for m patterns per row.

        ``sites`` is ``(n, k)`` distinct site indices per row and ``values`` is
        ``(n, m, k)`` 0/1; returns ``(n, m)``. Costs n·m evaluations.
        """
        self._count(values.shape[0] * values.shape[1])
        return self._block_log_ratio(x, sites, values.astype(np.uint8))

    def _value_and_grad(self, x: np.ndarray):
        raise TypeError(f"target {self.registry_name!r} has no differentiable extension (no gradient)")

    def value_and_grad(self, x):
        """log p̃(x) and ∇ₓ log p̃ of its differentiable extension at binary x. Costs n."""
        x = self.check_states(x)
        if not self.differentiable:
            raise TypeError(f"target {self.registry_name!r} has no differentiable extension (no gradient)")
        self._count(x.shape[0])
        return self._value_and_grad(x)

    def grad_log_prob(self, x) -> np.ndarray:
        """∇ₓ log p̃ of the differentiable extension at binary states x; ``(n, d)``."""
        return self.value_and_grad(x)[1]

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
