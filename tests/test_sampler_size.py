"""``Sampler.estimated_bytes``: the class-level memory estimate against the bytes a sampler really holds.

What is measured (``held_bytes``): every numpy array and torch tensor
reachable from the sampler's attributes — caches, sum-trees, walk records,
the learner's parameters, optimiser state, history and the autograd graph it
keeps between steps (tensors saved by the graph's nodes) — plus the arrays of
the last ``StepRecord`` (what a caller keeps). Views count once, as their
base buffer (a ``broadcast_to`` view costs its source, not its shape); the
target is not the sampler's and is skipped. Python objects and the random
generator (a few hundred bytes each) are not counted. A step's temporaries are
not held and are not measured either.

Bounds: measured ≤ estimate (the estimate is never below what is held) and
estimate ≤ 2 × measured + 64 kB (at most about 2× above, as
``Sampler.estimated_bytes`` promises; the 64 kB absorb the constant
per-sampler and per-chain allowances, which dominate only a sampler of a few
chains holding a few kB). Checked for every registered sampler at 3 chains and
at 2000 chains, where the per-chain caches dominate. Everything measured is
allocated deterministically from the shapes (walk records by the longest walk
drawn), so the bounds are not statistical. No timing.
"""

from __future__ import annotations

import numpy as np
import param
import pytest
import torch

import samplers
import targets
from targets.base import Target

SLACK = 64 * 2**10

#: Every registered sampler with its facts' example parameters on its example target (a 6×6 segmentation, pairwise
#: and sparse, so intracluster's auto backend builds its sum-trees; a DAG target for the DAG samplers), and the
#: variants whose per-chain caches differ from the example's.
VARIANTS = [
    ("block_gibbs", {"block_size": 4}),
    ("hamming_ball", {"block_size": 6, "radius": 2}),
    ("locally_balanced", {"record_neighbours": True}),
    ("lsb", {"parametrization": "lsb1", "burn_in": 10}),  # measured while learning: the mixture trees are held
    ("lsb", {"parametrization": "lsb2", "burn_in": 10, "record_neighbours": True}),
    ("lsb", {"parametrization": "monotone", "burn_in": 10}),
    ("lsb", {"parametrization": "fixed"}),
    ("flsb", {"parametrization": "lsb2", "burn_in": 10}),
    ("flsb", {"parametrization": "monotone", "monotone_blocks": 8, "burn_in": 1}),
    ("intracluster", {"n_active": 10, "walk_length": 2, "adapt": True, "burn_in": 10}),
    ("intracluster", {"n_active": 18, "walk_length": 3, "backend": "dense"}),
    ("dlmc", {"ratios": "gradient"}),
    ("pas", {"path_length": 4, "ratios": "exact"}),
    ("parallel_tempering", {"base": "gwg", "n_replicas": 2, "record_replicas": True}),
]
CASES = [(name, dict(samplers.sampler_class(name).facts.example)) for name in samplers.available()] + VARIANTS


def target_for(name: str) -> Target:
    target_name, target_params = samplers.sampler_class(name).facts.example_target
    return targets.make(target_name, **target_params)


def held_bytes(*roots) -> int:
    """Bytes of the distinct array buffers and tensor storages reachable from ``roots`` (see the module docstring)."""
    seen_objects, buffers = set(), {}
    stack = list(roots)
    while stack:
        obj = stack.pop()
        if id(obj) in seen_objects or obj is None or isinstance(obj, (Target, type, param.Parameter, str, bytes,
                                                                       int, float, bool, np.random.Generator)):
            continue
        seen_objects.add(id(obj))
        if isinstance(obj, np.ndarray):
            while isinstance(obj.base, np.ndarray):
                obj = obj.base
            buffers[("array", id(obj))] = obj.nbytes
        elif isinstance(obj, torch.Tensor):
            storage = obj.untyped_storage()
            buffers[("tensor", storage.data_ptr())] = storage.nbytes()
            stack.extend([obj.grad if obj.is_leaf else None, obj.grad_fn])
        elif hasattr(obj, "next_functions"):  # an autograd node: the tensors it saved, and its inputs
            stack.extend(next_function for next_function, _ in obj.next_functions)
            stack.append(getattr(obj, "variable", None))
            for attribute in dir(obj):
                if attribute.startswith("_saved_"):
                    try:
                        stack.append(getattr(obj, attribute))
                    except RuntimeError:  # freed by a backward pass
                        pass
        elif isinstance(obj, dict):
            stack.extend(obj.keys())
            stack.extend(obj.values())
        elif isinstance(obj, (list, tuple, set, frozenset)):
            stack.extend(obj)
        elif not callable(obj) or isinstance(obj, torch.nn.Module):
            stack.extend(getattr(obj, "__dict__", {}).values())
            for slot in getattr(type(obj), "__slots__", ()):
                stack.append(getattr(obj, slot, None))
    return sum(buffers.values())


def measured(name: str, params: dict, n_chains: int) -> int:
    sampler = samplers.make(name, target_for(name), n_chains=n_chains, seed=0, **params)
    for _ in range(3):
        record = sampler.step()
    return held_bytes(sampler, record)


@pytest.mark.parametrize("n_chains", [3, 2000])
@pytest.mark.parametrize("name, params", CASES, ids=[f"{n}-{p}" for n, p in CASES])
def test_estimated_bytes_bounds_the_bytes_held(name, params, n_chains):
    real = measured(name, params, n_chains)
    dim = target_for(name).dim
    estimate = samplers.sampler_class(name).estimated_bytes(n_chains, dim, params)
    assert isinstance(estimate, int)
    assert real <= estimate <= 2 * real + SLACK, (real, estimate)


def test_every_registered_sampler_has_a_default_estimate():
    for name in samplers.available():
        dim = target_for(name).dim
        small, large = (samplers.sampler_class(name).estimated_bytes(n, dim, {}) for n in (10, 1000))
        assert 0 < small < large
