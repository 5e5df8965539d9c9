"""Bayesian variable selection: the posterior over inclusion vectors γ ∈ {0,1}^m (OPAD paper §4.2, Eqs. 11–14).

Linear regression y = Xβ + ε, ε ~ N(0, σ²I), with X and y centred (no
intercept indicator). Given γ, the included coefficients have Zellner's
g-prior β_γ ~ N(0, gσ²(X_γᵀX_γ)⁻¹), σ² ~ IG(a, b) and γ_j ~ Bernoulli(ρ).
Integrating β and σ² out (Eq. 12) and multiplying by the prior (Eq. 13):

    log p̃(γ) = −(|γ|/2) log(g + 1)
               − (a + n/2) log[(yᵀy − g/(g+1) · yᵀP_γ y + 2b) / 2]
               + |γ| log ρ + (m − |γ|) log(1 − ρ),

with P_γ = X_γ(X_γᵀX_γ)⁻¹X_γᵀ the projection onto the span of the included
columns.

Numerical stability: yᵀP_γy = c_γᵀ G_γ⁺ c_γ with G = XᵀX and c = Xᵀy, the
columns first scaled to unit norm (a projection does not change when its
columns are rescaled, and the scaling makes G well conditioned). States are
evaluated in batches grouped by |γ|: one stacked ``solve`` per group
(about 13× faster than an eigendecomposition). Where G_γ is singular or the
solve gives an impossible value (a projection cannot exceed yᵀy), G_γ⁺ is
the pseudo-inverse from a symmetric eigendecomposition that drops
eigenvalues below 1e-10 of the largest: for collinear columns (X_γᵀX_γ
singular, where the textbook formula is undefined) this is still the
projection onto their span, so a duplicated column changes log p̃ only
through the |γ| terms of the prior and of (g + 1)^(−|γ|/2).

Data: ``dataset="synthetic"`` is the paper's generator (m = 20, n = 200,
γ* ~ Bernoulli(0.5), β ~ U(−4, 4) on γ*, X ~ U(−3, 3), noise variance 1,
seeded); ``dataset="diabetes"`` is Efron et al.'s (2004) 442 patients × 10
predictors (assets/bvs/diabetes.csv, see assets/build_diabetes.py for its
source and licence); or pass your own ``X`` and ``y``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import param

from .base import Target, TargetSize, array_shape, stored_bytes
from .picture import ImageAxes

DIABETES_CSV = Path(__file__).resolve().parent.parent / "assets" / "bvs" / "diabetes.csv"
#: Relative eigenvalue threshold of the pseudo-inverse (collinear columns).
RANK_TOLERANCE = 1e-10


def synthetic_regression(n_predictors: int = 20, n_samples: int = 200, seed: int = 0):
    """The OPAD paper's synthetic data: ``(X, y, true_inclusion)``."""
    rng = np.random.default_rng(seed)
    inclusion = rng.random(n_predictors) < 0.5
    beta = np.where(inclusion, rng.uniform(-4.0, 4.0, n_predictors), 0.0)
    X = rng.uniform(-3.0, 3.0, size=(n_samples, n_predictors))
    X -= X.mean(axis=0)
    y = X @ beta + rng.normal(size=n_samples)
    return X, y, inclusion.astype(np.uint8)


def diabetes_names() -> list[str]:
    """The predictors' names, from the header of the diabetes data (the last column is the response)."""
    with DIABETES_CSV.open() as file:
        return file.readline().strip().split(",")[:-1]


def diabetes_regression():
    """Efron et al. (2004) diabetes data: 10 predictors and disease progression (``X``, ``y``, names)."""
    table = np.loadtxt(DIABETES_CSV, delimiter=",", skiprows=1)
    return table[:, :-1], table[:, -1], diabetes_names()


def _as_data(X, y) -> tuple[np.ndarray, np.ndarray]:
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if X.ndim != 2 or X.shape[1] < 1:
        raise ValueError(f"X must be a 2-D array (n samples × m predictors); got shape {X.shape}")
    if y.shape != (X.shape[0],):
        raise ValueError(f"y must have shape ({X.shape[0]},) to match X; got {y.shape}")
    if X.shape[0] < 2:
        raise ValueError("X and y need at least 2 samples")
    if not (np.all(np.isfinite(X)) and np.all(np.isfinite(y))):
        raise ValueError("X and y must contain only finite values")
    return X, y


#: Most predictors drawn as one named row.
MAX_ROW = 40


