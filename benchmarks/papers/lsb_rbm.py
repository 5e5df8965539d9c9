"""LSB paper §5.2 (Fig. 4): sampling an RBM with FLSB1/FLSB2 against GWG, block Gibbs and Hamming ball.

The shipped RBM (assets/rbm_digits.npz: 64 visible units, 16 hidden, trained
on binarised digits) stands in for the paper's 784 × 250 MNIST RBM: its
hidden units sum out exactly, so we have exact samples (``sample_exact``)
and exact log Z. 16 chains (the paper's batch), burn-in K (learning for
FLSB), then sampling steps. Every run is one run of a sweep, executed on Dask
and stored with its chains' states every 25 steps (``--workers``,
``--scheduler``, ``--results``; a re-run computes only what is not stored and
redraws the table and figure from the stored runs). Reported, mean ± std over
seeds:

* MMD² between the chains' recent states (the last 10 stored snapshots) and
  500 exact samples, with the kernel exp(−Hamming/d) of the GWG paper, along
  the run (figure: against target evaluations, log scale) and at its end;
* evaluations until the chain mean of the Hamming distance to a fixed random
  reference state (the DISCS convention, ``engine.statistics``)
  reaches its exact expectation (its mean over 2,000 exact samples), and its
  post-burn-in ESS, per 1,000 evaluations and per CPU second.

Run:  python -m benchmarks lsb_rbm [--seeds 5 --burn-in 3000 --steps 5000]
"""

from __future__ import annotations

import numpy as np

import targets
from benchmarks import LSB_HELPS, SWEEP_DEFAULTS, SWEEP_HELPS, arguments
from benchmarks.papers.lsb_runs import MIXING_COLUMNS, Case, Report, mixing_runs, run_cases, stored_rows
from engine.statistics import available_statistics
from samplers.diagnostics.convergence import exact_samples_reference

SAMPLERS = {
    "GWG": ("gwg", {}),
    "FLSB1": ("flsb", {"parametrization": "lsb1"}),
    "FLSB2": ("flsb", {"parametrization": "lsb2"}),
    "Gibbs-2": ("block_gibbs", {"block_size": 2}),
    "HB-10-1": ("hamming_ball", {"block_size": 10, "radius": 1}),
}
#: Appendix F's other block samplers (Figs. 8–9, Table 4): Gibbs-X samples a block of X sites from its 2^X values,
#: HB-X-Y a block of X sites from the Hamming ball of radius Y around an auxiliary draw (footnote 7 of §5.2).
APPENDIX_F = {
    "Gibbs-4": ("block_gibbs", {"block_size": 4}),
    "Gibbs-10": ("block_gibbs", {"block_size": 10}),
    "HB-10-2": ("hamming_ball", {"block_size": 10, "radius": 2}),
    "HB-10-3": ("hamming_ball", {"block_size": 10, "radius": 3}),
}
COLUMNS = {"final_mmd": "final MMD²", **MIXING_COLUMNS}
WINDOW = 10  # snapshots pooled for one MMD estimate
EVERY = 25  # steps between snapshots
EXACT_FOR_MMD = 500  # exact samples an MMD estimate compares with


def mmd_squared(a: np.ndarray, b: np.ndarray) -> float:
    """Unbiased MMD² with the kernel k(x, y) = exp(−Hamming(x, y)/d)."""
    d = a.shape[1]

    def mean_kernel(x, y, same):
        hamming = (x[:, None, :] != y[None, :, :]).sum(axis=2)
        k = np.exp(-hamming / d)
        if same:
            n = x.shape[0]
            return (k.sum() - n) / (n * (n - 1))
        return k.mean()

    return float(mean_kernel(a, a, True) + mean_kernel(b, b, True) - 2 * mean_kernel(a, b, False))


def mmd_curve(result: dict, exact: np.ndarray) -> np.ndarray:
    """(target evaluations, MMD²) at every stored snapshot from the ``WINDOW``-th on: the last ``WINDOW`` snapshots
    pooled against ``exact``."""
    snapshots = result["states"]  # (snapshots, chains, dim), every EVERY steps from step 0
    evals = result["trace_evals"]  # every step
    return np.array([(evals[k * EVERY], mmd_squared(np.concatenate(snapshots[k + 1 - WINDOW: k + 1]), exact))
                     for k in range(WINDOW - 1, len(snapshots))])


def main(argv=None) -> None:
    args = arguments("lsb_rbm", argv, seeds=5, burn_in=3000, steps=5000, chains=16, **SWEEP_DEFAULTS,
                     helps=LSB_HELPS | SWEEP_HELPS)
    if (args.burn_in + args.steps) // EVERY < WINDOW:
        raise SystemExit(f"an MMD² estimate pools {WINDOW} snapshots {EVERY} steps apart: run at least "
                         f"{WINDOW * EVERY} steps in all (--burn-in + --steps)")
    target = targets.make("rbm")
    exact = target.sample_exact(2000, seed=123)
    equilibrium = exact_samples_reference(available_statistics(target)["hamming"](exact, None))
    case = Case(f"RBM 64×16, {args.chains} chains, K = {args.burn_in}, {args.steps} sampling steps, {args.seeds} seeds",
                "RBM: MMD² to exact samples", mixing_runs(SAMPLERS, "rbm", {}, "hamming", args, state_every=EVERY))
    store = run_cases("lsb_rbm", [case], args)
    rows = stored_rows(store, case, args.burn_in, equilibrium)
    for label, runs in case.runs.items():  # the figure shows MMD² (not the statistic) along the run
        for summary, run in zip(rows[label], [run for run in runs if store.has(run.run_id)]):
            curve = mmd_curve(store.read(run.run_id), exact[:EXACT_FOR_MMD])
            summary.evals, summary.burn_in_trace = curve[:, 0], np.maximum(curve[:, 1], 1e-5)
            summary.extra["final_mmd"] = curve[-1, 1]
    report = Report("lsb_rbm", "# LSB on an RBM")
    report.add(case.title, rows, COLUMNS, "MMD²", figure_title=case.figure_title, logy=True, reference=equilibrium)
    report.save(store.directory.parent)
