"""Block Gibbs: x_B redrawn from its full conditional on a random block B of k sites.

B is a uniformly random set of k distinct sites, and the new block value v is
drawn from the conditional

    q(x → (x_−B, v)) = p̃(x_−B, v) / Σ_{v' ∈ {0,1}^k} p̃(x_−B, v'),

the current value included. Every move is accepted: each block update is
reversible w.r.t. π (the standard Gibbs argument, e.g. Geman & Geman 1984).
Single-site Gibbs (k = 1, as a flip with a(t) = t/(1+t)) lives in
``samplers.local.single_site``.

Cost: 2^k target evaluations per step (the current value is scored with the others).
"""

from __future__ import annotations

import itertools
from math import comb, log

import numpy as np
import param
from numba import njit

from samplers.base import ExactCase, Move, Sampler, SamplerFacts, log_softmax, sample_categorical
from samplers.diagnostics.inspection import ProposalInspection
from targets.base import all_states


@njit(cache=True)
def floyd_subsets(uniforms, d):
    """One uniformly random k-subset of {0, …, d−1} per row of ``uniforms`` (``(n, k)``, uniform on [0, 1)).

    Floyd's algorithm, without rejection: for j = d−k, …, d−1 draw t uniform
    on {0, …, j}; take t unless it is already taken, else take j. Every
    k-subset comes out with probability 1/C(d, k). O(k²) per row.
    """
    n, k = uniforms.shape
    out = np.empty((n, k), dtype=np.int64)
    for r in range(n):
        for step in range(k):
            j = d - k + step
            t = min(int(uniforms[r, step] * (j + 1)), j)
            for taken in range(step):
                if out[r, taken] == t:
                    t = j
                    break
            out[r, step] = t
    return out


def random_blocks(rng: np.random.Generator, n: int, d: int, k: int) -> np.ndarray:
    """``(n, k)`` sites, each row a uniformly random set of k distinct sites (``floyd_subsets``)."""
    return floyd_subsets(rng.random((n, k)), d)


def all_blocks(d: int, k: int) -> np.ndarray:
    """Every set of k sites out of d, ``(C(d, k), k)`` — the support of ``random_blocks``."""
    return np.array(list(itertools.combinations(range(d), k)), dtype=np.int64).reshape(-1, k)


#: Most candidate block values scored to show one block move's probability (``block_move_probability``).
MAX_INSPECTED_CANDIDATES = 1_000_000


class BlockGibbs(Sampler):
    """Gibbs sampler on a random block of ``block_size`` sites (all 2^k configurations)."""

    registry_name = "block_gibbs"
    facts = SamplerFacts(example={"block_size": 2},
                         exact=(ExactCase({"block_size": 2}), ExactCase({"block_size": 3}, "boltzmann", {})),
                         warm_up=({"block_size": 2},), inspection="block")
    block_size = param.Integer(2, bounds=(1, 12), doc="Block size k (2^k configurations scored per step).")

    #: Number of auxiliary choices a block move draws uniformly before scoring its
    #: candidates (the Hamming ball's centre); plain block Gibbs has one.
    n_auxiliary = 1

    @classmethod
    def estimated_bytes(cls, n_chains, dim, params=None):
        """The default plus each record's k sites and values, and the table of candidate block values."""
        k = cls._requested(params, "block_size")
        return super().estimated_bytes(n_chains, dim, params) + 9 * n_chains * k + cls._table_bytes(params)

    @classmethod
    def _table_bytes(cls, params) -> int:
        """Bytes of the fixed candidate table: all 2^k block configurations (k bytes each)."""
        k = cls._requested(params, "block_size")
        return 2**k * k

    def _validate(self):
        if self.block_size > self.target.dim:
            raise ValueError(f"block_size={self.block_size} exceeds the target's dim={self.target.dim}")

    def _prepare(self):
        self._patterns = all_states(self.block_size)

    def _block_values(self, x_block: np.ndarray, aux: np.ndarray) -> np.ndarray:
        """Candidate configurations ``(n, m, k)`` of the blocks given the auxiliary choices."""
        return np.broadcast_to(self._patterns, (x_block.shape[0],) + self._patterns.shape)

    def _step(self):
        n, d = self.states.shape
        rows = np.arange(n)
        sites = random_blocks(self.rng, n, d, self.block_size)
        aux = self.rng.integers(0, self.n_auxiliary, size=n)
        values = self._block_values(self.states[rows[:, None], sites], aux)
        log_ratio = self.target.block_log_ratio(self.states, sites, values, self.log_p)
        choice = sample_categorical(log_ratio, self.rng)
        new_values = values[rows, choice]
        accepted = (self.states[rows[:, None], sites] != new_values).any(axis=1)
        self.states[rows[:, None], sites] = new_values
        self.log_p = self.log_p + log_ratio[rows, choice]
        return Move(accepted=accepted, proposed_sites=sites, proposed_values=new_values,
                    proposed_log_prob=self.log_p.copy())

    def block_move_probability(self, x: np.ndarray, sites: np.ndarray, values: np.ndarray) -> float:
        """P(x_B ← ``values`` | x, B = ``sites``): the conditional draw averaged over the auxiliary choices (the
        Hamming ball's centre); NaN when that needs more than ``MAX_INSPECTED_CANDIDATES`` candidates."""
        aux = np.arange(self.n_auxiliary)
        if aux.size * self._block_values(x[None, sites], aux[:1]).shape[1] > MAX_INSPECTED_CANDIDATES:
            return float("nan")
        batch = np.repeat(x[None, :], aux.size, axis=0)
        candidates = self._block_values(batch[:, sites], aux)  # (A, m, k)
        log_ratio = self.target.block_log_ratio(batch, np.repeat(sites[None], aux.size, axis=0), candidates)
        drawn = (candidates == values).all(axis=2)
        return float((np.exp(log_softmax(log_ratio)) * drawn).sum() / aux.size)

    def transition_row(self, x):
        """Average over every block and auxiliary choice of the conditional draw."""
        blocks = all_blocks(x.size, self.block_size)
        sites = np.repeat(blocks, self.n_auxiliary, axis=0)  # (B·A, k)
        aux = np.tile(np.arange(self.n_auxiliary), len(blocks))
        batch = np.repeat(x[None, :], len(sites), axis=0)
        values = self._block_values(batch[np.arange(len(sites))[:, None], sites], aux)  # (B·A, m, k)
        log_ratio = self.target.block_log_ratio(batch, sites, values)
        n_moves, m = log_ratio.shape
        moved = np.repeat(batch, m, axis=0)
        moved[np.arange(n_moves * m)[:, None], np.repeat(sites, m, axis=0)] = values.reshape(n_moves * m, -1)
        return moved, np.exp(log_softmax(log_ratio)).ravel() / n_moves

    def describe_move(self, x, proposal, record, chain, common):
        """A block: B drawn uniformly among the C(d, k) blocks, and the probability of the values drawn for it given
        the rest (``block_move_probability``); always kept."""
        block = np.asarray(record.proposed_sites[chain])
        probability = self.block_move_probability(x, block, proposal[block])
        return ProposalInspection(kind="block", path=block, log_block_choice=-log(comb(x.size, block.size)),
                                  log_q_forward=log(probability) if probability > 0 else float("nan"),
                                  acceptance=1.0, **common)
