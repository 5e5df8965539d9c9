"""LSB paper §5.2 (Fig. 4): sampling an RBM with FLSB1/FLSB2 against GWG, block Gibbs and Hamming ball.

The shipped RBM (assets/rbm_digits.npz: 64 visible units, 16 hidden, trained
on binarised digits) stands in for the paper's 784 × 250 MNIST RBM: its
hidden units sum out exactly, so we have exact samples (``sample_exact``)
and exact log Z. 16 chains (the paper's batch), burn-in K (learning for
FLSB), then sampling steps. Reported, mean ± std over seeds:

* MMD² between the chains' recent states and 2,000 exact samples, with the
  kernel exp(−Hamming/d) of the GWG paper, along the burn-in (figure: against
  target evaluations, log scale) and its final value;
* evaluations until the chain mean of the Hamming distance to a fixed
  reference state (the DISCS convention) reaches its exact expectation (the
  mean over the other exact samples), and its post-burn-in ESS, per 1,000
  evaluations and per second.

Run:  python -m benchmarks lsb_rbm [--seeds 5 --burn-in 3000 --steps 5000]
"""

from __future__ import annotations

import numpy as np

import targets
from samplers.convergence import exact_samples_reference

from . import LSB_HELPS, arguments
from .lsb_runs import MIXING_COLUMNS, Report, compare

SAMPLERS = {
    "GWG": ("gwg", {}),
    "FLSB1": ("flsb", {"parametrization": "lsb1"}),
    "FLSB2": ("flsb", {"parametrization": "lsb2"}),
    "Gibbs-2": ("block_gibbs", {"block_size": 2}),
    "HB-10-1": ("hamming_ball", {"block_size": 10, "radius": 1}),
}
COLUMNS = {"final_mmd": "final MMD²", **MIXING_COLUMNS}
WINDOW = 10  # snapshots pooled for one MMD estimate
EVERY = 25  # steps between snapshots


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


def main(argv=None) -> None:
    args = arguments("lsb_rbm", argv, seeds=5, burn_in=3000, steps=5000, chains=16, helps=LSB_HELPS)
    target = targets.make("rbm")
    exact = target.sample_exact(2000, seed=123)
    reference = exact[0]

    def statistic(states, log_p):
        """Hamming distance of each chain's state to a fixed reference (the DISCS convention)."""
        return (states != reference).sum(axis=1).astype(float)

    def track_mmd(sampler, step, extra):
        if step % EVERY:
            return
        snapshots = extra.setdefault("snapshots", [])
        snapshots.append(sampler.states.copy())
        del snapshots[:-WINDOW]
        curve = extra.setdefault("mmd_curve", [])
        curve.append((sampler.n_evals, mmd_squared(np.concatenate(snapshots), exact[:500])))
        extra["final_mmd"] = curve[-1][1]

    equilibrium = exact_samples_reference(statistic(exact[1:], None))  # the statistic's reference state left out
    rows = compare(SAMPLERS, target, statistic, args, on_burn_in=track_mmd, reference=equilibrium)
    for results in rows.values():  # the figure shows MMD² (not the statistic) along the burn-in
        for r in results:
            curve = np.array(r.extra.pop("mmd_curve"))
            r.extra.pop("snapshots")
            r.evals, r.burn_in_trace = curve[:, 0], np.maximum(curve[:, 1], 1e-5)
    report = Report("lsb_rbm", "# LSB on an RBM")
    report.add(f"RBM 64×16, {args.chains} chains, K = {args.burn_in}, {args.steps} sampling steps, "
               f"{args.seeds} seeds", rows, COLUMNS, "MMD²", figure_title="RBM burn-in: MMD² to exact samples",
               logy=True, reference=equilibrium)
    report.save()
