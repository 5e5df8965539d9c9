"""DMALA, DLMC/DLMCf, PAS, parallel tempering, Swendsen–Wang and Wolff leave their targets invariant.

As in ``test_exactness``: (1) the exact kernel from each sampler's own
``transition_row`` satisfies π T = π (and detailed balance where it holds) to
1e-10; (2) 10,000 chains run with the vectorised ``step()`` match μ₀Tᵏ by a χ²
test; (3) long runs match the exact marginals. Then what is particular to
each: step-size tuning then freezing, the refusals, gradients of a user's
function, and the replica exchange's accounting.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from scipy.special import logsumexp

import samplers
import targets
from samplers.common.exact import stationary_distribution, transition_matrix
from targets import all_states
from tests.conformance import assert_invariant
from tests.test_exactness import assert_long_run_marginals, chi_square_p_value, steps_to_converge
from tests.tiny import TINY_TARGETS

FERROMAGNETS = {
    "ring_with_field": lambda: TINY_TARGETS["ising1d"](),
    "cube_with_field": lambda: targets.make("ising_lattice", size=2, ndim=3, h=0.2, beta=0.4),
    "lattice_3x3": lambda: targets.make("ising_lattice", size=3, ndim=2, h=0.0, beta=0.4),
}
GRADIENT_CASES = [
    ("dmala", {"burn_in": 0, "step_size": 0.5}),
    ("dmala", {"burn_in": 0, "step_size": 3.0, "balancing": "barker", "ratios": "exact"}),
    ("dlmc", {"burn_in": 0, "step_size": 0.4}),
    ("dlmc", {"burn_in": 0, "step_size": 2.0, "ratios": "gradient"}),
    ("pas", {"burn_in": 0, "path_length": 1}),
    ("pas", {"burn_in": 0, "path_length": 3}),
    ("pas", {"burn_in": 0, "path_length": 2, "ratios": "exact", "balancing": "min"}),
]
IDS = [f"{name}-{'-'.join(f'{k}={v}' for k, v in kw.items())}" for name, kw in GRADIENT_CASES]


def as_black_box(model):
    """The same log p̃ and gradient as ``model``, without its ``flip_tables``: the samplers' generic kernels."""
    def binary(x):
        return np.asarray(x).astype(np.uint8)

    return targets.from_log_prob(lambda x: model.log_prob(binary(x)), model.dim,
                                 grad=lambda x: model.grad_log_prob(binary(x)))


PAIRWISE_KERNEL_CASES = [("gwg", {}), ("gwg", {"balancing": "barker"}), *GRADIENT_CASES,
                         ("pas", {"burn_in": 0, "path_length": 4, "random_length": False})]


@pytest.mark.parametrize("name, kw", PAIRWISE_KERNEL_CASES, ids=[f"{n}-{kw}" for n, kw in PAIRWISE_KERNEL_CASES])
@pytest.mark.parametrize("target_name", ["frustrated_boltzmann", "segmentation"])
def test_the_compiled_pairwise_kernels_are_the_generic_kernels(name, kw, target_name):
    """On a pairwise model GWG, DMALA, DLMC and PAS step with ratios kept incrementally
    (``samplers.gradient.pairwise_moves``, the locally balanced tree kernel for GWG); their exact kernel, built from
    that code, equals the generic kernel's on the same log p̃ given as a black box."""
    model = TINY_TARGETS[target_name]()
    assert model.flip_tables is not None
    compiled = samplers.make(name, model, n_chains=2, seed=0, **kw)
    generic = samplers.make(name, as_black_box(model), n_chains=2, seed=0, **kw)
    np.testing.assert_allclose(transition_matrix(compiled), transition_matrix(generic), atol=1e-12, rtol=0)


@pytest.mark.parametrize("name, kw", [("gwg", {}), ("dmala", {"burn_in": 0}), ("dlmc", {"burn_in": 0}),
                                      ("dlmc", {"burn_in": 0, "ratios": "gradient"}), ("pas", {"burn_in": 0})])
