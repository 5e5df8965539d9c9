"""Gibbs samplers: single-site (random or systematic scan) and random-block.

Single site i: x_i is redrawn from its full conditional; with the flip ratio
Δ_i = log p̃(x^(i)) − log p̃(x) that is a flip with probability σ(Δ_i)
(the Barker function t/(1+t)). One evaluation per step.

Block Gibbs: k distinct sites chosen uniformly at random, then x_B redrawn
from its conditional over all 2^k configurations: 2^k evaluations per step
(the current configuration is scored with the others).
"""

from __future__ import annotations

import itertools

import numpy as np
import param
from scipy.special import expit, log_expit

from targets.base import all_states, flip

from .base import Sampler, log_softmax, sample_categorical


def random_blocks(rng: np.random.Generator, n: int, d: int, k: int) -> np.ndarray:
    """``(n, k)`` sites, each row a uniformly random set of k distinct sites."""
    sites = rng.integers(0, d, size=(n, k))
    while True:
        ordered = np.sort(sites, axis=1)
        clash = np.flatnonzero((ordered[:, 1:] == ordered[:, :-1]).any(axis=1))
        if clash.size == 0:
            return sites
        sites[clash] = rng.integers(0, d, size=(clash.size, k))


def all_blocks(d: int, k: int) -> np.ndarray:
    """Every set of k sites out of d, ``(C(d, k), k)`` — the support of ``random_blocks``."""
    return np.array(list(itertools.combinations(range(d), k)), dtype=np.int64).reshape(-1, k)


class Gibbs(Sampler):
    """Single-site Gibbs sampler, random or systematic scan."""

    registry_name = "gibbs"
    scan = param.Selector(default="random", objects=["random", "systematic"],
                          doc="Random scan (a uniform site each step) or systematic scan (sites 0, 1, …, d−1 in turn).")

    def _sites(self) -> np.ndarray:
        n, d = self.states.shape
        if self.scan == "random":
            return self.rng.integers(0, d, size=n)
        return np.full(n, self.n_steps % d)

    def _step(self):
        n = self.states.shape[0]
        idx = self._sites()
        log_ratio = self.target.flip_log_ratio(self.states, idx, self.log_p)
        accepted = np.log(self.rng.random(n)) < log_expit(log_ratio)
        old_bits = self.states[np.arange(n), idx]
        proposed_log_prob = self.log_p + log_ratio
        self._apply_flips(idx, accepted, log_ratio)
        return self._single_flip_record(idx, old_bits, accepted, proposed_log_prob)

    def transition_row(self, x):
        """Kernel of the next step (for systematic scan: of site ``n_steps mod d``)."""
        d = x.size
        sites = np.arange(d) if self.scan == "random" else np.array([self.n_steps % d])
        batch = np.repeat(x[None, :], sites.size, axis=0)
        log_ratio = self.target.flip_log_ratio(batch, sites, self.target.log_prob(batch))
        return self._with_stay(x, flip(batch, sites), expit(log_ratio) / sites.size)


class BlockGibbs(Sampler):
    """Gibbs sampler on a random block of ``block_size`` sites (all 2^k configurations)."""

    registry_name = "block_gibbs"
    block_size = param.Integer(2, bounds=(1, 12), doc="Block size k (2^k configurations scored per step).")

    #: Number of auxiliary choices a block move draws uniformly before scoring its
    #: candidates (the Hamming ball's centre); plain block Gibbs has one.
    n_auxiliary = 1

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
        log_ratio = self.target.block_log_ratio(self.states, sites, values)
        choice = sample_categorical(log_ratio, self.rng)
        new_values = values[rows, choice]
        accepted = (self.states[rows[:, None], sites] != new_values).any(axis=1)
        self.states[rows[:, None], sites] = new_values
        self.log_p = self.log_p + log_ratio[rows, choice]
        return dict(accepted=accepted, proposed_sites=sites, proposed_values=new_values,
                    proposed_log_prob=self.log_p.copy())

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
