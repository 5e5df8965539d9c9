"""The Ising image-segmentation posterior of the LSB paper (Sansone 2022, §5.1, Eq. 6).

A ground-truth object s* ∈ {−1, 1}^{n×n} (a centred square on background) is
observed through Gaussian noise, y_i ~ N(μ s*_i, σ²). The posterior over the
hidden segmentation s is

    p(s | y) ∝ exp( Σ_i α_i s_i + λ Σ_{(i,j)∈E} s_i s_j ),   α_i = y_i μ / σ²,

with E the 4-neighbour edges of the (non-periodic) n×n image grid.

Following the paper, α is computed from a noisy image y drawn once per target
(with ``seed``), and every chain samples the same posterior. The paper's four
cases are (λ, μ, σ) = (0, 1, 3), (0, 3, 3), (1, 1, 3), (1, 3, 3).

The authors' code (``runner.py`` in ``../shared/reference/lsb/2DIsing``) builds
a different target, available here as ``field="authors"`` with
``periodic=True``:

* α = μ s* + U(−σ, σ): uniform noise, and no μ/σ² scaling. At μ = 1, σ = 3
  the field's signal is μ = 1 per pixel against Eq. 6's μ²/σ² = 1/9 (9×),
  its noise has standard deviation σ/√3 ≈ 1.7 against Eq. 6's μ/σ = 1/3
  (5×): the posterior is far more peaked, and chains settle much faster;
* the lattice wraps around (each pixel has 4 neighbours);
* each of their chains draws its own α, so their "mean over chains" averages
  30 different posteriors. A target here is one distribution: build one per
  chain (``seed`` = the chain's) to reproduce that, as
  ``benchmarks.claims.paper_claims`` does for the fixed-function samplers.
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


def paper_field(truth: np.ndarray, mu: float, sigma: float, rng: np.random.Generator):
    """(y, α) of Eq. 6: y = μ s* + σ ε with ε ~ N(0, 1) per pixel, α = y μ / σ²."""
    observation = mu * truth + sigma * rng.normal(size=truth.shape)
    return observation, observation * mu / sigma**2


def authors_field(truth: np.ndarray, mu: float, sigma: float, rng: np.random.Generator):
    """(y, α) as the authors' ``runner.py`` draws them: α = y = μ s* + U(−σ, σ) per pixel."""
    observation = mu * truth + rng.uniform(-sigma, sigma, size=truth.shape)
    return observation, observation


#: How the field α is made from the ground truth: the paper's Eq. 6 or the authors' code.
FIELDS = {"eq6": paper_field, "authors": authors_field}


class IsingSegmentation(PairwiseBinaryModel):
    """Image-segmentation Ising posterior (LSB paper, Eq. 6) on a size×size image."""

    registry_name = "ising_segmentation"
    size = param.Integer(30, bounds=(2, 512), doc="Side of the square image (pixels).")
    lam = param.Number(1.0, bounds=(0.0, 100.0), doc="λ ≥ 0: strength of the smoothness prior between neighbours.")
    mu = param.Number(1.0, bounds=(-100.0, 100.0), doc="μ: mean intensity of object (+μ) and background (−μ).")
    sigma = param.Number(3.0, bounds=(1e-6, 1e3), doc="σ > 0: standard deviation of the pixel noise.")
    seed = param.Integer(0, bounds=(0, 2**32 - 1), doc="Seed of the noisy observation y.")
    field = param.Selector(default="eq6", objects=list(FIELDS),
                           doc="eq6: α = yμ/σ² with y = μs* + N(0, σ²) (the paper's Eq. 6); authors: "
                               "α = μs* + U(−σ, σ), as the authors' code builds it (9× the signal at μ = 1, σ = 3).")
    periodic = param.Boolean(False, doc="Wrap the image around (a torus), as the authors' code does; off: the "
                                        "paper's image grid.")

    def _build(self):
        truth = square_object(self.size)
        self.ground_truth = truth
        self.observation, self.alpha = FIELDS[self.field](truth, self.mu, self.sigma,
                                                          np.random.default_rng(self.seed))
        edges = lattice_edges((self.size, self.size), periodic=self.periodic)
        self._set_model(edges, np.full(len(edges), self.lam), self.alpha.ravel(), beta=1.0)

    @classmethod
    def estimate_size(cls, params):
        """The size×size grid (wrapped or not), plus the ground truth, observation and α images."""
        chosen = cls._estimate_params(params)
        return lattice_size((chosen["size"], chosen["size"]), periodic=chosen["periodic"], site_arrays=3)

    @property
    def image_shape(self):
        return (self.size, self.size)

    def agreement(self, x: np.ndarray) -> np.ndarray:
        """Fraction of pixels whose label matches the ground truth, per row."""
        truth_bits = (self.ground_truth.ravel() > 0).astype(np.uint8)
        return (np.asarray(x) == truth_bits).mean(axis=1)
