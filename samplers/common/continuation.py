"""Going on with a run on a changed target: the same sampler, from the chains' current states.

A target is immutable (``targets.base``), so "changing β while the run goes
on" means a new target and a new sampler on it. ``continue_on(sampler,
target, seed)`` builds that sampler: the same kind and requested parameters
(with an adaptive sampler's frozen kernel: a learned g or a tuned step size
stays as it was), started from the old sampler's states, with the step and
evaluation counts carried on. Each chain is then a Markov chain whose kernel
changes once, at that step, to one that leaves the new target invariant:
from there on it converges to the new target as any chain does from its
starting states. An adaptive sampler still adapting is refused (its kernel is
not yet fixed, so there is nothing valid to carry over): freeze it first.
"""

from __future__ import annotations

import numpy as np

from samplers.base import Sampler
from samplers.common.adaptive import Adaptive
from targets.base import Target


def derived_seed(seed: int, change: int) -> int:
    """The seed of the sampler after the ``change``-th change of a run seeded ``seed`` (reproducible, distinct)."""
    return int(np.random.SeedSequence([seed, change]).generate_state(1)[0])


def continue_on(sampler: Sampler, target: Target, seed: int) -> Sampler:
    """A sampler like ``sampler`` on ``target``, from its current states and counts (see the module docstring)."""
    if target.dim != sampler.target.dim:
        raise ValueError(f"the new target has dimension {target.dim}, the run's states {sampler.target.dim}")
    frozen = {}
    if isinstance(sampler, Adaptive):
        if sampler.adapting:
            raise ValueError(f"{sampler.registry_name} is still adapting its kernel: freeze it first (its kernel "
                             f"then carries over to the new target)")
        frozen = sampler.frozen_params()
    params = {**sampler.config()["params"], **frozen, "seed": seed}
    continued = type(sampler)(target, init=sampler.states, **params)
    continued.n_steps = sampler.n_steps
    continued.n_evals += sampler.n_evals
    return continued
