"""Pairwise binary models (Ising / Boltzmann machines) with O(degree) local updates.

In spins s = 2x − 1 every model here is

    log p̃(x) = β ( Σ_{(i,j)∈E} J_ij s_i s_j + Σ_i h_i s_i ),

stored as a padded neighbour table (``nbr[i, k]``, ``w[i, k]`` = J between i
and its k-th neighbour; padding points at i itself with weight 0). With the
local field f_i = h_i + Σ_j J_ij s_j:

* flipping site i changes log p̃ by  −2 β s_i f_i          (exact, O(deg));
* after flipping i, the ratio of a neighbour j changes by +4 β J_ij s_i s_j;
* setting a block B to new spins s' = s + δ changes it by
  β ( δ_Bᵀ f_B + ½ δ_Bᵀ J_BB δ_B );
* the differentiable extension in x has gradient ∂ log p̃/∂x_i = 2 β f_i, and
  its first-order (Taylor) flip estimate (1 − 2x_i)·2β f_i is exact here,
  because J has a zero diagonal.
"""

from __future__ import annotations

import math

import numpy as np
import param
from numba import njit

from .base import Target, TargetSize
from .compiled import helper


def neighbour_table(dim: int, edges: np.ndarray, couplings: np.ndarray):
    """Padded neighbour table of an undirected graph.

    ``edges`` is ``(E, 2)`` with i ≠ j, each pair once; returns
    ``(nbr, w, degree)`` with ``nbr, w`` of shape ``(dim, max_degree)``.
    """
    edges = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    couplings = np.asarray(couplings, dtype=np.float64).reshape(-1)
    heads = np.concatenate([edges[:, 0], edges[:, 1]])
    tails = np.concatenate([edges[:, 1], edges[:, 0]])
    weights = np.concatenate([couplings, couplings])
    degree = np.bincount(heads, minlength=dim)
    width = max(1, int(degree.max(initial=0)))
    order = np.argsort(heads, kind="stable")
    heads, tails, weights = heads[order], tails[order], weights[order]
    slot = np.arange(len(heads)) - np.repeat(np.cumsum(degree) - degree, degree)
    nbr = np.repeat(np.arange(dim)[:, None], width, axis=1)
    w = np.zeros((dim, width))
    nbr[heads, slot] = tails
    w[heads, slot] = weights
    return nbr, w, degree


@njit(cache=True)
def flip_log_ratios(x, idx, field, nbr, w, beta):
    """log p̃(x^(i)) − log p̃(x) = −2β s_i f_i with f_i = h_i + Σ_j J_ij s_j, for i = idx[c] in row c (O(deg))."""
    out = np.empty(x.shape[0])
    for c in range(x.shape[0]):
        i = idx[c]
        local_field = field[i]
        for k in range(nbr.shape[1]):  # padding entries have weight 0
            local_field += w[i, k] * (2.0 * x[c, nbr[i, k]] - 1.0)
        out[c] = -2.0 * beta * (2.0 * x[c, i] - 1.0) * local_field
    return out


@helper
def flip_ratio_update(x, delta, c, i, nbr, w, beta, sites, values):
    """The flip log-ratios of state x[c] that change when its bit i flips, and their new values.

    ``sites`` gets i (new ratio −Δ_i) and each neighbour j of i (new ratio
    Δ_j + 4β J_ij s_i s_j, with s the spins before the flip); padding entries of
    the neighbour table repeat i with i's own value. 1 + deg(i) ratios (evaluations).
    """
    own = -delta[c, i]
    s_i = 2.0 * x[c, i] - 1.0
    sites[0] = i
    values[0] = own
    for k in range(nbr.shape[1]):
        j = nbr[i, k]
        sites[k + 1] = j
        values[k + 1] = own if j == i else delta[c, j] + 4.0 * beta * w[i, k] * s_i * (2.0 * x[c, j] - 1.0)


@njit(cache=True)
def flip_ratio_updates(x, delta, idx, nbr, w, degree, beta, sites, values):
    """``flip_ratio_update`` for bit idx[c] of every row c; returns the evaluations, Σ_c 1 + deg(idx[c])."""
    evaluations = 0
    for c in range(x.shape[0]):
        flip_ratio_update(x, delta, c, idx[c], nbr, w, beta, sites[c], values[c])
        evaluations += 1 + degree[idx[c]]
    return evaluations


