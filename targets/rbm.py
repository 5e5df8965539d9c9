"""Binary restricted Boltzmann machine with the hidden layer summed out.

The joint model over visible v ∈ {0,1}^d and hidden h ∈ {0,1}^H is

    p̃(v, h) = exp(bᵀv + cᵀh + vᵀW h),      W ∈ ℝ^{d×H}.

Summing out h gives the target (the negative free energy)

    log p̃(v) = bᵀv + Σ_j softplus(a_j),     a = c + Wᵀv  (the hidden pre-activations),

with softplus(t) = log(1 + eᵗ). Local moves only shift the pre-activations:
changing v by Δv changes a by WᵀΔv, so

    log p̃(v + Δv) − log p̃(v) = bᵀΔv + Σ_j [softplus(a_j + (WᵀΔv)_j) − softplus(a_j)],

which costs O(|Δv|·H) instead of O(d·H). A single flip of v_i has Δv = (1 − 2v_i) e_i.
Reading the same formula over real v gives the differentiable extension, with
∇ log p̃(v) = b + W σ(a) (σ the logistic function).

Summing out v instead gives the marginal of the hidden layer,

    log q̃(h) = cᵀh + Σ_i softplus(b_i + (W h)_i),

so for H ≤ 20 the partition function Z = Σ_h q̃(h) and exact i.i.d. samples
(h ~ q, then v | h ~ Bernoulli(σ(b + W h))) are cheap to compute.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import param
from scipy.special import expit, logsumexp, softmax

from .base import Target, TargetSize, all_states, array_shape, stored_bytes
from .picture import ImageAxes, ImagePart

#: The model shipped with the explorer: 16 hidden units trained on binarised 8×8 digits.
DEFAULT_MODEL = Path(__file__).resolve().parent.parent / "assets" / "rbm_digits.npz"
#: The largest hidden layer for which log Z and exact samples enumerate all 2^H hidden states.
MAX_EXACT_HIDDEN = 20
#: Hidden states per chunk when enumerating them (bounds memory at ~chunk·d floats).
_HIDDEN_CHUNK = 2**14


def softplus(t: np.ndarray) -> np.ndarray:
    """log(1 + eᵗ), computed stably."""
    return np.logaddexp(0.0, t)


def _as_finite_array(value, name: str, ndim: int) -> np.ndarray:
    """``value`` as a float64 array of ``ndim`` dimensions with finite entries, or ``ValueError``."""
    arr = np.asarray(value, dtype=np.float64)
    if arr.ndim != ndim:
        raise ValueError(f"{name} must be a {ndim}-D array; got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must contain only finite values")
    return arr


def _shipped_model() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """W, b, c of ``DEFAULT_MODEL``."""
    with np.load(DEFAULT_MODEL, allow_pickle=False) as model:
        return model["W"], model["b"], model["c"]


def _given_or_shipped(weights, visible_bias, hidden_bias) -> tuple:
    """The model's (W, b, c): the shipped model when all three are None, else as given (W required)."""
    if weights is None and visible_bias is None and hidden_bias is None:
        return _shipped_model()
    if weights is None:
        raise ValueError("weights must be given when visible_bias or hidden_bias is")
    return weights, visible_bias, hidden_bias


def _float64_bytes(value, size: int) -> int:
    """Bytes held for an array parameter of ``size`` entries that the model reads as float64: its
    stored copy, plus the float64 conversion unless that copy is float64 already (lists are stored
    as float64; None becomes zeros)."""
    shared = isinstance(value, list) or (isinstance(value, np.ndarray) and value.dtype == np.float64)
    return stored_bytes(value) + (0 if shared else 8 * size)


