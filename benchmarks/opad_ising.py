"""OPAD paper Fig. 1: KL(P‖π) of MCMC, OPAD and OPAD+ on the 1-D Ising chain, per chain, against iterations.

Target: m = 15 spins, β = 0.5, J = 1, h = 0.1 (2^15 states, exact π by
enumeration). 20 independent chains of each sampler — ``metropolis`` (the
paper's uniform single-flip proposal with MH acceptance), ``locally_balanced``
(√t) and ``lsb`` (LSB1, burn-in 500) — feed one ``ParticleStore``; at
log-spaced checkpoints the exact KL of each chain's three approximations is
read in O(1). Prints, at each checkpoint, the median over chains and the
2.5–97.5 % range, and the median ratios MCMC / OPAD and MCMC / OPAD+ (the
paper reports one to three orders of magnitude). Also prints the particle
store's bookkeeping time per step relative to the sampler's own step time.

Run:  python -m benchmarks opad_ising [--steps 10000 --chains 20]
"""

from __future__ import annotations

import time

import numpy as np

import samplers
import targets
from samplers.opad import KINDS, ParticleStore

from . import arguments

SAMPLERS = {
    "metropolis": ("metropolis", {}),
    "locally balanced √t": ("locally_balanced", {"balancing": "sqrt"}),
    "LSB1": ("lsb", {"parametrization": "lsb1", "burn_in": 500}),
}


def checkpoints(steps: int) -> list[int]:
    return sorted({int(round(v)) for v in np.geomspace(10, steps, 7)})


def main(argv=None) -> None:
    args = arguments("opad_ising", argv, steps=10_000, chains=20, seed=0)
    target = targets.make("ising1d", m=15, beta=0.5, J=1.0, h=0.1, mu=1.0)
    marks = checkpoints(args.steps)
    for label, (name, params) in SAMPLERS.items():
        sampler = samplers.make(name, target, n_chains=args.chains, seed=args.seed, **params)
        store = ParticleStore(target)
        step_seconds = store_seconds = 0.0
        rows = []
        for k in range(1, args.steps + 1):
            started = time.perf_counter()
            record = sampler.step()
            stored = time.perf_counter()
            store.update(record)
            step_seconds += stored - started
            store_seconds += time.perf_counter() - stored
            if k in marks:
                started = time.perf_counter()
                store.flush()
                store_seconds += time.perf_counter() - started
                per_chain = np.array([[store.kl(i)[kind] for kind in KINDS] for i in range(args.chains)])
                rows.append((k, per_chain))
        print(f"\n{label}: {args.chains} chains, store bookkeeping {store_seconds / step_seconds:.2f}× the "
              f"sampler's step time, {store.n_particles:,} distinct states stored")
        print("| steps | KL MCMC median [2.5%, 97.5%] | KL OPAD | KL OPAD+ | MCMC/OPAD | MCMC/OPAD+ |")
        print("|---|---|---|---|---|---|")
        for k, per_chain in rows:
            cells = [f"{np.median(per_chain[:, j]):.3g} [{np.quantile(per_chain[:, j], 0.025):.2g}, "
                     f"{np.quantile(per_chain[:, j], 0.975):.2g}]" for j in range(3)]
            ratio_opad = np.median(per_chain[:, 0] / np.maximum(per_chain[:, 1], 1e-300))
            ratio_plus = np.median(per_chain[:, 0] / np.maximum(per_chain[:, 2], 1e-300))
            print(f"| {k:,} | " + " | ".join(cells) + f" | {ratio_opad:.3g}× | {ratio_plus:.3g}× |")
