"""One intracluster move, frame by frame, for the lattice view's slow-motion mode (model code, no Panel).

An intracluster move (``samplers.intracluster.walks``; Hamze & de Freitas, Fig. 1)
flips k bits one at a time on a walk towards or away from the reference c,
then k bits on a walk back to the same distance n, and is then accepted or
rejected (Eq. 6). ``MoveReplay`` turns the sampler's ``last_walk`` for one
chain into the frames a class can follow: frame t (0 … 2k) is the state after
t flips with the flipped bits marked by walk, and the distance from c (which
leaves n during the move and is back to n at its end, so the magnetisation is
the same before and after); a last frame shows the outcome — the proposal if
accepted, the start again if rejected.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .numbers import number


@dataclass(frozen=True)
class Frame:
    """What slow motion draws at one instant."""

    state: np.ndarray  # (d,) uint8
    first_walk: np.ndarray  # sites flipped so far by the first walk
    second_walk: np.ndarray  # sites flipped so far by the second walk
    text: str


@dataclass(frozen=True)
class MoveReplay:
    """One chain's move: its start state, the flipped sites in order, the outcome, the reference."""

    start: np.ndarray
    sites: np.ndarray  # (2k,) in flip order
    accepted: bool
    acceptance: float  # α of Eq. 6
    reference: np.ndarray

    @classmethod
    def from_sampler(cls, start: np.ndarray, sampler, chain: int) -> MoveReplay:
        """The move ``sampler`` just made in ``chain`` from ``start`` (its ``last_walk``)."""
        walk = sampler.last_walk
        sites = walk.sites[chain, :walk.length[chain]]
        return cls(start=start.copy(), sites=sites.copy(), accepted=bool(sampler.last_accepted[chain]),
                   acceptance=float(np.exp(min(0.0, walk.log_acceptance[chain]))),
                   reference=sampler.reference_state.copy())

    @property
    def walk_length(self) -> int:
        return self.sites.size // 2

    def __len__(self) -> int:
        """Frames: the start, one per flip, and the outcome."""
        return self.sites.size + 2

    def _distance(self, state: np.ndarray) -> int:
        return int(np.count_nonzero(state != self.reference))

    def frame(self, t: int) -> Frame:
        """Frame ``t`` in 0 … len − 1."""
        k, n = self.walk_length, self._distance(self.start)
        if t == len(self) - 1:
            proposal = self._after(self.sites.size)
            state = proposal if self.accepted else self.start
            outcome = "accepted" if self.accepted else "rejected: the chain stays at its start"
            return Frame(state, self.sites[:k], self.sites[k:],
                         f"move {outcome} (α = {number(self.acceptance)}); distance from c: {self._distance(state)} "
                         f"= n, as before the move")
        state = self._after(t)
        first = t <= k
        toward = self._distance(self._after(min(t, 1))) < n if self.sites.size else True
        direction = ("towards c" if toward == first else "away from c") if t else ""
        phase = "start" if t == 0 else f"{'first' if first else 'second'} walk, {direction}"
        return Frame(state, self.sites[:min(t, k)], self.sites[k:max(t, k)],
                     f"step {t} of {self.sites.size} ({phase}); distance from c: {self._distance(state)} "
                     f"(n = {n}, bridge at {n - k if toward else n + k})")

    def _after(self, t: int) -> np.ndarray:
        state = self.start.copy()
        np.bitwise_xor.at(state, self.sites[:t], 1)  # a bit flipped by both walks (reflip) flips back
        return state
