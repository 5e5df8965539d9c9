"""The Hamming-ball sampler, "HB-k-r" (Titsias & Yau 2017, "The Hamming ball sampler", JASA 112:1598–1611).

Choose a uniformly random block B of k sites. With H_r(y) the configurations of
B within Hamming distance r of y (M = Σ_{j≤r} C(k, j) of them):

1. draw an auxiliary u uniformly from H_r(x_B);
2. draw x'_B from H_r(u) with q(x'_B | u) ∝ p̃(x with x_B = x'_B).

This is Gibbs sampling on the augmented space (x, u): every move is accepted,
and the kernel is reversible w.r.t. π because x_B ∈ H_r(u) ⇔ u ∈ H_r(x_B).
With r = k it is block Gibbs on B (``samplers.local.block_gibbs``).

Cost: M target evaluations per step.
"""

from __future__ import annotations

import itertools
from math import comb

import numpy as np
import param

from samplers.base import ExactCase, SamplerFacts
from samplers.local.block_gibbs import BlockGibbs


def ball_masks(k: int, r: int) -> np.ndarray:
    """All k-bit masks with at most r ones, ``(M, k)`` uint8, the zero mask first."""
    masks = [np.zeros(k, dtype=np.uint8)]
    for weight in range(1, r + 1):
        for ones in itertools.combinations(range(k), weight):
            mask = np.zeros(k, dtype=np.uint8)
            mask[list(ones)] = 1
            masks.append(mask)
    return np.array(masks)


class HammingBall(BlockGibbs):
    """Titsias & Yau's Hamming-ball sampler on random blocks (HB-block_size-radius)."""

    registry_name = "hamming_ball"
    facts = SamplerFacts(example={"block_size": 4, "radius": 1},
                         exact=(ExactCase({"block_size": 3, "radius": 1}),
                                ExactCase({"block_size": 4, "radius": 2}, "boltzmann", {})),
                         warm_up=({"block_size": 3, "radius": 1},), inspection="block")
    block_size = param.Integer(10, bounds=(1, 20), doc="Block size k.")
    radius = param.Integer(1, bounds=(1, 20), doc="Hamming radius r (r ≤ k).")

    @classmethod
    def _table_bytes(cls, params):
        """Bytes of the ball's M = Σ_{j≤r} C(k, j) masks (k bytes each)."""
        k, r = cls._requested(params, "block_size"), cls._requested(params, "radius")
        return sum(comb(k, j) for j in range(r + 1)) * k

    def _validate(self):
        super()._validate()
        if self.radius > self.block_size:
            raise ValueError(f"radius={self.radius} must not exceed block_size={self.block_size}")

    def _prepare(self):
        self._masks = ball_masks(self.block_size, self.radius)
        self.n_auxiliary = len(self._masks)

    def _block_values(self, x_block, aux):
        centre = x_block ^ self._masks[aux]
        return centre[:, None, :] ^ self._masks[None, :, :]
