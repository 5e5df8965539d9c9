"""Structure MCMC and partition MCMC on the ``dag`` target: exact kernels, statistics, records, OPAD.

1. Exact: the transition matrices over all DAGs (25 for n = 3, 543 for n = 4)
   are built from the samplers' own ``transition_row``; π T = π and detailed
   balance hold to 1e-10, rows sum to 1 and no mass leaves the DAGs
   (``transition_matrix`` raises on a transition outside the given states).
   For partition MCMC the partition kernel K is checked the same way against
   π ∝ R(Λ) on all 13 (n = 3) and 75 (n = 4) ordered partitions. K is linear
   in the move weights, so detailed balance for the weight vectors
   (1,0,1,0), (0,1,1,0), (0,0,1,0), (0,0,0,1) proves it for each move type.
2. Statistical, on n = 4 (so ``step()``, with its caches, is checked against
   the exact kernels): independent chains are i.i.d. draws from δ_x Tᵏ, which
   is computed exactly, and a χ² test at level 1e-4 (cells with expectation
   < 5 pooled into one) compares them with it. (a) 4,000 chains from each of
   five fixed starts, after 3 steps — DAGs for structure MCMC, partitions for
   partition MCMC under each move-weight vector above (a step that dropped a
   Hastings factor or picked candidates non-uniformly fails these). (b)
   10,000 chains from the empty graph after k steps, with k such that
   TV(δ_∅Tᵏ, π) < 1e-3: against δ_∅Tᵏ, against the exact posterior π, and
   the edge frequencies against the exact edge probabilities (5 binomial
   standard errors). (c) A long run of 8 chains: edge probabilities within 5
   Monte-Carlo standard errors (bulk ESS).
3. Records, evaluation counts, reproducibility and bad input.
4. The OPAD ordering KL(MCMC) ≥ KL(OPAD) ≥ KL(OPAD+) of ``samplers.opad.store``.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import logsumexp

import samplers
import targets
from samplers.common.exact import transition_matrix
from samplers.dag.partition_mcmc import (MoveNode, SplitJoin, SwapNodes, default_move_weights, layering,
                                         ordered_partitions)
from samplers.dag.structure_mcmc import reachability
from samplers.opad.store import ParticleStore
from tests.conformance import assert_invariant
from tests.test_exactness import assert_long_run_marginals, chi_square_p_value

SAMPLERS = ("structure_mcmc", "partition_mcmc")
#: Weight vectors whose kernels together pin down every move type of partition MCMC (see the module docstring).
MOVE_WEIGHTS = [(1, 0, 1, 0), (0, 1, 1, 0), (0, 0, 1, 0), (0, 0, 0, 1), None]
#: Fan-in limits: none, the target's max_parents = 1, or the sampler's max_parents = 1.
LIMITS = ("none", "target", "sampler")


def dag_target(n: int, score: str = "bge", limit: str = "none", seed: int = 3):
    max_parents = 1 if limit == "target" else None
    return targets.make("dag", n_nodes=n, score=score, seed=seed, n_samples=20, max_parents=max_parents)


def make(name: str, target, limit: str = "none", **params):
    if limit == "sampler":
        params["max_parents"] = 1
    return samplers.make(name, target, **params)


def posterior(sampler):
    """The DAGs the sampler can visit (finite p̃, in-degrees ≤ its fan-in) and their normalised π."""
    dags, log_p = sampler.target.enumerate_dags()
    in_degree = np.bitwise_count(sampler.target.parent_masks(dags)).max(axis=1)
    keep = np.isfinite(log_p) & (in_degree <= sampler.fan_in)
    return dags[keep], np.exp(log_p[keep] - logsumexp(log_p[keep]))


def candidates(move, layers):
    """Every partition the move's valid candidates lead to from one partition (one row per candidate)."""
    picks = np.flatnonzero(move.valid(layers[None])[0])
    return move.apply(np.repeat(layers[None], picks.size, axis=0), picks)


