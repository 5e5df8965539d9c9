"""Local Self-Balancing: learned balancing functions, the MI objective, LSB and FLSB.

* Every parametrisation is a balancing function for every θ (property tests).
* Frozen LSB / FLSB with random θ leave their targets exactly invariant, and
  so does the learning step's own kernel (the proposal Q_θ₀ and its MH test).
* The compiled objective's value and gradient (closed-form partials, LSB1's
  analytic θ-gradient, a network's back-propagation from the knots) equal
  Eq. 5 (case b) written independently with plain autograd on a tiny target,
  by both ways of computing the normalisers (dense and mixture trees).
* FLSB with g = √t fixed is Gibbs-with-Gradients, step for step.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import samplers
import targets
from samplers.balanced.sumtree import LogSumTree
from samplers.common.exact import stationary_distribution, transition_matrix
from samplers.lsb.balancing import (BALANCING, KNOT_SPACING, KNOT_SPAN, MIXTURE, PARAMETRIZATIONS, BalancingTable,
                                    learned_size)
from samplers.lsb.networks import make_parametrization
from samplers.lsb.learning import (dense_learning_terms, dense_proposals, mixture_component_log_g,
                                   mixture_tree_learning_terms)
from samplers.lsb.optimizers import OPTIMIZERS
from targets.base import flip
from tests.conformance import assert_invariant
from tests.test_exactness import chi_square_p_value, steps_to_converge
from tests.tiny import TINY_TARGETS

LEARNED = sorted(PARAMETRIZATIONS)


def random_function(name: str, seed: int, scale: float = 1.5):
    function = make_parametrization(name, hidden_units=6, blocks=4, seed=seed)
    generator = torch.Generator().manual_seed(seed + 1)
    with torch.no_grad():
        for parameter in function.parameters():
            parameter.normal_(0.0, scale, generator=generator)
    return function


def random_theta(parametrization: str, seed: int) -> dict:
    """A random θ for a sampler with hidden_units=6, monotone_blocks=4, as the ``theta`` parameter takes it."""
    return {name: value.tolist() for name, value in random_function(parametrization, seed).state_dict().items()}


def frozen(name, target, parametrization, seed=0, **params):
    return samplers.make(name, target, parametrization=parametrization, burn_in=0, seed=seed, hidden_units=6,
                         monotone_blocks=4, theta=random_theta(parametrization, seed=17), **params)


# -- the parametrisations -----------------------------------------------------------------------------
@pytest.mark.parametrize("name", LEARNED)
@pytest.mark.parametrize("hidden_units, blocks", [(1, 1), (6, 4), (10, 20)])
def test_a_learned_functions_size_is_known_before_torch_builds_it(name, hidden_units, blocks):
    function = make_parametrization(name, hidden_units=hidden_units, blocks=blocks)
    size = learned_size(name, hidden_units=hidden_units, blocks=blocks)
    assert size.parameters == sum(parameter.numel() for parameter in function.parameters())
    assert size.traced == len(function.describe())
    with pytest.raises(ValueError, match="parametrization must be one of"):
        learned_size("lsb3")


@settings(max_examples=60, deadline=None)
@given(name=st.sampled_from(LEARNED), seed=st.integers(0, 10_000),
       log_t=st.lists(st.floats(-50.0, 50.0), min_size=1, max_size=20))
def test_every_parametrisation_is_balancing_positive_and_finite(name, seed, log_t):
    function = random_function(name, seed)
    u = torch.as_tensor(np.asarray(log_t))
    with torch.no_grad():
        exact, mirrored = function.log_g(u).numpy(), function.log_g(-u).numpy()
    # g(t) = t·g(1/t), relative error 1e-9 (log g differs by at most 1e-9)
    np.testing.assert_allclose(exact, u.numpy() + mirrored, rtol=0, atol=1e-9)
    assert np.all(np.isfinite(exact))
    compiled = function.compiled()
    tabulated = compiled.log_g(u.numpy())
    np.testing.assert_allclose(tabulated, u.numpy() + compiled.log_g(-u.numpy()), rtol=0, atol=1e-9)
    assert np.all(np.isfinite(tabulated))


@pytest.mark.parametrize("name", LEARNED)
def test_extreme_ratios_stay_finite_and_infinite_ratios_are_handled(name):
    function = random_function(name, seed=3)
    extremes = np.array([-700.0, -50.0, 50.0, 700.0])
    with torch.no_grad():
        assert np.all(np.isfinite(function.log_g(torch.as_tensor(extremes)).numpy()))
    table = function.compiled()
    assert np.all(np.isfinite(table.log_g(extremes)))
    at_zero, at_infinity = table.log_g(np.array([-np.inf, np.inf]))
    assert np.isfinite(at_zero) and at_infinity == np.inf
    with pytest.raises(ValueError, match="NaN"):
        table.log_g(np.array([0.0, np.nan]))


def test_table_matches_the_network_between_knots():
    function = random_function("lsb2", seed=5, scale=1.0)
    u = np.linspace(-40, 40, 2001)
    with torch.no_grad():
        exact = function.log_g(torch.as_tensor(u)).numpy()
    assert np.abs(function.compiled().log_g(u) - exact).max() < 5e-3
    mixture = random_function("lsb1", seed=5)  # LSB1 is used exactly, not tabulated
    wide = np.linspace(-700, 700, 4001)
    with torch.no_grad():
        np.testing.assert_allclose(mixture.compiled().log_g(wide), mixture.log_g(torch.as_tensor(wide)).numpy(),
                                   rtol=1e-13, atol=1e-12)
    for name, log_g in BALANCING.items():  # fixed functions: exact where log-linear, ≤ 5e-4 for barker
        assert np.abs(BalancingTable.of(log_g).log_g(u) - log_g(u)).max() < 5e-4, name


def test_lsb1_mixture_weights_and_monotone_g_at_zero():
    mixture = make_parametrization("lsb1")
    assert mixture.describe() == pytest.approx({f"w_{n}": 0.25 for n in BALANCING})
    u = torch.linspace(-5, 5, 11, dtype=torch.float64)
    with torch.no_grad():
        expected = np.log(np.mean([np.exp(f(u.numpy())) for f in BALANCING.values()], axis=0))
        np.testing.assert_allclose(mixture.log_g(u).numpy(), expected, atol=1e-12)
        monotone = random_function("monotone", seed=2)
        log_h = monotone.log_h(torch.linspace(-30, 30, 301, dtype=torch.float64)).numpy()
    assert np.all(np.diff(log_h) >= -1e-12)  # h non-decreasing in t
    tiny_t = np.array([-60.0, -40.0])
    flat = monotone.compiled().log_g(tiny_t)
    assert abs(flat[0] - flat[1]) < 1e-12  # g(t) → h(0)/2 > 0 as t → 0
    strict = make_parametrization("monotone", positive_at_zero=False, blocks=4).compiled().log_g(tiny_t)
    assert strict[0] - strict[1] == pytest.approx(-20.0, abs=1e-6)  # g(t) → 0 like t


# -- exactness -----------------------------------------------------------------------------------------
FROZEN_CASES = [("lsb", p) for p in LEARNED] + [("flsb", p) for p in LEARNED]


@pytest.mark.parametrize("name, parametrization", FROZEN_CASES)
def test_frozen_sampler_with_random_theta_is_exact(name, parametrization, tiny_target):
    if name == "flsb" and not tiny_target.differentiable:
        with pytest.raises(ValueError, match="differentiable"):
            samplers.make(name, tiny_target)
        return
    sampler = frozen(name, tiny_target, parametrization)
    assert not sampler.adapting and sampler.frozen_at == 0
    assert sampler.balancing_state() == random_theta(parametrization, seed=17)
    pi = stationary_distribution(tiny_target)
    T = transition_matrix(sampler)
    assert_invariant(T, pi)


def _k_step_check(target, build):
    pi = stationary_distribution(target)
    k, mu_k = steps_to_converge(transition_matrix(build(n_chains=1)), pi)
    sampler = build(n_chains=10_000)
    for _ in range(k):
        record = sampler.step()
    np.testing.assert_allclose(sampler.log_p, target.log_prob(sampler.states), atol=1e-9)
    codes = targets.state_codes(record.states)
    assert chi_square_p_value(codes, mu_k, 10_000) > 1e-4
    assert chi_square_p_value(codes, pi, 10_000) > 1e-4


@pytest.mark.parametrize("name, parametrization", [("lsb", "lsb2"), ("lsb", "monotone"), ("flsb", "lsb1")])
def test_frozen_vectorised_steps_sample_the_exact_k_step_distribution(name, parametrization):
    target = TINY_TARGETS["frustrated_boltzmann"]()
    _k_step_check(target, lambda n_chains: frozen(name, target, parametrization, seed=7, n_chains=n_chains))


@pytest.mark.parametrize("name", ["lsb", "flsb"])
def test_the_learning_step_kernel_is_exact_when_theta_stands_still(name):
    """The learning path (batched proposals, patched normalisers, MH with θ₀) is a correct MH kernel."""
    target = TINY_TARGETS["frustrated_boltzmann"]()

    def build(n_chains):
        return samplers.make(name, target, parametrization="lsb1", keep_adapting=True, learning_rate=1e-300,
                             n_chains=n_chains, seed=7, theta=random_theta("lsb1", seed=4))

    assert build(1).adapting
    _k_step_check(target, build)


def test_long_lsb_run_reproduces_exact_marginals_after_learning():
    target = TINY_TARGETS["ising1d"]()
    exact = stationary_distribution(target) @ target.enumerate()[0]
    sampler = samplers.make("lsb", target, parametrization="lsb2", burn_in=500, n_chains=8, seed=3)
    trace = samplers.run(sampler, 4500, keep_states_every=1)
    assert sampler.frozen_at == 500
    draws = trace.states[1000:].astype(float)
    for site in range(target.dim):
        series = draws[:, :, site].T
        standard_error = series.std() / np.sqrt(max(samplers.diagnostics.ess.ess(series), 1.0))
        assert abs(series.mean() - exact[site]) < 5 * standard_error


# -- the objective ---------------------------------------------------------------------------------------
def _reference_log_g(function, u):
    """log g_θ(u) as the sampler uses it, in plain torch: LSB1's exact mixture, else the knots interpolated."""
    u = np.asarray(u, dtype=np.float64)
    if function.code == MIXTURE:
        return function.log_g(torch.as_tensor(u))
    position = (np.clip(u, -KNOT_SPAN, KNOT_SPAN) + KNOT_SPAN) / KNOT_SPACING
    k = np.minimum(np.floor(position).astype(int), int(2 * KNOT_SPAN / KNOT_SPACING) - 1)
    w = torch.as_tensor(position - k)
    knots = function.compiled_parameters()
    return (1 - w) * knots[k] + w * knots[k + 1] + torch.as_tensor(np.maximum(u - KNOT_SPAN, 0.0))


