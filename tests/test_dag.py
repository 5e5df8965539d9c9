"""DAG structure-learning target: DAG counts, score equivalence, BGe/BDeu against independent formulas, priors, data."""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pytest
from scipy import stats

import samplers
import targets
from targets.base import all_states, state_codes
from targets.dag import er_dag, linear_gaussian_data

#: Number of labelled DAGs on n nodes (OEIS A003024).
DAG_COUNTS = {2: 3, 3: 25, 4: 543, 5: 29281}
#: Number of Markov equivalence classes of DAGs on n nodes (OEIS A007984).
CLASS_COUNTS = {3: 11, 4: 185}


# -- data and independent references ------------------------------------------------------------
def gaussian_data(n, n_samples, seed):
    """Linear-Gaussian data from a random DAG, shifted off zero so the x̄x̄ᵀ term of T_N matters."""
    rng = np.random.default_rng(seed)
    return linear_gaussian_data(er_dag(n, 2.0, rng), n_samples, rng) + rng.normal(0.0, 1.0, n)


def categorical_data(n_samples, seed):
    """Four dependent categorical columns with 2, 3, 2 and 4 levels; column 1 never takes code 1 (an unseen level)."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 2, n_samples)
    b = np.where(rng.random(n_samples) < 0.8, 2 * a, 2 * (1 - a))
    c = (a + (rng.random(n_samples) < 0.2)) % 2
    d = (b // 2 + c + rng.integers(0, 3, n_samples)) % 4
    return np.column_stack([a, b, c, d])


def sequential_normal_wishart_log_evidence(X, kappa, nu, scale):
    """log p(X) as Π_i p(x_i | x_<i): each a multivariate-t posterior predictive of the Normal–Wishart model.

    Σ ~ IW(ν, T), μ | Σ ~ N(0, Σ/κ); the predictive is t_{ν−k+1}(μ, T(κ+1)/(κ(ν−k+1))), then
    T += κ/(κ+1)(x−μ)(x−μ)ᵀ, μ ← (κμ + x)/(κ+1), κ += 1, ν += 1.
    """
    k = X.shape[1]
    mu, T, total = np.zeros(k), scale.copy(), 0.0
    for x in X:
        df = nu - k + 1
        total += stats.multivariate_t(loc=mu, shape=T * (kappa + 1) / (kappa * df), df=df).logpdf(x)
        T = T + kappa / (kappa + 1) * np.outer(x - mu, x - mu)
        mu = (kappa * mu + x) / (kappa + 1)
        kappa, nu = kappa + 1, nu + 1
    return total


def bge_subset_log_evidence(data, subset, am, aw):
    """log p(D_Y) of the BGe model for the variables ``subset`` (Wishart d.o.f. a_w − n + |Y|)."""
    n, k = data.shape[1], len(subset)
    if k == 0:
        return 0.0
    t = am * (aw - n - 1) / (am + 1)
    return sequential_normal_wishart_log_evidence(data[:, subset], am, aw - n + k, t * np.eye(k))


def bge_reference_score(data, adjacency, am, aw):
    """Σ_j log p(D_{P∪j}) − log p(D_P), each evidence computed sample by sample."""
    total = 0.0
    for j in range(data.shape[1]):
        parents = list(np.flatnonzero(adjacency[:, j]))
        total += (bge_subset_log_evidence(data, sorted(parents + [j]), am, aw)
                  - bge_subset_log_evidence(data, parents, am, aw))
    return total


def polya_urn_log_evidence(codes, j, parents, ess):
    """BDeu log p(D_j | D_P) by the sequential Pólya-urn predictive (α/(qr) + N_kv)/(α/q + N_k)."""
    levels = codes.max(axis=0) + 1
    q, r = np.prod(levels[parents]), levels[j]
    counts = defaultdict(lambda: np.zeros(r))
    total = 0.0
    for row in codes:
        seen = counts[tuple(row[parents])]
        total += np.log((ess / (q * r) + seen[row[j]]) / (ess / q + seen.sum()))
        seen[row[j]] += 1
    return total


def bdeu_reference_score(codes, adjacency, ess):
    return sum(polya_urn_log_evidence(codes, j, list(np.flatnonzero(adjacency[:, j])), ess)
               for j in range(codes.shape[1]))


def cyclic_by_matrix_powers(matrices):
    """A graph has a cycle iff some power A^k, k ≤ n, has a non-zero diagonal."""
    n = matrices.shape[1]
    power, cyclic = np.eye(n, dtype=np.int64), np.zeros(len(matrices), dtype=bool)
    for _ in range(n):
        power = np.minimum(power @ matrices.astype(np.int64), 1)
        cyclic |= np.trace(power, axis1=1, axis2=2) > 0
    return cyclic


def markov_signature(adjacency):
    """Skeleton and v-structures i → j ← k (i, k non-adjacent): equal iff Markov equivalent (Verma & Pearl)."""
    skeleton = adjacency | adjacency.T
    n = len(adjacency)
    v_structures = {(i, j, k) for j in range(n) for i in range(n) for k in range(i + 1, n)
                    if adjacency[i, j] and adjacency[k, j] and not skeleton[i, k]}
    return tuple(map(tuple, np.triu(skeleton))), frozenset(v_structures)


def random_dags(target, rng, count):
    """``count`` random DAG states (ER graphs of random density)."""
    matrices = np.stack([er_dag(target.n_nodes, rng.uniform(0.5, target.n_nodes - 1), rng) for _ in range(count)])
    return target.states_from_adjacency(matrices)


@pytest.fixture(scope="module")
def five_nodes():
    return targets.make("dag", n_nodes=5)


# -- encoding and enumeration ------------------------------------------------------------------
def test_encoding_is_row_major_off_diagonal_and_round_trips(rng):
    target = targets.make("dag", n_nodes=3)
    np.testing.assert_array_equal(target.edge_pairs, [[0, 1], [0, 2], [1, 0], [1, 2], [2, 0], [2, 1]])
    x = rng.integers(0, 2, size=(50, 6), dtype=np.uint8)
    matrices = target.adjacency(x)
    assert matrices.shape == (50, 3, 3) and matrices.dtype == np.uint8
    assert not np.diagonal(matrices, axis1=1, axis2=2).any()
    np.testing.assert_array_equal(target.states_from_adjacency(matrices), x)
    chain = np.array([[0, 1, 0], [0, 0, 1], [0, 0, 0]])
    np.testing.assert_array_equal(target.states_from_adjacency(chain), [[1, 0, 0, 1, 0, 0]])
    masks = target.parent_masks(x)
    np.testing.assert_array_equal(masks, np.einsum("bij,i->bj", matrices.astype(np.int64), 1 << np.arange(3)))


@pytest.mark.parametrize("n", [2, 3, 4])
def test_enumerate_dags_counts_and_acyclicity(n):
    target = targets.make("dag", n_nodes=n)
    states, log_p = target.enumerate_dags()
    assert len(states) == DAG_COUNTS[n] and len(np.unique(state_codes(states))) == DAG_COUNTS[n]
    assert np.all(np.isfinite(log_p))
    everything = all_states(n * (n - 1))
    cyclic = cyclic_by_matrix_powers(target.adjacency(everything))
    np.testing.assert_array_equal(target.is_acyclic(everything), ~cyclic)
    assert (~cyclic).sum() == DAG_COUNTS[n]


def test_enumerate_is_minus_inf_exactly_on_cyclic_graphs_and_agrees_with_log_prob():
    target = targets.make("dag", n_nodes=3)
    states, log_p = target.enumerate()
    np.testing.assert_array_equal(states, all_states(6))
    cyclic = cyclic_by_matrix_powers(target.adjacency(states))
    assert np.all(np.isneginf(log_p[cyclic])) and np.all(np.isfinite(log_p[~cyclic]))
    dags, dag_log_p = target.enumerate_dags()
    np.testing.assert_array_equal(log_p[state_codes(dags)], dag_log_p)
    np.testing.assert_array_equal(target.log_prob(states), log_p)


def test_five_node_enumeration(five_nodes):
    states, log_p = five_nodes.enumerate_dags()
    assert states.shape == (DAG_COUNTS[5], 20) and np.all(np.isfinite(log_p))
    assert np.all(five_nodes.is_acyclic(states))
    all_graphs, all_log_p = five_nodes.enumerate()
    assert all_graphs.shape == (2**20, 20) and np.isfinite(all_log_p).sum() == DAG_COUNTS[5]
    sample = np.random.default_rng(0).choice(len(states), 500, replace=False)
    np.testing.assert_allclose(five_nodes.log_prob(states[sample]), log_p[sample], rtol=0, atol=1e-9)


def test_enumeration_refuses_more_than_five_nodes():
    with pytest.raises(ValueError, match="n_nodes ≤ 5"):
        targets.make("dag", n_nodes=6).enumerate_dags()


# -- score equivalence -------------------------------------------------------------------------------
@pytest.mark.parametrize("n", [3, 4])
@pytest.mark.parametrize("score", ["bge", "bdeu"])
def test_markov_equivalent_dags_score_equal_and_classes_differ(n, score):
    data = gaussian_data(n, 60, seed=n) if score == "bge" else categorical_data(80, seed=n)[:, :n]
    target = targets.make("dag", data=data, score=score, graph_prior="sparse", sparsity=0.3)
    states, log_p = target.enumerate_dags()
    classes = defaultdict(list)
    for matrix, value in zip(target.adjacency(states), log_p):
        classes[markov_signature(matrix)].append(value)
    assert len(classes) == CLASS_COUNTS[n]
    for values in classes.values():
        assert np.ptp(values) < 1e-9
    representatives = np.sort([values[0] for values in classes.values()])
    assert np.min(np.diff(representatives)) > 1e-6, "two non-equivalent classes share a score"


@pytest.mark.parametrize("score", ["bge", "bdeu"])
def test_reversing_a_covered_edge_keeps_the_score(score, rng):
    n = 6
    data = gaussian_data(n, 80, seed=3) if score == "bge" else np.column_stack(
        [categorical_data(80, seed=3), categorical_data(80, seed=4)[:, 1:3]])
    target = targets.make("dag", data=data, score=score)
    reversed_covered = 0
    for matrix in target.adjacency(random_dags(target, rng, 30)):
        for i, j in zip(*np.nonzero(matrix)):
            parents_i, parents_j = matrix[:, i].copy(), matrix[:, j].copy()
            parents_i[i] = 1
            if not np.array_equal(parents_i, parents_j):
                continue
            flipped = matrix.copy()
            flipped[i, j], flipped[j, i] = 0, 1
            before, after = target.log_prob(target.states_from_adjacency(np.stack([matrix, flipped])))
            assert np.isfinite(before) and after == pytest.approx(before, abs=1e-9)
            reversed_covered += 1
    assert reversed_covered >= 20


# -- scores against independent formulas -------------------------------------------------------------------
def test_bge_complete_dag_is_the_normal_wishart_evidence_of_all_variables():
    data = gaussian_data(4, 25, seed=7)
    am, aw = 2.5, 8.0
    target = targets.make("dag", data=data, am=am, aw=aw)
    complete = np.triu(np.ones((4, 4), dtype=np.uint8), k=1)
    t = am * (aw - 4 - 1) / (am + 1)
    expected = sequential_normal_wishart_log_evidence(data, am, aw, t * np.eye(4))
    assert target.log_prob(target.states_from_adjacency(complete))[0] == pytest.approx(expected, abs=1e-8)


def test_bge_matches_sequential_predictive_family_factorisation(rng):
    data = gaussian_data(4, 25, seed=8)
    am, aw = 0.7, 6.5
    target = targets.make("dag", data=data, am=am, aw=aw)
    states = random_dags(target, rng, 6)
    expected = [bge_reference_score(data, matrix, am, aw) for matrix in target.adjacency(states)]
    np.testing.assert_allclose(target.log_prob(states), expected, rtol=0, atol=1e-8)


def test_bge_default_hyperparameters():
    data = gaussian_data(3, 20, seed=9)
    target = targets.make("dag", data=data)
    chain = target.states_from_adjacency(np.array([[0, 1, 0], [0, 0, 1], [0, 0, 0]]))
    expected = bge_reference_score(data, target.adjacency(chain)[0], 1.0, 3 + 1.0 + 1)
    assert target.log_prob(chain)[0] == pytest.approx(expected, abs=1e-8)


def test_bdeu_matches_the_polya_urn(rng):
    codes = categorical_data(60, seed=10)
    target = targets.make("dag", data=codes, score="bdeu", equivalent_sample_size=2.5)
    states = np.concatenate([random_dags(target, rng, 8), target.states_from_adjacency(np.triu(np.ones((4, 4)), 1))])
    expected = [bdeu_reference_score(codes, matrix, 2.5) for matrix in target.adjacency(states)]
    np.testing.assert_allclose(target.log_prob(states), expected, rtol=0, atol=1e-9)


def test_local_score_table_layout():
    target = targets.make("dag", n_nodes=4, max_parents=2)
    table = target.local_scores
    assert table.shape == (4, 16) and table.dtype == np.float64
    masks = np.arange(16)
    for j in range(4):
        own = (masks >> j) & 1 == 1
        too_many = np.bitwise_count(masks) > 2
        assert np.all(np.isneginf(table[j, own | too_many]))
        assert np.all(np.isfinite(table[j, ~own & ~too_many]))


# -- priors, constraints and cycles ------------------------------------------------------------------------
def test_cyclic_graphs_have_minus_inf():
    target = targets.make("dag", n_nodes=4)
    cycle = np.zeros((4, 4), dtype=np.uint8)
    cycle[0, 1] = cycle[1, 2] = cycle[2, 0] = 1
    two_cycle = np.zeros((4, 4), dtype=np.uint8)
    two_cycle[3, 1] = two_cycle[1, 3] = 1
    states = target.states_from_adjacency(np.stack([cycle, two_cycle]))
    assert not target.is_acyclic(states).any()
    assert np.all(np.isneginf(target.log_prob(states)))


def test_max_parents_forbids_larger_parent_sets():
    data = gaussian_data(4, 50, seed=11)
    limited = targets.make("dag", data=data, max_parents=1)
    free = targets.make("dag", data=data)
    v_structure = np.zeros((4, 4), dtype=np.uint8)
    v_structure[0, 2] = v_structure[1, 2] = 1
    chain = np.zeros((4, 4), dtype=np.uint8)
    chain[0, 1] = chain[1, 2] = chain[2, 3] = 1
    states = limited.states_from_adjacency(np.stack([v_structure, chain]))
    log_p = limited.log_prob(states)
    assert np.isneginf(log_p[0]) and log_p[1] == free.log_prob(states[1:])[0]
    dags, dag_log_p = limited.enumerate_dags()
    assert len(dags) == DAG_COUNTS[4]
    within = limited.adjacency(dags).sum(axis=1).max(axis=1) <= 1
    np.testing.assert_array_equal(np.isfinite(dag_log_p), within)


def test_sparse_prior_subtracts_sparsity_per_edge(rng):
    data = gaussian_data(5, 40, seed=12)
    uniform = targets.make("dag", data=data)
    sparse = targets.make("dag", data=data, graph_prior="sparse", sparsity=0.7)
    states = random_dags(uniform, rng, 20)
    edges = states.sum(axis=1)
    assert len(np.unique(edges)) > 3
    np.testing.assert_allclose(sparse.log_prob(states) - uniform.log_prob(states), -0.7 * edges, rtol=0, atol=1e-9)


# -- data, parameters and synthetic generator -------------------------------------------------------------
@pytest.mark.parametrize("params, message", [
    ({"data": np.ones(5)}, "2-D"),
    ({"data": np.ones((5, 1))}, "between 2 and 12 columns"),
    ({"data": np.ones((5, 13))}, "between 2 and 12 columns"),
    ({"data": np.ones((0, 3))}, "at least one sample"),
    ({"data": np.array([["a", "b"], ["c", "d"]])}, "numeric"),
    ({"data": np.array([[0.0, np.nan], [1.0, 2.0]])}, "finite"),
    ({"data": np.array([[0.5, 1.0], [1.0, 0.0]]), "score": "bdeu"}, "integer"),
    ({"data": np.array([[-1, 1], [1, 0]]), "score": "bdeu"}, "non-negative"),
    ({"data": np.ones((5, 3)), "n_nodes": 4}, "3 columns but n_nodes = 4"),
    ({"n_nodes": 3, "aw": 4.0}, "aw must exceed"),
])
def test_bad_input_is_refused(params, message):
    with pytest.raises(ValueError, match=message):
        targets.make("dag", **params)


def test_user_data_sets_the_number_of_nodes():
    data = gaussian_data(4, 30, seed=13)
    target = targets.make("dag", n_nodes=4, data=data, score="bge")
    assert target.dim == 12 and target.true_adjacency is None
    inferred = targets.make("dag", data=data)
    assert inferred.n_nodes == 4 and inferred.node_names == ["X0", "X1", "X2", "X3"]
    np.testing.assert_array_equal(inferred.local_scores, target.local_scores)
    codes = targets.make("dag", data=categorical_data(30, seed=1).astype(float), score="bdeu")
    assert codes.data_matrix.dtype == np.int64 and codes.dim == 12


def test_synthetic_data_is_reproducible_and_with_params_rebuilds():
    a, b = targets.make("dag", n_nodes=5, seed=4), targets.make("dag", n_nodes=5, seed=4)
    np.testing.assert_array_equal(a.data_matrix, b.data_matrix)
    np.testing.assert_array_equal(a.true_adjacency, b.true_adjacency)
    np.testing.assert_array_equal(a.local_scores, b.local_scores)
    assert a.data_matrix.shape == (200, 5) and a.node_names == [f"X{j}" for j in range(5)]
    assert not np.array_equal(targets.make("dag", n_nodes=5, seed=5).data_matrix, a.data_matrix)
    smaller = a.with_params(n_nodes=3)
    assert smaller.dim == 6 and smaller.local_scores.shape == (3, 8) and smaller.data_matrix.shape == (200, 3)
    assert a.dim == 20


def test_bdeu_synthetic_data_is_split_at_the_median():
    target = targets.make("dag", n_nodes=4, score="bdeu", n_samples=101)
    gaussian = targets.make("dag", n_nodes=4, n_samples=101)
    expected = (gaussian.data_matrix > np.median(gaussian.data_matrix, axis=0)).astype(np.int64)
    np.testing.assert_array_equal(target.data_matrix, expected)
    np.testing.assert_array_equal(target.data_matrix.sum(axis=0), 50)


def test_er_dag_is_acyclic_with_the_expected_number_of_edges():
    rng = np.random.default_rng(1)
    n, d = 8, 2.0
    matrices = np.stack([er_dag(n, d, rng) for _ in range(2000)])
    assert not cyclic_by_matrix_powers(matrices).any()
    assert abs(matrices.sum(axis=(1, 2)).mean() - n * d / 2) < 0.3
    # Every ordered pair is equally likely to be an edge (random node order).
    np.testing.assert_allclose(matrices.mean(axis=0)[~np.eye(n, dtype=bool)], d / (n - 1) / 2, atol=0.05)
    assert er_dag(5, 10.0, rng).sum() == 10


def test_linear_gaussian_data_follows_the_structural_equations():
    rng = np.random.default_rng(2)
    chain = np.array([[0, 1], [0, 0]], dtype=np.uint8)
    x = linear_gaussian_data(chain, 20000, rng)
    slope = np.polyfit(x[:, 0], x[:, 1], 1)[0]
    assert 0.5 - 0.05 <= abs(slope) <= 2.0 + 0.05
    assert np.std(x[:, 0]) == pytest.approx(1.0, abs=0.03)
    assert np.std(x[:, 1] - slope * x[:, 0]) == pytest.approx(1.0, abs=0.03)


def test_edge_probabilities_validate_and_average():
    target = targets.make("dag", n_nodes=3)
    states = target.states_from_adjacency(np.array([[[0, 1, 0], [0, 0, 0], [0, 0, 0]],
                                                    [[0, 0, 0], [1, 0, 0], [0, 0, 0]]]))
    probabilities = target.edge_probabilities(states, [3.0, 1.0])
    assert probabilities[0, 1] == 0.75 and probabilities[1, 0] == 0.25 and probabilities.sum() == 1.0
    assert target.edge_probabilities(states)[0, 1] == 0.5
    with pytest.raises(ValueError, match="weights"):
        target.edge_probabilities(states, [1.0, -1.0])


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_exact_posterior_ranks_the_true_skeleton_first(seed):
    target = targets.make("dag", n_nodes=4, expected_degree=2.0, n_samples=200, seed=seed)
    states, log_p = target.enumerate_dags()
    probabilities = target.edge_probabilities(states, np.exp(log_p - log_p.max()))
    skeleton_probability = (probabilities + probabilities.T)[np.triu_indices(4, k=1)]
    true_skeleton = (target.true_adjacency | target.true_adjacency.T)[np.triu_indices(4, k=1)].astype(bool)
    assert 0 < true_skeleton.sum() < 6
    assert skeleton_probability[true_skeleton].min() > skeleton_probability[~true_skeleton].max()


def test_random_states_are_dags_within_the_fan_in_limit_and_start_any_sampler():
    rng = np.random.default_rng(0)
    for max_parents in (None, 1, 2):
        target = targets.make("dag", n_nodes=6, max_parents=max_parents)
        states = target.random_states(500, rng)
        assert target.is_acyclic(states).all() and np.isfinite(target.log_prob(states)).all()
        in_degree = target.adjacency(states).sum(axis=1)
        assert in_degree.max() <= (max_parents if max_parents is not None else 5)
        assert len(np.unique(targets.state_codes(states))) > 400  # varied starts, not one graph
    sampler = samplers.make("locally_balanced", targets.make("dag", n_nodes=4), n_chains=5, seed=1)
    for _ in range(50):
        sampler.step()
    assert sampler.target.is_acyclic(sampler.states).all()
