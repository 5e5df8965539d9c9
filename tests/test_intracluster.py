"""Samplers on S_n(c): intracluster moves (Hamze & de Freitas 2010) and Kawasaki exchange.

1. Exact: on tiny targets the kernel restricted to S_n(c) is built from the
   sampler's own ``transition_row``; its rows sum to 1, no mass leaves S_n(c),
   π_n T = π_n and π_n(x) T(x, y) = π_n(y) T(y, x) to 1e-10.
2. Statistical: 10,000 independent chains advanced by ``step()`` (the
   vectorised code, on the sum-tree and on the dense backend) are compared
   with the exact μ₀Tᵏ (μ₀ uniform on S_n(c)) by a χ² test at level 1e-4.
3. Long runs: no state ever leaves S_n(c), and the frequency of every state
   agrees with π_n within 5 Monte-Carlo standard errors (bulk ESS).
4. At scale: the acceptance ratio of recorded moves on an 8×8 lattice equals
   an independent, from-scratch evaluation of Eq. 6 along the same path.
5. Records, evaluation counts, reproducibility, the walks' caches after many
   moves (equal to a rebuild from the states), and bad input.
6. Adaptation of γ and the walk length during burn-in: once frozen the chain
   is the plain kernel with the tuned parameters (``frozen_params()``; the
   parameters stay as requested) and exact, as in 1; from a
   clearly bad start the tuning moves both parameters the right way and
   reaches the target acceptance; reproducible by seed; bounded history.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import logsumexp

import samplers
import targets
from samplers.balanced.sumtree import LogSumTree
from samplers.common.history import BoundedHistory
from samplers.diagnostics.ess import ess
from samplers.intracluster.fixed_distance import fixed_distance_states
from samplers.intracluster.walk_adaptation import HISTORY_COLUMNS, stochastic_round
from samplers.intracluster.walk_steps import KINDS
from targets.base import state_codes
from tests.conformance import assert_invariant
from tests.test_exactness import chi_square_p_value
from tests.tiny import TINY_TARGETS

KERNEL_TARGETS = {
    "ising_3x3": lambda: targets.make("ising_lattice", size=3, beta=0.6, J=1.0, h=0.3),
    "frustrated_boltzmann": TINY_TARGETS["frustrated_boltzmann"],  # 8 spins, couplings of both signs
    "blackbox": TINY_TARGETS["blackbox"],  # 6 bits, a black-box function with pair and triple terms
}

# (target, n_active, sampler keywords): every order policy, k ∈ {1, 2, 3} and a range, γ ∈ {0, 0.5, 1},
# both re-flip rules, a reference state other than 0, and k = n (the walk reaches c itself).
INTRACLUSTER_CASES = [
    (target, n, kw)
    for target, n in [("ising_3x3", 4), ("frustrated_boltzmann", 4), ("blackbox", 3)]
    for kw in [
        dict(walk_length=1, gamma=0.0, order="up_first"),
        dict(walk_length=2, gamma=0.5, order="down_first"),
        dict(walk_length=3, gamma=1.0, order="random"),
        dict(walk_length=(1, 3), gamma=0.5, order="random", reflip=True),
        dict(walk_length=2, gamma=1.0, order="up_first", reflip=True),
        dict(walk_length=(2, 3), gamma=1.0, order="down_first"),
    ]
] + [
    ("frustrated_boltzmann", 3, dict(walk_length=3, gamma=1.0, order="up_first")),
    ("frustrated_boltzmann", 3, dict(walk_length=3, gamma=0.5, order="random", reflip=True,
                                     reference=np.array([1, 0, 1, 1, 0, 0, 1, 0]))),
    ("ising_3x3", 4, dict(walk_length=(1, 2), gamma=1.0, order="random", reference=np.eye(9, dtype=int)[4])),
]
KAWASAKI_CASES = [("ising_3x3", 4, {}), ("frustrated_boltzmann", 3, {}), ("blackbox", 3, {}),
                  ("frustrated_boltzmann", 4, dict(reference=np.array([0, 1, 1, 0, 1, 0, 0, 1])))]
ALL_CASES = [("intracluster", *case) for case in INTRACLUSTER_CASES] + [("kawasaki", *case) for case in KAWASAKI_CASES]


def case_id(case):
    name, target, n, kw = case
    return f"{name}-{target}-n{n}-" + "-".join(f"{k}={'c' if k == 'reference' else v}" for k, v in kw.items())


def make(name, target_name, n, n_chains=1, seed=0, **kw):
    return samplers.make(name, KERNEL_TARGETS[target_name](), n_chains=n_chains, seed=seed, n_active=n, **kw)


def support_index(sampler, states):
    """Index of each state in ``fixed_distance_states`` order (every state must lie in S_n(c))."""
    support = fixed_distance_states(sampler.reference_state, sampler.distance)
    lookup = {code: i for i, code in enumerate(state_codes(support))}
    return np.array([lookup[code] for code in state_codes(states)])


def restricted_kernel(sampler):
    """(S_n(c), π_n, T) with T the exact kernel over S_n(c) from ``transition_row``; asserts no mass leaves."""
    support = fixed_distance_states(sampler.reference_state, sampler.distance)
    T = np.zeros((len(support), len(support)))
    for row, x in enumerate(support):
        next_states, probs = sampler.transition_row(x)
        inside = sampler.in_support(next_states)
        assert np.all(probs[~inside] == 0), "a move leaves S_n(c)"
        np.add.at(T[row], support_index(sampler, next_states[inside]), probs[inside])
    log_p = sampler.target.log_prob(support)
    return support, np.exp(log_p - logsumexp(log_p)), T


# -- 1. exact kernels ------------------------------------------------------------------------------------
@pytest.mark.parametrize("case", ALL_CASES, ids=[case_id(c) for c in ALL_CASES])
def test_exact_kernel_on_the_support_is_stochastic_invariant_and_reversible(case):
    name, target_name, n, kw = case
    _, pi, T = restricted_kernel(make(name, target_name, n, **kw))
    assert_invariant(T, pi)
    assert np.all(np.diag(T) < 1 - 1e-6), "some state never moves"


def test_exact_kernel_mixes_the_orders_and_lengths_it_is_made_of():
    kw = dict(gamma=0.5)
    parts = [restricted_kernel(make("intracluster", "frustrated_boltzmann", 4, walk_length=k, order=order, **kw))[2]
             for k in (1, 2) for order in ("up_first", "down_first")]
    mixed = restricted_kernel(make("intracluster", "frustrated_boltzmann", 4, walk_length=(1, 2), order="random",
                                   **kw))[2]
    np.testing.assert_allclose(mixed, np.mean(parts, axis=0), atol=1e-14)
    assert np.abs(parts[0] - parts[1]).max() > 1e-3 and np.abs(parts[0] - parts[2]).max() > 1e-3


def test_gamma_zero_with_one_step_walks_is_kawasaki():
    _, _, walk = restricted_kernel(make("intracluster", "blackbox", 3, walk_length=1, gamma=0.0))
    _, _, swap = restricted_kernel(make("kawasaki", "blackbox", 3))
    np.testing.assert_allclose(walk, swap, atol=1e-14)


def test_moves_change_2k_distinct_bits_unless_reflip():
    def reachable_distances(**kw):
        _, _, T = restricted_kernel(make("intracluster", "frustrated_boltzmann", 4, **kw))
        support = fixed_distance_states(np.zeros(8, dtype=np.uint8), 4)
        rows, cols = np.nonzero(T > 0)
        return set(np.count_nonzero(support[rows] != support[cols], axis=1))

    assert reachable_distances(walk_length=2) == {0, 4}
    assert reachable_distances(walk_length=2, reflip=True) == {0, 2, 4}


# -- 2. the vectorised step() against the exact k-step distribution ----------------------------------------
CHI_SQUARE_CASES = [
    ("intracluster", "ising_3x3", 4, dict(walk_length=(1, 3), gamma=1.0, order="random", backend="tree")),
    ("intracluster", "ising_3x3", 4, dict(walk_length=(1, 3), gamma=1.0, order="random", backend="dense")),
    ("intracluster", "ising_3x3", 3, dict(walk_length=3, gamma=0.5, order="up_first", backend="tree")),
    ("intracluster", "ising_3x3", 3, dict(walk_length=3, gamma=0.5, order="up_first", reflip=True, backend="tree")),
    ("intracluster", "frustrated_boltzmann", 4, dict(walk_length=2, gamma=1.0, order="down_first", reflip=True,
                                                     backend="dense")),
    ("intracluster", "frustrated_boltzmann", 3, dict(walk_length=(1, 3), gamma=0.5, order="random",
                                                     reference=np.array([1, 0, 1, 1, 0, 0, 1, 0]), backend="tree")),
    ("intracluster", "blackbox", 3, dict(walk_length=(1, 2), gamma=1.0, order="random", backend="tree")),
    ("intracluster", "blackbox", 3, dict(walk_length=(1, 2), gamma=1.0, order="random", backend="dense")),
    ("kawasaki", "ising_3x3", 4, {}),
    ("kawasaki", "frustrated_boltzmann", 3, dict(reference=np.array([1, 0, 1, 1, 0, 0, 1, 0]))),
    ("kawasaki", "blackbox", 3, {}),
]


@pytest.mark.parametrize("case", CHI_SQUARE_CASES, ids=[case_id(c) for c in CHI_SQUARE_CASES])
def test_vectorised_steps_sample_the_exact_k_step_distribution(case):
    name, target_name, n, kw = case
    n_chains, n_steps = 10_000, 3
    exact = make(name, target_name, n, **{k: v for k, v in kw.items() if k != "backend"})
    support, pi, T = restricted_kernel(exact)
    sampler = make(name, target_name, n, n_chains=n_chains, seed=7, **kw)
    mu = np.full(len(support), 1.0 / len(support))
    assert chi_square_p_value(support_index(sampler, sampler.states), mu, n_chains) > 1e-4
    for _ in range(n_steps):
        sampler.step(record=False)
        mu = mu @ T
    np.testing.assert_allclose(sampler.log_p, sampler.target.log_prob(sampler.states), atol=1e-9)
    assert chi_square_p_value(support_index(sampler, sampler.states), mu, n_chains) > 1e-4


# -- 3. long runs ----------------------------------------------------------------------------------------
LONG_RUN_CASES = [
    ("intracluster", "frustrated_boltzmann", 4, dict(walk_length=(1, 2), gamma=0.5, order="random")),
    ("intracluster", "ising_3x3", 4, dict(walk_length=2, gamma=1.0, reflip=True, backend="tree")),
    ("kawasaki", "frustrated_boltzmann", 4, {}),
]


@pytest.mark.parametrize("case", LONG_RUN_CASES, ids=[case_id(c) for c in LONG_RUN_CASES])
def test_long_runs_stay_in_the_support_and_match_pi_n(case):
    name, target_name, n, kw = case
    sampler = make(name, target_name, n, n_chains=8, seed=3, **kw)
    support, pi, _ = restricted_kernel(make(name, target_name, n, **kw))
    visits = []
    for step in range(3000):
        record = sampler.step()
        assert np.all(sampler.in_support(record.states)) and np.all(sampler.in_support(record.proposed))
        if step >= 300:
            visits.append(support_index(sampler, record.states))
    np.testing.assert_allclose(sampler.log_p, sampler.target.log_prob(sampler.states), atol=1e-9)
    visits = np.array(visits).T  # (n_chains, n_draws)
    for state, p in enumerate(pi):
        series = (visits == state).astype(float)
        standard_error = np.sqrt(p * (1 - p) / max(ess(series), 1.0))
        assert abs(series.mean() - p) < 5 * standard_error + 1e-12, (state, series.mean(), p)


# -- 4. the acceptance ratio at scale, recomputed from scratch ----------------------------------------------
def path_log_acceptance_from_scratch(target, x, bits, k, toward_first, gamma, reflip, c):
    """Eq. 6 along one path, evaluating every candidate flip afresh with ``log_prob`` (slow, independent)."""
    states = [x]
    for b in bits:
        states.append(states[-1].copy())
        states[-1][b] ^= 1
    log_p = target.log_prob(np.array(states))

    def log_step(t, s, moved, toward, barred):
        candidates = [i for i in range(x.size) if (states[s][i] != c[i]) == toward and i not in barred]
        neighbours = np.repeat(states[s][None, :], len(candidates), axis=0)
        neighbours[np.arange(len(candidates)), candidates] ^= 1
        log_w = gamma * (target.log_prob(neighbours) - log_p[s])
        return gamma * (log_p[moved] - log_p[s]) - logsumexp(log_w)

    sigma, rho = list(bits[:k]), list(bits[k:])
    log_forward = log_reverse = 0.0
    for t in range(1, 2 * k + 1):
        toward = (t <= k) == toward_first
        log_forward += log_step(t, t - 1, t, toward, sigma if t > k and not reflip else [])
        log_reverse += log_step(t, t, t - 1, not toward, rho if t <= k and not reflip else [])
    return log_p[-1] - log_p[0] + log_reverse - log_forward


def walking_on_an_8x8_lattice(backend: str, reflip: bool, **params):
    """An 8×8 ferromagnet near β_c and an intracluster sampler on it with random walk orders."""
    target = targets.make("ising_lattice", size=8, beta=0.44)
    return target, samplers.make("intracluster", target, order="random", reflip=reflip, backend=backend, **params)


@pytest.mark.parametrize("backend", ["tree", "dense"])
@pytest.mark.parametrize("reflip", [False, True])
def test_recorded_acceptance_ratios_match_eq6_recomputed_from_scratch(backend, reflip):
    target, sampler = walking_on_an_8x8_lattice(backend, reflip, n_chains=4, seed=2, walk_length=(2, 5), gamma=0.8)
    for _ in range(3):
        start = sampler.states.copy()
        sampler.step()
        walk = sampler.last_walk
        for chain in range(4):
            k = walk.length[chain] // 2
            bits = walk.sites[chain, : 2 * k]
            toward_first = start[chain, bits[0]] != sampler.reference_state[bits[0]]
            expected = path_log_acceptance_from_scratch(target, start[chain], bits, k, toward_first, 0.8, reflip,
                                                        sampler.reference_state)
            assert walk.log_acceptance[chain] == pytest.approx(expected, abs=1e-9)


# -- 5. records, counts, reproducibility, bad input ------------------------------------------------------------
@pytest.mark.parametrize("reflip", [False, True])
def test_step_records_and_walk_records_are_consistent(reflip):
    target = targets.make("ising_lattice", size=6, beta=0.44)
    sampler = samplers.make("intracluster", target, n_chains=6, seed=1, n_active=14, walk_length=(1, 4), gamma=0.5,
                            order="random", reflip=reflip)
    n_accepted = 0
    for _ in range(20):
        before = sampler.states.copy()
        record = sampler.step()
        walk = sampler.last_walk
        np.testing.assert_allclose(record.log_prob, target.log_prob(record.states), atol=1e-9)
        np.testing.assert_allclose(record.proposed_log_prob, target.log_prob(record.proposed), atol=1e-9)
        assert np.all(sampler.in_support(record.proposed))
        np.testing.assert_array_equal(record.states[record.accepted], record.proposed[record.accepted])
        np.testing.assert_array_equal(record.states[~record.accepted], before[~record.accepted])
        assert record.proposed_sites.shape == walk.sites.shape == (6, walk.length.max())
        changed = np.count_nonzero(record.proposed != before, axis=1)
        if reflip:
            assert np.all(changed <= walk.length) and np.all(changed % 2 == 0)
        else:
            np.testing.assert_array_equal(changed, walk.length)
        # The walk: s_1 … s_2k with their log p̃; s_t lies at distance n ∓ t (n ∓ (2k − t) on the way back).
        walk_states = walk.states(before)
        for chain in range(6):
            length = walk.length[chain]
            np.testing.assert_allclose(walk.log_prob[chain, :length], target.log_prob(walk_states[chain, :length]),
                                       atol=1e-9)
            np.testing.assert_array_equal(walk_states[chain, length - 1], record.proposed[chain])
            assert np.all(walk.sites[chain, length:] == -1) and np.all(np.isnan(walk.log_prob[chain, length:]))
            distance = np.count_nonzero(walk_states[chain, :length] != sampler.reference_state, axis=1) - 14
            k = length // 2
            ramp = np.minimum(np.arange(1, length + 1), length - np.arange(1, length + 1))
            assert np.array_equal(np.abs(distance), ramp) and abs(distance[k - 1]) == k
            assert np.all(np.sign(distance[: length - 1]) == np.sign(distance[0]))
        n_accepted += record.accepted.sum()
    assert 0 < n_accepted < 120


def test_evaluation_counts_follow_the_flip_ratio_rule():
    lattice = targets.make("ising_lattice", size=10)
    sampler = samplers.make("intracluster", lattice, n_chains=3, seed=0, walk_length=4, backend="tree")
    assert sampler.n_evals == 3 * (1 + 100)  # log p̃ and all flip ratios of the initial states
    sampler.step()
    assert sampler.n_evals - 303 == 3 * 8 * 5  # 2k walk steps, each the flipped site and its 4 neighbours
    box = TINY_TARGETS["blackbox"]()
    sampler = samplers.make("intracluster", box, n_chains=2, seed=0, n_active=3, walk_length=(1, 3))
    sampler.step()
    assert sampler.n_evals == 2 * (1 + 6) + 6 * sampler.last_walk.length.sum()  # a black box: d per walk step
    assert box.n_evals == sampler.n_evals
    kawasaki = samplers.make("kawasaki", lattice, n_chains=5, seed=0)
    kawasaki.step()
    kawasaki.step()
    assert kawasaki.n_evals == 5 + 2 * 5


def test_backend_is_chosen_by_sparsity():
    def backend(target, **kw):
        return samplers.make("intracluster", target, seed=0, **kw).active_backend

    assert backend(targets.make("ising_lattice", size=60)) == "tree"
    assert backend(targets.make("spin_glass_3d", size=9)) == "tree"
    assert backend(targets.make("boltzmann")) == "dense"
    assert backend(TINY_TARGETS["blackbox"]()) == "dense"
    assert backend(targets.RBM.random(40, 5)) == "dense"
    assert backend(targets.make("ising_lattice", size=60), backend="dense") == "dense"
    assert backend(targets.make("boltzmann"), backend="tree") == "tree"


def test_initial_states_are_uniform_on_the_support():
    sampler = make("intracluster", "frustrated_boltzmann", 3, n_chains=20_000, seed=5,
                   reference=np.array([1, 0, 1, 1, 0, 0, 1, 0]))
    assert np.all(sampler.in_support(sampler.states))
    uniform = np.full(56, 1 / 56)
    assert chi_square_p_value(support_index(sampler, sampler.states), uniform, 20_000) > 1e-4
    assert make("intracluster", "blackbox", 3).states.sum() == 3  # c = 0: exactly n ones
    assert samplers.make("kawasaki", TINY_TARGETS["frustrated_boltzmann"]()).distance == 4  # default ⌊d/2⌋


@pytest.mark.parametrize("name, kw", [("intracluster", dict(walk_length=(1, 3), order="random", reflip=True)),
                                      ("intracluster", dict(walk_length=3, backend="tree")),
                                      ("kawasaki", {})])
def test_same_seed_gives_the_same_run_and_config_replays_it(name, kw):
    target = targets.make("ising_lattice", size=5, beta=0.5)
    first = samplers.make(name, target, n_chains=3, seed=11, n_active=12, **kw)
    trace = samplers.run(first, 30, keep_states_every=5)
    config = first.config()
    again = samplers.run(samplers.make(config["sampler"], target, **config["params"]), 30, keep_states_every=5)
    np.testing.assert_array_equal(trace.log_prob, again.log_prob)
    np.testing.assert_array_equal(trace.states, again.states)
    other = samplers.run(samplers.make(name, target, n_chains=3, seed=12, n_active=12, **kw), 30)
    assert not np.array_equal(trace.log_prob, other.log_prob)


@pytest.mark.parametrize("backend", ["tree", "dense"])
@pytest.mark.parametrize("reflip", [False, True])
def test_walk_caches_equal_a_rebuild_from_the_states_after_many_moves(backend, reflip):
    target, sampler = walking_on_an_8x8_lattice(backend, reflip, n_chains=5, seed=4, walk_length=(1, 6), gamma=0.6)
    for _ in range(40):
        sampler.step(record=False)
    walks = sampler._walks
    assert walks.states is sampler.states and not walks.barred.any()
    np.testing.assert_allclose(walks.delta, target.delta_log_prob(sampler.states), atol=1e-9)
    if backend == "tree":  # every leaf exactly, and every total, as built afresh from the states and cached ratios
        allowed = (sampler.states[None] != sampler.reference_state) == KINDS[:, :, None]
        fresh = LogSumTree(np.where(allowed, 0.6 * walks.delta, -np.inf).reshape(10, -1))
        np.testing.assert_array_equal(walks.trees.log_leaves, fresh.log_leaves)
        np.testing.assert_allclose(walks.trees.log_total, fresh.log_total, rtol=1e-12)


def test_reset_from_given_states():
    target = TINY_TARGETS["frustrated_boltzmann"]()
    x = np.array([1, 1, 0, 0, 1, 0, 1, 0], dtype=np.uint8)
    for name in ("intracluster", "kawasaki"):
        sampler = samplers.make(name, target, n_chains=3, seed=0, n_active=4, init=x)
        np.testing.assert_array_equal(sampler.states, np.repeat(x[None], 3, axis=0))
        sampler.step()
        sampler.reset(x)
        np.testing.assert_array_equal(sampler.states, np.repeat(x[None], 3, axis=0))
        assert np.all(sampler.in_support(sampler.states))


BAD_INPUT = [
    ("intracluster", dict(n_active=0), "n_active"),
    ("intracluster", dict(n_active=8), "0 < n_active < d"),
    ("kawasaki", dict(n_active=8), "0 < n_active < d"),
    ("intracluster", dict(walk_length=0), "walk_length"),
    ("intracluster", dict(n_active=3, walk_length=4), r"min\(n, d − n\) = 3"),
    ("intracluster", dict(n_active=5, walk_length=(1, 4)), r"min\(n, d − n\) = 3"),
    ("intracluster", dict(walk_length=(3, 1)), "k_min ≤ k_max"),
    ("intracluster", dict(walk_length=1.5), "integer"),
    ("intracluster", dict(walk_length=(1, 2, 3)), "pair"),
    ("intracluster", dict(gamma=-1.0), "gamma"),
    ("intracluster", dict(order="sideways"), "order"),
    ("intracluster", dict(backend="gpu"), "backend"),
    ("intracluster", dict(adapt=True, target_acceptance=0.0), "target_acceptance"),
    ("intracluster", dict(adapt=True, target_acceptance=1.0), "target_acceptance"),
    ("intracluster", dict(adapt=True, burn_in=-1), "burn_in"),
    ("intracluster", dict(reference=np.zeros(5)), "length 8"),
    ("kawasaki", dict(reference=np.full(8, 2)), "only 0 and 1"),
    ("intracluster", dict(n_active=4, init=np.ones(8, dtype=np.uint8)), "not at Hamming distance"),
    ("kawasaki", dict(n_active=4, init=np.zeros((3, 8), dtype=np.uint8)), "not at Hamming distance"),
]


@pytest.mark.parametrize("name, kw, message", BAD_INPUT, ids=[f"{n}-{m}" for n, _, m in BAD_INPUT])
def test_bad_input_raises_a_clear_value_error(name, kw, message):
    with pytest.raises(ValueError, match=message):
        samplers.make(name, TINY_TARGETS["frustrated_boltzmann"](), n_chains=3, seed=0, **kw)


def test_transition_row_and_reset_refuse_states_outside_the_support():
    for name in ("intracluster", "kawasaki"):
        sampler = make(name, "blackbox", 3)
        with pytest.raises(ValueError, match="not at Hamming distance n_active=3"):
            sampler.transition_row(np.array([1, 1, 0, 0, 0, 0], dtype=np.uint8))
        with pytest.raises(ValueError, match="not at Hamming distance"):
            sampler.reset(np.ones(6, dtype=np.uint8))


# -- 6. adaptation of γ and the walk length during burn-in -------------------------------------------------------
@pytest.mark.parametrize("walk_length", [3, (1, 3)])
def test_a_frozen_adapted_sampler_is_the_plain_exact_kernel_with_the_tuned_parameters(walk_length):
    sampler = make("intracluster", "frustrated_boltzmann", 4, n_chains=4, seed=0, walk_length=walk_length, gamma=2.0,
                   adapt=True, burn_in=60)
    requested = sampler.config()["params"]
    with pytest.raises(ValueError, match="adapting"):
        sampler.transition_row(sampler.states[0])
    for _ in range(60):
        sampler.step(record=False)
    assert sampler.adapting and sampler.frozen_at is None and sampler.frozen_params() is None
    sampler.step(record=False)
    assert not sampler.adapting and sampler.frozen_at == 60
    tuned = sampler.frozen_params()
    assert tuned == {"gamma": sampler.adaptation.gamma, "walk_length": sampler.adaptation.walk_length(), "adapt": False}
    assert tuned["gamma"] != 2.0 and isinstance(tuned["walk_length"], int if walk_length == 3 else tuple)
    assert sampler.config()["params"] == requested  # the parameters stay as requested
    _, pi, T = restricted_kernel(sampler)
    assert_invariant(T, pi)
    # The frozen kernel is the plain sampler with the tuned γ and walk length (the requested ones merged under them).
    plain = make("intracluster", "frustrated_boltzmann", 4, **{k: v for k, v in {**requested, **tuned}.items()
                                                               if k != "n_active"})
    np.testing.assert_array_equal(restricted_kernel(plain)[2], T)
    tuning = sampler.adaptation_history()
    samplers.run(sampler, 20)
    np.testing.assert_array_equal(sampler.adaptation_history()["step"], tuning["step"])


@pytest.mark.parametrize("start, moves", [(dict(gamma=3.0, walk_length=40), "down"),
                                          (dict(gamma=0.0, walk_length=1), "up")])
def test_adaptation_moves_gamma_and_k_the_right_way_from_a_bad_start(start, moves):
    # At β = 0.44 on a 16×16 lattice moves are accepted most often near γ = 0.55 (measured); γ = 3 with k = 40
    # accepts essentially nothing, γ = 0 with k = 1 proposes blind single swaps (Kawasaki).
    target = targets.make("ising_lattice", size=16, beta=0.44)
    sampler = samplers.make("intracluster", target, n_chains=8, seed=1, adapt=True, burn_in=300, **start)
    for _ in range(300):
        sampler.step(record=False)
    history = sampler.adaptation_history()
    np.testing.assert_array_equal(history["step"], np.arange(0, 300, 2))  # the steps at (γ, κ), not exploring γ ± h
    if moves == "down":
        assert history["acceptance"][:5].max() < 0.01
        assert sampler.adaptation.gamma < 1.0 and sampler.adaptation.walk_length() < 40
    else:
        assert sampler.adaptation.gamma > 0.3 and sampler.adaptation.walk_length() >= 5
    acceptance = []
    for _ in range(150):
        sampler.step(record=False)
        acceptance.append(np.exp(np.minimum(0.0, sampler.last_walk.log_acceptance)))
    assert sampler.frozen_at == 300
    assert 0.15 < np.mean(acceptance) < 0.5  # the target 0.3, within the noise of 8 chains × 150 moves


def test_adaptation_is_reproducible_by_seed():
    def tuned(seed):
        sampler = samplers.make("intracluster", targets.make("ising_lattice", size=8, beta=0.44), n_chains=3,
                                seed=seed, walk_length=(1, 8), gamma=1.5, order="random", adapt=True, burn_in=40)
        samplers.run(sampler, 50)
        return sampler.adaptation_history(), sampler.config()["params"], sampler.log_p.copy()

    first, again, other = tuned(5), tuned(5), tuned(6)
    for name in first[0]:
        np.testing.assert_array_equal(first[0][name], again[0][name])
    assert first[1] == again[1]
    np.testing.assert_array_equal(first[2], again[2])
    assert not np.array_equal(first[0]["gamma"], other[0]["gamma"])


def test_adaptation_history_is_bounded_and_walk_lengths_are_rounded_without_bias():
    history = BoundedHistory(HISTORY_COLUMNS, capacity=8)
    for step in range(100):
        history.append(step, [1.0, 2.0, 0.3])
    snapshot = history.snapshot()
    assert list(snapshot) == ["step", "gamma", "walk_length", "acceptance"]
    assert len(snapshot["step"]) <= 8 and np.all(np.diff(snapshot["step"]) > 0)
    draws = stochastic_round(3.3, 100_000, np.random.default_rng(0))
    assert set(np.unique(draws)) == {3, 4} and draws.mean() == pytest.approx(3.3, abs=0.01)