def test_the_compiled_pairwise_kernels_count_the_algorithms_evaluations(name, kw):
    """The count does not depend on the kernel: one value-and-gradient a state, 1 + d with exact ratios."""
    model = TINY_TARGETS["segmentation"]()
    counts = []
    for target in (model, as_black_box(model)):
        sampler = samplers.make(name, target, n_chains=3, seed=0, **kw)
        for _ in range(5):
            sampler.step()
        counts.append(sampler.n_evals)
    assert counts[0] == counts[1]


@pytest.mark.parametrize("name, kw", GRADIENT_CASES, ids=IDS)
@pytest.mark.parametrize("target_name", ["ising1d", "frustrated_boltzmann", "rbm", "blackbox", "bvs"])
def test_gradient_and_ratio_samplers_are_exact_and_reversible(name, kw, target_name):
    target = TINY_TARGETS[target_name]()
    if kw.get("ratios", samplers.sampler_class(name).param["ratios"].default) == "gradient" \
            and not target.differentiable:
        with pytest.raises(ValueError, match=f"{name} needs the gradient"):
            samplers.make(name, target, **kw)
        return
    sampler = samplers.make(name, target, n_chains=2, seed=0, **kw)
    assert_invariant(transition_matrix(sampler), stationary_distribution(target))


@pytest.mark.parametrize("name", ["swendsen_wang", "wolff"])
@pytest.mark.parametrize("target_name", sorted(FERROMAGNETS))
def test_cluster_samplers_are_exact_and_reversible(name, target_name):
    target = FERROMAGNETS[target_name]()
    sampler = samplers.make(name, target, n_chains=2, seed=0)
    assert_invariant(transition_matrix(sampler), stationary_distribution(target))


@pytest.mark.parametrize("name", ["swendsen_wang", "wolff"])
def test_cluster_samplers_refuse_frustrated_and_non_pairwise_targets(name):
    with pytest.raises(ValueError, match="negative ones — it is frustrated"):
        samplers.make(name, TINY_TARGETS["frustrated_boltzmann"]())
    with pytest.raises(ValueError, match="needs a pairwise model"):
        samplers.make(name, TINY_TARGETS["blackbox"]())


def joint_pi(sampler):
    states = all_states(sampler.n_replicas * sampler.target.dim)
    log_p = sampler.joint_stationary_log_prob(states)
    return states, np.exp(log_p - logsumexp(log_p))


@pytest.mark.parametrize("base, base_params, n_replicas", [
    ("metropolis", {}, 3), ("locally_balanced", {}, 2), ("gwg", {}, 2), ("dmala", {"step_size": 1.0}, 2),
    ("pas", {"path_length": 2}, 2), ("swendsen_wang", {}, 2), ("wolff", {}, 2), ("block_gibbs", {"block_size": 2}, 2),
])
def test_parallel_tempering_leaves_the_product_of_tempered_targets_invariant(base, base_params, n_replicas):
    target = targets.make("ising1d", m=3 if n_replicas == 3 else 4, beta=0.9, J=1.0, h=0.3)
    sampler = samplers.make("parallel_tempering", target, n_chains=2, seed=1, base=base, base_params=base_params,
                            n_replicas=n_replicas, min_beta=0.35)
    states, pi = joint_pi(sampler)
    assert_invariant(transition_matrix(sampler, states), pi, reversible=False)