def partition_kernel(sampler, partitions):
    index = {tuple(p): i for i, p in enumerate(partitions)}
    K = np.zeros((len(partitions), len(partitions)))
    for row, layers in enumerate(partitions):
        for proposal, prob in zip(*sampler.partition_transition_row(layers)):
            K[row, index[tuple(proposal)]] += prob
    return K


# -- 1. exact kernels -----------------------------------------------------------------------------
@pytest.mark.parametrize("limit", LIMITS)
@pytest.mark.parametrize("score", ["bge", "bdeu"])
def test_structure_mcmc_kernel_is_exact_on_the_25_dags(score, limit):
    sampler = make("structure_mcmc", dag_target(3, score, limit), limit)
    dags, pi = posterior(sampler)
    assert len(dags) == (25 if limit == "none" else 16)  # 9 of the 25 have a node with two parents
    assert_invariant(transition_matrix(sampler, dags), pi)


@pytest.mark.parametrize("limit", LIMITS)
@pytest.mark.parametrize("score", ["bge", "bdeu"])
def test_partition_mcmc_dag_kernel_is_exact_on_the_25_dags(score, limit):
    sampler = make("partition_mcmc", dag_target(3, score, limit), limit)
    dags, pi = posterior(sampler)
    assert_invariant(transition_matrix(sampler, dags), pi)


@pytest.mark.parametrize("name", SAMPLERS)
def test_dag_kernels_are_exact_on_the_543_dags(name):
    params = {"move_weights": (1, 1, 1, 1)} if name == "partition_mcmc" else {}
    sampler = make(name, dag_target(4, "bdeu"), **params)
    dags, pi = posterior(sampler)
    assert len(dags) == 543
    assert_invariant(transition_matrix(sampler, dags), pi)


@pytest.mark.parametrize("n", [3, 4])
@pytest.mark.parametrize("score", ["bge", "bdeu"])
@pytest.mark.parametrize("weights", MOVE_WEIGHTS, ids=str)
def test_partition_kernel_leaves_the_partition_scores_invariant(n, score, weights):
    sampler = make("partition_mcmc", dag_target(n, score), move_weights=weights)
    partitions = ordered_partitions(n)
    log_r = sampler.log_partition_score(partitions)
    assert_invariant(partition_kernel(sampler, partitions), np.exp(log_r - logsumexp(log_r)))


@pytest.mark.parametrize("limit", LIMITS)
@pytest.mark.parametrize("n", [3, 4])
def test_every_dag_is_in_exactly_one_partition_and_the_scores_add_up(n, limit):
    sampler = make("partition_mcmc", dag_target(n, "bdeu", limit), limit)
    target = sampler.target
    partitions = ordered_partitions(n)
    assert len(partitions) == {3: 13, 4: 75}[n]
    assert len({tuple(p) for p in partitions}) == len(partitions)
    listed = []
    log_r = sampler.log_partition_score(partitions)
    for layers, log_score in zip(partitions, log_r):
        states, probs = sampler.partition_dags(layers)
        np.testing.assert_array_equal(layering(target.parent_masks(states)), np.broadcast_to(layers, (len(states), n)))
        np.testing.assert_allclose(probs.sum(), 1.0, atol=1e-12)
        np.testing.assert_allclose(probs, np.exp(target.log_prob(states) - log_score), rtol=1e-10, atol=0)
        listed.append(states)
    dags, _ = posterior(sampler)
    listed = np.sort(targets.state_codes(np.concatenate(listed)))
    np.testing.assert_array_equal(listed, np.sort(targets.state_codes(dags)))  # each DAG exactly once
    assert abs(logsumexp(log_r) - logsumexp(target.log_prob(dags))) < 1e-10  # Σ_Λ R(Λ) = Σ_G p̃(G)


