"""Partition MCMC over DAGs (Kuipers & Moffa, "Partition MCMC for inference on acyclic digraphs",
J. Amer. Statist. Assoc. 112(517), 282–299, 2017).

Partitions and their scores. An ordered partition Λ = (λ_0, …, λ_{m−1}) of
the n nodes is stored as the layer index of every node (``(batch, n)`` int64,
layers 0…m−1 contiguous). A DAG is *compatible* with Λ when every node in
layer 0 has no parents and every node in a layer l > 0 has all its parents in
layers < l and at least one in layer l − 1. Each DAG is compatible with
exactly one Λ, its layering: roots in layer 0, every other node one layer
after its deepest parent (``layering``). So the DAG posterior
p̃(G) = exp Σ_j s(j, pa_j) lifts to the partitions with the partition score

    R(Λ) = Σ_{G compatible with Λ} p̃(G) = Π_j Σ_{P allowed for j} exp s(j, P),

where P is allowed for a node j in layer l > 0 iff P ⊆ λ_0 ∪ … ∪ λ_{l−1} and
P ∩ λ_{l−1} ≠ ∅ (only P = ∅ in layer 0), and |P| ≤ ``fan_in``. Given Λ the
parent sets are independent, P_j ∝ exp s(j, P_j) over the allowed sets, so a
DAG is drawn from p̃(G | Λ) = p̃(G) / R(Λ) exactly, node by node.

The chain. The Markov chain runs on Λ with stationary distribution ∝ R(Λ);
after every partition move a DAG is drawn from the current partition's
conditional. The DAG of a partition has that partition as its layering, so
the DAGs themselves form a Markov chain,
G → layering(G) → Λ' → G' ~ p̃(· | Λ'), which is reversible with respect to
p̃(G): π(G) T(G, G') = R(Λ) K(Λ, Λ') p̃(G | Λ) p̃(G' | Λ') / Z is symmetric
because R(Λ) K(Λ, Λ') is (K the partition kernel below). ``transition_row``
gives this DAG kernel and ``partition_transition_row`` K.

Moves (as in the paper and BiDAG's ``partitionMCMC``). Each step picks one of
four move types t with fixed probabilities ``move_weights`` (BiDAG's
n-dependent defaults, without its 1 % "stay" move), then a uniform candidate
of that type among the valid ones, N_t(Λ):

1. swap two nodes in different layers (layer sizes, hence |N_1|, unchanged);
2. swap two nodes in adjacent layers (likewise);
3. split a layer λ_l into (S, λ_l ∖ S) for a non-empty proper subset S, or
   join two adjacent layers: |N_3(Λ)| = (m − 1) + Σ_l (2^{|λ_l|} − 2);
4. move one node v to another existing layer or into a new singleton layer in
   any gap (before the first, between two, after the last layer), except the
   gaps next to v's own layer when v is alone in it (those give back Λ);

and accepts with probability

    α = min{1, R(Λ') |N_t(Λ)| / (R(Λ) |N_t(Λ')|)}.

Why this is exact: for moves 1–3 distinct candidates give distinct partitions
and every candidate's inverse (the same swap; the join of the two new layers;
the split back) is a valid candidate of the same type, so Λ' ∈ N_t(Λ) ⟺
Λ ∈ N_t(Λ'), q_t(Λ' | Λ) = 1/|N_t(Λ)|, and α is the Metropolis–Hastings ratio.
Move 4 is proposed uniformly over (node, destination) pairs, not over distinct
partitions as in the paper: a few partitions are reached by two pairs (two
singletons in adjacent layers merged or exchanged; a two-node layer split in
either order). With c(Λ → Λ') the number of pairs leading from Λ to Λ',
q_4(Λ' | Λ) = c(Λ → Λ') / |N_4(Λ)| and c is symmetric: moving v from Λ to Λ'
and moving v back are in one-to-one correspondence, and for a fixed v distinct
destinations give distinct partitions. So the same α is exact for move 4 too,
with |N_4(Λ)| = Σ_v (2m − 2·[v is alone in its layer]) counted in pairs. Each
move type is thus a reversible Metropolis–Hastings kernel for R, and so is
their mixture. Moves 3 and 4 are each irreducible on their own (join down to
one layer, split back to any partition; or move nodes one at a time), and every
R(Λ) > 0 when ``fan_in`` ≥ 1, so the chain is irreducible as soon as
``move_weights`` gives one of them positive weight (required). The tests check
stationarity and detailed balance of K and of the DAG kernel exactly.

Step records. ``states`` are the DAGs, ``accepted`` says whether the
partition move was accepted, and the proposal is a DAG drawn from the
proposed partition's conditional (``proposed_sites`` = all sites,
``proposed_values`` = that DAG): if accepted it is the new state, if rejected
the new state is a fresh draw from the current partition.

Reference implementation: the R package BiDAG (Suter, Kuipers, Moffa &
Beerenwinkel, arXiv:2105.00488), ``partitionMCMC``.

Cost: ``target.log_prob`` scores the DAGs a step reports (the proposed one,
and the fresh one of each rejected chain), so a step costs
n_chains + n_rejected evaluations. Partition scores are log-sum-exps over the
target's local-score table (n × 2^n parent masks), which the target built
once; they are not DAG evaluations and are not counted.
"""

