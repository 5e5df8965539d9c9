"""LSB paper §5.1 (Fig. 2, Table 2): 30×30 image segmentation, fixed vs learned balancing functions.

The four cases of Eq. 6 — independent/dependent (λ = 0/1) × noisy/clean
(μ = 1/3, σ = 3) — each sampled by locally balanced proposals with the four
fixed functions and by LSB1 and LSB2, 30 chains, burn-in K = 2000 (learning
for LSB), then ``--steps`` sampling steps (paper: 30,000; default 10,000 to
fit a laptop), over ``--seeds`` seeds (one fixed noisy image per case; the
seed changes the sampler's randomness and initial states). The statistic is
the agreement of the segmentation with the ground truth.

Every run, and each case's equilibrium reference (a long √t run from
over-dispersed starts, ``--reference-steps``), is one run of a sweep, executed
on Dask and stored (``--workers``, ``--scheduler``, ``--results``: a re-run
computes only the runs not stored yet, and redraws the tables and figures from
the stored ones). Prints and writes (lsb_segmentation.{md,html} beside the sweep's directory)
a table per case — evaluations to equilibrium ("—" where the reference's
chains disagree, as on case 3, whose single-flip chains are metastable),
post-burn-in ESS, ESS per 1,000 evaluations and per CPU second, mean ± std
over seeds — and the burn-in traces. ``benchmarks.claims.paper_claims`` audits the
paper's Fig. 2 claim on this task.

Run:  python -m benchmarks lsb_segmentation [--seeds 5 --burn-in 2000 --steps 10000 --reference-steps 200000
                                             --workers 2 --results DIR]
"""

from __future__ import annotations

from benchmarks import LSB_HELPS, SWEEP_DEFAULTS, SWEEP_HELPS, arguments
from benchmarks.papers.lsb_runs import FIXED_FUNCTIONS, Case, mixing_runs, reference_run, report_cases

CASES = {
    "case 1 (independent, noisy)": dict(lam=0.0, mu=1.0, sigma=3.0),
    "case 2 (independent, clean)": dict(lam=0.0, mu=3.0, sigma=3.0),
    "case 3 (dependent, noisy)": dict(lam=1.0, mu=1.0, sigma=3.0),
    "case 4 (dependent, clean)": dict(lam=1.0, mu=3.0, sigma=3.0),
}
SAMPLERS = {
    **FIXED_FUNCTIONS,
    "LSB1": ("lsb", {"parametrization": "lsb1"}),
    "LSB2": ("lsb", {"parametrization": "lsb2"}),
}


def main(argv=None) -> None:
    args = arguments("lsb_segmentation", argv, seeds=5, burn_in=2000, steps=10000, chains=30, size=30,
                     optimizer="sgd", reference_steps=200_000, **SWEEP_DEFAULTS, helps=LSB_HELPS | SWEEP_HELPS | {
                         "size": "side L of the L×L segmentation image",
                         "optimizer": "the learned g's optimiser: sgd (the paper's, momentum 0.9) or adam"})
    compared = {label: (name, {**params, "optimizer": args.optimizer} if name == "lsb" else params)
                for label, (name, params) in SAMPLERS.items()}
    cases = []
    for case, params in CASES.items():
        target = {"size": args.size, "seed": 0, **params}
        cases.append(Case(f"{case}: λ={params['lam']}, μ={params['mu']}, σ={params['sigma']}", case,
                          mixing_runs(compared, "ising_segmentation", target, "agreement", args),
                          reference_run("ising_segmentation", target, "agreement", args.chains, args.reference_steps)))
    report_cases("lsb_segmentation", f"# LSB segmentation ({args.size}×{args.size}, {args.chains} chains, K = "
                 f"{args.burn_in}, {args.steps} sampling steps, {args.seeds} seeds, optimiser {args.optimizer})", cases,
                 args, "agreement with truth")
