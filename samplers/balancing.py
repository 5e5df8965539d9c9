"""Balancing functions g with g(t) = t·g(1/t) (Zanella 2020; LSB paper, Eq. 2), in log space.

Everything here maps u = log t to log g(t), so ratios p̃(x')/p̃(x) spanning
hundreds of orders of magnitude never overflow.

Fixed functions (``BALANCING``; compiled, ``log_g_scalar``):

* ``barker``  g(t) = t/(1+t)   log g = log σ(u)
* ``sqrt``    g(t) = √t        log g = u/2
* ``min``     g(t) = min(1, t) log g = min(0, u)
* ``max``     g(t) = max(1, t) log g = max(0, u)

Learned functions (torch modules with parameters θ, ``PARAMETRIZATIONS``):

* ``lsb1`` — ``MixtureBalancing``: g_θ(t) = Σ_i w_i g_i(t), w = softmax(θ), over
  the four fixed functions (Proposition 3.1: a positive combination of
  balancing functions is balancing).
* ``lsb2`` — ``NeuralBalancing``: g_θ(t) = h_θ(t)/2 + t·h_θ(1/t)/2 with h_θ > 0 a
  one-hidden-layer network (Proposition 3.2: balancing for every θ, and every
  balancing function is reachable). log h_θ(t) = W₂·tanh(W₁·asinh(log t) + b₁) + b₂:
  the exponential output link makes h positive with log h computed exactly,
  and asinh(log t) grows only logarithmically, so the network sees finite,
  moderate inputs for every t in (0, ∞) — log t = ±50 enters as ±4.6.
* ``monotone`` — ``MonotoneBalancing`` (Appendix G): the same construction with
  h_θ non-decreasing in t — a min–max network (Sill 1998),
  log h = max_b min_j (a_bj·σ(log t) + c_bj) with a_bj > 0. σ(log t) = t/(1+t)
  maps [0, ∞] onto [0, 1], so h(0) = exp(max_b min_j c_bj) > 0 and
  g(0) = h(0)/2 > 0: a chain can leave a state whose neighbours all have
  near-zero ratios. ``positive_at_zero=False`` multiplies h by t/(1+t), giving
  g(0) = 0 instead.

For every θ these are positive and finite for 0 < t < ∞ (log g is a
log-sum of finite terms) and balancing by construction.

Tabulation (``BalancingTable``). A sampler needs log g_θ at every flip ratio of
every chain at every learning step — 27,000 values for 30 chains on a 30×30
lattice. Rather than run the network on all of them, we evaluate it once per
knot of a fixed symmetric grid u_k = kΔ (Δ = 1/8, |u_k| ≤ 64) and interpolate
log g linearly in u. Linear interpolation keeps the balancing property
*exactly*: if G(u_k) − G(−u_k) = u_k at the knots, then for u = (1−w)u_k + w·u_{k+1},

    G(u) − G(−u) = (1−w)(G(u_k) − G(−u_k)) + w(G(u_{k+1}) − G(−u_{k+1})) = u,

and the table only stores G for u ≥ 0, mirroring G(−u_k) = G(u_k) − u_k.
Beyond the grid, g(t) = g(e^-64) for t < e^-64 and g(t) = t·g(e^-64) for
t > e^64, which is balancing too (such moves are proposed with relative
weight below 10⁻¹⁴ and the MH step stays exact); log t = ±∞ is allowed. The
tabulated function *is* the sampler's g (proposal and acceptance both use it),
so chains stay exact; it differs from the network's own curve by the
interpolation error, at most Δ²/8·max|∂²log g/∂u²| (≤ 5·10⁻⁴ for the fixed
functions' smooth parts). Cost: one network pass over 513 knots per learning
step, whatever the number of chains and sites.

Compiled kernels. ``log_g_scalar(code, u, values, slopes)`` (numba) is the one
definition of every g above that a sampler uses: code 0–3 the fixed functions
(``CODES``), code 4 (``TABLE``) a table's interpolation. Compiled samplers call
it per ratio; ``BALANCING``, ``BalancingTable.log_g`` and ``KnotPositions``
apply the same scalar functions elementwise for numpy callers.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch
from numba import njit

LogBalancing = Callable[[np.ndarray], np.ndarray]

# -- compiled scalar kernels (the only definitions; numpy callers get them through ``log_g_array``) ----------
#: Codes of the balancing functions in compiled kernels: the four fixed ones, then a tabulated g.
CODES = {"barker": 0, "sqrt": 1, "min": 2, "max": 3}
TABLE = 4
KNOT_SPACING = 1.0 / 8.0
KNOT_SPAN = 64.0
#: Knots u ≥ 0 where the network is evaluated; the negative half is mirrored.
HALF_KNOTS = np.arange(0, int(KNOT_SPAN / KNOT_SPACING) + 1) * KNOT_SPACING
KNOTS = np.concatenate([-HALF_KNOTS[:0:-1], HALF_KNOTS])
_LAST_SEGMENT = KNOTS.size - 2
#: The table arguments of a fixed function's code. Read-only like a ``BalancingTable``'s arrays, so that
#: compiled kernels have one specialisation for both.
NO_TABLE = np.zeros(0)
NO_TABLE.setflags(write=False)


@njit(cache=True)
def knot_position(u):
    """(segment k, weight w ∈ [0, 1], excess max(0, u − 64)) of u = log t on the knot grid."""
    position = (min(max(u, -KNOT_SPAN), KNOT_SPAN) + KNOT_SPAN) / KNOT_SPACING
    segment = min(int(position), _LAST_SEGMENT)
    return segment, position - segment, max(u - KNOT_SPAN, 0.0)


@njit(cache=True)
def interpolate(values, slopes, segment, weight, excess):
    """log g = G[k] + w·(G[k+1] − G[k]) + excess: the tabulated function between knots."""
    return values[segment] + weight * slopes[segment] + excess


@njit(cache=True)
def log_g_scalar(code, u, values, slopes):
    """log g(t) at u = log t for balancing function ``code`` (``CODES`` or ``TABLE`` with ``values``, ``slopes``)."""
    if code == 0:  # barker: log σ(u), written to stay finite for every u
        return -np.log1p(np.exp(-u)) if u >= 0 else u - np.log1p(np.exp(u))
    if code == 1:
        return 0.5 * u
    if code == 2:
        return min(0.0, u)
    if code == 3:
        return max(0.0, u)
    segment, weight, excess = knot_position(u)
    return interpolate(values, slopes, segment, weight, excess)


@njit(cache=True)
def _log_g_flat(log_t, code, values, slopes):
    out = np.empty(log_t.size)
    for e in range(log_t.size):
        out[e] = log_g_scalar(code, log_t[e], values, slopes)
    return out


def log_g_array(log_t, code: int, values: np.ndarray = NO_TABLE, slopes: np.ndarray = NO_TABLE) -> np.ndarray:
    """``log_g_scalar`` elementwise over an array of any shape (float64)."""
    log_t = np.asarray(log_t, dtype=np.float64)
    return _log_g_flat(log_t.ravel(), code, values, slopes).reshape(log_t.shape)


def _fixed(name: str) -> LogBalancing:
    code = CODES[name]

    def log_g(log_t):
        return log_g_array(log_t, code)

    log_g.__name__ = f"log_{name}"
    return log_g


BALANCING: dict[str, LogBalancing] = {name: _fixed(name) for name in CODES}

FORMULAS = {"barker": "t/(1+t)", "sqrt": "√t", "min": "min(1, t)", "max": "max(1, t)"}


def log_balancing(name: str) -> LogBalancing:
    """log g for the balancing function called ``name``."""
    try:
        return BALANCING[name]
    except KeyError:
        raise ValueError(f"balancing must be one of {sorted(BALANCING)}; got {name!r}") from None


# -- tabulation --------------------------------------------------------------------------------
def mirror_half(half: np.ndarray | torch.Tensor, half_knots) -> np.ndarray | torch.Tensor:
    """All knot values from those at u ≥ 0, using G(−u) = G(u) − u (the balancing property)."""
    negative = (half - half_knots)[1:]
    if isinstance(half, torch.Tensor):
        return torch.cat([negative.flip(0), half])
    return np.concatenate([negative[::-1], half])


@njit(cache=True)
def _knot_positions_flat(log_t, segment, weight, excess):
    for e in range(log_t.size):
        segment[e], weight[e], excess[e] = knot_position(log_t[e])


@njit(cache=True)
def _interpolate_flat(values, slopes, segment, weight, excess):
    out = np.empty(segment.size)
    for e in range(segment.size):
        out[e] = interpolate(values, slopes, segment[e], weight[e], excess[e])
    return out


def _no_nan(log_t: np.ndarray) -> np.ndarray:
    if np.isnan(log_t).any():
        raise ValueError("a flip log-ratio is NaN: the target returned an invalid log p̃")
    return log_t


class KnotPositions:
    """Where log-ratios fall on the knot grid (``knot_position`` elementwise).

    log g(u) = (1 − w)·G[k] + w·G[k+1] + excess with ``segment`` k, ``weight``
    w ∈ [0, 1] and ``excess`` = max(0, u − 64) (the t·g(1/t) continuation).
    """

    __slots__ = ("segment", "weight", "excess")

    def __init__(self, log_t: np.ndarray | None):
        if log_t is None:
            return
        log_t = _no_nan(np.asarray(log_t, dtype=np.float64))
        self.segment = np.empty(log_t.shape, dtype=np.intp)
        self.weight = np.empty(log_t.shape)
        self.excess = np.empty(log_t.shape)
        _knot_positions_flat(log_t.ravel(), self.segment.reshape(-1), self.weight.reshape(-1),
                             self.excess.reshape(-1))

    def copy(self) -> "KnotPositions":
        out = KnotPositions(None)
        out.segment, out.weight, out.excess = self.segment.copy(), self.weight.copy(), self.excess.copy()
        return out

    def assign(self, index, other: "KnotPositions") -> None:
        """Overwrite the entries at ``index`` with ``other``'s."""
        self.segment[index], self.weight[index], self.excess[index] = other.segment, other.weight, other.excess