@pytest.mark.parametrize("base, base_params", [
    ("lsb", {"parametrization": "lsb1"}), ("flsb", {"parametrization": "lsb2"}),
    ("intracluster", {"n_active": 2, "walk_length": 1}), ("kawasaki", {"n_active": 2}),
])
def test_parallel_tempering_around_learned_and_fixed_distance_samplers(base, base_params):
    """LSB/FLSB run with their θ fixed (burn_in 0); the fixed-distance samplers on the product of their subspaces."""
    from itertools import product

    from samplers.intracluster.fixed_distance import fixed_distance_states

    target = targets.make("ising1d", m=4, beta=0.9, J=1.0, h=0.3)
    sampler = samplers.make("parallel_tempering", target, n_chains=2, seed=1, base=base, base_params=base_params,
                            n_replicas=2, min_beta=0.35)
    assert all(not getattr(replica, "adapting", False) for replica in sampler.replicas)
    if "n_active" in base_params:
        single = fixed_distance_states(np.zeros(4, dtype=np.uint8), 2)
        states = np.array([np.concatenate(pair) for pair in product(single, single)])
    else:
        states = all_states(8)
    log_p = sampler.joint_stationary_log_prob(states)
    assert_invariant(transition_matrix(sampler, states), np.exp(log_p - logsumexp(log_p)), reversible=False)


STEP_CASES = [("dmala", {"burn_in": 0, "step_size": 0.5}, "frustrated_boltzmann"),
              ("dlmc", {"burn_in": 0, "step_size": 0.4}, "blackbox"),
              ("dlmc", {"burn_in": 0, "step_size": 0.3}, "ising1d"),
              ("pas", {"burn_in": 0, "path_length": 3}, "segmentation"),
              ("dlmc", {"burn_in": 0, "step_size": 1.0, "ratios": "gradient"}, "rbm"),
              ("pas", {"burn_in": 0, "path_length": 2}, "frustrated_boltzmann"),
              ("pas", {"burn_in": 0, "path_length": 3, "ratios": "exact"}, "blackbox"),
              ("swendsen_wang", {}, "ising1d"),
              ("wolff", {}, "ising1d")]


@pytest.mark.parametrize("name, kw, target_name", STEP_CASES, ids=[f"{n}-{t}-{kw}" for n, kw, t in STEP_CASES])
def test_vectorised_steps_sample_the_exact_k_step_distribution(name, kw, target_name):
    target = TINY_TARGETS[target_name]()
    pi = stationary_distribution(target)
    k, mu_k = steps_to_converge(transition_matrix(samplers.make(name, target, **kw)), pi)
    sampler = samplers.make(name, target, n_chains=10_000, seed=7, **kw)
    for _ in range(k):
        record = sampler.step()
    np.testing.assert_allclose(sampler.log_p, target.log_prob(sampler.states), atol=1e-9)
    np.testing.assert_allclose(record.proposed_log_prob, target.log_prob(record.proposed), atol=1e-9)
    codes = targets.state_codes(record.states)
    assert chi_square_p_value(codes, mu_k, 10_000) > 1e-4
    assert chi_square_p_value(codes, pi, 10_000) > 1e-4


def test_parallel_tempering_cold_chains_sample_the_exact_k_step_marginal():
    target = targets.make("ising1d", m=4, beta=1.2, J=1.0, h=0.3)
    kw = dict(base="locally_balanced", n_replicas=2, min_beta=0.3)
    states, pi = joint_pi(samplers.make("parallel_tempering", target, **kw))
    T = transition_matrix(samplers.make("parallel_tempering", target, **kw), states)
    k, mu_k = steps_to_converge(T, pi)
    cold_marginal = np.bincount(targets.state_codes(states[:, :4]), weights=mu_k, minlength=16)
    sampler = samplers.make("parallel_tempering", target, n_chains=10_000, seed=5, **kw)
    for _ in range(k):
        sampler.step()
    for replica in sampler.replicas:
        np.testing.assert_allclose(replica.log_p, replica.target.log_prob(replica.states), atol=1e-9)
    assert chi_square_p_value(targets.state_codes(sampler.states), cold_marginal, 10_000) > 1e-4
    assert chi_square_p_value(targets.state_codes(sampler.states), stationary_distribution(target), 10_000) > 1e-4


