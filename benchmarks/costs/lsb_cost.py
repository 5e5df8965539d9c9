"""Per-step cost of learning a balancing function (LSB paper, Table 1 and §5.2's ESS/s remark).

Measured in this one run (best of several repeats, shared machine):

* LSB1 / LSB2 / monotone on the 30×30 segmentation target (30 chains, case 3)
  against ``locally_balanced`` with a fixed g: ms per step while learning and
  once frozen, and their ratios (issue goal: ≤ 3× learning, ≈ 1× frozen);
* FLSB1 / FLSB2 against ``gwg`` on the shipped RBM (16 chains), likewise;
* evaluations per step in each phase.

Where the learning step's time goes is printed for LSB2: the compiled part
(proposals, ratios at x, x', x*, the objective and its gradient in the knots)
and the learner's update (torch's back-propagation through the network, the
optimiser step, re-tabulating g_θ).

Run:  python -m benchmarks lsb_cost
"""

from __future__ import annotations

import time

import samplers
import targets
from benchmarks import arguments


def ms_per_step(sampler, steps: int, repeats: int = 3) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(steps):
            sampler.step(record=False)
        best = min(best, (time.perf_counter() - start) / steps)
    return 1e3 * best


def phases(name: str, target, n_chains: int, steps: int, **params) -> tuple[float, float, float, float]:
    """(ms/step learning, ms/step frozen, evals/step learning, evals/step frozen)."""
    learning = samplers.make(name, target, n_chains=n_chains, seed=0, keep_adapting=True, burn_in=0, **params)
    before = learning.n_evals
    learn_ms = ms_per_step(learning, steps)
    learn_evals = (learning.n_evals - before) / (3 * steps)
    frozen = samplers.make(name, target, n_chains=n_chains, seed=0, burn_in=0, **params)
    before = frozen.n_evals
    frozen_ms = ms_per_step(frozen, steps)
    return learn_ms, frozen_ms, learn_evals, (frozen.n_evals - before) / (3 * steps)


def baseline(name: str, target, n_chains: int, steps: int, **params) -> tuple[float, float]:
    sampler = samplers.make(name, target, n_chains=n_chains, seed=0, **params)
    before = sampler.n_evals
    ms = ms_per_step(sampler, steps)
    return ms, (sampler.n_evals - before) / (3 * steps)


def report(title: str, reference: str, base: tuple[float, float], rows: dict[str, tuple]) -> None:
    base_ms, base_evals = base
    print(f"\n{title}: {reference} {base_ms:.3f} ms/step, {base_evals:.1f} evaluations/step")
    print("| sampler | learning ms/step | ratio | frozen ms/step | ratio | evals/step learning | frozen |")
    print("|---|---|---|---|---|---|---|")
    for label, (learn, frozen, learn_evals, frozen_evals) in rows.items():
        print(f"| {label} | {learn:.3f} | {learn / base_ms:.1f}× | {frozen:.3f} | {frozen / base_ms:.2f}× "
              f"| {learn_evals:.1f} | {frozen_evals:.1f} |")


def learning_breakdown(target, n_chains: int, steps: int = 200) -> None:
    """Wall time of the pieces of an LSB2 learning step (profiled by wrapping the learner's update)."""
    sampler = samplers.make("lsb", target, n_chains=n_chains, seed=0, parametrization="lsb2", keep_adapting=True)
    learner = sampler.learner
    spent = {"update": 0.0}
    update = learner.update

    def timed_update(*args):
        start = time.perf_counter()
        value = update(*args)
        spent["update"] += time.perf_counter() - start
        return value

    learner.update = timed_update
    start = time.perf_counter()
    for _ in range(steps):
        sampler.step(record=False)
    total = time.perf_counter() - start
    print(f"\nLSB2 learning step, {1e3 * total / steps:.2f} ms: back-propagation (torch) + optimiser + re-tabulation "
          f"{1e3 * spent['update'] / steps:.2f} ms, proposals, evaluations and the objective (compiled) "
          f"{1e3 * (total - spent['update']) / steps:.2f} ms")


def main(argv=None) -> None:
    args = arguments("lsb_cost", argv, steps=300,
                     helps={"steps": "steps timed per phase (learning, frozen) and sampler"})
    segmentation = targets.make("ising_segmentation", size=30, lam=1.0, mu=1.0, sigma=3.0, seed=0)
    base = baseline("locally_balanced", segmentation, 30, args.steps, balancing="sqrt")
    rows = {p: phases("lsb", segmentation, 30, args.steps, parametrization=p) for p in ("lsb1", "lsb2", "monotone")}
    report("30×30 segmentation, 30 chains", "locally_balanced (√t)", base, rows)
    learning_breakdown(segmentation, 30)
    rbm = targets.make("rbm")
    base = baseline("gwg", rbm, 16, args.steps)
    rows = {f"FLSB ({p})": phases("flsb", rbm, 16, args.steps, parametrization=p) for p in ("lsb1", "lsb2")}
    report("RBM 64×16, 16 chains", "gwg", base, rows)