def _eq5_by_hand(function, log_eta, target, x, j, k):
    """Eq. 5 (case b) for one chain, p̃ relative to p̃(x), written from the definitions with plain autograd."""
    def log_q_row(state):
        log_g = _reference_log_g(function, target.delta_log_prob(state[None])[0])
        return log_g - torch.logsumexp(log_g, 0)

    def log_acceptance(state, site):
        other = flip(state[None], np.array([site]))[0]
        log_t = float(target.log_prob(other[None])[0] - target.log_prob(state[None])[0])
        return torch.clamp(log_t + log_q_row(other)[site] - log_q_row(state)[site], max=0.0), log_t

    log_q = log_q_row(x)
    log_a, log_t = log_acceptance(x, j)
    weight = torch.exp(log_q[j] - log_q[j].detach())
    transition = weight * torch.exp(log_a) * (log_a + log_q[j] - log_t)
    rejection = 1 - torch.exp(log_acceptance(x, k)[0] + log_q[k])
    return transition + rejection * (torch.exp(log_eta) * rejection - log_eta - 1)


def _compiled_objective(way, function, log_eta, target, x, j, k, full_patch=False):
    """(L̂, its θ- and log η-gradients, log Q forward/reverse) from the sampler's compiled kernels, for flips j and
    probes k: ``way`` "dense" or "trees"; ``full_patch`` lists every site's ratio at x' and x* (as FLSB does)."""
    n = x.shape[0]
    kernel = function.compiled()
    ratios = np.ascontiguousarray(target.delta_log_prob(x))
    patches = []
    for idx in (j, k):
        if full_patch:
            patches.append((np.ascontiguousarray(np.broadcast_to(np.arange(target.dim), x.shape)),
                            target.delta_log_prob(flip(x, idx))))
        else:
            patches.append(target.delta_after_flip(x, ratios, idx))
    log_p = target.log_prob(x)
    log_t, log_t_probe = target.log_prob(flip(x, j)) - log_p, target.log_prob(flip(x, k)) - log_p
    log_q, grad = np.empty((n, 2)), np.zeros(kernel.values.size)
    if way == "dense":
        _, dense = dense_proposals(ratios, *kernel.arguments, np.random.default_rng(0))
        loss, grad_eta = dense_learning_terms(ratios, *dense, *kernel.arguments, j, *patches[0], k, *patches[1],
                                              log_t, log_t_probe, float(log_eta), log_q, grad)
    else:
        trees = LogSumTree(mixture_component_log_g(ratios))
        loss, grad_eta = mixture_tree_learning_terms(*trees.arrays, ratios, kernel.values, j, *patches[0], k,
                                                     *patches[1], log_t, log_t_probe, float(log_eta), log_q, grad)
    return loss / n, function.parameter_gradients(function.compiled_parameters(), grad / n), grad_eta / n, log_q