from __future__ import annotations

import itertools

import numpy as np
import param

from samplers.base import ExactCase, Move, SamplerFacts, acceptance_probability, metropolis_accept, sample_weighted
from samplers.dag.structure_mcmc import DagSampler, nodes_of


# -- partitions ---------------------------------------------------------------------------------
def ordered_partitions(n: int) -> np.ndarray:
    """All ordered partitions of n nodes as layer indices, ``(F_n, n)`` (Fubini numbers 1, 3, 13, 75, 541, …)."""
    def extend(layers: tuple, remaining: tuple, layer: int):
        if not remaining:
            yield layers
        for size in range(1, len(remaining) + 1):
            for first in itertools.combinations(remaining, size):
                placed = tuple(layer if v in first else layers[v] for v in range(n))
                yield from extend(placed, tuple(v for v in remaining if v not in first), layer + 1)

    return np.array(sorted(extend((-1,) * n, tuple(range(n)), 0)), dtype=np.int64)


def compact_layers(labels: np.ndarray, n_labels: int) -> np.ndarray:
    """Relabel each row's labels (in 0…n_labels−1) to 0…m−1, keeping their order."""
    rows = np.arange(labels.shape[0])[:, None]
    present = np.zeros((labels.shape[0], n_labels), dtype=bool)
    present[rows, labels] = True
    return (np.cumsum(present, axis=1) - 1)[rows, labels]


def layering(masks: np.ndarray) -> np.ndarray:
    """The ordered partition of each DAG given its ``(batch, n)`` parent masks: ``(batch, n)`` layers.

    Round t places the nodes whose parents were all placed in rounds < t; such a
    node has a parent placed in round t − 1 (else it would have been placed
    earlier), which is the compatibility condition.
    """
    n = masks.shape[1]
    bits = np.left_shift(np.int64(1), np.arange(n, dtype=np.int64))
    layers = np.zeros(masks.shape, dtype=np.int64)
    placed = np.zeros(masks.shape[0], dtype=np.int64)
    for layer in range(n):
        free = ((masks & ~placed[:, None]) == 0) & ((placed[:, None] & bits) == 0)
        layers[free] = layer
        placed |= np.where(free, bits, 0).sum(axis=1)
    return layers


def layer_sizes(layers: np.ndarray) -> np.ndarray:
    """``(batch, n)``: the number of nodes in layer l = 0…n−1 (0 past the last layer)."""
    return (layers[:, :, None] == np.arange(layers.shape[1])).sum(axis=1)


# -- moves ----------------------------------------------------------------------------------------
class SwapNodes:
    """Moves 1 and 2: swap the layers of two nodes u < v in different (``adjacent``: adjacent) layers.

    Candidate k is the k-th pair of ``itertools.combinations(range(n), 2)``.
    """

    def __init__(self, n: int, adjacent: bool):
        self.pairs = np.array(list(itertools.combinations(range(n), 2)), dtype=np.int64)
        self.adjacent = adjacent

    def valid(self, layers: np.ndarray) -> np.ndarray:
        gap = np.abs(layers[:, self.pairs[:, 0]] - layers[:, self.pairs[:, 1]])
        return gap == 1 if self.adjacent else gap > 0

    def apply(self, layers: np.ndarray, picks: np.ndarray) -> np.ndarray:
        rows = np.arange(len(layers))
        u, v = self.pairs[picks].T
        out = layers.copy()
        out[rows, u], out[rows, v] = layers[rows, v], layers[rows, u]
        return out


