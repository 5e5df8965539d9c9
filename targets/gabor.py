"""A Boltzmann machine with RBM structure and local Gabor-filter weights (Hamze & de Freitas 2010, §4).

The units are x = (v, h): v ∈ {0,1}^{L²} on an L×L image grid (row-major,
pixel p = row·L + col) and h ∈ {0,1}^H. Both layers are sampled — nothing is
summed out. The energy is the 0/1 Boltzmann machine's (Ackley, Hinton &
Sejnowski 1985; Smolensky 1986),

    E(v, h) = − Σ_{p,j} W_pj v_p h_j − b Σ_p v_p − c Σ_j h_j,      log p̃ = −β E,

with scalar biases b (visible) and c (hidden). Hidden unit j is a Gabor
filter on a ``patch``×``patch`` window centred at pixel (r_j, c_j), drawn
uniformly on the grid (the window is clipped at the border; W_pj = 0 outside
it). With (u, w) = (col − c_j, row − r_j) and the carrier axis at angle θ_j,
u' = u cos θ_j + w sin θ_j, w' = −u sin θ_j + w cos θ_j,

    W_pj = A · exp(−(u'² + γ_g² w'²) / (2σ²)) · cos(2π u'/λ + φ_j),

θ_j ~ U[0, π) and φ_j ~ U[0, 2π) drawn with ``seed`` (centre row, centre
column, θ, φ in that order). The paper's model is dense (784×500 = 392,000
edges), its filters decaying with the envelope; cutting them at a window of a
few σ keeps the model sparse, so a flip changes 1 + deg flip ratios (deg = the
window size for a hidden unit, the number of windows covering it for a pixel).

Spins. The paper writes its models in spins s = 2x − 1; a 0/1 unit is on
exactly when its spin is up, so "a third of the units active" is the paper's
S_n. Substituting x = (s + 1)/2 gives exactly the pairwise spin model of
``PairwiseBinaryModel`` plus a constant:

    J_pj = W_pj / 4,   h_p = b/2 + Σ_j W_pj / 4,   h_j = c/2 + Σ_p W_pj / 4,
    log p̃ = β ( Σ_{p,j} J_pj s_p s_j + hᵀs ) + β ( ΣW/4 + (L² b + H c)/2 ),

and the constant is added back, so −log p̃ is the 0/1 energy β·E above. (This
is not the zero-field spin model with J = W: the 0/1 units carry the fields.)

Biases. On S_n a bias common to all units only adds a constant, and b − c
moves units between the layers. The default b = c = 0 is not degenerate:
without the constraint the equilibrium at the defaults has ≈ 56 % of the
pixels and ≈ 61 % of the hidden units on (single-site Metropolis, 8 chains).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import param

from .base import TargetSize
from .picture import ImagePart, side_by_side
from .pairwise import PairwiseBinaryModel, model_bytes


def gabor(u, w, theta, phase, sigma: float, wavelength: float, aspect: float, amplitude: float) -> np.ndarray:
    """The Gabor filter A·exp(−(u'² + γ_g² w'²)/(2σ²))·cos(2πu'/λ + φ) at offsets (u, w) (broadcast)."""
    along = u * np.cos(theta) + w * np.sin(theta)
    across = -u * np.sin(theta) + w * np.cos(theta)
    envelope = np.exp(-(along**2 + (aspect * across) ** 2) / (2.0 * sigma**2))
    return amplitude * envelope * np.cos(2.0 * np.pi * along / wavelength + phase)


@dataclass(frozen=True)
class GaborBank:
    """Where each hidden unit's filter sits and how it is turned: centre pixel (row, col), angle θ, phase φ."""

    row: np.ndarray
    col: np.ndarray
    theta: np.ndarray
    phase: np.ndarray

    @classmethod
    def draw(cls, side: int, n_hidden: int, seed: int) -> GaborBank:
        """Centres uniform on the L×L grid, θ ~ U[0, π), φ ~ U[0, 2π), drawn in that order from ``seed``."""
        rng = np.random.default_rng(seed)
        return cls(row=rng.integers(side, size=n_hidden), col=rng.integers(side, size=n_hidden),
                   theta=rng.uniform(0.0, np.pi, n_hidden), phase=rng.uniform(0.0, 2.0 * np.pi, n_hidden))

    def windows(self, side: int, patch: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Each filter's window clipped to the grid: first and last row, first and last column."""
        radius = patch // 2
        return (np.maximum(self.row - radius, 0), np.minimum(self.row + radius, side - 1),
                np.maximum(self.col - radius, 0), np.minimum(self.col + radius, side - 1))


def _check_patch(side: int, patch: int) -> None:
    if patch % 2 == 0 or patch > side:
        raise ValueError(f"patch must be odd and at most side={side}; got {patch}")


class GaborBoltzmann(PairwiseBinaryModel):
    """RBM-structured Boltzmann machine over visible and hidden units with local Gabor-filter weights (paper's §4).

    States are x = (v, h), the L² pixels row-major, then the H hidden units.
    ``bank`` holds the filters' centres, angles and phases, ``weights()`` the
    dense W of the 0/1 energy, ``visible_image(x)`` the pixels as images.
    """

    registry_name = "gabor_rbm"
    side = param.Integer(28, bounds=(3, 64), doc="Side L of the visible image grid (L² visible units).")
    n_hidden = param.Integer(500, bounds=(1, 5000), doc="Number H of hidden units (Gabor filters).")
    patch = param.Integer(11, bounds=(1, 63), doc="Odd side of each filter's window, at most L; the filter is "
                                                  "zero outside it.")
    sigma = param.Number(2.0, bounds=(0.0, None), inclusive_bounds=(False, True),
                         doc="Width σ of the Gaussian envelope, in pixels.")
    wavelength = param.Number(6.0, bounds=(0.0, None), inclusive_bounds=(False, True),
                              doc="Wavelength λ of the cosine carrier, in pixels.")
    aspect = param.Number(0.8, bounds=(0.0, None), inclusive_bounds=(False, True),
                          doc="Aspect ratio γ_g of the envelope (< 1 stretches it along the stripes).")
    amplitude = param.Number(1.0, bounds=(0.0, 100.0), doc="Peak weight A of every filter.")
    visible_bias = param.Number(0.0, bounds=(-100.0, 100.0), doc="Bias b of every visible unit (0/1 units).")
    hidden_bias = param.Number(0.0, bounds=(-100.0, 100.0), doc="Bias c of every hidden unit (0/1 units).")
    beta = param.Number(1.0, bounds=(0.0, 100.0), doc="Inverse temperature β.")
    seed = param.Integer(0, bounds=(0, 2**32 - 1), doc="Seed of the filters' centres, angles and phases.")

    def _build(self):
        _check_patch(self.side, self.patch)
        self.bank = GaborBank.draw(self.side, self.n_hidden, self.seed)
        pixels, hidden, weights = self._filter_entries()
        n_visible = self.n_visible
        row_sums = np.bincount(pixels, weights, minlength=n_visible)
        column_sums = np.bincount(hidden, weights, minlength=self.n_hidden)
        field = np.concatenate([self.visible_bias / 2 + row_sums / 4, self.hidden_bias / 2 + column_sums / 4])
        edges = np.stack([pixels, n_visible + hidden], axis=1)
        self._set_model(edges, weights / 4, field, self.beta)
        self._weights = (pixels, hidden, weights)
        self._offset = self.beta * (weights.sum() / 4 + (n_visible * self.visible_bias
                                                           + self.n_hidden * self.hidden_bias) / 2)

    @classmethod
    def estimate_size(cls, params):
        """d = L² + H; one edge per in-grid window entry, the neighbour table as wide as the largest
        window or the most windows covering one pixel (counted on a 2-D difference array of the
        clipped windows, O(H + L²)); plus the edge list (pixel, unit, W) and the filter bank."""
        p = cls._estimate_params(params)
        side, n_hidden = p["side"], p["n_hidden"]
        _check_patch(side, p["patch"])
        top, bottom, left, right = GaborBank.draw(side, n_hidden, p["seed"]).windows(side, p["patch"])
        window = (bottom - top + 1) * (right - left + 1)
        corners = np.zeros((side + 1, side + 1), dtype=np.int64)
        for rows, cols, sign in ((top, left, 1), (top, right + 1, -1),
                                 (bottom + 1, left, -1), (bottom + 1, right + 1, 1)):
            np.add.at(corners, (rows, cols), sign)
        most_covering = int(corners.cumsum(axis=0).cumsum(axis=1).max())
        n_edges = int(window.sum())
        dim = side**2 + n_hidden
        held = model_bytes(dim, n_edges, max(int(window.max()), most_covering)) + 24 * n_edges + 32 * n_hidden
        return TargetSize(dim, held)

    def _filter_entries(self):
        """(pixel, hidden unit, W) of every window entry inside the grid: the non-zero weights."""
        radius = self.patch // 2
        offsets = np.arange(-radius, radius + 1)
        w, u = (grid.ravel() for grid in np.meshgrid(offsets, offsets, indexing="ij"))  # row, col offsets
        bank = self.bank
        rows, cols = bank.row[:, None] + w, bank.col[:, None] + u
        inside = (rows >= 0) & (rows < self.side) & (cols >= 0) & (cols < self.side)
        values = gabor(u, w, bank.theta[:, None], bank.phase[:, None], self.sigma, self.wavelength, self.aspect,
                       self.amplitude)
        hidden = np.broadcast_to(np.arange(self.n_hidden)[:, None], inside.shape)
        return (rows * self.side + cols)[inside], hidden[inside], values[inside]

    @property
    def n_visible(self) -> int:
        """Number L² of visible units (pixels)."""
        return self.side**2

    def weights(self) -> np.ndarray:
        """The dense ``(L², H)`` weight matrix W of the 0/1 energy (zero outside every window)."""
        pixels, hidden, values = self._weights
        dense = np.zeros((self.n_visible, self.n_hidden))
        dense[pixels, hidden] = values
        return dense

    @property
    def image_shape(self) -> tuple[int, int]:
        return self._picture()[0]

    @property
    def image_positions(self) -> np.ndarray:
        return self._picture()[1]

    @property
    def image_axes(self):
        return self._picture()[2]

    def _picture(self):
        """A state drawn as its L×L visible image and, beside it, its hidden units in a block at least as tall."""
        rows = max(self.side, math.ceil(math.sqrt(self.n_hidden)))
        return side_by_side(
            ImagePart(f"visible v: {self.side} × {self.side} pixels", "pixel", 0, self.n_visible,
                      (self.side, self.side)),
            ImagePart(f"hidden h: {self.n_hidden} units", "hidden unit", self.n_visible, self.n_hidden,
                      (rows, math.ceil(self.n_hidden / rows)), grid=False))

    def visible_image(self, x: np.ndarray) -> np.ndarray:
        """The visible units of a batch of states as images, ``(n, L, L)``."""
        x = self.check_states(x)
        return x[:, : self.n_visible].reshape(-1, self.side, self.side)

    def _log_prob(self, x: np.ndarray) -> np.ndarray:
        """The spin form plus its constant: exactly −β E(v, h) of the 0/1 energy."""
        return super()._log_prob(x) + self._offset