OBJECTIVE_CASES = [("dense", p, full) for p in LEARNED for full in (False, True)] + [("trees", "lsb1", False)]


@pytest.mark.parametrize("way, parametrization, full_patch", OBJECTIVE_CASES)
def test_compiled_objective_and_gradient_match_eq5_with_plain_autograd(way, parametrization, full_patch):
    target = TINY_TARGETS["frustrated_boltzmann"]()
    function = random_function(parametrization, seed=8, scale=0.8)
    log_eta = torch.tensor(0.3, dtype=torch.float64, requires_grad=True)
    rng = np.random.default_rng(0)
    x = rng.integers(0, 2, size=(4, target.dim), dtype=np.uint8)
    j, k = rng.integers(0, target.dim, 4), rng.integers(0, target.dim, 4)
    reference = torch.stack([_eq5_by_hand(function, log_eta, target, x[i], j[i], k[i]) for i in range(4)]).mean()
    reference_grad = torch.autograd.grad(reference, [*function.parameters(), log_eta])
    loss, grads, grad_eta, log_q = _compiled_objective(way, function, log_eta.item(), target, x, j, k, full_patch)
    assert loss == pytest.approx(reference.item(), rel=1e-12)
    for ours, theirs in zip([*grads, grad_eta], reference_grad):
        np.testing.assert_allclose(ours, theirs.numpy(), rtol=1e-9, atol=1e-12)
    rows = np.arange(4)
    with torch.no_grad():
        for i in rows:  # the proposal probabilities the MH test uses
            log_g = _reference_log_g(function, target.delta_log_prob(x[i:i + 1])[0])
            assert log_q[i, 0] == pytest.approx(float(log_g[j[i]] - torch.logsumexp(log_g, 0)), abs=1e-12)


