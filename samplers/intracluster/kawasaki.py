"""Kawasaki exchange on S_n(c): swap one differing and one agreeing bit, Metropolis-accepted.

From x ∈ S_n(c) choose i uniformly from the n bits that differ from the
reference c and j uniformly from the d − n bits that agree with it, and
propose x' = x with both flipped (Kawasaki, Phys. Rev. 145, 224, 1966; the
Metropolis swap of Hamze & de Freitas 2010, §2). x' is again in S_n(c), and
the proposal is symmetric: from x', j differs and i agrees, so
q(x' | x) = q(x | x') = 1/(n(d − n)). Hence

    α = min{1, p̃(x') / p̃(x)},

the paper's unnumbered α = min(1, e^{−β(E(x') − E(x))}) of §2.

Cost: one evaluation per chain and step (``block_log_ratio`` of the swap).
Each chain keeps the lists of its differing and agreeing bits, and an
accepted swap exchanges one entry of each, so drawing i and j is O(1).
"""

from __future__ import annotations

import numpy as np

from samplers.base import ExactCase, Move, SamplerFacts, acceptance_probability, metropolis_accept
from samplers.intracluster.fixed_distance import FixedDistanceSampler


class Kawasaki(FixedDistanceSampler):
    """Kawasaki exchange: swap a random differing bit with a random agreeing one, Metropolis-accepted."""

    registry_name = "kawasaki"
    facts = SamplerFacts(example={"n_active": 18},
                         exact=(ExactCase({"n_active": 3}), ExactCase({"n_active": 4}, "boltzmann", {})))
    bytes_per_site = FixedDistanceSampler.bytes_per_site + 8  # the lists of differing and agreeing bits (int64)

    def _prepare(self):
        order = np.argsort(self.states == self.reference_state, axis=1, kind="stable")
        self._differing = order[:, : self.distance]
        self._agreeing = order[:, self.distance :]

    def _swap_proposals(self, x: np.ndarray) -> np.ndarray:
        """Every swap from one state x: ``(n(d − n), d)``, all proposed with probability 1/(n(d − n))."""
        differs = x != self.reference_state
        i, j = np.meshgrid(np.flatnonzero(differs), np.flatnonzero(~differs), indexing="ij")
        proposals = np.repeat(x[None, :], i.size, axis=0)
        rows = np.arange(i.size)
        proposals[rows, i.ravel()] ^= 1
        proposals[rows, j.ravel()] ^= 1
        return proposals

    def _step(self):
        n_chains, d = self.states.shape
        rows = np.arange(n_chains)
        slot_i = self.rng.integers(self.distance, size=n_chains)
        slot_j = self.rng.integers(d - self.distance, size=n_chains)
        sites = np.stack([self._differing[rows, slot_i], self._agreeing[rows, slot_j]], axis=1)
        values = 1 - self.states[rows[:, None], sites]
        log_ratio = self.target.block_log_ratio(self.states, sites, values[:, None, :], self.log_p)[:, 0]
        accepted = metropolis_accept(log_ratio, self.rng)
        kept = np.flatnonzero(accepted)
        self.states[kept[:, None], sites[kept]] = values[kept]
        self._differing[kept, slot_i[kept]] = sites[kept, 1]
        self._agreeing[kept, slot_j[kept]] = sites[kept, 0]
        proposed_log_prob = self.log_p + log_ratio
        self.log_p[kept] = proposed_log_prob[kept]
        return Move(accepted=accepted, proposed_sites=sites, proposed_values=values,
                    proposed_log_prob=proposed_log_prob)

    def transition_row(self, x):
        x = self.check_support(x)[0]
        proposals = self._swap_proposals(x)
        log_ratio = self.target.log_prob(proposals) - self.target.log_prob(x[None, :])
        return self._with_stay(x, proposals, acceptance_probability(log_ratio) / len(proposals))
