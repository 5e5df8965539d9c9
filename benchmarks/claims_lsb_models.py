"""The LSB paper's claims on its other models: the RBM (§5.2, Fig. 4) and the Markov networks (§5.3, Fig. 5).

**Fig. 4: "FLSB2 is able to adapt to the target distribution and to converge
using a much smaller number of target likelihood evaluations" than GWG.** On
the shipped RBM (64 visible, 16 hidden units; the paper's is 784 × 250 on
MNIST, not shipped), 16 chains: convergence of the chain mean of the
Hamming distance to a fixed state (the DISCS statistic) against its exact
expectation (the mean over exact samples, ``sample_exact``), by excess area
and first hit, GWG / FLSB2 per seed with 95 % intervals. The paper plots
against iterations, one per step for every sampler (the authors' RBM code
counts nothing else); fair: target evaluations (a FLSB learning step
evaluates p̃ and its gradient at the proposal and at the probe, GWG at the
proposal only) and CPU seconds.

**Fig. 5: LSB "reduces the number of target likelihood evaluations required to
converge"** on near-deterministic Markov networks (the shipped 100-variable
stand-ins for the UAI 2006 networks, 5 chains): LSB2 against √t (Table 3's
best fixed function), the statistic log p̃, against a long √t run from
over-dispersed starts — where its chains disagree (near-deterministic
networks are hard to equilibrate) no convergence can be claimed and the
verdict says inconclusive.
"""

from __future__ import annotations

import targets
from samplers.convergence import exact_samples_reference, interval
from targets.markov_network import shipped_networks

from .claims import Claim, judge, verdict
from .claims_lsb import ratio_table, run, speedups
from .lsb_runs import equilibrium, reference_note

AXES = {"iterations": "iterations (the paper's plots)", "evaluations": "target evaluations", "seconds": "CPU seconds"}
FAIR = ("evaluations",)


def _audit(title: str, runs: list[dict], reference, chains: int, baseline: str,
           learned: str) -> tuple[dict, list[str]]:
    """Excess-area speed-ups of ``learned`` over ``baseline`` per axis (none without a reached reference), and the
    Markdown lines."""
    lines = [title, "", reference_note(reference), ""]
    if not reference.reached:
        return {}, lines
    ratios = speedups(runs, lambda seed_runs, label, axis: seed_runs[label].axes[axis], lambda _: reference.value,
                      reference.noise(chains), axes=tuple(AXES), baseline=baseline, learned=learned)
    return {axis: interval(area) for axis, (area, _) in ratios.items()}, lines + ratio_table(ratios, AXES)


def _claim(where: str, claim: str, found: dict, details: list[str], cost: str) -> Claim:
    """The claim's row, judged on iterations (the paper's plots) and on evaluations; inconclusive without a
    reached reference (``found`` empty). ``cost`` says why it fails per evaluation if it holds per iteration."""
    paper_holds = judge(found["iterations"]) if found else None
    fair_holds = judge(found["evaluations"]) if found else None
    if not found:
        reason = "no equilibrium reference was reached"
    elif paper_holds is None or (paper_holds and fair_holds is None):
        reason = "the seeds disagree too much to tell"
    elif not paper_holds:
        reason = "not faster per iteration here"
    else:
        reason = cost if fair_holds is False else ""
    return Claim(paper="LSB", where=where, claim=claim, papers_number="much fewer (no number)",
                 ours_papers_axis=str(found["iterations"]) if found else "—",
                 ours_fair=", ".join(f"{axis} {found[axis]}" for axis in ("evaluations", "seconds")) if found
                 else "—", verdict=verdict(paper_holds, fair_holds), reason=reason, details=details)


def figure_4(args) -> Claim:
    """FLSB2 against GWG on the RBM, against the exact expectation of the Hamming statistic."""
    target = targets.make("rbm")
    exact = target.sample_exact(2000, seed=123)
    fixed_state = exact[0]

    def hamming(states, log_p):
        return (states != fixed_state).sum(axis=1).astype(float)

    reference = exact_samples_reference(hamming(exact[1:], None))
    flsb2 = {"parametrization": "lsb2", "burn_in": args.models_iterations}
    runs = [{"GWG": run("gwg", {}, target, 16, seed, args.models_iterations, hamming),
             "FLSB2": run("flsb", flsb2, target, 16, seed, args.models_iterations, hamming)}
            for seed in range(args.seeds)]
    found, lines = _audit(f"RBM 64×16, 16 chains, {args.models_iterations} iterations (FLSB2 learning throughout), "
                          f"{args.seeds} seeds; GWG / FLSB2 (> 1: FLSB2 faster), mean [95 % interval].", runs,
                          reference, 16, "GWG", "FLSB2")
    return _claim("Fig. 4 (RBM)", "FLSB2 converges with far fewer likelihood evaluations than GWG", found, lines,
                  "per evaluation a FLSB2 learning step pays for the probe as well")


def figure_5(args) -> Claim:
    """LSB2 against √t on the first shipped Markov network, against a long √t run."""
    network = shipped_networks()[0]
    target = targets.make("markov_network", network=network)

    def log_p(states, log_p):
        return log_p

    reference = equilibrium(target, log_p, 5, args.reference_steps)
    lsb2 = {"parametrization": "lsb2", "burn_in": args.models_iterations}
    runs = [{"√t": run("locally_balanced", {"balancing": "sqrt"}, target, 5, seed, args.models_iterations, log_p),
             "LSB2": run("lsb", lsb2, target, 5, seed, args.models_iterations, log_p)} for seed in range(args.seeds)]
    found, lines = _audit(f"Markov network {network} ({target.dim} variables), 5 chains, {args.models_iterations} "
                          f"iterations (LSB2 learning throughout), {args.seeds} seeds; √t / LSB2 (> 1: LSB2 faster).",
                          runs, reference, 5, "√t", "LSB2")
    return _claim("Fig. 5 (Markov network)", "LSB reduces the evaluations needed to converge", found, lines,
                  "per evaluation the learning step pays for the probe's neighbourhood as well")


def figures_4_and_5(args) -> list[Claim]:
    """The RBM's and the Markov network's claims."""
    return [figure_4(args), figure_5(args)]