# -- the samplers ------------------------------------------------------------------------------------------
def test_flsb_with_fixed_sqrt_is_gibbs_with_gradients():
    target = targets.make("rbm")
    gwg = samplers.make("gwg", target, n_chains=4, seed=5)
    flsb = samplers.make("flsb", target, n_chains=4, seed=5, parametrization="fixed", balancing="sqrt")
    for _ in range(200):
        a, b = gwg.step(), flsb.step()
        np.testing.assert_array_equal(a.states, b.states)
        np.testing.assert_array_equal(a.proposed, b.proposed)
    assert gwg.n_evals == flsb.n_evals


def test_lsb_with_a_fixed_function_is_locally_balanced():
    target = targets.make("ising_segmentation", size=6, lam=1.0)
    lb = samplers.make("locally_balanced", target, n_chains=3, seed=2, balancing="barker")
    lsb = samplers.make("lsb", target, n_chains=3, seed=2, parametrization="fixed", balancing="barker")
    for _ in range(100):
        np.testing.assert_array_equal(lb.step().states, lsb.step().states)


def test_burn_in_learns_then_freezes_and_counts_evaluations():
    target = targets.make("ising_segmentation", size=10, lam=1.0)
    sampler = samplers.make("lsb", target, n_chains=4, seed=0, parametrization="lsb1", burn_in=30)
    degree = 4
    before = sampler.n_evals
    sampler.step()
    # one learning step: the ratios that change at x' and at x* — at most 2·(1 + deg) per chain
    assert 0 < sampler.n_evals - before <= 4 * 2 * (1 + degree)
    weights = []
    for _ in range(29):
        sampler.step()
        weights.append(sampler.learner.function.describe()["w_sqrt"])
    assert sampler.adapting and len(set(weights)) > 1
    theta = sampler.balancing_state()
    sampler.step()
    assert not sampler.adapting and sampler.frozen_at == 30
    for _ in range(20):
        sampler.step()
    assert sampler.balancing_state() == theta
    history = sampler.learner.history.snapshot()
    assert history["step"].tolist() == list(range(30))
    assert set(history) == {"step", "loss", "eta", "w_barker", "w_sqrt", "w_min", "w_max"}
    assert np.all(np.isfinite(history["loss"])) and np.all(history["eta"] > 0)


