"""The constrained state space S_n(c) of Hamze & de Freitas (UAI 2010), §2.

S_n(c) = {x ∈ {0,1}^d : x and c differ in exactly n bits} holds the states at
Hamming distance n from a reference state c; with c = 0 they are the states
with exactly n ones (conserved magnetisation, a lattice gas). The target is
p̃ restricted to S_n(c) and renormalised (the paper's Eq. 1):

    π_n(x) = p̃(x) / Z_n   for x ∈ S_n(c),   0 otherwise,   |S_n(c)| = C(d, n).

A bit i of x *agrees* with c when x_i = c_i and *differs* otherwise (the
paper's P(x) = {i | x_i = c_i} and N(x) = {i | x_i ≠ c_i}).
``FixedDistanceSampler`` is the base of the samplers on S_n(c): it holds c
and n, checks that states lie in S_n(c), and starts the chains from states
drawn uniformly from S_n(c).
"""

from __future__ import annotations

import itertools

import numpy as np
import param

from samplers.base import Sampler

#: Entropy added to the seed for drawing the initial states, so that they are
#: independent of the moves' random numbers (``default_rng(seed)``).
_INITIAL_STATES_STREAM = 0x5A


def reference_state(reference, dim: int) -> np.ndarray:
    """The reference state c as a ``(dim,)`` uint8 array (all zeros when ``reference`` is None)."""
    if reference is None:
        return np.zeros(dim, dtype=np.uint8)
    c = np.asarray(reference)
    if c.shape != (dim,):
        raise ValueError(f"reference must be a state of length {dim}; got shape {c.shape}")
    if not (np.issubdtype(c.dtype, np.integer) or np.issubdtype(c.dtype, np.bool_)) or np.any((c != 0) & (c != 1)):
        raise ValueError("reference must contain only 0 and 1")
    return c.astype(np.uint8)


def fixed_distance_states(reference: np.ndarray, n: int) -> np.ndarray:
    """All C(d, n) states of S_n(c), ``(C(d, n), d)`` uint8 (flipped positions in lexicographic order)."""
    d = reference.size
    flips = np.array(list(itertools.combinations(range(d), n)), dtype=np.int64).reshape(-1, n)
    states = np.repeat(reference[None, :], len(flips), axis=0)
    states[np.arange(len(flips))[:, None], flips] ^= 1
    return states


def uniform_fixed_distance_states(reference: np.ndarray, n: int, count: int, rng: np.random.Generator) -> np.ndarray:
    """``count`` independent states drawn uniformly from S_n(c): c with n uniformly chosen bits flipped."""
    flips = np.argsort(rng.random((count, reference.size)), axis=1)[:, :n]
    states = np.repeat(reference[None, :], count, axis=0)
    states[np.arange(count)[:, None], flips] ^= 1
    return states


class FixedDistanceSampler(Sampler):
    """Base of the samplers of π_n on S_n(c): the reference c, the distance n, uniform initial states."""

    n_active = param.Integer(None, allow_None=True, bounds=(1, None),
                             doc="Hamming distance n from the reference (the number of ones when the reference is "
                                 "all zeros), 0 < n < d; default ⌊d/2⌋.")
    reference = param.Parameter(None, doc="Reference state c (a 0/1 vector of length d); default all zeros.")

    def _validate(self) -> None:
        d = self.target.dim
        self.reference_state = reference_state(self.reference, d)
        self.distance = d // 2 if self.n_active is None else self.n_active
        if not 0 < self.distance < d:
            raise ValueError(f"n_active must satisfy 0 < n_active < d = {d}; got {self.distance}")

    def in_support(self, states: np.ndarray) -> np.ndarray:
        """Whether each row of ``states`` lies in S_n(c)."""
        return np.count_nonzero(states != self.reference_state, axis=-1) == self.distance

    def exact_support(self) -> tuple[np.ndarray, np.ndarray]:
        """S_n(c) and its log p̃ (uncounted): the chains never leave it, and π_n ∝ p̃ there."""
        states, log_p = super().exact_support()
        inside = self.in_support(states)
        return states[inside], log_p[inside]

    def check_support(self, states) -> np.ndarray:
        """``states`` as a uint8 batch, or ``ValueError`` if a row is not in S_n(c)."""
        states = self.target.check_states(states)
        outside = np.flatnonzero(~self.in_support(states))
        if outside.size:
            raise ValueError(f"state {outside[0]} is not at Hamming distance n_active={self.distance} from the "
                             f"reference (it is at {np.count_nonzero(states[outside[0]] != self.reference_state)})")
        return states

    def reset(self, init=None) -> None:
        """Restart from ``init`` (states in S_n(c)) or from states drawn uniformly from S_n(c); reseed."""
        if init is None:
            rng = np.random.default_rng([self.seed, _INITIAL_STATES_STREAM])
            init = uniform_fixed_distance_states(self.reference_state, self.distance, self.n_chains, rng)
        super().reset(self.check_support(init))