LONG_RUNS = [("dmala", {"burn_in": 200}), ("dlmc", {"burn_in": 200}), ("dlmc", {"ratios": "gradient", "burn_in": 0}),
             ("pas", {"burn_in": 200}), ("swendsen_wang", {}), ("wolff", {}),
             ("parallel_tempering", {"base": "metropolis", "n_replicas": 3})]


@pytest.mark.parametrize("name, kw", LONG_RUNS, ids=[f"{n}-{kw}" for n, kw in LONG_RUNS])
def test_long_run_marginals_match_enumeration(name, kw):
    target = TINY_TARGETS["ising1d"]()
    exact_marginals = stationary_distribution(target) @ target.enumerate()[0]
    sampler = samplers.make(name, target, n_chains=8, seed=3, **kw)
    assert_long_run_marginals(sampler, exact_marginals, steps=4000, burn_in=1000)


@pytest.mark.parametrize("name, parameter", [("dmala", "step_size"), ("dlmc", "step_size"), ("pas", "path_length")])
def test_tuning_adapts_in_the_burn_in_then_freezes_into_an_exact_kernel(name, parameter):
    target = targets.make("ising_lattice", size=8, beta=0.3)
    sampler = samplers.make(name, target, n_chains=20, seed=0, burn_in=300)
    requested = sampler.config()["params"]
    assert sampler.adapting and sampler.frozen_params() is None
    samplers.run(sampler, 300)
    assert sampler.adapting
    sampler.step()
    assert not sampler.adapting and sampler.frozen_at == 300
    frozen = sampler.frozen_params()
    assert set(frozen) == {parameter, "burn_in"} and frozen["burn_in"] == 0
    assert frozen[parameter] != requested[parameter]  # the tuning moved it
    assert sampler.config()["params"] == requested  # freezing changes no parameter
    tuned = sampler.tuned_value
    samplers.run(sampler, 50)
    assert sampler.tuned_value == tuned
    trace = samplers.run(sampler, 400)
    assert abs(trace.accepted.mean() - sampler.target_acceptance) < 0.2
    replay = samplers.make(name, target, **{**requested, **frozen})
    assert not replay.adapting and replay.tuned_value == pytest.approx(float(frozen[parameter]))


def test_tuned_kernel_replays_exactly_from_its_frozen_params():
    target = TINY_TARGETS["ising1d"]()
    sampler = samplers.make("dmala", target, n_chains=10, seed=2, burn_in=30)
    samplers.run(sampler, 31)
    replay = samplers.make("dmala", target, **{**sampler.config()["params"], **sampler.frozen_params()})
    np.testing.assert_allclose(transition_matrix(replay), transition_matrix(sampler), atol=1e-14)


def test_user_gradients_run_every_gradient_sampler():
    weights = np.array([0.8, -0.5, 0.3, 1.1, -0.9])

    def log_prob(x):
        return x @ weights - 1.5 * x[:, 0] * x[:, 3]

    def gradient(x):
        out = np.broadcast_to(weights, x.shape).copy()
        out[:, 0] -= 1.5 * x[:, 3]
        out[:, 3] -= 1.5 * x[:, 0]
        return out

    def torch_log_prob(x):
        return x @ torch.as_tensor(weights) - 1.5 * x[:, 0] * x[:, 3]

    with_grad = targets.from_log_prob(log_prob, 5, grad=gradient)
    with_autograd = targets.from_log_prob(torch_log_prob, 5, autograd=True)
    x = all_states(5)
    np.testing.assert_allclose(with_autograd.grad_log_prob(x), with_grad.grad_log_prob(x), atol=1e-12)
    np.testing.assert_allclose(with_autograd.log_prob(x), with_grad.log_prob(x), atol=1e-12)
    pi = stationary_distribution(with_grad)
    for name in ("gwg", "flsb", "dmala", "dlmc", "pas"):
        kw = {"ratios": "gradient", "burn_in": 0} if name in ("dmala", "dlmc", "pas") else {}
        if name == "flsb":
            kw = {"parametrization": "fixed"}
        for target in (with_grad, with_autograd):
            assert_invariant(transition_matrix(samplers.make(name, target, **kw)), pi)
    plain = targets.from_log_prob(log_prob, 5)
    for name in ("gwg", "flsb", "dmala"):
        with pytest.raises(ValueError, match=f"^{name} needs the gradient .* pass grad= or autograd=True"):
            samplers.make(name, plain)