@pytest.mark.parametrize("parametrization", ["lsb1", "lsb2"])
def test_the_authors_schedule_makes_several_learning_moves_per_step(parametrization):
    """learning_moves=2 with burn-in K is, move for move, learning_moves=1 with burn-in 2K: a step is two moves."""
    target = targets.make("ising_segmentation", size=8, lam=1.0, field="authors", periodic=True)
    common = dict(n_chains=5, seed=3, parametrization=parametrization)
    authors = samplers.make("lsb", target, burn_in=15, learning_moves=2, **common)
    ours = samplers.make("lsb", target, burn_in=30, **common)
    for _ in range(15):
        record = authors.step()
    for _ in range(30):
        last = ours.step()
    np.testing.assert_array_equal(authors.states, ours.states)
    np.testing.assert_array_equal(record.accepted, last.accepted)
    assert authors.n_evals == ours.n_evals and authors.learner.updates == ours.learner.updates == 30
    assert authors.balancing_state() == ours.balancing_state()
    authors.step(), ours.step()
    assert authors.frozen_at == 15 and ours.frozen_at == 30
    for _ in range(10):
        np.testing.assert_array_equal(authors.step().states, ours.step().states)


def test_lsb1_mixture_trees_follow_the_chains_through_learning_and_uniform_draws():
    target = targets.make("ising_segmentation", size=8, lam=1.0, seed=1)
    sampler = samplers.make("lsb", target, n_chains=6, seed=4, parametrization="lsb1", burn_in=200,
                            uniform_mixture=0.3)
    for _ in range(150):
        sampler.step()
    trees = sampler._components
    expected = LogSumTree(mixture_component_log_g(sampler._delta))
    np.testing.assert_array_equal(trees.log_leaves, expected.log_leaves)
    np.testing.assert_allclose(trees.log_total, expected.log_total, rtol=0, atol=1e-9)
    np.testing.assert_allclose(sampler._delta, target.delta_log_prob(sampler.states), atol=1e-9)
    for _ in range(60):
        sampler.step()
    assert not sampler.adapting and sampler._components is None  # frozen: one tree of the learned mixture


