"""DISCS's findings on the 2-D Ising model, measured with the samplers here and DISCS's protocol.

DISCS (Goshvadi et al., NeurIPS 2023 Datasets & Benchmarks) measures a sampler
by the ESS of the Hamming distance to a fixed random reference state, each
chain on its own over its second half, mean ± std over chains, per step, per
second and per target evaluation (``samplers.diagnostics.discs_ess``). Two of
its findings on the Ising model are checked here:

1. **The winning balancing function depends on the temperature**: √t above the
   critical temperature (β < β_c = ln(1 + √2)/2 ≈ 0.4407), t/(1+t) below it.
   Measured as DISCS's temperature sweep does (its ``lamdasweep`` configs: the
   zero-field open lattice, coupling λ = β around β_c, gradient samplers with
   g = √t and g = t/(1+t)) with the locally balanced sampler, PAS and DMALA
   (``--samplers``) at two β on each side of β_c.
2. **ESS per step falls with the dimension, faster for Metropolis than for PAS**
   (path length tuned toward 57.4 % acceptance in a burn-in, then frozen), on
   DISCS's own Ising model: an open L×L lattice with log p̃ = λ Σ s_i s_j − Σ b_i s_i,
   λ = 0.5, b_i = U(−σ, σ) + μ·(+1 inside the disc of area 1/2 centred on the
   lattice, −1 outside), μ = 0.5, σ = 1.5 (DISCS's ``models/ising.py``).

Each finding gets a verdict: reproduced when every comparison goes the claimed
way with 95 % intervals (over chains) that do not overlap, not reproduced when
one goes the other way so, inconclusive otherwise. The sizes and lengths are
smaller than DISCS's (50×50 and 10⁵–10⁶ steps; ``--size``, ``--steps``).

Run:  python -m benchmarks discs_ising [--size 20 --steps 20000 --chains 16 --sizes 10,20,30,40 --seed 0
                                         --samplers locally_balanced,pas,dmala]
"""

from __future__ import annotations

import time

import numpy as np
from scipy import sparse

import samplers
import targets
from samplers.convergence import Interval, interval
from samplers.diagnostics import discs_ess, hamming_distance, hamming_reference
from targets.pairwise import lattice_edges

from . import arguments, progress

BETA_CRITICAL = float(np.log(1 + np.sqrt(2)) / 2)
#: β on either side of β_c for finding 1.
BETAS = (0.3, 0.38, 0.5, 0.6)
BALANCINGS = {"√t": "sqrt", "t/(1+t)": "barker"}


def discs_ising_model(size: int, lam: float = 0.5, mu: float = 0.5, sigma: float = 1.5, seed: int = 0):
    """DISCS's Ising model (``discs/models/ising.py``) as a ``boltzmann`` target: open L×L lattice, coupling λ,
    field −b with b = U(−σ, σ) + μ·(±1 inside/outside the central disc)."""
    edges = lattice_edges((size, size), periodic=False)
    d = size * size
    upper = sparse.coo_matrix((np.full(len(edges), lam), (edges[:, 0], edges[:, 1])), shape=(d, d))
    rows, cols = np.indices((size, size))
    inside = (rows / size - 0.5) ** 2 + (cols / size - 0.5) ** 2 < 0.5 / np.pi
    b = (2 * np.random.default_rng(seed).random((size, size)) - 1) * sigma + mu * np.where(inside, 1.0, -1.0)
    return targets.make("boltzmann", J=(upper + upper.T).tocsr(), h=-b.ravel(), beta=1.0)


def measure(target, name: str, params: dict, steps: int, chains: int, seed: int) -> dict:
    """DISCS ESS of one run: per chain over the second half, with its rates per step, 1000 evaluations, CPU second."""
    reference = hamming_reference(target.dim, seed)
    sampler = samplers.make(name, target, n_chains=chains, seed=seed, **params)
    start = time.process_time()
    trace = samplers.run(sampler, steps, statistic=lambda x: hamming_distance(x, reference).astype(float))
    seconds = time.process_time() - start
    per_chain = discs_ess(trace.statistic.T)
    half = steps // 2
    evals = trace.n_evals[-1] - trace.n_evals[half]
    return {"ess": interval(per_chain), "per step": interval(per_chain / (steps - half)),
            "per 1k evals": interval(1000 * per_chain / evals), "per second": interval(per_chain / (seconds / 2)),
            "std": float(per_chain.std()), "sampler": sampler}


def separated(better: Interval, worse: Interval) -> bool | None:
    """True if ``better`` lies above ``worse`` (95 % intervals apart), False if below, None if they overlap."""
    if better.low > worse.high:
        return True
    if better.high < worse.low:
        return False
    return None


def finding_verdict(outcomes: list[bool | None]) -> str:
    if outcomes and all(outcomes):
        return "reproduced"
    if any(outcome is False for outcome in outcomes):
        return "not reproduced"
    return "inconclusive"