class BalancingTable:
    """A balancing function tabulated at ``KNOTS``: log g linear in log t between knots.

    Immutable; a learning sampler swaps in a new table after each update, so a
    reader (the dashboard thread) always sees one consistent function.
    """

    code = TABLE

    def __init__(self, knot_values: np.ndarray):
        self.values = np.array(knot_values, dtype=np.float64)
        if self.values.shape != KNOTS.shape or not np.all(np.isfinite(self.values)):
            raise ValueError("a balancing table needs finite log g at every knot")
        self.slopes = np.diff(self.values)
        self.values.setflags(write=False)
        self.slopes.setflags(write=False)

    @classmethod
    def of(cls, log_g: LogBalancing) -> "BalancingTable":
        """Tabulate a fixed balancing function (mirroring its u ≥ 0 half)."""
        return cls(mirror_half(log_g(HALF_KNOTS), HALF_KNOTS))

    def at(self, positions: KnotPositions) -> np.ndarray:
        """log g at precomputed knot positions (``interpolate`` elementwise)."""
        p = positions
        return _interpolate_flat(self.values, self.slopes, p.segment.ravel(), p.weight.ravel(),
                                 p.excess.ravel()).reshape(p.segment.shape)

    def log_g(self, log_t: np.ndarray) -> np.ndarray:
        """log g(t), elementwise (``log_g_scalar`` with this table)."""
        return log_g_array(_no_nan(np.asarray(log_t, dtype=np.float64)), TABLE, self.values, self.slopes)