class SplitJoin:
    """Move 3: join layers l and l + 1 (candidates l = 0…n−2), or split layer l into (S, λ_l ∖ S).

    Split candidates are n − 1 + l·2^n + S for a node mask S, valid when S is a
    non-empty proper subset of λ_l; S becomes layer l and the rest layer l + 1.
    """

    def __init__(self, n: int):
        self.n = n
        self.subsets = np.arange(2**n, dtype=np.int64)
        self.bits = np.left_shift(np.int64(1), np.arange(n, dtype=np.int64))

    def valid(self, layers: np.ndarray) -> np.ndarray:
        n_layers = layers.max(axis=1) + 1
        join = np.arange(self.n - 1) < (n_layers - 1)[:, None]
        members = np.where(layers[:, None, :] == np.arange(self.n)[None, :, None], self.bits, 0).sum(axis=2)
        subsets, members = self.subsets, members[:, :, None]
        split = ((subsets & ~members) == 0) & (subsets != 0) & (subsets != members)
        return np.concatenate([join, split.reshape(len(layers), self.n * 2**self.n)], axis=1)

    def apply(self, layers: np.ndarray, picks: np.ndarray) -> np.ndarray:
        joined = layers - (layers > picks[:, None])
        layer, subset = np.divmod(picks - (self.n - 1), 2**self.n)
        layer, outside = layer[:, None], ((subset[:, None] >> np.arange(self.n)) & 1) == 0
        split = layers + (layers > layer) + ((layers == layer) & outside)
        return np.where((picks < self.n - 1)[:, None], joined, split)


class MoveNode:
    """Move 4: move node v to another layer or into a new layer.

    Candidate v·(2n+1) + t: t = 2l + 1 sends v into existing layer l, t = 2g into
    a new layer in gap g (just before layer g). In these labels every node keeps
    2·layer + 1, so relabelling (``compact_layers``) yields the new partition and
    drops v's old layer if v was alone in it.
    """

    def __init__(self, n: int):
        self.n = n
        self.labels = 2 * n + 1

    def valid(self, layers: np.ndarray) -> np.ndarray:
        n_layers = (layers.max(axis=1) + 1)[:, None, None]
        own = layers[:, :, None]
        alone = (np.take_along_axis(layer_sizes(layers), layers, axis=1) == 1)[:, :, None]
        t = np.arange(self.labels)
        place = t // 2  # the layer (t odd) or the gap (t even)
        into_layer = (t % 2 == 1) & (place < n_layers) & (place != own)
        into_gap = (t % 2 == 0) & (place <= n_layers) & ~(alone & ((place == own) | (place == own + 1)))
        return (into_layer | into_gap).reshape(len(layers), self.n * self.labels)

    def apply(self, layers: np.ndarray, picks: np.ndarray) -> np.ndarray:
        node, label = np.divmod(picks, self.labels)
        labels = 2 * layers + 1
        labels[np.arange(len(layers)), node] = label
        return compact_layers(labels, self.labels)


def default_move_weights(n: int) -> tuple[float, float, float, float]:
    """BiDAG's default move probabilities for n nodes (its ``partitionMCMC``), without the 1 % stay move.

    0.40 goes to swaps and 0.59 to partition moves; for n > 3 a share
    6n/(n² + 10n − 24) of each stays with the global swap and the node move,
    the rest goes to the adjacent swap and split/join.
    """
    share = 6 * n / (n**2 + 10 * n - 24) if n > 3 else 1.0
    swap, node = np.round(40 * share) / 100, np.round(59 * share) / 100
    return (float(swap), float(0.40 - swap), float(0.59 - node), float(node))


