"""Structure MCMC over DAGs (Madigan, York & Allard 1995; Giudici & Castelo 2003).

The chain lives on the DAGs of the ``dag`` target (``targets.dag``): a state is
the off-diagonal adjacency of a graph, and p̃(G) = exp Σ_j s(j, pa_G(j)) on
DAGs, 0 on cyclic graphs. One step proposes G' uniformly from the valid
neighbourhood N(G) of the current DAG, q(G' | G) = 1/|N(G)|, where N(G) holds

* every single-edge addition i → j that keeps G acyclic (no path j ⇝ i) and
  j within the fan-in limit,
* every deletion,
* every reversal i → j ⇒ j → i that keeps G acyclic (no path i ⇝ j other
  than the edge itself) and i within the fan-in limit,

and accepts it with the Metropolis–Hastings probability

    α = min{1, p̃(G') |N(G)| / (p̃(G) |N(G')|)}.

Every move is undone by a move of N(G') (a deletion by an addition, a
reversal by a reversal), so the kernel is reversible with respect to p̃
restricted to the DAGs with in-degrees ≤ ``fan_in``. G' is always acyclic, so
no proposal is wasted on a cyclic graph. Validity is read off the
reachability matrix R (R[i, j] = 1 iff there is a path i ⇝ j of length ≥ 1)
and the adjacency A: adding i → j is valid iff R[j, i] = 0, and reversing
i → j iff (A R)[i, j] = 0, i.e. no path i → k ⇝ j through another child k
of i.

Moves are indexed by (kind, i, j) in a ``(2, n, n)`` grid: kind 0 toggles the
bit i → j (an addition if absent, a deletion if present), kind 1 reverses the
present edge i → j. A step record's ``proposed_sites`` is ``(n_chains, 2)``:
the two bits a reversal changes, (i → j, j → i) with values (0, 1); an
addition or deletion changes one bit and repeats it twice with the same value.

``DagSampler`` is the shared base of the DAG samplers (this one and
``samplers.dag.partition_mcmc``): it checks the target, the fan-in limit and
initial states, and starts every chain from the empty graph by default (the
base class's uniform random bits would mostly be cyclic).

References: D. Madigan, J. York & D. Allard, "Bayesian graphical models for
discrete data", Int. Statist. Rev. 63 (1995) 215–232; P. Giudici & R. Castelo,
"Improving Markov chain Monte Carlo model search for data mining", Machine
Learning 50 (2003) 127–158.

Cost: every proposal is scored with ``target.log_prob`` (one counted
evaluation per chain and step); the neighbourhood sizes need no scores. R is
the transitive closure by repeated boolean squaring, batched over chains.
"""

from __future__ import annotations

import numpy as np
import param

from samplers.base import (ExactCase, Move, Sampler, SamplerFacts, acceptance_probability, metropolis_accept,
                          sample_weighted)
from targets.dag import DagStructure


def reachability(adjacency: np.ndarray) -> np.ndarray:
    """R[b, i, j] = True iff graph b has a directed path i ⇝ j of length ≥ 1.

    Transitive closure by repeated squaring, R ← R ∨ R·R: after t rounds R holds
    all paths of length ≤ 2^t, and a path visits at most n − 1 edges.
    """
    reach = adjacency.astype(bool)
    n = reach.shape[-1]
    for _ in range((n - 2).bit_length() if n > 1 else 0):
        squared = reach.astype(np.uint8) @ reach.astype(np.uint8)  # entries ≤ n ≤ 12: no uint8 overflow
        reach = reach | (squared > 0)
    return reach


def nodes_of(dim: int) -> int:
    """The number of nodes n of DAG states of ``dim`` = n(n − 1) edge bits."""
    return int(round((1 + np.sqrt(1 + 4 * dim)) / 2))


class DagSampler(Sampler):
    """Shared base of the DAG samplers: the ``dag`` target, a fan-in limit, acyclic initial states."""

    max_parents = param.Integer(None, bounds=(1, None), allow_None=True,
                                doc="Largest in-degree the chain visits (None: the target's max_parents, "
                                    "else no limit); a smaller limit than the target's restricts the posterior.")

    def _validate(self):
        if not isinstance(self.target, DagStructure):
            raise ValueError(f"{self.registry_name} samples DAGs and needs the 'dag' target; "
                             f"got {self.target.registry_name or type(self.target).__name__!r}")
        if self.fan_in < 1:
            raise ValueError("the fan-in limit (max_parents) is 0: only the empty graph is allowed, "
                             "so there is nothing to sample")

    @property
    def fan_in(self) -> int:
        """The in-degree limit in force: the smaller of the sampler's and the target's ``max_parents`` (≤ n − 1)."""
        limits = [self.target.n_nodes - 1, self.max_parents, self.target.max_parents]
        return min(limit for limit in limits if limit is not None)

    def exact_support(self) -> tuple[np.ndarray, np.ndarray]:
        """The DAGs the chain visits (p̃ > 0, every in-degree ≤ ``fan_in``) and their log p̃, uncounted (n ≤ 5)."""
        dags, log_p = self.target.enumerate_dags()
        keep = np.isfinite(log_p) & (np.bitwise_count(self.target.parent_masks(dags)).max(axis=1) <= self.fan_in)
        return dags[keep], log_p[keep]

    def reset(self, init=None) -> None:
        """Restart from ``init`` (DAGs, validated) or, by default, from the empty graph in every chain."""
        states = np.zeros((1, self.target.dim), dtype=np.uint8) if init is None else self.target.check_states(init)
        self._check_graphs(states)
        super().reset(states)

    def _check_graphs(self, states: np.ndarray) -> None:
        cyclic = np.flatnonzero(~self.target.is_acyclic(states))
        if cyclic.size:
            raise ValueError(f"init must hold DAGs; state(s) {cyclic.tolist()} contain a directed cycle")
        crowded = np.flatnonzero(np.bitwise_count(self.target.parent_masks(states)).max(axis=1) > self.fan_in)
        if crowded.size:
            raise ValueError(f"init state(s) {crowded.tolist()} have a node with more than "
                             f"max_parents = {self.fan_in} parents")