# -- learned parametrisations --------------------------------------------------------------------
class LearnedBalancing(torch.nn.Module):
    """A balancing function g_θ with parameters θ; ``log_g`` is exact for any log t."""

    def log_g(self, log_t: torch.Tensor) -> torch.Tensor:
        raise TypeError(f"{type(self).__name__} must implement log_g")

    def knot_values(self) -> torch.Tensor:
        """log g_θ at ``KNOTS`` (differentiable in θ), balancing exactly by mirroring."""
        half = torch.as_tensor(HALF_KNOTS)
        return mirror_half(self.log_g(half), half)

    def table(self) -> BalancingTable:
        with torch.no_grad():
            return BalancingTable(self.knot_values().numpy())

    def describe(self) -> dict[str, float]:
        """Named scalars worth tracing while learning (LSB1: its weights)."""
        return {}

    def saved_floats_per_knot(self) -> int:
        """Floats the autograd graph of ``knot_values`` keeps per knot u ≥ 0 (its intermediate arrays' widths)."""
        raise TypeError(f"{type(self).__name__} must implement saved_floats_per_knot")


def _uniform(shape, bound: float, generator: torch.Generator) -> torch.nn.Parameter:
    values = torch.empty(shape, dtype=torch.float64).uniform_(-bound, bound, generator=generator)
    return torch.nn.Parameter(values)