def model_bytes(dim: int, n_edges: int, max_degree: int) -> int:
    """Bytes ``PairwiseBinaryModel._set_model`` stores, all 8-byte entries: the field and the
    degrees (d each), the edges (2E) and couplings (E), and the padded neighbour table
    ``nbr``, ``w`` (d × max(1, max_degree) each)."""
    return 8 * (2 * dim + 3 * n_edges + 2 * dim * max(1, max_degree))


class PairwiseBinaryModel(Target):
    """Base of all pairwise binary models; subclasses supply edges, couplings, field."""

    differentiable = True

    def _set_model(self, edges, couplings, field, beta: float) -> None:
        field = np.asarray(field, dtype=np.float64).reshape(-1)
        self._dim = field.size
        self._beta = float(beta)
        self._edges = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
        self._couplings = np.asarray(couplings, dtype=np.float64).reshape(-1)
        self._field = field
        self._nbr, self._w, self._degree = neighbour_table(self._dim, self._edges, self._couplings)

    @property
    def dim(self) -> int:
        return self._dim

    @property
    def beta(self) -> float:
        return self._beta

    @property
    def flip_tables(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
        """(nbr, w, degree, β) for compiled samplers that update flip ratios in their own kernel
        (``flip_ratio_update``, 1 + deg(i) evaluations a flip of i, to be counted with ``count_evaluations``)."""
        return self._nbr, self._w, self._degree, self._beta

    def pairwise_model(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
        """(edges (E, 2), couplings J (E,), field h (d,), β): log p̃ = β(Σ_E J s_i s_j + Σ h s_i), read-only.

        What the cluster samplers (``samplers.clusters``) build their bonds from; a
        tempered model (``targets.tempered``) gives the same with β scaled.
        """
        return self._edges, self._couplings, self._field, self._beta

    def coupling_matrix(self):
        """J as a scipy sparse matrix (symmetric, zero diagonal)."""
        from scipy import sparse

        i, j = self._edges.T
        data = np.concatenate([self._couplings, self._couplings])
        return sparse.csr_matrix((data, (np.concatenate([i, j]), np.concatenate([j, i]))), shape=(self.dim,) * 2)

    # -- helpers -----------------------------------------------------------------------
    @staticmethod
    def _spins(x: np.ndarray) -> np.ndarray:
        return 2.0 * x - 1.0

    def _local_field(self, x: np.ndarray, sites: np.ndarray | None = None) -> np.ndarray:
        """f_i = h_i + Σ_j J_ij s_j for every site, or only for ``sites`` (``(n,)`` or ``(n, k)``).

        Only the neighbours' spins are read, so the local version is O(deg) per site.
        """
        if sites is None:
            return self._field + np.einsum("nik,ik->ni", self._spins(x[:, self._nbr]), self._w)
        rows = np.arange(x.shape[0]).reshape((-1,) + (1,) * sites.ndim)
        neighbour_spins = self._spins(x[rows, self._nbr[sites]])
        return self._field[sites] + (neighbour_spins * self._w[sites]).sum(-1)

    # -- the contract --------------------------------------------------------------------
    def _log_prob(self, x: np.ndarray) -> np.ndarray:
        s = self._spins(x)
        pair = (s[:, self._edges[:, 0]] * s[:, self._edges[:, 1]]) @ self._couplings
        return self._beta * (pair + s @ self._field)

    def _flip_log_ratio(self, x, idx, log_p):
        return flip_log_ratios(x, np.asarray(idx, dtype=np.int64), self._field, self._nbr, self._w, self._beta)

    def _delta_log_prob(self, x, log_p=None):
        return -2.0 * self._beta * self._spins(x) * self._local_field(x)

    def delta_after_flip(self, x, delta, idx, log_p=None):
        """Compiled (``flip_ratio_updates``): row c gets sites (i, its neighbours) and their new ratios."""
        n = x.shape[0]
        sites = np.empty((n, 1 + self._nbr.shape[1]), dtype=np.int64)
        values = np.empty(sites.shape)
        self._count(flip_ratio_updates(x, delta, np.asarray(idx, dtype=np.int64), self._nbr, self._w, self._degree,
                                       self._beta, sites, values))
        return sites, values

    def _block_log_ratio(self, x, sites, values, log_p=None):
        rows = np.arange(x.shape[0])
        f_block = self._local_field(x, sites)  # (n, k)
        delta_s = self._spins(values) - self._spins(x[rows[:, None], sites])[:, None, :]  # (n, m, k)
        # J between block members: match each member's neighbour list against the block.
        nbr_of_block = self._nbr[sites]  # (n, k, deg)
        w_of_block = self._w[sites]
        j_block = np.einsum(
            "nikb,nik->nib", (nbr_of_block[..., None] == sites[:, None, None, :]), w_of_block
        )
        linear = np.einsum("nmk,nk->nm", delta_s, f_block)
        quadratic = 0.5 * np.einsum("nmi,nij,nmj->nm", delta_s, j_block, delta_s)
        return self._beta * (linear + quadratic)

    def _value_and_grad(self, x):
        return self._log_prob(x), 2.0 * self._beta * self._local_field(x)

    def magnetisation(self, x: np.ndarray) -> np.ndarray:
        """Mean spin (2x − 1) per row."""
        return self._spins(x).mean(axis=1)


def lattice_edges(shape: tuple[int, ...], periodic: bool = True) -> np.ndarray:
    """Nearest-neighbour edges of a (periodic) hyper-cubic lattice, each pair once."""
    index = np.arange(int(np.prod(shape))).reshape(shape)
    edges = []
    for axis, length in enumerate(shape):
        if length < 2:
            continue
        shifted = np.roll(index, -1, axis=axis)
        pairs = np.stack([index.ravel(), shifted.ravel()], axis=1)
        if not periodic:
            last = (np.indices(shape)[axis] == length - 1).ravel()
            pairs = pairs[~last]
        elif length == 2:
            # On a ring of two sites both "neighbours" are the same site: keep one bond.
            first = (np.indices(shape)[axis] == 0).ravel()
            pairs = pairs[first]
        edges.append(pairs)
    return np.concatenate(edges) if edges else np.zeros((0, 2), dtype=np.int64)


def lattice_size(shape: tuple[int, ...], periodic: bool = True, site_arrays: int = 0) -> TargetSize:
    """Size of a pairwise model on ``lattice_edges(shape, periodic)``, from the shape alone (O(len(shape))).

    Along an axis of length L ≥ 2 there are d edges (d/2 when L = 2 on a ring, as
    ``lattice_edges`` keeps one bond; d(L − 1)/L without wrapping), and a site has
    2 neighbours (1 when L = 2). ``site_arrays`` more float64 arrays of d entries are counted.
    """
    dim = math.prod(shape)
    n_edges = max_degree = 0
    for length in (length for length in shape if length >= 2):
        n_edges += dim // length * (length if periodic and length > 2 else length - 1)
        max_degree += 1 if length == 2 else 2
    return TargetSize(dim, model_bytes(dim, n_edges, max_degree) + 8 * site_arrays * dim)


#: Longest ring drawn as a row of spins (a longer one is drawn as a near-square grid of its bits).
MAX_RING_ROW = 64


class IsingChain(PairwiseBinaryModel):
    """Periodic 1-D Ising chain of the OPAD paper (§4.1).

    H(s) = −Σ_j J s_j s_{j+1} − μ Σ_j h s_j,   p̃(s) = exp(−β H(s)).
    """

    registry_name = "ising1d"
    m = param.Integer(15, bounds=(2, 10_000), doc="Number of spins on the ring.")
    beta = param.Number(0.5, bounds=(0.0, 100.0), doc="Inverse temperature β.")
    J = param.Number(1.0, bounds=(-100.0, 100.0), doc="Nearest-neighbour coupling J.")
    h = param.Number(0.1, bounds=(-100.0, 100.0), doc="External field h.")
    mu = param.Number(1.0, bounds=(-100.0, 100.0), doc="Magnetic moment μ (multiplies h).")

    def _build(self):
        edges = lattice_edges((self.m,))
        self._set_model(edges, np.full(len(edges), self.J), np.full(self.m, self.mu * self.h), self.beta)

    @classmethod
    def estimate_size(cls, params):
        """A ring of m sites: d = m, 2 neighbours each."""
        return lattice_size((cls._estimate_params(params)["m"],))

    @property
    def image_shape(self):
        """A ring of at most ``MAX_RING_ROW`` spins is drawn as one row (its last spin neighbours the first)."""
        return (1, self.m) if self.m <= MAX_RING_ROW else None


class IsingLattice(PairwiseBinaryModel):
    """Ising model on a periodic 2-D (L×L) or 3-D (L×L×L) lattice.

    log p̃(s) = β ( J Σ_⟨ij⟩ s_i s_j + h Σ_i s_i ); the default is the critical
    ferromagnet of the intracluster-moves paper (60×60, β = 1/2.27).
    """

    registry_name = "ising_lattice"
    size = param.Integer(60, bounds=(2, 512), doc="Side length L of the lattice.")
    ndim = param.Selector(default=2, objects=[2, 3], doc="Lattice dimension (2 or 3).")
    J = param.Number(1.0, bounds=(-100.0, 100.0), doc="Nearest-neighbour coupling J.")
    h = param.Number(0.0, bounds=(-100.0, 100.0), doc="External field h.")
    beta = param.Number(1 / 2.27, bounds=(0.0, 100.0), doc="Inverse temperature β.")

    def _build(self):
        shape = (self.size,) * self.ndim
        if np.prod(shape) > 2_000_000:
            raise ValueError(f"size={self.size} with ndim={self.ndim} has more than 2,000,000 sites")
        edges = lattice_edges(shape)
        self._shape = shape
        self._set_model(edges, np.full(len(edges), self.J), np.full(int(np.prod(shape)), self.h), self.beta)

    @classmethod
    def estimate_size(cls, params):
        """An L×L (×L) periodic lattice: d = L^ndim, 2·ndim neighbours each."""
        p = cls._estimate_params(params)
        return lattice_size((p["size"],) * p["ndim"])

    @property
    def image_shape(self):
        return self._shape


class DiscsIsing(PairwiseBinaryModel):
    """The Ising model of the DISCS benchmark (Goshvadi et al. 2023, ``discs/models/ising.py``).

    An open L×L lattice with log p̃(s) = λ Σ_⟨ij⟩ s_i s_j − Σ_i b_i s_i, where
    b_i = U(−σ, σ) + μ·(+1 inside the disc of area 1/2 centred on the lattice,
    −1 outside), drawn with ``seed``. DISCS's temperature sweep uses λ as β with
    μ = σ = 0.
    """

    registry_name = "discs_ising"
    size = param.Integer(20, bounds=(2, 512), doc="Side length L of the open lattice.")
    lam = param.Number(0.5, bounds=(-100.0, 100.0), doc="Coupling λ of neighbouring spins.")
    mu = param.Number(0.5, bounds=(-100.0, 100.0), doc="μ: the field's ±μ inside/outside the central disc.")
    sigma = param.Number(1.5, bounds=(0.0, 100.0), doc="σ: half-width of the field's uniform noise U(−σ, σ).")
    seed = param.Integer(0, bounds=(0, 2**32 - 1), doc="Seed of the field's noise.")

    def _build(self):
        shape = (self.size, self.size)
        edges = lattice_edges(shape, periodic=False)
        rows, cols = np.indices(shape)
        inside = (rows / self.size - 0.5) ** 2 + (cols / self.size - 0.5) ** 2 < 0.5 / np.pi
        noise = (2 * np.random.default_rng(self.seed).random(shape) - 1) * self.sigma
        self._shape = shape
        self._set_model(edges, np.full(len(edges), self.lam), -(noise + self.mu * np.where(inside, 1.0, -1.0)).ravel(),
                        1.0)

    @classmethod
    def estimate_size(cls, params):
        """An open L×L lattice: d = L², up to 4 neighbours each."""
        side = cls._estimate_params(params)["size"]
        return lattice_size((side, side), periodic=False)

    @property
    def image_shape(self):
        return self._shape


class SpinGlass3D(PairwiseBinaryModel):
    """Edwards–Anderson ±J spin glass on a periodic L×L×L cube (couplings drawn with ``seed``)."""

    registry_name = "spin_glass_3d"
    size = param.Integer(9, bounds=(2, 64), doc="Side length L of the cube.")
    beta = param.Number(1.0, bounds=(0.0, 100.0), doc="Inverse temperature β.")
    seed = param.Integer(0, bounds=(0, 2**32 - 1), doc="Seed of the ±1 couplings.")

    def _build(self):
        shape = (self.size,) * 3
        edges = lattice_edges(shape)
        signs = np.random.default_rng(self.seed).choice([-1.0, 1.0], size=len(edges))
        self._shape = shape
        self._set_model(edges, signs, np.zeros(int(np.prod(shape))), self.beta)

    @classmethod
    def estimate_size(cls, params):
        """A periodic L×L×L cube: d = L³, 6 neighbours each."""
        return lattice_size((cls._estimate_params(params)["size"],) * 3)

    @property
    def image_shape(self):
        return self._shape