class RBM(Target):
    """Binary RBM, log p̃(v) = bᵀv + Σ_j softplus(c_j + (vW)_j) (hidden units summed out).

    With all three parameters left as ``None`` the shipped model
    ``assets/rbm_digits.npz`` (built by ``assets/build_rbm.py``) is loaded. When
    ``weights`` is given, a missing bias defaults to zeros. Like every target
    it is immutable: ``rbm.with_params(weights=W, visible_bias=b, hidden_bias=c)``
    builds a new one (change the shapes of all three together).
    """

    registry_name = "rbm"
    differentiable = True

    weights = param.ClassSelector(
        class_=np.ndarray, default=None, allow_None=True, doc="Couplings W, shape (d, H)."
    )
    visible_bias = param.ClassSelector(
        class_=np.ndarray, default=None, allow_None=True, doc="Visible biases b, shape (d,)."
    )
    hidden_bias = param.ClassSelector(
        class_=np.ndarray, default=None, allow_None=True, doc="Hidden biases c, shape (H,)."
    )

    @classmethod
    def random(cls, n_visible: int, n_hidden: int, seed: int = 0, scale: float = 1.0) -> RBM:
        """An RBM with W, b, c drawn i.i.d. from N(0, scale²) (small models for tests)."""
        rng = np.random.default_rng(seed)
        return cls(
            weights=scale * rng.standard_normal((n_visible, n_hidden)),
            visible_bias=scale * rng.standard_normal(n_visible),
            hidden_bias=scale * rng.standard_normal(n_hidden),
        )

    # -- structure -----------------------------------------------------------------
    def _build(self) -> None:
        self._set_model(*_given_or_shipped(self.weights, self.visible_bias, self.hidden_bias))

    @classmethod
    def estimate_size(cls, params):
        """d visible units (W's rows); W, b, c as float64, plus the stored copies of given arrays of other dtypes."""
        p = cls._estimate_params(params)
        shape = array_shape(_given_or_shipped(p["weights"], p["visible_bias"], p["hidden_bias"])[0])
        if len(shape) != 2:
            raise ValueError(f"weights must be a 2-D array; got shape {shape}")
        d, H = shape
        arrays = zip((p["weights"], p["visible_bias"], p["hidden_bias"]), (d * H, d, H))
        return TargetSize(d, sum(_float64_bytes(value, size) for value, size in arrays))

    def _set_model(self, weights, visible_bias, hidden_bias) -> None:
        """Validate and store W, b, c (a bias of ``None`` means zeros)."""
        W = _as_finite_array(weights, "weights", 2)
        d, H = W.shape
        if d == 0 or H == 0:
            raise ValueError(f"weights must have at least one visible and one hidden unit; got shape {W.shape}")
        b = np.zeros(d) if visible_bias is None else _as_finite_array(visible_bias, "visible_bias", 1)
        c = np.zeros(H) if hidden_bias is None else _as_finite_array(hidden_bias, "hidden_bias", 1)
        if b.shape != (d,):
            raise ValueError(f"visible_bias must have shape ({d},) to match weights {W.shape}; got {b.shape}")
        if c.shape != (H,):
            raise ValueError(f"hidden_bias must have shape ({H},) to match weights {W.shape}; got {c.shape}")
        self._W, self._b, self._c = W, b, c

    @property
    def dim(self) -> int:
        return self._W.shape[0]

    @property
    def n_hidden(self) -> int:
        return self._W.shape[1]

    @property
    def image_shape(self) -> tuple[int, int] | None:
        """(8, 8) for a 64-pixel model (the digits), otherwise ``None``."""
        return (8, 8) if self.dim == 64 else None

    @property
    def image_axes(self) -> ImageAxes | None:
        """The image is the visible layer only: the hidden units are summed out of the state."""
        if self.image_shape is None:
            return None
        title = f"visible v: 8 × 8 pixels\n(its {self.n_hidden} hidden units are summed out)"
        return ImageAxes(parts=(ImagePart(title, "pixel", 0, self.dim, self.image_shape),))

    def hidden_probabilities(self, x: np.ndarray) -> np.ndarray:
        """p(h_j = 1 | v) = σ(c_j + (Wᵀv)_j) for each visible state (row) of ``x``: what the summed-out hidden
        units say of the state, shape (n, H)."""
        return expit(self._preactivations(np.atleast_2d(x).astype(np.float64)))

    # -- local changes -------------------------------------------------------------
    def _preactivations(self, v: np.ndarray) -> np.ndarray:
        """a = c + Wᵀv for each row of the float batch ``v``; shape (n, H)."""
        return self._c + v @ self._W

    def _log_prob_at(self, v: np.ndarray, a: np.ndarray) -> np.ndarray:
        """bᵀv + Σ_j softplus(a_j) for float states ``v`` with pre-activations ``a``."""
        return v @ self._b + softplus(a).sum(axis=1)

    @staticmethod
    def _log_ratio(a: np.ndarray, linear: np.ndarray, shift: np.ndarray) -> np.ndarray:
        """bᵀΔv + Σ_j [softplus(a_j + shift_j) − softplus(a_j)], given ``linear`` = bᵀΔv.

        ``a`` is (n, H); ``shift`` = WᵀΔv is (n, ..., H) with ``linear`` of shape (n, ...).
        """
        a = a.reshape(a.shape[:1] + (1,) * (shift.ndim - 2) + a.shape[1:])
        return linear + (softplus(a + shift) - softplus(a)).sum(axis=-1)

    # -- the contract --------------------------------------------------------------
    def _log_prob(self, x: np.ndarray) -> np.ndarray:
        v = x.astype(np.float64)
        return self._log_prob_at(v, self._preactivations(v))

    def _flip_log_ratio(self, x, idx, log_p):
        v = x.astype(np.float64)
        sign = 1.0 - 2.0 * v[np.arange(len(v)), idx]  # Δv_i = ±1
        return self._log_ratio(self._preactivations(v), sign * self._b[idx], sign[:, None] * self._W[idx])

    def _delta_log_prob(self, x, log_p=None):
        v = x.astype(np.float64)
        sign = 1.0 - 2.0 * v  # (n, d): Δv_i for the flip of site i
        shift = sign[:, :, None] * self._W  # (n, d, H)
        return self._log_ratio(self._preactivations(v), sign * self._b, shift)

    def _block_log_ratio(self, x, sites, values, log_p=None):
        v = x.astype(np.float64)
        rows = np.arange(len(v))[:, None]
        dv = values - v[rows, sites][:, None, :]  # (n, m, k)
        linear = np.einsum("nmk,nk->nm", dv, self._b[sites])
        shift = np.einsum("nmk,nkh->nmh", dv, self._W[sites])
        return self._log_ratio(self._preactivations(v), linear, shift)

    def _value_and_grad(self, x):
        v = x.astype(np.float64)
        a = self._preactivations(v)
        return self._log_prob_at(v, a), self._b + expit(a) @ self._W.T

    # -- exact computations through the hidden layer ---------------------------------
    def _hidden_marginal(self) -> tuple[np.ndarray, np.ndarray]:
        """All 2^H hidden states and their unnormalised log marginal log q̃(h).

        log q̃(h) = cᵀh + Σ_i softplus(b_i + (W h)_i), evaluated in chunks of
        hidden states. Raises ``ValueError`` when H > ``MAX_EXACT_HIDDEN``.
        """
        if self.n_hidden > MAX_EXACT_HIDDEN:
            raise ValueError(
                f"exact computations enumerate 2^H hidden states and need H <= {MAX_EXACT_HIDDEN}; "
                f"this RBM has H = {self.n_hidden}"
            )
        hidden = all_states(self.n_hidden)
        log_q = np.concatenate([
            h @ self._c + softplus(self._b + h @ self._W.T).sum(axis=1)
            for h in np.split(hidden.astype(np.float64), range(_HIDDEN_CHUNK, len(hidden), _HIDDEN_CHUNK))
        ])
        return hidden, log_q

    def log_partition(self) -> float:
        """Exact log Z = log Σ_v p̃(v) = logsumexp_h log q̃(h) (needs H ≤ 20; uncounted)."""
        return float(logsumexp(self._hidden_marginal()[1]))

    def sample_exact(self, n: int, seed: int | None = None) -> np.ndarray:
        """``n`` exact i.i.d. draws from p(v) as an (n, d) uint8 array (needs H ≤ 20; uncounted).

        Draws h from its exact marginal q(h) ∝ q̃(h), then v | h ~ Bernoulli(σ(b + W h)).
        """
        rng = np.random.default_rng(seed)
        hidden, log_q = self._hidden_marginal()
        h = hidden[rng.choice(len(hidden), size=n, p=softmax(log_q))].astype(np.float64)
        p_visible = expit(self._b + h @ self._W.T)
        return (rng.random(p_visible.shape) < p_visible).astype(np.uint8)