def test_structure_neighbourhood_matches_brute_force_on_the_543_dags():
    target = dag_target(4)
    dags, _ = target.enumerate_dags()
    n = target.n_nodes
    for max_parents in (None, 1, 2):
        sampler = samplers.make("structure_mcmc", target, max_parents=max_parents)
        dags_ok = dags[np.bitwise_count(target.parent_masks(dags)).max(axis=1) <= sampler.fan_in]
        moves = sampler.neighbourhood(dags_ok).reshape(len(dags_ok), 2, n, n)
        adjacency = target.adjacency(dags_ok)
        for i in range(n):
            for j in range(n):
                if i == j:
                    assert not moves[:, :, i, j].any()
                    continue
                toggled = adjacency.copy()
                toggled[:, i, j] ^= 1
                reversed_ = adjacency.copy()
                reversed_[:, i, j], reversed_[:, j, i] = 0, 1
                for kind, graphs, present in ((0, toggled, True), (1, reversed_, adjacency[:, i, j] == 1)):
                    states = target.states_from_adjacency(graphs)
                    in_degree = np.bitwise_count(target.parent_masks(states)).max(axis=1)
                    expected = present & target.is_acyclic(states) & (in_degree <= sampler.fan_in)
                    np.testing.assert_array_equal(moves[:, kind, i, j], expected)


def test_reachability_is_the_transitive_closure():
    chain = np.zeros((1, 5, 5), dtype=np.uint8)
    chain[0, [0, 1, 2, 3], [1, 2, 3, 4]] = 1  # 0 → 1 → 2 → 3 → 4
    np.testing.assert_array_equal(reachability(chain)[0], np.triu(np.ones((5, 5), dtype=bool), k=1))


def test_partition_neighbourhood_sizes_follow_the_paper():
    n = 4
    partitions = ordered_partitions(n)
    sizes = [np.bincount(p) for p in partitions]
    counts = {name: move.valid(partitions).sum(axis=1) for name, move in
              [("swap", SwapNodes(n, adjacent=False)), ("adjacent", SwapNodes(n, adjacent=True)),
               ("split_join", SplitJoin(n)), ("node", MoveNode(n))]}
    for p, k, *c in zip(partitions, sizes, *counts.values()):
        m = len(k)
        alone = (k[p] == 1).sum()
        assert c == [(n**2 - (k**2).sum()) // 2, (k[:-1] * k[1:]).sum(), (m - 1) + (2**k - 2).sum(),
                     2 * m * n - 2 * alone]
    assert default_move_weights(3) == pytest.approx((0.40, 0.0, 0.0, 0.59))
    assert default_move_weights(4) == pytest.approx((0.30, 0.10, 0.15, 0.44))


def test_partition_candidates_are_distinct_new_partitions_with_an_inverse():
    n = 4
    partitions = ordered_partitions(n)
    known = {tuple(p) for p in partitions}
    for move in (SwapNodes(n, adjacent=False), SwapNodes(n, adjacent=True), SplitJoin(n), MoveNode(n)):
        for layers in partitions:
            proposals = candidates(move, layers)
            reached = [tuple(p) for p in proposals]
            assert set(reached) <= known and tuple(layers) not in reached
            if not isinstance(move, MoveNode):  # move 4 may reach a partition by two (node, destination) pairs
                assert len(set(reached)) == len(reached)
            for proposal in proposals:
                assert tuple(layers) in {tuple(b) for b in candidates(move, proposal)}


# -- 2. statistics ------------------------------------------------------------------------------------
def k_step_distribution(T, start, pi, tolerance=1e-3, max_steps=2000):
    """Smallest k with TV(δ_start Tᵏ, π) < tolerance, and δ_start Tᵏ."""
    mu = np.zeros(len(pi))
    mu[start] = 1.0
    for k in range(1, max_steps + 1):
        mu = mu @ T
        if 0.5 * np.abs(mu - pi).sum() < tolerance:
            return k, mu
    raise AssertionError(f"the kernel did not come within {tolerance} of π in {max_steps} steps")