def test_black_box_learning_step_costs_od_and_flsb_costs_two():
    box = TINY_TARGETS["blackbox"]()
    lsb = samplers.make("lsb", box, n_chains=3, seed=0, burn_in=5)
    before = lsb.n_evals
    lsb.step()
    assert lsb.n_evals - before == 3 * 2 * box.dim
    flsb = samplers.make("flsb", targets.make("rbm"), n_chains=3, seed=0, burn_in=5)
    before = flsb.n_evals
    flsb.step()
    assert flsb.n_evals - before == 3 * 2
    for _ in range(5):
        flsb.step()
    before = flsb.n_evals
    flsb.step()
    assert not flsb.adapting and flsb.n_evals - before == 3


def test_freeze_now_keep_adapting_and_history_bound():
    target = targets.make("ising_segmentation", size=6)
    sampler = samplers.make("lsb", target, n_chains=2, seed=0, parametrization="lsb2", keep_adapting=True, burn_in=0)
    assert sampler.adapting
    for _ in range(10):
        sampler.step()
    sampler.freeze()
    assert sampler.frozen_at == 10 and not sampler.adapting
    np.testing.assert_array_equal(sampler.log_g(np.array([0.5])), sampler.learner.kernel.log_g(np.array([0.5])))
    from samplers.common.history import BoundedHistory
    history = BoundedHistory(["loss", "eta"], capacity=8)
    for step in range(100):
        history.append(step, [float(step), 1.0])
    steps = history.snapshot()["step"]
    assert len(steps) <= 8 and steps[-1] >= 80 and len(set(np.diff(steps))) == 1  # evenly spaced


def test_same_seed_same_learning_and_different_seed_differs():
    target = targets.make("ising_segmentation", size=6, lam=1.0)
    runs = [samplers.make("lsb", target, n_chains=3, seed=s, parametrization="lsb2", burn_in=40) for s in (1, 1, 2)]
    for sampler in runs:
        samplers.run(sampler, 60)
    assert runs[0].balancing_state() == runs[1].balancing_state()
    assert runs[0].balancing_state() != runs[2].balancing_state()


def test_uniform_part_of_q1_keeps_the_chain_in_place():
    target = TINY_TARGETS["frustrated_boltzmann"]()
    sampler = samplers.make("lsb", target, n_chains=50, seed=0, uniform_mixture=0.999, burn_in=10)
    before = sampler.states.copy()
    record = sampler.step()
    stayed = ~record.accepted
    assert stayed.sum() > 40
    np.testing.assert_array_equal(record.states[stayed], before[stayed])
    np.testing.assert_allclose(record.proposed_log_prob, target.log_prob(record.proposed), atol=1e-9)


@pytest.mark.parametrize("params, message", [
    ({"parametrization": "lsb3"}, "parametrization"),
    ({"optimizer": "rmsprop"}, "optimizer"),
    ({"learning_rate": 0.0}, "learning_rate"),
    ({"burn_in": -1}, "burn_in"),
    ({"uniform_mixture": 1.0}, "uniform_mixture"),
])
def test_bad_parameters_raise_clear_errors(params, message):
    with pytest.raises(ValueError, match=message):
        samplers.make("lsb", targets.make("ising1d"), **params)


def test_theta_is_validated():
    def build(**params):
        return samplers.make("lsb", targets.make("ising1d"), burn_in=0, **params)

    with pytest.raises(ValueError, match="keys"):
        build(parametrization="lsb1", theta={"w1": [1.0]})
    with pytest.raises(ValueError, match="finite"):
        build(parametrization="lsb1", theta={"theta": [0.0, np.nan, 0.0, 0.0]})
    with pytest.raises(ValueError, match="shape"):
        build(parametrization="lsb1", theta={"theta": [0.0, 0.0]})
    with pytest.raises(ValueError, match="fixed"):
        build(parametrization="fixed", theta={})


