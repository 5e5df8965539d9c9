"""Every registered sampler, read from the registry and its class's facts, passes the same checks
(``tests/conformance.py``): its exact kernel is π-invariant, reversible where it says so, irreducible and
aperiodic; its vectorised steps reach π's marginals; it counts every evaluation of a black box; its inspector
shows the kind of move its facts name. A sampler added to the registry is checked without editing this file,
and a planted reducible kernel — pair flips, which never change a state's parity — fails."""

from __future__ import annotations

import numpy as np
import pytest

import samplers
import targets
from samplers.base import ExactCase, Move, Sampler, SamplerFacts, metropolis_accept
from samplers.diagnostics.inspection import inspect_move
from samplers.common.exact import transition_matrix
from tests.conformance import (assert_counts_every_evaluation, assert_exact_kernel, assert_invariant,
                               assert_long_run_marginals, build, counting_black_box, exact_target)

EXACT_CASES = [(name, case) for name in samplers.available() for case in samplers.sampler_class(name).facts.exact]


def case_id(name: str, case: ExactCase) -> str:
    return f"{name}-{case.target}-" + "-".join(f"{key}={value}" for key, value in case.params.items())


def test_every_registered_sampler_states_its_facts_and_an_exact_case():
    for name in samplers.available():
        facts = samplers.sampler_class(name).facts
        assert facts is not Sampler.facts, f"{name} states no facts of its own (samplers.base.SamplerFacts)"
        assert facts.exact, f"{name} names no setting for its exact kernel"


@pytest.mark.parametrize("name, case", EXACT_CASES, ids=[case_id(*c) for c in EXACT_CASES])
def test_the_exact_kernel_is_invariant_reversible_as_claimed_irreducible_and_aperiodic(name, case):
    assert_exact_kernel(build(name, case, n_chains=2, seed=0), samplers.sampler_class(name).facts.reversible)


@pytest.mark.parametrize("name", samplers.available())
def test_long_runs_of_the_vectorised_steps_reach_the_exact_marginals(name):
    case = samplers.sampler_class(name).facts.exact[0]
    assert_long_run_marginals(build(name, case, n_chains=8, seed=3))


@pytest.mark.parametrize("name", samplers.available())
def test_every_evaluation_of_a_black_box_is_counted(name):
    case = samplers.sampler_class(name).facts.exact[0]
    black_box, asked = counting_black_box(exact_target(case))
    asked.clear()
    try:
        sampler = samplers.make(name, black_box, n_chains=3, seed=1, **case.params)
    except ValueError as refusal:  # a sampler that needs a structure a black box has not (pairs, DAGs, a gradient)
        assert str(refusal), f"{name} refused a black box without saying why"
        pytest.skip(f"{name} refuses a black box: {refusal}")
    assert_counts_every_evaluation(sampler, asked)


@pytest.mark.parametrize("name", samplers.available())
def test_the_inspector_shows_the_move_the_facts_name(name):
    facts = samplers.sampler_class(name).facts
    target_name, target_params = facts.example_target
    sampler = samplers.make(name, targets.make(target_name, **target_params), n_chains=2, seed=4, **facts.example)
    before = sampler.states.copy()
    record = sampler.step()
    assert inspect_move(sampler, before[0], record, 0).kind == facts.inspection


# -- a planted reducible kernel -----------------------------------------------------------------------------------
class PairFlips(Sampler):
    """Metropolis on pair flips: flip two distinct sites drawn uniformly; symmetric, so accepted with min(1, p̃'/p̃).
    π-invariant and reversible, but a pair flip never changes the parity of the number of ones: the states of the
    other parity are never reached."""

    registry_name = "pair_flips"
    facts = SamplerFacts(exact=(ExactCase(),))

    def _pairs(self) -> np.ndarray:
        d = self.target.dim
        return np.array([(i, j) for i in range(d) for j in range(i + 1, d)])

    def _step(self):
        pairs = self._pairs()[self.rng.integers(len(self._pairs()), size=self.n_chains)]
        proposed = self.states.copy()
        proposed[np.arange(self.n_chains)[:, None], pairs] ^= 1
        proposed_log_prob = self.target.log_prob(proposed)
        accepted = metropolis_accept(proposed_log_prob - self.log_p, self.rng)
        self.states[accepted], self.log_p[accepted] = proposed[accepted], proposed_log_prob[accepted]
        return Move(accepted=accepted, proposed_sites=pairs,
                    proposed_values=proposed[np.arange(self.n_chains)[:, None], pairs], proposed_log_prob=proposed_log_prob)

    def transition_row(self, x):
        pairs = self._pairs()
        candidates = np.repeat(x[None], len(pairs), axis=0)
        candidates[np.arange(len(pairs))[:, None], pairs] ^= 1
        log_p = self.target._log_prob(np.vstack([x[None], candidates]))
        probs = np.exp(np.minimum(0.0, log_p[1:] - log_p[0])) / len(pairs)
        return self._with_stay(x, candidates, probs)


def test_a_planted_reducible_kernel_is_invariant_yet_fails_the_conformance_check():
    case = PairFlips.facts.exact[0]
    sampler = PairFlips(exact_target(case), n_chains=2, seed=0)
    with pytest.raises(AssertionError, match="reducible or periodic"):
        assert_exact_kernel(sampler, reversible=True)
    # what the exactness tests alone saw: a stochastic, π-invariant, reversible kernel
    states, log_p = sampler.exact_support()
    assert_invariant(transition_matrix(sampler, states), np.exp(log_p - np.logaddexp.reduce(log_p)))
