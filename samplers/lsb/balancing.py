"""Balancing functions g(t) = t·g(1/t), fixed and learned, as maps from u = log t to log g(t).

The definitions (LSB paper §2), LSB1 (Proposition 3.1) and LSB2 (Proposition 3.2)
are stated in ``samplers.lsb``; this module implements them in log space, so ratios
p̃(x')/p̃(x) spanning hundreds of orders of magnitude never overflow.

Fixed functions (``BALANCING``; compiled, ``log_g_scalar``):

* ``barker``  g(t) = t/(1+t)   log g = log σ(u)
* ``sqrt``    g(t) = √t        log g = u/2
* ``min``     g(t) = min(1, t) log g = min(0, u)
* ``max``     g(t) = max(1, t) log g = max(0, u)

Learned functions (``PARAMETRIZATIONS``; torch modules with parameters θ in
``samplers.lsb.networks``, which alone imports torch, so that a process that
only configures or estimates runs never loads it):

* ``lsb1`` — ``MixtureBalancing``: LSB1, the softmax(θ)-weighted mixture of the
  four fixed functions.
* ``lsb2`` — ``NeuralBalancing``: LSB2 with log h_θ(t) = W₂·tanh(W₁·asinh(log t) + b₁) + b₂.
  The exponential output link makes h_θ > 0 with log h computed exactly, and
  asinh(log t) grows only logarithmically, so the network sees finite, moderate
  inputs for every t in (0, ∞) (log t = ±50 enters as ±4.6).
* ``monotone`` — ``MonotoneBalancing`` (Appendix G): LSB2 with h_θ
  non-decreasing in t, a min–max network (Sill 1998),
  log h = max_b min_j (a_bj·σ(log t) + c_bj), a_bj > 0. σ(log t) = t/(1+t) maps
  [0, ∞] onto [0, 1], so h(0) = exp(max_b min_j c_bj) > 0 and g(0) = h(0)/2 > 0:
  a chain can leave a state whose neighbours all have near-zero ratios.
  ``positive_at_zero=False`` multiplies h by t/(1+t), giving g(0) = 0 instead.

For every θ these are positive and finite for 0 < t < ∞ (log g is a log-sum of
finite terms) and balancing by construction.

Tabulation (``BalancingTable``; every learned g but LSB1's). The network is
evaluated once per knot of a fixed symmetric grid u_k = kΔ (Δ = 1/8,
|u_k| ≤ 64) and log g is interpolated linearly in u. Linear interpolation keeps
the balancing property, G(u) − G(−u) = u with G = log g, *exactly*: if it holds at
the knots, then for u = (1−w)u_k + w·u_{k+1},

    G(u) − G(−u) = (1−w)(G(u_k) − G(−u_k)) + w(G(u_{k+1}) − G(−u_{k+1})) = u,

so the table stores G for u ≥ 0 only and mirrors G(−u_k) = G(u_k) − u_k.
Beyond the grid, g(t) = g(e^-64) for t < e^-64 and g(t) = t·g(e^-64) for
t > e^64, which is balancing too; log t = ±∞ is allowed. The tabulated function
*is* the sampler's g (proposal and acceptance both use it), so chains stay
exact; it differs from the network's own curve by the interpolation error, at
most Δ²/8·max|∂²log g/∂u²| (≤ 5·10⁻⁴ for the fixed functions' smooth parts).

LSB1 exactly (``MixtureWeights``). g = Σ_i w_i g_i is evaluated at
v = −|log t| with one exponential per ratio (``mixture_log_g``), and its
normaliser is linear in the components' normalisers, Z = Σ_i w_i Z_i, which a
learning sampler keeps in sum-trees (``samplers.lsb.learning``); so LSB1 is
never tabulated.

Compiled kernels. ``log_g_scalar(code, u, values, slopes)`` (numba) is the one
definition of every g above that a sampler uses: code 0–3 the fixed functions
(``CODES``), code 4 (``TABLE``) a table's interpolation, code 5 (``MIXTURE``)
LSB1's mixture; ``add_log_g_gradient`` is its derivative in ``values`` (the
knots, or the weights), from which a learner's gradient is built. Compiled
samplers call them per ratio; ``BALANCING`` and ``CompiledBalancing.log_g``
apply ``log_g_scalar`` elementwise for numpy callers.

Cost: a learning step needs log g_θ at every flip ratio of every chain (27,000
values for 30 chains on a 30×30 lattice); tabulating costs one network pass
over the 513 knots per learning step, whatever the number of chains and sites.
``log_g_scalar`` and ``add_log_g_gradient`` are inlined into their callers,
since a call per ratio would cost more than the arithmetic.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numba import njit

from targets.compiled import helper

LogBalancing = Callable[[np.ndarray], np.ndarray]

# -- compiled scalar kernels (the only definitions; numpy callers get them through ``log_g_array``) ----------
#: Codes of the balancing functions in compiled kernels: the four fixed ones, a tabulated g, a mixture.
CODES = {"barker": 0, "sqrt": 1, "min": 2, "max": 3}
TABLE = 4
MIXTURE = 5
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


@helper
def knot_position(u):
    """(segment k, weight w ∈ [0, 1], excess max(0, u − 64)) of u = log t on the knot grid."""
    position = (min(max(u, -KNOT_SPAN), KNOT_SPAN) + KNOT_SPAN) / KNOT_SPACING
    segment = min(int(position), _LAST_SEGMENT)
    return segment, position - segment, max(u - KNOT_SPAN, 0.0)


@helper
def interpolate(values, slopes, segment, weight, excess):
    """log g = G[k] + w·(G[k+1] − G[k]) + excess: the tabulated function between knots."""
    return values[segment] + weight * slopes[segment] + excess


@helper
def fixed_log_g(code, u):
    """log g(t) at u = log t for the fixed function ``code`` (0–3, ``CODES``)."""
    if code == 0:  # barker: log σ(u), written to stay finite for every u
        return -np.log1p(np.exp(-u)) if u >= 0 else u - np.log1p(np.exp(u))
    if code == 1:
        return 0.5 * u
    if code == 2:
        return min(0.0, u)
    return max(0.0, u)


@njit(cache=True, inline="always")
def mixture_components(u):
    """g_i(t)/g_i(t)'s balancing factor for the four fixed functions in ``CODES`` order, at v = −|u| ≤ 0:
    with a = e^(v/2), (σ(v), √, min, max) = (a²/(1 + a²), a, a², 1); g_i(t) = that × e^max(u, 0)."""
    a = np.exp(-0.5 * abs(u))
    squared = a * a
    return squared / (1.0 + squared), a, squared, 1.0


@helper
def mixture_log_g(u, weights):
    """log Σ_i w_i g_i(t) over the four fixed functions (``weights`` w in ``CODES`` order), at u = log t.

    Each g_i(t) = e^max(u, 0)·g_i(e^−|u|) (balancing), and at v = −|u| every
    component lies in [0, 1] (``mixture_components``): one exponential and no
    overflow for any u.
    """
    barker, root, low, high = mixture_components(u)
    return np.log(weights[0] * barker + weights[1] * root + weights[2] * low + weights[3] * high) + max(u, 0.0)


@helper
def log_g_scalar(code, u, values, slopes):
    """log g(t) at u = log t for balancing function ``code``: ``CODES``, ``TABLE`` (knot ``values``, ``slopes``)
    or ``MIXTURE`` (``values`` = the mixture weights)."""
    if code < TABLE:
        return fixed_log_g(code, u)
    if code == MIXTURE:
        return mixture_log_g(u, values)
    segment, weight, excess = knot_position(u)
    return interpolate(values, slopes, segment, weight, excess)


@helper
def add_log_g_gradient(code, u, values, slopes, coefficient, out):
    """out += coefficient · ∂ log g(t)/∂ values at u = log t (nothing for a fixed function).

    ``TABLE``: log g is linear in the knot values, (1 − w)·G[k] + w·G[k+1]
    (``knot_position``). ``MIXTURE``: ∂ log g/∂w_i = g_i(t)/g(t).
    """
    if code == TABLE:
        segment, weight, _ = knot_position(u)
        out[segment] += coefficient * (1.0 - weight)
        out[segment + 1] += coefficient * weight
    elif code == MIXTURE:
        barker, root, low, high = mixture_components(u)
        scale = coefficient / (values[0] * barker + values[1] * root + values[2] * low + values[3] * high)
        out[0] += scale * barker
        out[1] += scale * root
        out[2] += scale * low
        out[3] += scale * high


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
#: Mirroring G at u ≥ 0 onto every knot, by the balancing property G(−u) = G(u) − u:
#: G(u_k) = G(|u_k|) + min(u_k, 0) = half[MIRROR_INDEX] + MIRROR_SHIFT.
MIRROR_INDEX = np.concatenate([np.arange(HALF_KNOTS.size - 1, 0, -1), np.arange(HALF_KNOTS.size)])
MIRROR_SHIFT = np.minimum(KNOTS, 0.0)


def mirror_half(half, shift=MIRROR_SHIFT):
    """All knot values from those at u ≥ 0 (``half``, an array or a tensor indexed by numpy integers), using
    G(−u) = G(u) − u; a tensor takes ``MIRROR_SHIFT`` as a tensor too."""
    return half[MIRROR_INDEX] + shift


def _no_nan(log_t: np.ndarray) -> np.ndarray:
    if np.isnan(log_t).any():
        raise ValueError("a flip log-ratio is NaN: the target returned an invalid log p̃")
    return log_t


class CompiledBalancing:
    """A balancing function as compiled kernels take it: ``arguments`` = (code, values, slopes).

    Immutable (read-only arrays, so compiled kernels have one specialisation
    for every kind); a learning sampler swaps in a new one after each update,
    so a reader (the dashboard thread) always sees one consistent function.
    """

    def __init__(self, code: int, values: np.ndarray = NO_TABLE, slopes: np.ndarray = NO_TABLE):
        self.code = code
        self.values, self.slopes = values, slopes
        for array in (values, slopes):
            array.setflags(write=False)

    @property
    def arguments(self) -> tuple[int, np.ndarray, np.ndarray]:
        return self.code, self.values, self.slopes

    def log_g(self, log_t: np.ndarray) -> np.ndarray:
        """log g(t), elementwise (``log_g_scalar``)."""
        return log_g_array(_no_nan(np.asarray(log_t, dtype=np.float64)), *self.arguments)


class BalancingTable(CompiledBalancing):
    """A balancing function tabulated at ``KNOTS``: log g linear in log t between knots."""

    def __init__(self, knot_values: np.ndarray):
        values = np.array(knot_values, dtype=np.float64)
        if values.shape != KNOTS.shape or not np.all(np.isfinite(values)):
            raise ValueError("a balancing table needs finite log g at every knot")
        super().__init__(TABLE, values, np.diff(values))

    @classmethod
    def of(cls, log_g: LogBalancing) -> "BalancingTable":
        """Tabulate a fixed balancing function (mirroring its u ≥ 0 half)."""
        return cls(mirror_half(log_g(HALF_KNOTS)))


class MixtureWeights(CompiledBalancing):
    """LSB1's g = Σ_i w_i g_i over the four fixed functions, exactly (``mixture_log_g``), from the weights w."""

    def __init__(self, weights: np.ndarray):
        values = np.array(weights, dtype=np.float64)
        total = values.sum()  # finite only if every weight is
        if values.shape != (len(CODES),) or not (math.isfinite(total) and total > 0 and values.min() >= 0):
            raise ValueError(f"a mixture needs {len(CODES)} finite non-negative weights, not all zero")
        super().__init__(MIXTURE, values)


