"""The LSB paper's claims on its other models: the RBM (§5.2, Fig. 4) and the Markov networks (§5.3, Fig. 5).

**Fig. 4: "FLSB2 is able to adapt to the target distribution and to converge
using a much smaller number of target likelihood evaluations" than GWG.** On
the shipped RBM (64 visible, 16 hidden units; the paper's is 784 × 250 on
MNIST, not shipped), 16 chains: convergence of the chain mean of the
Hamming distance to a fixed random state (the DISCS statistic) against its exact
expectation (the mean over exact samples, ``sample_exact``), by excess area
and first hit, GWG / FLSB2 per seed with 95 % intervals. The paper plots
against iterations, one per step for every sampler (the authors' RBM code
counts nothing else); fair: target evaluations (a FLSB learning step
evaluates p̃ and its gradient at the proposal and at the probe, GWG at the
proposal only) and CPU seconds.

**Table 3: similar ESS** for LSB and the fixed functions on the networks
(ours: every shipped network; LSB2 against √t, bulk ESS of log p̃ per chain
after burn-in, per step and per evaluation; similar: the ratio's 95 %
interval within a factor of 2).

**Fig. 5: LSB "reduces the number of target likelihood evaluations required to
converge"** on near-deterministic Markov networks (the shipped 100-variable
stand-ins for the UAI 2006 networks, 5 chains): LSB2 against √t (Table 3's
best fixed function), the statistic log p̃, against a long √t run from
over-dispersed starts — where its chains disagree (near-deterministic
networks are hard to equilibrate) no convergence can be claimed and the
verdict says inconclusive.

Our runs are runs of the audit's sweep (``audit_runs``; ``benchmarks.paper_claims``
runs it on Dask and stores it), read back here.
"""

from __future__ import annotations

import numpy as np

import targets
from dashboard.model.statistics import available_statistics
from samplers.convergence import exact_samples_reference, interval
from samplers.diagnostics import ess_per_chain, rhat
from sweeps import RunSpec
from targets.markov_network import shipped_networks

from .claims import Claim, judge, verdict
from .claims_lsb import claim_run, ratio_table, speedups, stored_runs
from .lsb_runs import reference as stored_reference
from .lsb_runs import reference_note, reference_run

#: Burn-in of the Markov-network runs for Table 3 (``lsb_markov``'s, Appendix G).
TABLE_3_BURN_IN = 500
AXES = {"iterations": "iterations (the paper's plots)", "evaluations": "target evaluations", "seconds": "CPU seconds"}
FAIR = ("evaluations",)


def _audit(title: str, runs: list[dict], reference, chains: int, baseline: str,
           learned: str) -> tuple[dict, list[str]]:
    """Excess-area speed-ups of ``learned`` over ``baseline`` per axis (none without a reached reference), and the
    Markdown lines."""
    lines = [title, "", reference_note(reference), ""]
    if not runs:
        return {}, lines + ["Not measured: every seed has a failed run (the sweep's summary says why).", ""]
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


def _seeds(args, target: tuple[str, dict], chains: int, iterations: int, baseline: tuple[str, str, dict],
           learned: tuple[str, str, dict], statistic: str) -> list[dict[str, RunSpec]]:
    """Each seed's run of ``baseline`` and ``learned`` ((label, sampler, parameters) each)."""
    return [{label: claim_run(name, params, target, chains, seed, iterations, statistic)
             for label, name, params in (baseline, learned)} for seed in range(args.seeds)]


def figure_4_runs(args) -> list[dict[str, RunSpec]]:
    flsb2 = {"parametrization": "lsb2", "burn_in": args.models_iterations}
    return _seeds(args, ("rbm", {}), 16, args.models_iterations, ("GWG", "gwg", {}), ("FLSB2", "flsb", flsb2),
                  "hamming")


def figure_4(args, store) -> Claim:
    """FLSB2 against GWG on the RBM, against the exact expectation of the Hamming statistic."""
    target = targets.make("rbm")
    equilibrium = exact_samples_reference(available_statistics(target)["hamming"](target.sample_exact(2000, seed=123),
                                                                                  None))
    found, lines = _audit(f"RBM 64×16, 16 chains, {args.models_iterations} iterations (FLSB2 learning throughout), "
                          f"{args.seeds} seeds; GWG / FLSB2 (> 1: FLSB2 faster), mean [95 % interval].",
                          stored_runs(store, figure_4_runs(args)), equilibrium, 16, "GWG", "FLSB2")
    return _claim("Fig. 4 (RBM)", "FLSB2 converges with far fewer likelihood evaluations than GWG", found, lines,
                  "per evaluation a FLSB2 learning step pays for the probe as well")


def figure_5_runs(args) -> tuple[RunSpec, list[dict[str, RunSpec]]]:
    """The long run giving the first shipped network's reference, and each seed's √t and LSB2."""
    target = ("markov_network", {"network": shipped_networks()[0]})
    lsb2 = {"parametrization": "lsb2", "burn_in": args.models_iterations}
    return (reference_run(*target, "log_prob", 5, args.reference_steps),
            _seeds(args, target, 5, args.models_iterations, ("√t", "locally_balanced", {"balancing": "sqrt"}),
                   ("LSB2", "lsb", lsb2), "log_prob"))