@pytest.mark.parametrize("name, score", [("structure_mcmc", "bdeu"), ("partition_mcmc", "bge")])
def test_chains_from_the_empty_graph_reach_the_exact_posterior(name, score):
    target = dag_target(4, score)
    n_chains = 10_000
    sampler = make(name, target, n_chains=n_chains, seed=5)
    dags, pi = posterior(sampler)
    codes = targets.state_codes(dags)
    empty = int(np.flatnonzero(codes == 0)[0])
    k, mu_k = k_step_distribution(transition_matrix(sampler, dags), empty, pi)
    for _ in range(k):
        record = sampler.step()
    observed = np.searchsorted(codes, targets.state_codes(record.states))
    np.testing.assert_array_equal(codes[observed], targets.state_codes(record.states))  # every state is a DAG
    assert chi_square_p_value(observed, mu_k, n_chains) > 1e-4
    assert chi_square_p_value(observed, pi, n_chains) > 1e-4
    exact_edges = pi @ dags
    standard_error = np.sqrt(exact_edges * (1 - exact_edges) / n_chains)
    bias = 1e-3  # TV(δ_∅Tᵏ, π) < 1e-3 bounds the gap between the k-step and the exact edge probabilities
    assert np.all(np.abs(record.states.mean(axis=0) - exact_edges) < 5 * standard_error + bias)


def test_structure_mcmc_steps_from_fixed_dags_follow_the_exact_kernel():
    target = dag_target(4)
    sampler = make("structure_mcmc", target)
    dags, _ = posterior(sampler)
    codes = targets.state_codes(dags)
    starts, per_start, n_steps = [0, 100, 271, 400, len(dags) - 1], 4000, 3
    kernel = np.linalg.matrix_power(transition_matrix(sampler, dags), n_steps)
    sampler = make("structure_mcmc", target, n_chains=per_start * len(starts), seed=8,
                   init=np.repeat(dags[starts], per_start, axis=0))
    for _ in range(n_steps):
        record = sampler.step()
    observed = np.searchsorted(codes, targets.state_codes(record.states)).reshape(len(starts), per_start)
    for start, draws in zip(starts, observed):
        assert chi_square_p_value(draws, kernel[start], per_start) > 1e-4


@pytest.mark.parametrize("weights", MOVE_WEIGHTS, ids=str)
def test_partition_mcmc_steps_from_fixed_partitions_follow_the_exact_kernel(weights):
    target = dag_target(4, "bge")
    sampler = make("partition_mcmc", target, move_weights=weights)
    partitions = ordered_partitions(4)
    starts, per_start, n_steps = [0, 20, 40, 60, 74], 4000, 3
    kernel = np.linalg.matrix_power(partition_kernel(sampler, partitions), n_steps)
    init = np.concatenate([sampler.partition_dags(partitions[s])[0][:1] for s in starts])
    sampler = make("partition_mcmc", target, move_weights=weights, n_chains=per_start * len(starts), seed=8,
                   init=np.repeat(init, per_start, axis=0))
    for _ in range(n_steps):
        sampler.step()
    index = {tuple(p): i for i, p in enumerate(partitions)}
    observed = np.array([index[tuple(p)] for p in sampler.partitions]).reshape(len(starts), per_start)
    for start, draws in zip(starts, observed):
        assert chi_square_p_value(draws, kernel[start], per_start) > 1e-4


@pytest.mark.parametrize("name", SAMPLERS)
def test_long_run_edge_probabilities_match_enumeration(name):
    target = dag_target(4, "bge")
    sampler = make(name, target, n_chains=8, seed=9)
    dags, pi = posterior(sampler)
    assert_long_run_marginals(sampler, pi @ dags, steps=3000, burn_in=500)