# -- the learned parametrisations' sizes (the modules are ``samplers.lsb.networks``') -------------------------
#: Learned balancing functions: LSB1's mixture, LSB2's network, Appendix G's monotone network.
PARAMETRIZATIONS = ("lsb1", "lsb2", "monotone")


@dataclass(frozen=True)
class LearnedSize:
    """What a learned g_θ holds, known from its shape before torch builds it (``learned_size``).

    ``parameters``: floats in θ; ``graph_floats``: floats the autograd graph of
    v(θ) keeps (its intermediate arrays, ``LearnedBalancing.compiled_parameters``);
    ``traced``: named scalars it traces while learning (``describe``).
    """

    parameters: int
    graph_floats: int
    traced: int


def learned_size(name: str, *, hidden_units: int = 10, blocks: int = 20) -> LearnedSize:
    """The size of the learned balancing function ``name`` (``PARAMETRIZATIONS``) of that shape.

    LSB1: 4 weights, and softmax keeps its output. LSB2: W₁, b₁, W₂ (``hidden_units``
    each) and b₂; per knot u ≥ 0 the hidden layer before and after tanh, per unit,
    and a few scalars (h at ±u, logaddexp). Monotone: log-slopes and intercepts
    (``blocks`` × ``blocks``); per knot u ≥ 0 the blocks × units products and sums,
    the per-block minima and their indices, and a few scalars.
    """
    if name == "lsb1":
        return LearnedSize(parameters=len(CODES), graph_floats=len(CODES), traced=len(CODES))
    if name == "lsb2":
        return LearnedSize(parameters=3 * hidden_units + 1, graph_floats=HALF_KNOTS.size * (2 * hidden_units + 6),
                           traced=0)
    if name == "monotone":
        units = blocks * blocks
        return LearnedSize(parameters=2 * units, graph_floats=HALF_KNOTS.size * (2 * units + 2 * blocks + 12),
                           traced=0)
    raise ValueError(f"parametrization must be one of {sorted(PARAMETRIZATIONS)}; got {name!r}")
