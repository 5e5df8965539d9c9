"""Exactness tests of the markov_network target against brute-force table lookups, and of the shipped networks."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from targets.base import all_states
from targets.markov_network import MarkovNetwork, shipped_networks
from targets.uai import UAIModel, format_uai

#: Five binary variables; scopes in arbitrary order, one factor with an entry 0.
TINY = UAIModel(
    5,
    [2] * 5,
    ([0], [1, 2], [2, 3, 4], [4, 0], [3, 1, 0]),
    (
        [1.0, 3.0],
        [[2.0, 0.5], [1.0, 4.0]],
        np.linspace(0.2, 1.6, 8),
        [[1.0, 0.0], [2.0, 0.5]],  # φ(x4 = 0, x0 = 1) = 0
        [0.7, 1.3, 0.4, 2.2, 1.1, 0.9, 3.0, 0.6],
    ),
)


def brute_log_prob(model: UAIModel, states: np.ndarray) -> np.ndarray:
    """log Π_f table_f[x_scope] for full assignments, one lookup per state and factor."""
    with np.errstate(divide="ignore"):
        return np.log([np.prod([t[tuple(x[s])] for s, t in zip(model.scopes, model.tables)]) for x in states])


def brute_flip_deltas(model: UAIModel, target: MarkovNetwork, x: np.ndarray) -> np.ndarray:
    """log p̃(flip_i x) − log p̃(x) for every free variable i, by brute force on full assignments."""
    base = brute_log_prob(model, target.full_assignment(x))
    columns = []
    for i in range(target.dim):
        flipped = x.copy()
        flipped[:, i] ^= 1
        columns.append(brute_log_prob(model, target.full_assignment(flipped)) - base)
    return np.stack(columns, axis=1)


@pytest.fixture
def tiny() -> MarkovNetwork:
    return MarkovNetwork(uai_text=format_uai(TINY))


def test_log_prob_matches_brute_force_over_all_states(tiny):
    states, log_p = tiny.enumerate()
    assert tiny.dim == 5 and tiny.image_shape is None
    np.testing.assert_allclose(log_p, brute_log_prob(TINY, states), rtol=1e-13)
    assert np.isneginf(log_p).sum() == 8  # x4 = 0 and x0 = 1, x1..x3 free
    np.testing.assert_allclose(tiny.log_prob(states), log_p)
    assert tiny.n_evals == len(states)


def test_delta_log_prob_matches_brute_force_flips(tiny):
    states, log_p = tiny.enumerate()
    x = states[np.isfinite(log_p)]
    delta = tiny.delta_log_prob(x)
    np.testing.assert_allclose(delta, brute_flip_deltas(TINY, tiny, x), rtol=1e-12, atol=1e-12)
    assert np.isneginf(delta).any()  # flips into the zero entry
    assert delta.flags.c_contiguous and tiny.n_evals == x.size


def test_evidence_clamps_variables_and_conditions_the_factors(tiny):
    tiny = tiny.with_params(evidence={1: 1, "3": 0})  # string keys, as after a JSON round trip
    assert tiny.dim == 3
    np.testing.assert_array_equal(tiny.free_variables, [0, 2, 4])
    states, log_p = tiny.enumerate()
    full = tiny.full_assignment(states)
    np.testing.assert_array_equal(full[:, [1, 3]], np.tile([1, 0], (len(states), 1)))
    np.testing.assert_array_equal(full[:, [0, 2, 4]], states)
    # log p̃ of a free state is that of its full assignment, so the conditional is exact.
    np.testing.assert_allclose(log_p, brute_log_prob(TINY, full), rtol=1e-13)
    joint = all_states(5)
    p = np.exp(brute_log_prob(TINY, joint))
    observed = (joint[:, 1] == 1) & (joint[:, 3] == 0)
    conditional = p[observed] / p[observed].sum()
    np.testing.assert_allclose(np.exp(log_p) / np.exp(log_p).sum(), conditional, rtol=1e-12)
    x = states[np.isfinite(log_p)]
    np.testing.assert_allclose(tiny.delta_log_prob(x), brute_flip_deltas(TINY, tiny, x), rtol=1e-12, atol=1e-12)


def test_evidence_clamping_whole_factors_keeps_their_constant(tiny):
    tiny = tiny.with_params(evidence={0: 0, 4: 1, 3: 1})  # clamps the scopes (0,) and (4, 0) entirely
    states, log_p = tiny.enumerate()
    np.testing.assert_allclose(log_p, brute_log_prob(TINY, tiny.full_assignment(states)), rtol=1e-13)


@pytest.mark.parametrize(
    "evidence, message",
    [
        ({0: 1, 4: 0}, "probability zero"),
        ({5: 1}, "not a distinct variable in 0..4"),
        ({0: 2}, "not a distinct variable in 0..4"),
        ({0: 1, "0": 1}, "not a distinct variable in 0..4"),
        ({"a": 1}, "evidence must map variable indices to 0/1"),
        ({0: 0.5}, "evidence must map variable indices to 0/1"),
        (dict.fromkeys(range(5), 1), "clamps every variable"),
    ],
)
def test_invalid_evidence_raises(evidence, message):
    with pytest.raises(ValueError, match=message):
        MarkovNetwork(uai_text=format_uai(TINY), evidence=evidence)


def test_non_binary_variables_are_rejected():
    ternary = UAIModel(2, [2, 3], ([0, 1],), (np.ones(6),))
    with pytest.raises(ValueError, match="binary variables only; variable 1 has cardinality 3"):
        MarkovNetwork(uai_text=format_uai(ternary))


def test_malformed_upload_reports_the_line():
    with pytest.raises(ValueError, match="^line 1, token 'BAYES'"):
        MarkovNetwork(uai_text="BAYES 1 2 0")


@st.composite
def binary_networks(draw):
    """Random binary networks with factors of arity 0–4 (positive entries) and random evidence."""
    n_vars = draw(st.integers(2, 7))
    scope = st.lists(st.integers(0, n_vars - 1), unique=True, max_size=4)
    scopes = draw(st.lists(scope, min_size=1, max_size=8))
    entries = st.floats(0.01, 100.0)
    tables = [np.array(draw(st.lists(entries, min_size=2 ** len(s), max_size=2 ** len(s)))) for s in scopes]
    clamped = draw(st.lists(st.integers(0, n_vars - 1), unique=True, max_size=n_vars - 1))
    evidence = {v: draw(st.integers(0, 1)) for v in clamped}
    return UAIModel(n_vars, [2] * n_vars, tuple(scopes), tuple(tables)), evidence


@settings(max_examples=60, deadline=None)
@given(binary_networks())
def test_random_networks_match_brute_force(network):
    model, evidence = network
    target = MarkovNetwork(uai_text=format_uai(model), evidence=evidence)
    states, log_p = target.enumerate()
    # atol: a sum of logs and the log of a product differ by a few ulps where log p̃ ≈ 0 (e.g. log 100 + log 0.01).
    np.testing.assert_allclose(log_p, brute_log_prob(model, target.full_assignment(states)), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(
        target.delta_log_prob(states), brute_flip_deltas(model, target, states), rtol=1e-10, atol=1e-10
    )


def test_shipped_networks_are_the_sorted_selector_objects():
    names = shipped_networks()
    assert len(names) >= 3
    assert MarkovNetwork.param.network.objects == names
    assert MarkovNetwork().network == names[0]


@pytest.mark.parametrize("name", shipped_networks())
def test_shipped_network_loads_with_dim_100_and_finite_log_prob(name):
    target = MarkovNetwork(network=name)
    assert target.dim == 100 and target.image_shape == (10, 10)
    assert set(target.model.cardinalities.tolist()) == {2}
    x = np.random.default_rng(0).integers(0, 2, size=(200, 100), dtype=np.uint8)
    log_p = target.log_prob(x)
    assert np.isfinite(log_p).all()
    np.testing.assert_allclose(log_p, brute_log_prob(target.model, x), rtol=1e-12)
    np.testing.assert_allclose(
        target.delta_log_prob(x[:5]), brute_flip_deltas(target.model, target, x[:5]), rtol=1e-9, atol=1e-9
    )


def test_uai_text_overrides_the_network_and_with_params_rebuilds():
    target = MarkovNetwork()
    assert target.dim == 100
    uploaded = target.with_params(uai_text=format_uai(TINY))
    assert uploaded.dim == 5
    clamped = uploaded.with_params(uai_text=None, evidence={7: 1})
    assert clamped.dim == 99 and 7 not in clamped.free_variables and clamped.image_shape is None
    assert (target.dim, uploaded.dim) == (100, 5)
