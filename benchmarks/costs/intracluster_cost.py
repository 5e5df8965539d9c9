"""Cost of intracluster moves: time per walk step and per move, sum-tree against dense walks.

Measured in this one run (best of ``--repeats`` runs of at least ``--seconds``
each, one shared machine), every IM move at half (lattices) or a third (Gabor RBM)
of the units active, the paper's γ:

* the sum-tree path (``backend="tree"``) at k = ``--k`` (the paper's 90) on
  the critical ferromagnet of side ``--small`` (60) and ``--large`` (240):
  time per walk step = time per move / 2k. A move is 2k sampled steps, the
  rewind of all of them (scoring the reverse path) and, if accepted, their
  replay, so this is the whole cost per step. The goal is growth like log M,
  not M: the ratio of the two is printed beside log M₂ / log M₁ and M₂ / M₁;
* the same move on the small lattice with 1 and 10 chains (per move of the
  batch and per chain);
* the Gabor RBM (``--gabor-scale`` of the paper's 784 + 500 units, k = 10 —
  the mean of the paper's U[1, 20] — and γ = 0.8) on the dense path (O(d) per step) and on the tree path
  (O(deg · log d) per step, deg ≈ 100 here) for comparison;
* Kawasaki's step on each target, for reference (one swap and its ratio).

The acceptance is printed with every row: an accepted move also replays its
2k steps, so the time per move rises with it.

``--moves N`` times exactly N moves per run instead of running for at least
``--seconds``: a fixed amount of work, so that how many moves are timed (and
so the acceptance printed) does not depend on the machine's speed (the tests
use it).

Run:  python -m benchmarks intracluster_cost [--small 60 --large 240 --k 90 --seconds 2 --repeats 3]
      (--moves 200 instead of --seconds: a fixed number of moves per run)
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import samplers
import targets
from benchmarks import arguments
from benchmarks.papers.intracluster_paper import gabor_size
from targets.base import Target


@dataclass(frozen=True)
class Case:
    """One timed row: a sampler and its parameters on a target with n active units."""

    label: str
    target: Target
    n_active: int
    sampler: str
    params: dict
    n_chains: int = 1

    @property
    def walk_steps(self) -> int:
        """Walk steps per chain and move, 2k (none for Kawasaki)."""
        return 2 * self.params["walk_length"] if self.sampler == "intracluster" else 0


@dataclass(frozen=True)
class Timing:
    case: Case
    ms_per_move: float
    acceptance: float

    @property
    def us_per_walk_step(self) -> float:
        """Microseconds per walk step of one chain: the move's time over 2k steps and the chains (IM only)."""
        return 1e3 * self.ms_per_move / (self.case.walk_steps * self.case.n_chains)


def measure(case: Case, seconds: float, repeats: int, moves: int = 0) -> Timing:
    """Best time per move over ``repeats`` runs of at least ``seconds`` each (or, with ``moves`` > 0, of exactly
    ``moves`` moves each), and the acceptance over all moves."""
    sampler = samplers.make(case.sampler, case.target, n_chains=case.n_chains, seed=0, n_active=case.n_active,
                            **case.params)
    best, accepted, total = math.inf, 0, 0
    for _ in range(repeats):
        start, count = time.perf_counter(), 0
        while (count < moves) if moves else (count == 0 or time.perf_counter() - start < seconds):  # ≥ 1 move
            sampler.step(record=False)
            accepted += int(sampler.last_accepted.sum())
            count += 1
        elapsed = time.perf_counter() - start
        best, total = min(best, elapsed / count), total + count
    return Timing(case, 1e3 * best, accepted / (total * case.n_chains))


