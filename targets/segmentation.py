"""The Ising image-segmentation posterior of the LSB paper (Sansone 2022, §5.1, Eq. 6).

A ground-truth object s* ∈ {−1, 1}^{n×n} (a centred square on background) is
observed through Gaussian noise, y_i ~ N(μ s*_i, σ²). The posterior over the
hidden segmentation s is

    p(s | y) ∝ exp( Σ_i α_i s_i + λ Σ_{(i,j)∈E} s_i s_j ),   α_i = y_i μ / σ²,

with E the 4-neighbour edges of the (non-periodic) n×n image grid.

Following the paper, α is computed from a noisy image y drawn once per target
(with ``seed``), and every chain samples the same posterior. (The authors'
code instead used α = μ s* + U(−σ, σ) and a separate image per chain; we keep
Eq. 6.) The paper's four cases are (λ, μ, σ) = (0, 1, 3), (0, 3, 3), (1, 1, 3), (1, 3, 3).
"""

from __future__ import annotations

import numpy as np
import param

from .pairwise import PairwiseBinaryModel, lattice_edges, lattice_size


def square_object(size: int) -> np.ndarray:
    """Ground truth s*: +1 on a centred square of half the side, −1 elsewhere."""
    truth = -np.ones((size, size))
    lo, hi = size // 4, size - size // 4
    truth[lo:hi, lo:hi] = 1.0
    return truth


class IsingSegmentation(PairwiseBinaryModel):
    """Image-segmentation Ising posterior (LSB paper, Eq. 6) on a size×size image."""

    registry_name = "ising_segmentation"
    size = param.Integer(30, bounds=(2, 512), doc="Side of the square image (pixels).")
    lam = param.Number(1.0, bounds=(0.0, 100.0), doc="λ ≥ 0: strength of the smoothness prior between neighbours.")
    mu = param.Number(1.0, bounds=(-100.0, 100.0), doc="μ: mean intensity of object (+μ) and background (−μ).")
    sigma = param.Number(3.0, bounds=(1e-6, 1e3), doc="σ > 0: standard deviation of the pixel noise.")
    seed = param.Integer(0, bounds=(0, 2**32 - 1), doc="Seed of the noisy observation y.")

    def _build(self):
        truth = square_object(self.size)
        noise = np.random.default_rng(self.seed).normal(size=truth.shape)
        self.ground_truth = truth
        self.observation = self.mu * truth + self.sigma * noise
        self.alpha = self.observation * self.mu / self.sigma**2
        edges = lattice_edges((self.size, self.size), periodic=False)
        self._set_model(edges, np.full(len(edges), self.lam), self.alpha.ravel(), beta=1.0)

    @classmethod
    def estimate_size(cls, params):
        """The size×size grid without wrapping, plus the ground truth, observation and α images."""
        size = cls._estimate_params(params)["size"]
        return lattice_size((size, size), periodic=False, site_arrays=3)

    @property
    def image_shape(self):
        return (self.size, self.size)

    def agreement(self, x: np.ndarray) -> np.ndarray:
        """Fraction of pixels whose label matches the ground truth, per row."""
        truth_bits = (self.ground_truth.ravel() > 0).astype(np.uint8)
        return (np.asarray(x) == truth_bits).mean(axis=1)
