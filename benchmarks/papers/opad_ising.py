"""OPAD paper Fig. 1: KL(P‖π) of MCMC, OPAD and OPAD+ on the 1-D Ising chain, per chain, against iterations.

Target: m = 15 spins, β = 0.5, J = 1, h = 0.1 (2^15 states, exact π by
enumeration). 20 independent chains of each sampler — ``metropolis`` (the
paper's uniform single-flip proposal with MH acceptance), ``locally_balanced``
(√t), the same with OPAD+ holding every scored neighbour (beyond the paper),
and ``lsb`` (LSB1, burn-in 500) — each feed a ``ParticleStore``; at
log-spaced checkpoints the exact KL of each chain's three approximations is
read in O(1). Each sampler's chains are one run of a sweep, executed on Dask
and stored (``--workers``, ``--scheduler``, ``--results``). Prints the mean over
chains with the 2.5–97.5 % range and the ratios MCMC/OPAD and MCMC/OPAD+, then
the store's bookkeeping time relative to the sampler's own step and its memory
per particle.

Run:  python -m benchmarks opad_ising [--steps 10000 --chains 20 --samplers metropolis,locally_balanced,lsb]
      (the paper: 10^4 and 10^6 steps; --samplers picks by registry name, default all)
"""

from __future__ import annotations

from benchmarks import OPAD_HELPS, SWEEP_DEFAULTS, SWEEP_HELPS, arguments
from benchmarks.papers.opad_runs import cost_table, opad_run, stored, sweep_curves, table

#: The paper's 1-D Ising chain.
ISING = {"m": 15, "beta": 0.5, "J": 1.0, "h": 0.1, "mu": 1.0}



def sampler_set(balancing: str = "sqrt", label: str = "√t") -> dict:
    """label → (sampler, parameters, OPAD+ with every scored neighbour) of the OPAD benchmarks."""
    return {
        "Metropolis": ("metropolis", {}, False),
        f"locally balanced {label}": ("locally_balanced", {"balancing": balancing}, False),
        f"locally balanced {label}, all scored": ("locally_balanced", {"balancing": balancing}, True),
        "LSB1": ("lsb", {"parametrization": "lsb1", "burn_in": 500}, False),
    }


def main(argv=None) -> None:
    args = arguments("opad_ising", argv, steps=10_000, chains=20, samplers="all", **SWEEP_DEFAULTS,
                     helps=OPAD_HELPS | SWEEP_HELPS | {
                         "samplers": "comma-separated registry names of the samplers to run (metropolis, "
                                     "locally_balanced, lsb), or all"})
    chosen = None if args.samplers == "all" else set(args.samplers.split(","))
    runs = [opad_run(label, "ising1d", ISING, name, params, args.steps, args.chains, scored)
            for label, (name, params, scored) in sampler_set().items() if chosen is None or name in chosen]
    curves = stored(sweep_curves("opad_ising", runs, args), runs)
    print(f"1-D Ising chain m = 15, β = 0.5, J = 1, h = 0.1; {args.chains} chains")
    table(curves)
    print()
    cost_table(curves)
