"""The adaptive-sampler contract (``samplers.common.adaptive``), the same for LSB, FLSB and adaptive intracluster.

1. ``freeze()`` means one thing: ``adapting`` turns off, ``frozen_at`` is the
   step, ``frozen_params()`` goes from None to the kernel's parameters;
   idempotent; automatic at ``burn_in`` (at once for a burn-in of 0); a reset
   adapts again. A configuration that never adapts has ``frozen_params() == {}``.
2. ``config()`` is the requested settings, identical before and after
   freezing, and replaying it with the same seed repeats the run step for
   step, through the freeze.
3. ``frozen_params()`` merged over the requested parameters builds the frozen
   kernel from step 0 (a sampler that starts frozen, or, for intracluster, one
   that does not adapt): from the frozen chains' states the rebuilt sampler's
   ``transition_row`` equals the frozen one's to 1e-12, and with the same
   random numbers it takes the same steps.
"""

from __future__ import annotations

import numpy as np
import pytest

import samplers
import targets
from targets.base import state_codes
from tests.tiny import TINY_TARGETS

BURN_IN = 20
#: (sampler, target, requested parameters): each adapts for BURN_IN steps from a start the adaptation moves away from.
ADAPTIVE = {
    "intracluster": ("intracluster", lambda: targets.make("ising_lattice", size=3, beta=0.6, J=1.0, h=0.3),
                     dict(n_active=4, walk_length=(1, 3), gamma=2.0, order="random", adapt=True)),
    "lsb-lsb1": ("lsb", TINY_TARGETS["frustrated_boltzmann"], dict(parametrization="lsb1", learning_rate=0.1)),
    "lsb-lsb2": ("lsb", TINY_TARGETS["frustrated_boltzmann"], dict(parametrization="lsb2", hidden_units=6)),
    "flsb-lsb2": ("flsb", TINY_TARGETS["frustrated_boltzmann"], dict(parametrization="lsb2", hidden_units=6)),
}
NEVER_ADAPTIVE = [("intracluster", dict(n_active=4)), ("lsb", dict(parametrization="fixed")),
                  ("flsb", dict(parametrization="fixed"))]


def build(case: str, **overrides) -> samplers.Sampler:
    name, target, params = ADAPTIVE[case]
    return samplers.make(name, target(), n_chains=4, seed=3, **{"burn_in": BURN_IN, **params, **overrides})


def run_states(sampler, n_steps: int) -> list[np.ndarray]:
    states = []
    for _ in range(n_steps):
        sampler.step(record=False)
        states.append(sampler.states.copy())
    return states


def next_state_distribution(sampler, x) -> dict[int, float]:
    """``transition_row(x)`` as next-state code → probability (a state listed several times summed)."""
    states, probs = sampler.transition_row(x)
    out: dict[int, float] = {}
    for code, p in zip(state_codes(states), probs):
        out[int(code)] = out.get(int(code), 0.0) + float(p)
    return out


@pytest.mark.parametrize("case", ADAPTIVE)
def test_freeze_means_the_same_for_every_adaptive_sampler(case):
    sampler = build(case)
    assert sampler.adapting and sampler.frozen_at is None and sampler.frozen_params() is None
    run_states(sampler, 5)
    assert sampler.adapting
    sampler.freeze()
    assert not sampler.adapting and sampler.frozen_at == 5
    kernel = sampler.frozen_params()
    assert isinstance(kernel, dict) and kernel
    sampler.freeze()  # idempotent
    run_states(sampler, BURN_IN + 5)  # past burn_in too: nothing changes any more
    assert not sampler.adapting and sampler.frozen_at == 5 and sampler.frozen_params() == kernel

    sampler.reset()  # adapts again from the requested settings
    assert sampler.adapting and sampler.frozen_at is None
    run_states(sampler, BURN_IN)
    assert sampler.adapting
    run_states(sampler, 1)
    assert not sampler.adapting and sampler.frozen_at == BURN_IN

    at_once = build(case, burn_in=0)
    assert not at_once.adapting and at_once.frozen_at == 0 and at_once.frozen_params() is not None


@pytest.mark.parametrize("name, params", NEVER_ADAPTIVE)
def test_a_configuration_that_never_adapts_has_nothing_to_freeze(name, params):
    sampler = samplers.make(name, TINY_TARGETS["frustrated_boltzmann"](), n_chains=2, seed=0, **params)
    assert not sampler.adapting and sampler.frozen_at is None and sampler.frozen_params() == {}
    sampler.step()
    sampler.freeze()
    assert not sampler.adapting and sampler.frozen_at is None and sampler.frozen_params() == {}


@pytest.mark.parametrize("case", ADAPTIVE)
def test_config_is_the_request_and_replays_the_run_through_the_freeze(case):
    sampler = build(case)
    requested = sampler.config()
    states = run_states(sampler, BURN_IN // 2)
    assert sampler.config() == requested
    states += run_states(sampler, BURN_IN)
    assert sampler.frozen_at == BURN_IN and sampler.config() == requested
    replay = samplers.make(requested["sampler"], sampler.target, **requested["params"])
    for expected, again in zip(states, run_states(replay, len(states))):
        np.testing.assert_array_equal(again, expected)
    assert replay.frozen_at == BURN_IN and replay.frozen_params() == sampler.frozen_params()


@pytest.mark.parametrize("case", ADAPTIVE)
def test_frozen_params_rebuild_the_frozen_kernel(case):
    sampler = build(case)
    name = sampler.registry_name
    run_states(sampler, 12)
    sampler.freeze()
    kernel = sampler.frozen_params()
    initial = build(case, burn_in=0).frozen_params()  # the kernel had it frozen before adapting
    assert kernel != initial, "the adaptation should have moved the kernel"

    fixed = {**sampler.config()["params"], **kernel}
    rebuilt = samplers.make(name, sampler.target, init=sampler.states, **fixed)
    assert not rebuilt.adapting and {**rebuilt.config()["params"], **rebuilt.frozen_params()} == fixed
    for x in sampler.states:
        frozen_row, rebuilt_row = next_state_distribution(sampler, x), next_state_distribution(rebuilt, x)
        assert set(frozen_row) == set(rebuilt_row)
        for code, p in frozen_row.items():
            assert rebuilt_row[code] == pytest.approx(p, abs=1e-12, rel=0)
    rebuilt.rng.bit_generator.state = sampler.rng.bit_generator.state
    for expected, again in zip(run_states(sampler, 20), run_states(rebuilt, 20)):
        np.testing.assert_array_equal(again, expected)