def test_parallel_tempering_counts_evaluations_and_reports_swaps():
    target = targets.make("ising_lattice", size=6, beta=0.6)
    sampler = samplers.make("parallel_tempering", target, n_chains=4, seed=0, base="metropolis", n_replicas=4,
                            min_beta=0.2)
    assert np.all(np.isnan(sampler.swap_acceptance))
    trace = samplers.run(sampler, 200)
    # Metropolis: one evaluation per replica and chain a step; swaps of Metropolis chains re-evaluate nothing.
    assert trace.n_evals[-1] - trace.n_evals[0] == 200 * 4 * 4
    assert sampler.swap_acceptance.shape == (3,) and np.all((0 < sampler.swap_acceptance)
                                                             & (sampler.swap_acceptance <= 1))
    assert sampler.target.n_evals >= 200 * 4  # the cold replica evaluates the target itself
    with pytest.raises(ValueError, match="sets n_chains"):
        samplers.make("parallel_tempering", target, base_params={"n_chains": 3})
    with pytest.raises(ValueError, match="fixed kernel"):
        samplers.make("parallel_tempering", target, base="dmala", base_params={"burn_in": 10})


def test_parallel_tempering_crosses_a_barrier_that_stalls_its_base():
    """A cold 4×4 ferromagnet (β = 1, modes 16 flips apart, barrier ≈ 16 nats): Metropolis started in the all-down
    mode stays there, its tempered replicas carry the cold chain to the all-up mode and back."""
    target = targets.make("ising_lattice", size=4, beta=1.0)
    start = np.zeros(16, dtype=np.uint8)
    alone = samplers.make("metropolis", target, n_chains=8, seed=0, init=start)
    tempered = samplers.make("parallel_tempering", target, n_chains=8, seed=0, init=start, base="metropolis",
                             n_replicas=6, min_beta=0.2)
    magnetisation = {name: samplers.run(s, 4000, statistic=target.magnetisation).statistic[1000:]
                     for name, s in (("alone", alone), ("tempered", tempered))}
    assert np.mean(magnetisation["alone"] > 0.5) == 0.0
    assert 0.2 < np.mean(magnetisation["tempered"] > 0.5) < 0.8


def test_opad_plus_reweights_the_hot_replicas_with_the_cold_chain():
    from samplers.opad.store import ParticleStore

    target = targets.make("ising1d", m=8, beta=1.5, J=1.0, h=0.1)
    stores = {}
    for record_replicas in (False, True):
        sampler = samplers.make("parallel_tempering", target, n_chains=4, seed=2, base="metropolis", n_replicas=4,
                                min_beta=0.1, record_replicas=record_replicas)
        store = stores[record_replicas] = ParticleStore(target)
        for _ in range(300):
            record = sampler.step()
            store.update(record)
        store.flush()
        if record_replicas:
            assert record.extra_states.shape == (4, 3, 8)
            np.testing.assert_allclose(record.extra_log_prob, target.log_prob(
                record.extra_states.reshape(-1, 8)).reshape(4, 3), atol=1e-9)
    # the same cold chains (the same seeds), and OPAD+ holds more of the target's mass with the hot states
    plain, with_hot = stores[False].kl(), stores[True].kl()
    assert plain["mcmc"] == with_hot["mcmc"] and plain["opad"] == with_hot["opad"]
    assert with_hot["opad_plus"] < plain["opad_plus"]