class MixtureBalancing(LearnedBalancing):
    """LSB1: g_θ = Σ_i softmax(θ)_i g_i over the four fixed functions (Proposition 3.1)."""

    def __init__(self, seed: int = 0):
        super().__init__()
        self.names = list(BALANCING)
        self.theta = torch.nn.Parameter(torch.zeros(len(self.names), dtype=torch.float64))

    def log_weights(self) -> torch.Tensor:
        return torch.log_softmax(self.theta, dim=0)

    def log_g(self, log_t):
        components = np.stack([f(log_t.detach().numpy()) for f in BALANCING.values()], axis=-1)
        return torch.logsumexp(self.log_weights() + torch.as_tensor(components), dim=-1)

    def describe(self):
        weights = self.log_weights().detach().exp().numpy()
        return {f"w_{name}": float(w) for name, w in zip(self.names, weights)}

    def saved_floats_per_knot(self):
        """The components and the logsumexp's input, one of each per fixed function."""
        return 2 * len(self.names)


class NeuralBalancing(LearnedBalancing):
    """LSB2: g_θ(t) = h_θ(t)/2 + t·h_θ(1/t)/2, log h_θ a one-hidden-layer tanh network (Proposition 3.2)."""

    def __init__(self, hidden_units: int = 10, seed: int = 0):
        super().__init__()
        generator = torch.Generator().manual_seed(seed)
        self.w1 = _uniform(hidden_units, 1.0, generator)
        self.b1 = _uniform(hidden_units, 1.0, generator)
        self.w2 = _uniform(hidden_units, hidden_units**-0.5, generator)
        self.b2 = torch.nn.Parameter(torch.zeros((), dtype=torch.float64))

    def log_h(self, log_t: torch.Tensor) -> torch.Tensor:
        hidden = torch.tanh(torch.asinh(log_t)[..., None] * self.w1 + self.b1)
        return hidden @ self.w2 + self.b2

    def log_g(self, log_t):
        return torch.logaddexp(self.log_h(log_t), log_t + self.log_h(-log_t)) - np.log(2.0)

    def saved_floats_per_knot(self):
        """The hidden layer before and after tanh, per unit, and a few per-knot scalars (h at ±u, logaddexp)."""
        return 2 * self.w1.numel() + 6


class MonotoneBalancing(NeuralBalancing):
    """Appendix G: h_θ non-decreasing in t, a min–max network of ``blocks`` × ``blocks`` units."""

    def __init__(self, blocks: int = 20, positive_at_zero: bool = True, seed: int = 0):
        LearnedBalancing.__init__(self)
        generator = torch.Generator().manual_seed(seed)
        self.log_slopes = _uniform((blocks, blocks), 1.0, generator)
        self.intercepts = _uniform((blocks, blocks), 1.0, generator)
        self.positive_at_zero = positive_at_zero

    def log_h(self, log_t):
        s = torch.sigmoid(log_t)[..., None, None]
        log_h = (torch.exp(self.log_slopes) * s + self.intercepts).amin(dim=-1).amax(dim=-1)
        if self.positive_at_zero:
            return log_h
        return log_h + torch.nn.functional.logsigmoid(log_t)

    def saved_floats_per_knot(self):
        """The blocks × units products and sums, the per-block minima and their indices, and per-knot scalars."""
        units = self.log_slopes.numel()
        return 2 * units + 2 * self.log_slopes.shape[0] + 12


PARAMETRIZATIONS = {"lsb1": MixtureBalancing, "lsb2": NeuralBalancing, "monotone": MonotoneBalancing}


def make_parametrization(name: str, *, hidden_units: int = 10, blocks: int = 20,
                         positive_at_zero: bool = True, seed: int = 0) -> LearnedBalancing:
    """The learned balancing function ``name`` ("lsb1", "lsb2" or "monotone"), seeded."""
    if name == "lsb1":
        return MixtureBalancing(seed=seed)
    if name == "lsb2":
        return NeuralBalancing(hidden_units=hidden_units, seed=seed)
    if name == "monotone":
        return MonotoneBalancing(blocks=blocks, positive_at_zero=positive_at_zero, seed=seed)
    raise ValueError(f"parametrization must be one of {sorted(PARAMETRIZATIONS)}; got {name!r}")