def test_non_finite_updates_are_skipped_or_undone_and_counted(monkeypatch):
    target = targets.make("ising_segmentation", size=6, lam=1.0)
    sampler = samplers.make("lsb", target, n_chains=4, seed=0, parametrization="lsb2", burn_in=50)
    sampler.step()
    learner = sampler.learner
    theta = sampler.balancing_state()
    gradient = np.full(learner.kernel.values.size, 1e-3)
    assert np.isnan(learner.update(np.nan, gradient, 0.0, step=1)) and learner.skipped == 1
    assert learner.update(0.5, gradient * np.inf, 0.0, step=1) == 0.5 and learner.skipped == 2
    assert sampler.balancing_state() == theta

    compiled_parameters = learner.function.compiled_parameters
    calls = iter([lambda: compiled_parameters() * np.inf])
    monkeypatch.setattr(learner.function, "compiled_parameters", lambda: next(calls, compiled_parameters)())
    assert learner.update(0.5, gradient, 0.0, step=2) == 0.5 and learner.skipped == 3
    assert sampler.balancing_state() == theta  # the step that made g infinite was undone
    assert np.all(np.isfinite(learner.kernel.values))
    samplers.run(sampler, 60)
    np.testing.assert_allclose(sampler.log_p, target.log_prob(sampler.states), atol=1e-9)


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_the_learners_optimisers_take_torch_optims_steps(name):
    """``samplers.lsb.optimizers`` is torch.optim's SGD (momentum 0.9) and Adam, step for step, on two arrays."""
    rng = np.random.default_rng(3)
    start = [rng.normal(size=(3, 2)), rng.normal(size=())]
    ours = [array.copy() for array in start]
    theirs = [torch.tensor(array, requires_grad=True) for array in start]
    optimiser = OPTIMIZERS[name](0.05)
    reference = (torch.optim.SGD(theirs, lr=0.05, momentum=0.9) if name == "sgd"
                 else torch.optim.Adam(theirs, lr=0.05))
    for step in range(40):
        gradients = [rng.normal(size=array.shape) * 10.0 ** rng.integers(-4, 2) for array in start]
        if step == 25:  # what a learner does after a step it undid
            optimiser.reset()
            reference.state.clear()
        optimiser.step(ours, gradients)
        for tensor, gradient in zip(theirs, gradients):
            tensor.grad = torch.as_tensor(gradient)
        reference.step()
        for array, tensor in zip(ours, theirs):
            np.testing.assert_allclose(array, tensor.detach().numpy(), rtol=1e-13, atol=1e-15)


def test_lsb1_learning_moves_on_a_pairwise_model_match_the_generic_move(monkeypatch):
    """The one-call learning move of a sparse pairwise model (``mixture_tree_pairwise_learning_moves``) draws the
    same random numbers and computes the same move, terms and update as the generic move."""
    target = targets.make("ising_segmentation", size=7, lam=1.0, mu=1.0, sigma=2.0, seed=3)

    def learn(steps=40):
        sampler = samplers.make("lsb", target, n_chains=5, seed=11, parametrization="lsb1", keep_adapting=True,
                                learning_rate=0.5)
        records = [sampler.step() for _ in range(steps)]
        return sampler, records

    fused, fused_records = learn()
    evaluations = fused.n_evals
    monkeypatch.setattr(type(target), "flip_tables", property(lambda self: None))
    generic, generic_records = learn()
    assert generic._components is not None and fused.learner.updates == generic.learner.updates == 40
    for ours, theirs in zip(fused_records, generic_records):
        np.testing.assert_array_equal(ours.accepted, theirs.accepted)
        np.testing.assert_array_equal(ours.proposed_sites, theirs.proposed_sites)
        np.testing.assert_allclose(ours.proposed_log_prob, theirs.proposed_log_prob, rtol=1e-12)
    np.testing.assert_array_equal(fused.states, generic.states)
    np.testing.assert_allclose(fused._delta, generic._delta, atol=1e-12)
    np.testing.assert_allclose(fused.learner.function.theta.detach().numpy(),
                               generic.learner.function.theta.detach().numpy(), rtol=1e-10)
    np.testing.assert_allclose(fused._components.log_total, generic._components.log_total, rtol=1e-12)
    assert evaluations == generic.n_evals
    assert 0 < np.mean([record.accepted.mean() for record in fused_records]) < 1
