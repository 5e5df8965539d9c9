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

#: (sampler, its parameters) stepped on every warm-up target: each reaches a different set of kernels.
WARM_SAMPLERS = [
    ("metropolis", {}),
    ("locally_balanced", {}),
    ("lsb", {"parametrization": "lsb1", "burn_in": 1}),  # a learning step on the mixture trees, then frozen
    ("lsb", {"parametrization": "lsb2", "keep_adapting": True}),  # learning steps on a table (the dense kernels)
    ("block_gibbs", {"block_size": 2}),
    ("hamming_ball", {"block_size": 3, "radius": 1}),
    ("intracluster", {"backend": "dense"}),
    ("intracluster", {"backend": "tree"}),
    ("dmala", {"ratios": "exact", "burn_in": 1}),
    ("dlmc", {"burn_in": 0}),
    ("pas", {"ratios": "exact", "path_length": 2, "burn_in": 0}),
    ("swendsen_wang", {}),
    ("wolff", {}),
]
#: Samplers of pairwise ferromagnets only, warmed up on the pairwise target alone.
PAIRWISE_ONLY = {"swendsen_wang", "wolff"}


def kernels_ready() -> bool:
    """True once ``warm_up()`` has run in this process (or in the process it was forked from)."""
    return _READY


def _warm_runs() -> list[tuple[targets.Target, str, dict]]:
    """(target, sampler, its parameters) of the warm-up: ``WARM_SAMPLERS`` on a sparse pairwise model and on a black
    box, the two shapes of flip-ratio updates (``PAIRWISE_ONLY`` on the first alone), and GWG on a tiny RBM, a
    target with a gradient and no flip tables: its proposal's compiled pass over the gradient's Taylor estimates
    (on a pairwise model GWG is the locally balanced kernel)."""
    weights = np.linspace(-1.0, 1.0, 6)
    pairwise = targets.make("ising_segmentation", size=3, seed=0)
    black_box = targets.from_log_prob(lambda x: x @ weights, 6)
    rbm = targets.make("rbm", weights=np.zeros((6, 2)), visible_bias=weights, hidden_bias=np.zeros(2))
    return [(target, name, params) for target in (pairwise, black_box) for name, params in WARM_SAMPLERS
            if name not in PAIRWISE_ONLY or target is pairwise] + [(rbm, "gwg", {})]


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
        if name in ("locally_balanced", "dmala", "pas", "wolff"):
            sampler.transition_row(sampler.states[0])
    ParticleIndex(6, capacity=2).reserve(4)  # the index's rehash, which a run reaches when its store first grows
    ess(np.arange(16.0).reshape(2, 8))  # the diagnostics' arviz-stats, imported on first use
    _READY = True
    return time.perf_counter() - start


if __name__ == "__main__":  # `make` runs this right after an install: the kernels are compiled before any run
    print(f"samplers' compiled kernels ready in {warm_up():.1f} s (numba's disk cache)")