def workloads(args) -> list[tuple[str, Target, int]]:
    """(label, target, n active) of the small and the large ferromagnet and of the Gabor RBM."""
    lattices = [targets.make("ising_lattice", size=side, beta=1 / 2.27) for side in (args.small, args.large)]
    gabor = targets.make("gabor_rbm", **gabor_size(args.gabor_scale))
    return [(f"ferromagnet {t.size}×{t.size}", t, t.dim // 2) for t in lattices] + [
        (f"Gabor RBM {gabor.side}×{gabor.side} + {gabor.n_hidden}", gabor, gabor.dim // 3)]


def cases(args) -> list[Case]:
    """Every timed row; the first two are the lattices whose per-step times are compared."""
    small, large, gabor = workloads(args)
    lattice_walks = dict(walk_length=min(args.k, small[2]), gamma=1.0, backend="tree")
    gabor_walks = dict(walk_length=min(10, gabor[2]), gamma=0.8)
    return [
        Case(*small, "intracluster", lattice_walks),
        Case(*large, "intracluster", lattice_walks),
        Case(*small, "intracluster", lattice_walks, n_chains=10),
        Case(*gabor, "intracluster", {**gabor_walks, "backend": "dense"}),
        Case(*gabor, "intracluster", {**gabor_walks, "backend": "tree"}),
    ] + [Case(*workload, "kawasaki", {}) for workload in (small, large, gabor)]


def describe(case: Case) -> str:
    if case.sampler == "kawasaki":
        return "Kawasaki"
    p = case.params
    return f"IM {p['backend']}, k = {p['walk_length']}, γ = {p['gamma']}"


def table(timings: list[Timing]) -> None:
    """Print one row per case: ms per move (of the whole batch), per chain, µs per walk step, acceptance."""
    print("| target | d | sampler | chains | ms / move | ms / chain-move | µs / walk step | acceptance |")
    print("|---|---|---|---|---|---|---|---|")
    for t in timings:
        c = t.case
        walk_step = f"{t.us_per_walk_step:.3g}" if c.walk_steps else "—"
        print(f"| {c.label} | {c.target.dim:,} | {describe(c)} | {c.n_chains} | {t.ms_per_move:.3g} | "
              f"{t.ms_per_move / c.n_chains:.3g} | {walk_step} | {t.acceptance:.3f} |")


def scaling(small: Timing, large: Timing) -> None:
    """Print how the tree path's time per walk step grows from M₁ to M₂ sites."""
    m1, m2 = small.case.target.dim, large.case.target.dim
    print(f"\ntree walk step, M = {m1:,} → {m2:,}: time × {large.us_per_walk_step / small.us_per_walk_step:.2f}; "
          f"log M₂ / log M₁ = {math.log(m2) / math.log(m1):.2f}, M₂ / M₁ = {m2 / m1:.0f}")


HELPS = {
    "small": "side of the smaller ferromagnet",
    "large": "side of the larger ferromagnet",
    "k": "IM walk length on the lattices",
    "gabor_scale": "fraction of the paper's 784 + 500 Gabor RBM units kept",
    "seconds": "each timed run lasts at least this long (ignored when --moves > 0)",
    "moves": "fix the work instead of the time: each timed run makes exactly this many moves (0: use --seconds)",
    "repeats": "timed runs per row; the best is printed",
}


def main(argv=None) -> None:
    args = arguments("intracluster_cost", argv, small=60, large=240, k=90, gabor_scale=1.0, seconds=2.0, moves=0,
                     repeats=3, helps=HELPS)
    if args.moves < 0 or args.repeats < 1 or (not args.moves and args.seconds <= 0):
        raise SystemExit("need --moves ≥ 0, --repeats ≥ 1 and, without --moves, --seconds > 0")
    timings = [measure(case, args.seconds, args.repeats, args.moves) for case in cases(args)]
    runs = f"{args.moves} moves" if args.moves else f"≥ {args.seconds:g} s"
    print(f"Intracluster moves (Kawasaki: steps), best of {args.repeats} runs of {runs} each, "
          f"one shared machine\n")
    table(timings)
    scaling(timings[0], timings[1])