class BayesianVariableSelection(Target):
    """Posterior over which predictors enter a linear regression (g-prior, inverse-gamma σ², Bernoulli γ)."""

    registry_name = "bvs"
    #: Parameters of the synthetic data only (see ``dashboard.forms``).
    parameter_conditions = {"n_predictors": ("dataset", ("synthetic",)), "n_samples": ("dataset", ("synthetic",))}
    dataset = param.Selector(default="synthetic", objects=["synthetic", "diabetes"],
                             doc="Data when X and y are not given: the paper's synthetic generator, or the "
                                 "diabetes data (442 × 10).")
    X = param.Parameter(None, doc="Your design matrix (n × m); centred internally. Overrides dataset.")
    y = param.Parameter(None, doc="Your responses (n,); centred internally.")
    n_predictors = param.Integer(20, bounds=(1, 62), doc="Synthetic data: number of predictors m.")
    n_samples = param.Integer(200, bounds=(2, 100_000), doc="Synthetic data: number of samples n.")
    seed = param.Integer(0, bounds=(0, 2**32 - 1), doc="Synthetic data: seed of the generator.")
    g = param.Number(None, bounds=(0.0, None), inclusive_bounds=(False, True), allow_None=True,
                     doc="g-prior scale (default: n, the number of samples).")
    a = param.Number(3.0, bounds=(0.0, None), inclusive_bounds=(False, True), doc="Inverse-gamma shape of σ².")
    b = param.Number(1.0, bounds=(0.0, None), inclusive_bounds=(False, True), doc="Inverse-gamma scale of σ².")
    rho = param.Number(0.5, bounds=(0.0, 1.0), inclusive_bounds=(False, False),
                       doc="Prior inclusion probability of each predictor.")

    def _build(self):
        self.true_inclusion = None
        if (self.X is None) != (self.y is None):
            raise ValueError("give both X and y, or neither (to use dataset)")
        if self.X is not None:
            X, y = _as_data(self.X, self.y)
            self.predictor_names = [f"x{j}" for j in range(X.shape[1])]
        elif self.dataset == "synthetic":
            X, y, self.true_inclusion = synthetic_regression(self.n_predictors, self.n_samples, self.seed)
            self.predictor_names = [f"x{j}" for j in range(X.shape[1])]
        else:
            X, y, self.predictor_names = diabetes_regression()
        if X.shape[1] > 62:
            raise ValueError(f"at most 62 predictors are supported; got {X.shape[1]}")
        X = X - X.mean(axis=0)
        y = y - y.mean()
        norms = np.linalg.norm(X, axis=0)
        if np.any(norms == 0):
            raise ValueError(f"predictor(s) {np.flatnonzero(norms == 0).tolist()} are constant; remove them")
        scaled = X / norms
        self._gram = scaled.T @ scaled
        self._cross = scaled.T @ y
        self._yty = float(y @ y)
        self._n, self._m = X.shape
        self._g = float(self.g) if self.g is not None else float(self._n)

    @classmethod
    def estimate_size(cls, params):
        """m predictors; the stored X and y, the m × m Gram matrix, Xᵀy and the true inclusion vector.

        (The centred and scaled copies of X are temporaries of the build, not held.)
        """
        p = cls._estimate_params(params)
        if p["X"] is not None:
            shape = array_shape(p["X"])
            if len(shape) != 2:
                raise ValueError(f"X must be a 2-D array (n samples × m predictors); got shape {shape}")
            m = shape[1]
        elif p["dataset"] == "synthetic":
            m = p["n_predictors"]
        else:
            m = len(diabetes_names())
        return TargetSize(m, stored_bytes(p["X"]) + stored_bytes(p["y"]) + 8 * m * (m + 1) + m)

    @property
    def dim(self) -> int:
        return self._m

    @property
    def image_shape(self) -> tuple[int, int] | None:
        """The predictors in one row of at most ``MAX_ROW`` cells, each named (a longer list: a square grid)."""
        return (1, self._m) if self._m <= MAX_ROW else None

    @property
    def image_axes(self) -> ImageAxes | None:
        return ImageAxes((), tuple(self.predictor_names), columns_title="predictor") if self._m <= MAX_ROW else None

    def projected_square(self, x: np.ndarray) -> np.ndarray:
        """yᵀP_γy for every row γ of ``x`` (pseudo-inverse on collinear columns)."""
        sizes = x.sum(axis=1)
        out = np.zeros(x.shape[0])
        for k in np.unique(sizes):
            if k == 0:
                continue
            rows = np.flatnonzero(sizes == k)
            cols = np.nonzero(x[rows])[1].reshape(rows.size, k)
            out[rows] = self._quadratic_forms(self._gram[cols[:, :, None], cols[:, None, :]], self._cross[cols])
        return out

    def _quadratic_forms(self, gram: np.ndarray, cross: np.ndarray) -> np.ndarray:
        """cᵀG⁺c for a stack: a batched solve where G is invertible, the eigen pseudo-inverse elsewhere.

        A projection of y cannot exceed yᵀy (in the unit-norm scaling, 1 + 1e-9 of it is
        allowed for rounding); a solve that fails or breaks that bound — collinear or
        numerically collinear columns — is redone with the pseudo-inverse.
        """
        limit = self._yty * (1.0 + 1e-9)
        quad = np.full(gram.shape[0], np.nan)
        try:
            quad = np.einsum("bk,bk->b", cross, np.linalg.solve(gram, cross[..., None])[..., 0])
        except np.linalg.LinAlgError:
            pass
        redo = ~((quad >= -1e-9 * limit) & (quad <= limit))
        if redo.any():
            eigenvalues, vectors = np.linalg.eigh(gram[redo])
            coefficients = np.einsum("bkj,bk->bj", vectors, cross[redo])
            keep = eigenvalues > RANK_TOLERANCE * eigenvalues[:, -1:]
            quad[redo] = np.sum(np.where(keep, coefficients**2 / np.where(keep, eigenvalues, 1.0), 0.0), axis=1)
        return quad

    def _log_prob(self, x):
        sizes = x.sum(axis=1).astype(np.float64)
        g, a, b = self._g, self.a, self.b
        residual = self._yty - g / (g + 1.0) * self.projected_square(x) + 2.0 * b
        return (-0.5 * sizes * np.log1p(g) - (a + 0.5 * self._n) * np.log(0.5 * residual)
                + sizes * np.log(self.rho) + (self._m - sizes) * np.log1p(-self.rho))
