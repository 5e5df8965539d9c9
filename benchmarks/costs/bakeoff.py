"""Sampler bake-off on three models nobody tuned to: every sampler ranked, and what efficiency tuning changes.

Three targets, none chosen for any sampler:

* a frustrated Boltzmann machine: Sherrington–Kirkpatrick couplings
  J_ij ~ N(0, β²/d) of both signs on d = ``--dim`` spins at β = 1.5 (below the
  model's glass transition at β = 1), small random fields N(0, 0.1²), drawn
  with seed 0;
* the shipped RBM trained on 8×8 digits (d = 64 visible units; its hidden
  units summed out);
* the shipped Markov network file ``grid10x10_pairwise_random_triplets.uai``
  (d = 100 binary variables, pairwise and triplet factors).

Each is a ``sweeps.bakeoff``: every applicable sampler (the others listed with
the reason), ``--budget`` target evaluations per measured run after a tuning
of 20 % more, ``--seeds`` seeds × ``--chains`` chains, statistic log p̃.
Printed per model: the ranking with 95 % intervals, the verdict in the claims
audit's vocabulary (a sampler wins only when the interval of its ESS-per-
evaluation ratio over the runner-up clears 1, else a tie), and for DMALA,
DLMC and PAS the setting tuned toward 57.4 % acceptance (DISCS) against the one
maximising the pilots' ESS of log p̃ per evaluation, with the per-seed ratio
of their ESS per evaluation. The last table gathers those ratios. Reports
(``bakeoff.md``, ``bakeoff.html``) are written beside each model's stored runs.

Run:  python -m benchmarks bakeoff [--budget 200000 --seeds 5 --chains 12 --dim 64 --workers 2]
"""

from __future__ import annotations

import numpy as np

import targets
from benchmarks import SWEEP_DEFAULTS, SWEEP_HELPS, arguments
from dashboard import bakeoff_page
from sweeps import bakeoff

#: The shipped Markov network the benchmark reads as a file.
NETWORK = "grid10x10_pairwise_random_triplets"
#: Inverse temperature of the frustrated model (its glass transition is at 1).
SK_BETA = 1.5


def frustrated(dim: int, seed: int = 0) -> targets.Target:
    """Sherrington–Kirkpatrick couplings N(0, β²/d), fields N(0, 0.1²) (module docstring)."""
    rng = np.random.default_rng(seed)
    upper = np.triu(rng.normal(scale=SK_BETA / np.sqrt(dim), size=(dim, dim)), k=1)
    return targets.make("boltzmann", J=upper + upper.T, h=rng.normal(scale=0.1, size=dim))


def models(args) -> dict:
    """Title → the target as ``sweeps.bakeoff`` takes it."""
    network = targets.markov_network.ASSETS / f"{NETWORK}.uai"
    return {f"frustrated Boltzmann machine (SK, d = {args.dim}, β = {SK_BETA})": frustrated(args.dim),
            "RBM trained on digits (shipped, d = 64)": targets.make("rbm"),
            f"Markov network file {network.name} (d = 100)": network}


def main(argv=None) -> None:
    args = arguments("bakeoff", argv, helps={**SWEEP_HELPS, "budget": "target evaluations of every measured run",
                                             "seeds": "independent seeds of every sampler; intervals are over them",
                                             "chains": "chains per run",
                                             "dim": "spins of the frustrated Boltzmann machine"},
                     budget=200_000.0, seeds=5, chains=12, dim=64, **SWEEP_DEFAULTS)
    gains = {}
    for title, target in models(args).items():
        print(f"### {title}\n", flush=True)
        result = bakeoff(target, budget=args.budget, seeds=args.seeds, chains=args.chains, seed=args.seed,
                         results=args.results or None, workers=args.workers, scheduler=args.scheduler or None)
        print(result)
        print("written:", result.save(), bakeoff_page.save(result), "\n", flush=True)
        gains[title] = result.tuning_gain()
    print("### Efficiency tuning against acceptance tuning: ESS per 1k evaluations, efficiency-tuned / "
          "acceptance-tuned (per-seed ratio, 95 % interval)\n")
    names = sorted({name for found in gains.values() for name in found})
    print("| model | " + " | ".join(names) + " |\n|---|" + "---|" * len(names))
    for title, found in gains.items():
        cells = [f"{found[name][0]} → {found[name][1]}: {found[name][2]}" if name in found else "—"
                 for name in names]
        print(f"| {title} | " + " | ".join(cells) + " |")