def balancing_against_temperature(args) -> str:
    names = args.samplers.split(",")
    print(f"Finding 1 · zero-field open Ising {args.size}×{args.size} (DISCS's temperature sweep: μ = σ = 0), "
          f"{args.chains} chains × {args.steps} steps, β_c = {BETA_CRITICAL:.4f}; ESS per step (DISCS), "
          f"tuned samplers tune for the first {args.steps // 10} steps")
    print(f"{'sampler':>18} {'β':>6} {'side':>10} " + " ".join(f"{label:>26}" for label in BALANCINGS)
          + f" {'winner':>8} {'expected':>9}")
    outcomes = []
    for name, beta in progress([(name, beta) for name in names for beta in BETAS], "finding 1"):
        params = {"burn_in": args.steps // 10} if "burn_in" in samplers.sampler_class(name).param else {}
        target = discs_ising_model(args.size, lam=beta, mu=0.0, sigma=0.0, seed=args.seed)
        results = {label: measure(target, name, {**params, "balancing": g}, args.steps, args.chains, args.seed)
                   for label, g in BALANCINGS.items()}
        expected = "√t" if beta < BETA_CRITICAL else "t/(1+t)"
        other = "t/(1+t)" if expected == "√t" else "√t"
        outcome = separated(results[expected]["per step"], results[other]["per step"])
        outcomes.append(outcome)
        winner = {True: expected, False: other, None: "tie"}[outcome]
        side = "above T_c" if beta < BETA_CRITICAL else "below T_c"
        print(f"{name:>18} {beta:>6.3f} {side:>10} "
              + " ".join(f"{str(results[label]['per step']):>26}" for label in BALANCINGS)
              + f" {winner:>8} {expected:>9}")
    verdict = finding_verdict(outcomes)
    print(f"verdict: {verdict} ({sum(o is True for o in outcomes)} comparisons as DISCS found, "
          f"{sum(o is False for o in outcomes)} against, {sum(o is None for o in outcomes)} ties of {len(outcomes)})\n")
    return verdict


def dimension_scaling(args) -> str:
    sizes = [int(size) for size in args.sizes.split(",")]
    print(f"Finding 2 · DISCS's Ising model (λ = 0.5, μ = 0.5, σ = 1.5, open lattice), {args.chains} chains × "
          f"{args.steps} steps; PAS tunes its path length for the first {args.steps // 10} steps")
    print(f"{'L':>4} {'d':>6} {'Metropolis ESS/step':>26} {'PAS ESS/step':>26} {'PAS L':>6} {'PAS/Metropolis':>15} "
          f"{'per 1k evals (M, PAS)':>24} {'per second (M, PAS)':>24}")
    rows = []
    for size in progress(sizes, "finding 2"):
        target = discs_ising_model(size, seed=args.seed)
        metropolis = measure(target, "metropolis", {}, args.steps, args.chains, args.seed)
        pas = measure(target, "pas", {"burn_in": args.steps // 10}, args.steps, args.chains, args.seed)
        ratio = pas["per step"].mean / metropolis["per step"].mean
        rows.append((metropolis["per step"], pas["per step"]))
        print(f"{size:>4} {size * size:>6} {str(metropolis['per step']):>26} {str(pas['per step']):>26} "
              f"{pas['sampler'].frozen_params()['path_length']:>6} {ratio:>15.3g} "
              f"{metropolis['per 1k evals'].mean:>11.3g} {pas['per 1k evals'].mean:>12.3g} "
              f"{metropolis['per second'].mean:>11.3g} {pas['per second'].mean:>12.3g}")
    falls = {name: rows[0][k].mean / rows[-1][k].mean for k, name in enumerate(("Metropolis", "PAS"))}
    print(f"ESS per step from L = {sizes[0]} to L = {sizes[-1]} falls {falls['Metropolis']:.3g}× for Metropolis, "
          f"{falls['PAS']:.3g}× for PAS")
    outcomes = [separated(pas_row, metropolis_row) for metropolis_row, pas_row in rows[1:]]
    outcomes.append(bool(falls["Metropolis"] > falls["PAS"]))
    verdict = finding_verdict(outcomes)
    print(f"verdict: {verdict} (PAS ahead per step at every size past the first, and Metropolis falling faster)\n")
    return verdict


def main(argv=None) -> None:
    args = arguments("discs_ising", argv, size=20, steps=20_000, chains=16, sizes="10,20,30,40", seed=0,
                     samplers="locally_balanced,pas,dmala", helps={
                         "size": "side L of the L×L lattice of finding 1",
                         "steps": "steps per chain of every run (the tuned samplers tune for the first tenth)",
                         "chains": "chains per run (the intervals are over chains)",
                         "sizes": "comma-separated lattice sides L of finding 2",
                         "seed": "seed of the samplers, the reference state and DISCS's random field",
                         "samplers": "comma-separated samplers of finding 1, each with g = √t and g = t/(1+t)"})
    balancing_against_temperature(args)
    dimension_scaling(args)