def figure_5(args, store) -> Claim:
    """LSB2 against √t on the first shipped Markov network, against a long √t run."""
    network = shipped_networks()[0]
    reference_spec, replicates = figure_5_runs(args)
    title = (f"Markov network {network} ({targets.make('markov_network', network=network).dim} variables), 5 chains, "
             f"{args.models_iterations} iterations (LSB2 learning throughout), {args.seeds} seeds; √t / LSB2 (> 1: "
             "LSB2 faster).")
    if not store.has(reference_spec.run_id):
        found, lines = {}, [title, "", "The equilibrium reference run failed (the sweep's summary says why).", ""]
    else:
        found, lines = _audit(title, stored_runs(store, replicates),
                              stored_reference(store.read(reference_spec.run_id)), 5, "√t", "LSB2")
    return _claim("Fig. 5 (Markov network)", "LSB reduces the evaluations needed to converge", found, lines,
                  "per evaluation the learning step pays for the probe's neighbourhood as well")


def similar(ratio) -> bool | None:
    """A claim of similar ESS judged from the interval of a ratio: holds inside [1/2, 2], fails wholly outside."""
    if ratio.n == 0:
        return None
    if 0.5 <= ratio.low and ratio.high <= 2.0:
        return True
    if ratio.high < 0.5 or ratio.low > 2.0:
        return False
    return None


def table_3_runs(args) -> dict[str, list[dict[str, RunSpec]]]:
    """Per shipped network, each seed's √t and LSB2 (burn-in ``TABLE_3_BURN_IN``, then the sampling steps)."""
    lsb2 = {"parametrization": "lsb2", "burn_in": TABLE_3_BURN_IN}
    return {network: _seeds(args, ("markov_network", {"network": network}), 5, TABLE_3_BURN_IN + args.models_iterations,
                            ("√t", "locally_balanced", {"balancing": "sqrt"}), ("LSB2", "lsb", lsb2), "log_prob")
            for network in shipped_networks()}


def table_3(args, store) -> Claim:
    """LSB2's ESS against √t's on every shipped Markov network: similar (within a factor of 2)?"""
    burn_in = TABLE_3_BURN_IN
    lines = [f"The {len(shipped_networks())} shipped networks, 5 chains, burn-in {burn_in} (LSB2 learning), "
             f"{args.models_iterations} sampling steps, {args.seeds} seeds; LSB2 / √t of the chains' mean bulk ESS of "
             "log p̃, per step and per evaluation, mean [95 % interval] over seeds (similar: within a factor of 2).",
             "", "| network | ESS ratio | ESS per evaluation ratio | split-R̂ of √t's chains |", "|---|---|---|---|"]
    judged = []
    for network, replicates in table_3_runs(args).items():
        per_step, per_eval, rhats = [], [], []
        for runs in stored_runs(store, replicates):
            ess = {label: ess_per_chain(r.values[burn_in + 1:].T).mean() for label, r in runs.items()}
            evals = {label: r.axes["evaluations"][-1] - r.axes["evaluations"][burn_in] for label, r in runs.items()}
            if min(ess.values()) > 0:  # a sampler whose chains all stood still has no ESS to compare
                per_step.append(ess["LSB2"] / ess["√t"])
                per_eval.append(ess["LSB2"] / evals["LSB2"] / (ess["√t"] / evals["√t"]))
            rhats.append(rhat(runs["√t"].values[burn_in + 1:].T))
        step_ratio, eval_ratio = interval(per_step), interval(per_eval)
        judged.append((similar(step_ratio), similar(eval_ratio), step_ratio, eval_ratio))
        still = "" if per_step else " (a sampler's chains stood still, or its runs failed, in every seed)"
        median = f"{np.median(rhats):.3g} (median)" if rhats else "—"
        lines.append(f"| {network} | {step_ratio}{still} | {eval_ratio} | {median} |")
    lines += ["", "Where split-R̂ is far above 1 the chains sit in different modes (or stand still): a chain's ESS "
              "then measures its mixing within its mode, as the paper's does."]
    paper, fair = _all([j[0] for j in judged]), _all([j[1] for j in judged])
    if any(ratio.n == 0 for _, _, ratio, _ in judged):
        reason = "on some networks the chains do not move after burn-in, so there is no ESS to compare"
    elif paper and fair is False:
        reason = "per evaluation LSB2's ESS is not within a factor of 2 of √t's"
    else:
        reason = "" if paper and fair else "the ratios' intervals are not within a factor of 2"
    return Claim(paper="LSB", where="Table 3 (Markov networks)", claim="LSB's ESS is similar to the fixed functions'",
                 papers_number="similar (√t 3.41 and 3.92, LSB2 3.22 and 3.44)",
                 ours_papers_axis=", ".join(str(step) for _, _, step, _ in judged),
                 ours_fair="per evaluation " + ", ".join(str(ev) for _, _, _, ev in judged),
                 verdict=verdict(paper, fair), reason=reason, details=lines)


def _all(judgements: list[bool | None]) -> bool | None:
    """True if every judgement holds, False if any fails, else None."""
    return False if False in judgements else None if None in judgements else True


def audit_runs(args) -> list[RunSpec]:
    """Every run of ours these claims read."""
    reference_spec, figure_5_replicates = figure_5_runs(args)
    pairs = [*figure_4_runs(args), *figure_5_replicates,
             *(pair for replicates in table_3_runs(args).values() for pair in replicates)]
    return [reference_spec, *(spec for pair in pairs for spec in pair.values())]


def lsb_models(args, store) -> list[Claim]:
    """The RBM's and the Markov networks' claims, from the audit's stored runs."""
    return [figure_4(args, store), figure_5(args, store), table_3(args, store)]