class PartitionMCMC(DagSampler):
    """Partition MCMC: Metropolis–Hastings on ordered partitions, a DAG drawn from each partition."""

    registry_name = "partition_mcmc"
    facts = SamplerFacts(
        example_target=("dag", {"n_nodes": 4}),
        exact=(ExactCase({"move_weights": (1, 1, 1, 1)}, "dag", {"n_nodes": 3, "n_samples": 20, "seed": 3}),),
        tempering_base=False)
    move_weights = param.NumericTuple(None, length=4, allow_None=True,
                                      doc="Probabilities of the moves (swap, swap_adjacent, split_join, "
                                          "move_node), normalised; None: BiDAG's n-dependent defaults.")

    @classmethod
    def estimated_bytes(cls, n_chains, dim, params=None):
        """The default plus per chain its partition (n int64), log R and the record's proposed DAG, and the tables.

        Tables: the local scores masked by the fan-in (n × 2^n float64), the
        node masks of the split moves (2^n int64), the node pairs of the two
        swap moves, and the record's all-sites index (``dim`` int64).
        """
        n = nodes_of(dim)
        per_chain = 8 * n + 8 + dim
        tables = 8 * (n + 1) * 2**n + 2 * 16 * (n * (n - 1) // 2) + 8 * dim
        return super().estimated_bytes(n_chains, dim, params) + n_chains * per_chain + tables

    def _validate(self):
        super()._validate()
        self._move_probabilities()

    def _move_probabilities(self) -> np.ndarray:
        """The normalised ``move_weights`` (validated: irreducible only with split_join or move_node)."""
        weights = np.asarray(self.move_weights if self.move_weights is not None
                             else default_move_weights(self.target.n_nodes), dtype=np.float64)
        if np.any(weights < 0) or not weights.sum() > 0:
            raise ValueError(f"move_weights must be non-negative and not all zero; got {tuple(weights)}")
        if weights[2] == 0 and weights[3] == 0:
            raise ValueError("move_weights must give split_join or move_node a positive weight: swaps keep the "
                             "layer sizes, so swaps alone cannot reach every partition")
        return weights / weights.sum()

    def _prepare(self):
        n = self.target.n_nodes
        self._weights = self._move_probabilities()
        self._moves = (SwapNodes(n, adjacent=False), SwapNodes(n, adjacent=True), SplitJoin(n), MoveNode(n))
        self._scores = np.where(np.bitwise_count(np.arange(2**n)) > self.fan_in, -np.inf, self.target.local_scores)
        self.partitions = layering(self.target.parent_masks(self.states))
        self._log_r = self.log_partition_score(self.partitions)

    # -- scores and DAG draws ---------------------------------------------------------------------
    def allowed_parent_sets(self, layers: np.ndarray) -> np.ndarray:
        """``(batch, n, 2^n)`` bool: whether the partition allows P as the parent set of node j.

        P ⊆ nodes in earlier layers, and P meets the previous layer (P = ∅ in layer 0).
        """
        n = self.target.n_nodes
        bits = np.left_shift(np.int64(1), np.arange(n, dtype=np.int64))
        earlier = np.where(layers[:, None, :] < layers[:, :, None], bits, 0).sum(axis=2)
        previous = np.where(layers[:, None, :] == layers[:, :, None] - 1, bits, 0).sum(axis=2)
        subsets = np.arange(2**n, dtype=np.int64)
        inside = (subsets & ~earlier[:, :, None]) == 0
        touches = ((subsets & previous[:, :, None]) != 0) | (layers[:, :, None] == 0)
        return inside & touches

    def family_weights(self, layers: np.ndarray):
        """Partition scores and parent-set weights of a batch of partitions: ``(log R (batch,), w (batch, n, 2^n))``.

        w[b, j, P] = exp(s(j, P) − max_Q s(j, Q)) over the sets allowed for j (0
        elsewhere), so p̃(pa_j = P | Λ) = w[b, j, P] / Σ_Q w[b, j, Q] and
        log R(Λ) = Σ_j (max_Q s(j, Q) + log Σ_Q w[b, j, Q]).
        """
        log_w = np.where(self.allowed_parent_sets(layers), self._scores, -np.inf)
        shift = log_w.max(axis=2, keepdims=True)
        weights = np.exp(log_w - shift)
        return (shift[:, :, 0] + np.log(weights.sum(axis=2))).sum(axis=1), weights

    def log_partition_score(self, layers: np.ndarray) -> np.ndarray:
        """log R(Λ) = Σ_j log Σ_{P allowed} exp s(j, P) for a batch of partitions, ``(batch,)``."""
        return self.family_weights(layers)[0]

    def _states_from_masks(self, masks: np.ndarray) -> np.ndarray:
        pairs = self.target.edge_pairs
        return ((masks[:, pairs[:, 1]] >> pairs[:, 0]) & 1).astype(np.uint8)

    def _draw_dags(self, weights: np.ndarray) -> np.ndarray:
        """One DAG per partition from p̃(G | Λ), given its ``family_weights``: pa_j ∝ w[j, ·] independently."""
        batch, n, n_sets = weights.shape
        masks = sample_weighted(weights.reshape(batch * n, n_sets), self.rng).reshape(batch, n)
        return self._states_from_masks(masks)

    def partition_dags(self, layers: np.ndarray):
        """Every DAG compatible with one partition and its probability p̃(G) / R(Λ): ``(states, probs)``."""
        x = np.asarray(layers, dtype=np.int64)[None]
        weights = self.family_weights(x)[1][0]
        conditional = weights / weights.sum(axis=1, keepdims=True)
        support = self.allowed_parent_sets(x)[0] & np.isfinite(self._scores)
        choices = [np.flatnonzero(row) for row in support]
        masks = np.stack(np.meshgrid(*choices, indexing="ij"), axis=-1).reshape(-1, len(choices))
        return self._states_from_masks(masks), conditional[np.arange(len(choices)), masks].prod(axis=1)

    # -- the partition kernel ---------------------------------------------------------------------
    @staticmethod
    def _log_hastings(move, layers: np.ndarray, proposals: np.ndarray) -> np.ndarray:
        """log |N_t(Λ)| − log |N_t(Λ')| (0 when the move type has no candidate and Λ' = Λ)."""
        def log_size(x):
            return np.log(np.maximum(move.valid(x).sum(axis=1), 1))
        return log_size(layers) - log_size(proposals)

    def _propose(self, layers: np.ndarray):
        """A move type per chain, then a uniform valid candidate: ``(proposals, log Hastings factors)``."""
        kinds = sample_weighted(np.broadcast_to(self._weights, (len(layers), len(self._weights))), self.rng)
        proposals = layers.copy()
        log_hastings = np.zeros(len(layers))
        for kind, move in enumerate(self._moves):
            rows = np.flatnonzero(kinds == kind)
            valid = move.valid(layers[rows])
            picks = sample_weighted(valid, self.rng)
            moved = np.where(valid.any(axis=1)[:, None], move.apply(layers[rows], picks), layers[rows])
            proposals[rows] = moved
            log_hastings[rows] = self._log_hastings(move, layers[rows], moved)
        return proposals, log_hastings

    def partition_transition_row(self, layers: np.ndarray):
        """Exact next-partition distribution from one partition: ``(partitions (k, n), probs (k,))``.

        Built from the same candidates, moves and acceptance as ``step()``; a
        partition reached by several candidates appears once per candidate.
        """
        x = np.asarray(layers, dtype=np.int64)[None]
        log_r = self.log_partition_score(x)
        partitions, probs = [], []
        for weight, move in zip(self._weights, self._moves):
            picks = np.flatnonzero(move.valid(x)[0])
            if weight == 0 or picks.size == 0:
                continue
            proposals = move.apply(np.repeat(x, picks.size, axis=0), picks)
            log_alpha = self.log_partition_score(proposals) - log_r + self._log_hastings(move, x, proposals)
            partitions.append(proposals)
            probs.append(weight * acceptance_probability(log_alpha) / picks.size)
        probs = np.concatenate(probs)
        return np.vstack(partitions + [x]), np.append(probs, max(0.0, 1.0 - probs.sum()))

    # -- stepping -------------------------------------------------------------------------------------
    def _step(self):
        proposals, log_hastings = self._propose(self.partitions)
        log_r, weights = self.family_weights(proposals)
        accepted = metropolis_accept(log_r - self._log_r + log_hastings, self.rng)
        proposed = self._draw_dags(weights)
        proposed_log_p = self.target.log_prob(proposed)
        self.partitions[accepted] = proposals[accepted]
        self._log_r[accepted] = log_r[accepted]
        self.states, self.log_p = proposed.copy(), proposed_log_p.copy()
        rejected = np.flatnonzero(~accepted)
        self.states[rejected] = self._draw_dags(self.family_weights(self.partitions[rejected])[1])
        self.log_p[rejected] = self.target.log_prob(self.states[rejected])
        sites = np.broadcast_to(np.arange(self.target.dim), proposed.shape)
        return Move(accepted=accepted, proposed_sites=sites, proposed_values=proposed,
                    proposed_log_prob=proposed_log_p)

    def transition_row(self, x):
        """Exact next-DAG distribution: the partition kernel from layering(x), then p̃(G' | Λ')."""
        layers = layering(self.target.parent_masks(x))[0]
        partitions, probs = self.partition_transition_row(layers)
        rows = [self.partition_dags(p) for p in partitions]
        return (np.vstack([states for states, _ in rows]),
                np.concatenate([p * conditional for p, (_, conditional) in zip(probs, rows)]))