# -- 3. records, accounting, reproducibility, bad input -------------------------------------------------
@pytest.mark.parametrize("limit", LIMITS)
@pytest.mark.parametrize("name", SAMPLERS)
def test_step_records_are_consistent_and_stay_on_allowed_dags(name, limit):
    target = dag_target(4, "bge", limit)
    sampler = make(name, target, limit, n_chains=6, seed=2)
    assert not sampler.states.any()  # the empty graph by default
    evals = sampler.n_evals
    assert evals == 6
    for _ in range(150):
        before = sampler.states.copy()
        record = sampler.step()
        assert np.all(target.is_acyclic(record.states))
        assert np.bitwise_count(target.parent_masks(record.states)).max() <= sampler.fan_in
        assert np.bitwise_count(target.parent_masks(record.proposed)).max() <= sampler.fan_in
        np.testing.assert_allclose(record.log_prob, target.log_prob(record.states), atol=1e-9)
        np.testing.assert_allclose(record.proposed_log_prob, target.log_prob(record.proposed), atol=1e-9)
        np.testing.assert_array_equal(record.states[record.accepted], record.proposed[record.accepted])
        if name == "structure_mcmc":
            assert record.proposed_sites.shape == (6, 2)
            np.testing.assert_array_equal(record.states[~record.accepted], before[~record.accepted])
            evals += 6
        else:
            assert record.proposed_sites.shape == (6, target.dim)
            np.testing.assert_array_equal(sampler.partitions, layering(target.parent_masks(record.states)))
            evals += 6 + (~record.accepted).sum()
        assert record.n_evals == sampler.n_evals == evals


@pytest.mark.parametrize("name", SAMPLERS)
def test_same_seed_same_run_and_config_replays_it(name):
    target = dag_target(4)
    first = samplers.make(name, target, n_chains=3, seed=11)
    trace = samplers.run(first, 60, keep_states_every=1)
    config = first.config()
    again = samplers.run(samplers.make(config["sampler"], target, **config["params"]), 60, keep_states_every=1)
    np.testing.assert_array_equal(trace.states, again.states)
    np.testing.assert_array_equal(trace.log_prob, again.log_prob)
    other = samplers.run(samplers.make(name, target, n_chains=3, seed=12), 60, keep_states_every=1)
    assert not np.array_equal(trace.states, other.states)


@pytest.mark.parametrize("name", SAMPLERS)
def test_init_dags_are_used_and_bad_input_is_refused(name):
    target = dag_target(3)
    chain = target.states_from_adjacency(np.array([[0, 1, 0], [0, 0, 1], [0, 0, 0]]))  # 0 → 1 → 2
    sampler = samplers.make(name, target, n_chains=2, init=chain)
    np.testing.assert_array_equal(sampler.states, np.repeat(chain, 2, axis=0))
    if name == "partition_mcmc":
        np.testing.assert_array_equal(sampler.partitions, [[0, 1, 2], [0, 1, 2]])
    with pytest.raises(ValueError, match="needs the 'dag' target"):
        samplers.make(name, targets.make("ising1d"))
    cycle = target.states_from_adjacency(np.array([[0, 1, 0], [0, 0, 1], [1, 0, 0]]))
    with pytest.raises(ValueError, match="directed cycle"):
        samplers.make(name, target, init=cycle)
    collider = target.states_from_adjacency(np.array([[0, 0, 1], [0, 0, 1], [0, 0, 0]]))
    with pytest.raises(ValueError, match="more than max_parents = 1 parents"):
        samplers.make(name, target, init=collider, max_parents=1)
    with pytest.raises(ValueError, match="max_parents"):
        samplers.make(name, targets.make("dag", n_nodes=3, n_samples=20, max_parents=0))


def test_partition_mcmc_refuses_move_weights_that_are_not_irreducible():
    target = dag_target(3)
    with pytest.raises(ValueError, match="split_join or move_node"):
        samplers.make("partition_mcmc", target, move_weights=(1, 1, 0, 0))
    with pytest.raises(ValueError, match="non-negative"):
        samplers.make("partition_mcmc", target, move_weights=(-1, 0, 1, 0))


# -- 4. OPAD ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", SAMPLERS)
def test_particle_store_kl_ordering(name):
    target = dag_target(4)
    sampler = samplers.make(name, target, n_chains=4, seed=0)
    store = ParticleStore(target, flush_every=1)
    for _ in range(200):
        store.update(sampler.step())
        kl = store.kl()
        assert kl["mcmc"] >= kl["opad"] - 1e-12 >= kl["opad_plus"] - 2e-12
    assert np.isfinite(kl["opad_plus"]) and kl["opad_plus"] < kl["mcmc"]
