"""Balancing functions g(t) = t·g(1/t), fixed and learned, as maps from u = log t to log g(t).

The definitions (LSB paper §2), LSB1 (Proposition 3.1) and LSB2 (Proposition 3.2)
are stated in ``samplers.lsb``; this module implements them in log space, so ratios
p̃(x')/p̃(x) spanning hundreds of orders of magnitude never overflow.

Fixed functions (``BALANCING``; compiled, ``log_g_scalar``):

* ``barker``  g(t) = t/(1+t)   log g = log σ(u)
* ``sqrt``    g(t) = √t        log g = u/2
* ``min``     g(t) = min(1, t) log g = min(0, u)
* ``max``     g(t) = max(1, t) log g = max(0, u)

Learned functions (torch modules with parameters θ, ``PARAMETRIZATIONS``):

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

import numpy as np
import torch
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
def mirror_half(half: np.ndarray | torch.Tensor, half_knots) -> np.ndarray | torch.Tensor:
    """All knot values from those at u ≥ 0, using G(−u) = G(u) − u (the balancing property)."""
    negative = (half - half_knots)[1:]
    if isinstance(half, torch.Tensor):
        return torch.cat([negative.flip(0), half])
    return np.concatenate([negative[::-1], half])


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
        return cls(mirror_half(log_g(HALF_KNOTS), HALF_KNOTS))


class MixtureWeights(CompiledBalancing):
    """LSB1's g = Σ_i w_i g_i over the four fixed functions, exactly (``mixture_log_g``), from the weights w."""

    def __init__(self, weights: np.ndarray):
        values = np.array(weights, dtype=np.float64)
        total = values.sum()  # finite only if every weight is
        if values.shape != (len(CODES),) or not (math.isfinite(total) and total > 0 and values.min() >= 0):
            raise ValueError(f"a mixture needs {len(CODES)} finite non-negative weights, not all zero")
        super().__init__(MIXTURE, values)


# -- learned parametrisations --------------------------------------------------------------------
class LearnedBalancing(torch.nn.Module):
    """A balancing function g_θ with parameters θ; ``log_g`` is exact for any log t.

    Samplers use it through ``compiled_parameters``: a differentiable vector v(θ)
    that, with a code, is a ``CompiledBalancing``. A learner computes ∂L/∂v in
    compiled code and back-propagates it into θ through v(θ) alone. By default v
    is log g_θ at ``KNOTS`` (a ``BalancingTable``).
    """

    code = TABLE

    def log_g(self, log_t: torch.Tensor) -> torch.Tensor:
        raise TypeError(f"{type(self).__name__} must implement log_g")

    def compiled_parameters(self) -> torch.Tensor:
        """v(θ) for ``code``: here log g_θ at ``KNOTS``, balancing exactly by mirroring (differentiable in θ)."""
        half = torch.as_tensor(HALF_KNOTS)
        return mirror_half(self.log_g(half), half)

    def compiled(self) -> CompiledBalancing:
        """The function as compiled kernels use it (``BalancingTable`` by default)."""
        with torch.no_grad():
            return self.compiled_from(self.compiled_parameters().numpy())

    def compiled_from(self, values: np.ndarray) -> CompiledBalancing:
        return BalancingTable(values)

    def parameter_gradients(self, values: torch.Tensor, grad_values: np.ndarray) -> list[np.ndarray]:
        """∂L/∂θ of each parameter (``parameters()`` order) from ∂L/∂v, back-propagated through ``values`` = v(θ)
        (``compiled_parameters``)."""
        gradients = torch.autograd.grad(values, list(self.parameters()), torch.as_tensor(grad_values))
        return [gradient.numpy() for gradient in gradients]

    def describe(self, values: np.ndarray | None = None) -> dict[str, float]:
        """Named scalars worth tracing while learning (LSB1: its weights), from v(θ) if given (``compiled_parameters``
        as numbers, cheaper than evaluating it again)."""
        return {}

    def graph_floats(self) -> int:
        """Floats the autograd graph of ``compiled_parameters`` keeps (its intermediate arrays)."""
        raise TypeError(f"{type(self).__name__} must implement graph_floats")


def _uniform(shape, bound: float, generator: torch.Generator) -> torch.nn.Parameter:
    values = torch.empty(shape, dtype=torch.float64).uniform_(-bound, bound, generator=generator)
    return torch.nn.Parameter(values)


class MixtureBalancing(LearnedBalancing):
    """LSB1: g_θ = Σ_i softmax(θ)_i g_i over the four fixed functions (Proposition 3.1), used exactly.

    Its compiled form is ``MixtureWeights`` with v(θ) = w = softmax(θ), so
    Z_θ(x) = Σ_i w_i Z_i(x) splits into the four fixed functions' normalisers,
    which a sampler can keep in sum-trees (``samplers.lsb.learning``).
    """

    code = MIXTURE

    def __init__(self, seed: int = 0):
        super().__init__()
        self.names = list(BALANCING)
        self.theta = torch.nn.Parameter(torch.zeros(len(self.names), dtype=torch.float64))

    def log_weights(self) -> torch.Tensor:
        return torch.log_softmax(self.theta, dim=0)

    def log_g(self, log_t):
        components = np.stack([f(log_t.detach().numpy()) for f in BALANCING.values()], axis=-1)
        return torch.logsumexp(self.log_weights() + torch.as_tensor(components), dim=-1)

    def compiled_parameters(self):
        return torch.softmax(self.theta, dim=0)

    def compiled_from(self, values):
        return MixtureWeights(values)

    def parameter_gradients(self, values, grad_values):
        """In closed form: v = w = softmax(θ), so ∂L/∂θ_k = w_k·(∂L/∂w_k − Σ_i w_i ∂L/∂w_i) (no autograd pass,
        which costs more than a whole learning step's arithmetic; the tests check it against autograd)."""
        weights = values.detach().numpy()
        return [weights * (grad_values - weights @ grad_values)]

    def describe(self, values=None):
        weights = self.log_weights().detach().exp().numpy() if values is None else values
        return {f"w_{name}": float(w) for name, w in zip(self.names, weights)}

    def graph_floats(self):
        """softmax keeps its output."""
        return len(self.names)


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

    def graph_floats(self):
        """Per knot u ≥ 0: the hidden layer before and after tanh, per unit, and a few scalars (h at ±u,
        logaddexp)."""
        return HALF_KNOTS.size * (2 * self.w1.numel() + 6)


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

    def graph_floats(self):
        """Per knot u ≥ 0: the blocks × units products and sums, the per-block minima and their indices, and a
        few scalars."""
        units = self.log_slopes.numel()
        return HALF_KNOTS.size * (2 * units + 2 * self.log_slopes.shape[0] + 12)


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
