"""Our compiled samplers against the LSB authors' torch code, side by side in one run (CPU time).

The task is the LSB paper's 30×30 segmentation case λ = 1, μ = 1, σ = 3 with
30 chains. Both sides are timed with ``time.process_time`` (CPU seconds of this
process, so that a shared machine's waiting time does not count), torch on one
thread, best of ``--repeats`` runs of ``--steps`` steps after a warm-up. Ours
are timed as ``step(record=False)`` (the move, as the reference's ``sample()``)
and with the step record (what a trace or OPAD+ reads).

Printed, with the goals of the compiled-kernels issue:

* locally balanced steps with each fixed balancing function, ours vs theirs
  (goal for √t: ≥ 40×);
* LSB1 / LSB2 while learning (goals ≥ 15× and ≥ 8×) and frozen, and frozen
  LSB against our fixed-function step (goal ≤ 1.3×);
* the per-step cost of our √t step at 240×240 against 30×30 (goal ≤ 1.3), the
  two timed in alternating repeats (``interleaved_cpu_seconds_per_step``), with
  both runs' acceptance and the cost per accepted move, and the same ratio
  with 1 and 4 chains, whose data fit the caches at 240×240 as well.

The reference is read from ``benchmarks.papers.lsb_reference.REFERENCE_DIR``; without
it the ratios are skipped and only our side is printed.

Run:  python -m benchmarks kernels_vs_reference
"""

from __future__ import annotations

import torch

import samplers
import targets
from benchmarks import arguments, cpu_seconds_per_step, interleaved_cpu_seconds_per_step
from benchmarks.papers.lsb_reference import SKIPPED, available, reference_seconds_per_step

N_CHAINS = 30
#: Chain counts at which the 240×240 / 30×30 ratio is also printed: the chains' data grow with their number.
FEWER_CHAINS = (1, 4)


def segmentation(size: int):
    return targets.make("ising_segmentation", size=size, lam=1.0, mu=1.0, sigma=3.0, seed=0)


def ours(name: str, target, steps: int, repeats: int, record: bool = False, **params) -> float:
    sampler = samplers.make(name, target, n_chains=N_CHAINS, seed=0, **params)
    return cpu_seconds_per_step(sampler, steps, repeats, record)


def lattice_pair(small, large, n_chains: int, steps: int, repeats: int) -> list[float]:
    """CPU seconds per √t step on the 30×30 and the 240×240 task with ``n_chains`` chains, timed in turn, each side
    with twice the table's repeats (the ratio is a goal of its own, and its two sides alternate)."""
    return interleaved_cpu_seconds_per_step(
        [samplers.make("locally_balanced", target, n_chains=n_chains, seed=0, balancing="sqrt")
         for target in (small, large)], steps, 2 * repeats)


def acceptance(name: str, target, steps: int, **params) -> float:
    """Fraction of moves accepted over the warm-up and one timed repeat of ``ours`` (same seed, same chains)."""
    sampler = samplers.make(name, target, n_chains=N_CHAINS, seed=0, **params)
    accepted = 0
    for _ in range(max(1, steps // 5) + steps):
        sampler.step(False)
        accepted += int(sampler.last_accepted.sum())
    return accepted / ((max(1, steps // 5) + steps) * N_CHAINS)


def main(argv: list[str] | None = None) -> None:
    args = arguments("kernels_vs_reference", argv, steps=2000, reference_steps=200, repeats=3,
                     helps={"steps": "our steps per timed repeat",
                            "reference_steps": "the reference's steps per timed repeat (its frozen LSB grows an "
                                               "autograd graph with every call: keep this modest)",
                            "repeats": "timed repeats (the best counts)"})
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        report(args)
    finally:
        torch.set_num_threads(threads)


def report(args) -> None:
    small, large = segmentation(30), segmentation(240)
    steps, repeats = args.steps, args.repeats
    have_reference = available()
    print(f"30×30 segmentation (λ=1, μ=1, σ=3), {N_CHAINS} chains; CPU µs per step, best of {repeats}")
    if not have_reference:
        print(SKIPPED)

    def theirs(kind: str) -> float | None:
        if not have_reference:
            return None
        return reference_seconds_per_step(kind, steps=args.reference_steps, repeats=repeats)

    rows = []
    for balancing in ("sqrt", "barker", "min", "max"):
        bare = ours("locally_balanced", small, steps, repeats, balancing=balancing)
        recorded = ours("locally_balanced", small, steps, repeats, record=True, balancing=balancing)
        rows.append((f"locally balanced {balancing}", theirs(balancing), bare, recorded,
                     "≥ 40×" if balancing == "sqrt" else ""))
    fixed = rows[0][2]
    learning_goal = {"lsb1": "≥ 15×", "lsb2": "≥ 8×"}
    frozen = {}
    for parametrization in ("lsb1", "lsb2"):
        learning = dict(parametrization=parametrization, keep_adapting=True, burn_in=0)
        rows.append((f"{parametrization.upper()} while learning", theirs(f"{parametrization}_learning"),
                     ours("lsb", small, max(1, steps // 10), repeats, **learning), None,
                     learning_goal[parametrization]))
        frozen[parametrization] = ours("lsb", small, steps, repeats, parametrization=parametrization, burn_in=0)
        rows.append((f"{parametrization.upper()} frozen", theirs(f"{parametrization}_frozen"),
                     frozen[parametrization], None, ""))
    print("| step | reference µs | ours µs (move) | ours µs (with record) | ratio | goal |")
    print("|---|---|---|---|---|---|")
    for label, reference, bare, recorded, goal in rows:
        ratio = f"{reference / bare:.1f}×" if reference else "–"
        print(f"| {label} | {_us(reference)} | {_us(bare)} | {_us(recorded)} | {ratio} | {goal} |")
    for parametrization, seconds in frozen.items():
        print(f"frozen {parametrization.upper()} / fixed √t step: {seconds / fixed:.2f} (goal ≤ 1.3)")
    at_30, at_240 = lattice_pair(small, large, N_CHAINS, steps, repeats)
    print(f"√t step 240×240 / 30×30: {at_240 / at_30:.2f} (goal ≤ 1.3; {_us(at_240)} against {_us(at_30)} µs, "
          f"their repeats taken in turn)")
    fewer = {n: lattice_pair(small, large, n, steps, repeats) for n in FEWER_CHAINS}
    print("  the same with fewer chains (their states, flip ratios and trees fit the caches at 240×240 too): "
          + ", ".join(f"{n} chain{'s' * (n > 1)} {pair[1] / pair[0]:.2f}" for n, pair in fewer.items()))
    accepted = {size: acceptance("locally_balanced", target, steps, balancing="sqrt")
                for size, target in ((30, small), (240, large))}
    print(f"  acceptance over the timed steps: {accepted[30]:.2f} at 30×30, {accepted[240]:.2f} at 240×240 (a locally "
          f"balanced proposal's acceptance tends to 1 as d grows, and each accepted flip rewrites deg + 1 leaves and "
          f"their paths); per accepted move 240×240 / 30×30: {at_240 / accepted[240] / (at_30 / accepted[30]):.2f}")


def _us(seconds: float | None) -> str:
    return "–" if seconds is None else f"{1e6 * seconds:,.0f}" if seconds > 1e-4 else f"{1e6 * seconds:.1f}"


if __name__ == "__main__":
    main()