class StructureMCMC(DagSampler):
    """Metropolis–Hastings on DAGs with uniform single-edge addition, deletion and reversal proposals."""

    registry_name = "structure_mcmc"
    facts = SamplerFacts(
        example_target=("dag", {"n_nodes": 4}),
        exact=(ExactCase(target="dag", target_params={"n_nodes": 3, "n_samples": 20, "seed": 3}),),
        tempering_base=False)

    @classmethod
    def estimated_bytes(cls, n_chains, dim, params=None):
        """The default plus each chain's valid moves (2n² bools) and second record site; the edge index (n² int64)."""
        n = nodes_of(dim)
        return super().estimated_bytes(n_chains, dim, params) + n_chains * (2 * n * n + 9) + 8 * n * n

    def _prepare(self):
        n = self.target.n_nodes
        pairs = self.target.edge_pairs
        self._edge_index = np.full((n, n), -1, dtype=np.int64)
        self._edge_index[pairs[:, 0], pairs[:, 1]] = np.arange(len(pairs))
        self._moves = self.neighbourhood(self.states)

    def neighbourhood(self, states: np.ndarray) -> np.ndarray:
        """Valid moves of each DAG, ``(batch, 2·n·n)`` bool: the flattened (kind, i, j) grid.

        kind 0 at (i, j): toggle i → j — a deletion if present, an addition if
        there is no path j ⇝ i (which also rules out j → i) and j has room for
        a parent; kind 1 at (i, j): reverse the present edge i → j if there is
        no path i → k ⇝ j with k ≠ j and i has room for a parent.
        """
        edge = self.target.adjacency(states).astype(bool)
        reach = reachability(edge)
        room = edge.sum(axis=1) < self.fan_in  # (batch, n): in-degree below the limit
        off_diagonal = ~np.eye(edge.shape[-1], dtype=bool)
        add = ~edge & ~np.swapaxes(reach, 1, 2) & off_diagonal & room[:, None, :]
        longer_path = (edge.astype(np.uint8) @ reach.astype(np.uint8)) > 0
        reverse = edge & ~longer_path & room[:, :, None]
        return np.stack([add | edge, reverse], axis=1).reshape(len(edge), -1)

    def _propose(self, states: np.ndarray, picks: np.ndarray):
        """Apply move ``picks[c]`` (a flat (kind, i, j) index) to chain c: ``(proposals, sites, values)``."""
        n = self.target.n_nodes
        rows = np.arange(len(states))
        kind, i, j = np.unravel_index(picks, (2, n, n))
        reverse = kind == 1
        forward = self._edge_index[i, j]
        sites = np.stack([forward, np.where(reverse, self._edge_index[j, i], forward)], axis=1)
        toggled = 1 - states[rows, forward]
        values = np.stack([np.where(reverse, 0, toggled), np.where(reverse, 1, toggled)], axis=1).astype(np.uint8)
        proposals = states.copy()
        proposals[rows[:, None], sites] = values
        return proposals, sites, values

    def _score(self, log_p: np.ndarray, n_moves: np.ndarray, proposals: np.ndarray):
        """log α before the min, log p̃ of the proposals (counted) and their neighbourhoods.

        log α = log p̃(G') − log p̃(G) + log |N(G)| − log |N(G')|.
        """
        moves = self.neighbourhood(proposals)
        proposed_log_p = self.target.log_prob(proposals)
        log_alpha = proposed_log_p - log_p + np.log(n_moves) - np.log(moves.sum(axis=1))
        return log_alpha, proposed_log_p, moves

    def _step(self):
        picks = sample_weighted(self._moves, self.rng)
        proposals, sites, values = self._propose(self.states, picks)
        log_alpha, proposed_log_p, moves = self._score(self.log_p, self._moves.sum(axis=1), proposals)
        accepted = metropolis_accept(log_alpha, self.rng)
        self.states[accepted] = proposals[accepted]
        self.log_p[accepted] = proposed_log_p[accepted]
        self._moves[accepted] = moves[accepted]
        return Move(accepted=accepted, proposed_sites=sites, proposed_values=values,
                    proposed_log_prob=proposed_log_p)

    def transition_row(self, x):
        x = self.target.check_states(x)
        moves = self.neighbourhood(x)
        picks = np.flatnonzero(moves[0])
        proposals, _, _ = self._propose(np.repeat(x, picks.size, axis=0), picks)
        log_alpha, _, _ = self._score(self.target.log_prob(x), picks.size, proposals)
        return self._with_stay(x[0], proposals, acceptance_probability(log_alpha) / picks.size)
