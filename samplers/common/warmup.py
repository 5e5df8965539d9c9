"""Compile the samplers' numba kernels once per process, before the first real run needs them.

Every kernel is declared ``@njit(cache=True)``: numba compiles it on first call
for the argument types it meets and stores the machine code on disk (in a
directory named after a digest of the sources, ``targets.kernel_cache``), so later
processes load it instead of compiling. ``warm_up()`` calls each kernel with the
argument types real runs use, by stepping the compiled samplers a few times on
tiny targets and folding their records into a particle store: after it, no
step of a run waits for the compiler (nor its first diagnostics for arviz-stats' import).

``make`` runs it after installing (``python -m samplers.common.warmup``), so the disk
cache is filled before the first run. The dashboard's forkserver calls it once,
so every worker forked from it starts with the kernels in memory; a process that has not warmed up (a notebook, an
in-process engine) pays the load (or, after an install, the compilation) on its
first run, and the dashboard says "compiling…" meanwhile (``kernels_ready``).
"""

from __future__ import annotations

import time

import numpy as np

import targets
from samplers.diagnostics.ess import ess
from samplers.opad.particle_index import ParticleIndex
from samplers.opad.store import ParticleStore
from samplers.registry import SAMPLERS

_READY = False


def kernels_ready() -> bool:
    """True once ``warm_up()`` has run in this process (or in the process it was forked from)."""
    return _READY


def _warm_runs() -> list[tuple[targets.Target, str, dict]]:
    """(target, sampler, its parameters) of the warm-up: every registered sampler's ``facts.warm_up`` parameter
    sets, on the warm-up targets its ``facts.warm_up_on`` names: a sparse pairwise model and a black box, the two
    shapes of flip-ratio updates, and a tiny RBM, a target with a gradient and no flip tables (GWG's compiled pass
    over the gradient's Taylor estimates; on a pairwise model GWG is the locally balanced kernel)."""
    weights = np.linspace(-1.0, 1.0, 6)
    warm_targets = {
        "pairwise": targets.make("ising_segmentation", size=3, seed=0),
        "black_box": targets.from_log_prob(lambda x: x @ weights, 6),
        "rbm": targets.make("rbm", weights=np.zeros((6, 2)), visible_bias=weights, hidden_bias=np.zeros(2)),
    }
    return [(warm_targets[kind], name, dict(params)) for kind in warm_targets for name in SAMPLERS.names()
            for params in SAMPLERS.cls(name).facts.warm_up if kind in SAMPLERS.cls(name).facts.warm_up_on]


def warm_up() -> float:
    """Compile (or load from the disk cache) every kernel a run uses; returns the seconds it took."""
    global _READY
    start = time.perf_counter()
    for target, name, params in _warm_runs():
        sampler = SAMPLERS.cls(name)(target, n_chains=2, seed=0, **params)
        store = ParticleStore(target)  # the particle store's kernels, as OPAD tracking runs them
        store.update(sampler.step(record=True))
        store.flush()
        sampler.step(record=False)
        if sampler.facts.warm_up_transition_row:
            sampler.transition_row(sampler.states[0])
    ParticleIndex(6, capacity=2).reserve(4)  # the index's rehash, which a run reaches when its store first grows
    ess(np.arange(16.0).reshape(2, 8))  # the diagnostics' arviz-stats, imported on first use
    _READY = True
    return time.perf_counter() - start


if __name__ == "__main__":  # `make` runs this right after an install: the kernels are compiled before any run
    print(f"samplers' compiled kernels ready in {warm_up():.1f} s (numba's disk cache)")
