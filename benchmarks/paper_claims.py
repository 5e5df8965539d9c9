"""Which of the papers' headline claims hold: each on the paper's own axis and accounting, and on fair axes.

For every claim audited: the paper's number, ours on the paper's axis and
accounting, ours on fair axes, and a verdict (``benchmarks.claims``) with the
reason where it is known; then the measurements behind each row. Written to
``paper_claims.md`` beside the sweep's directory (figures: ``paper_claims.html``; the
verdict rows with the settings and commit: ``paper_claims.json``; with
``--record 1`` also ``assets/paper_claims.json``, which the dashboard's claims
card shows).

* LSB (``benchmarks.claims_lsb``): Fig. 2 (LSB2 converges twice as fast as √t,
  case 3) and Table 2 (LSB2's ESS on case 4), with the authors' code run
  beside ours when ``../shared/reference/lsb`` is present; and
  (``benchmarks.claims_lsb_models``) Fig. 4 (FLSB2 on an RBM), Fig. 5 and
  Table 3 (LSB on near-deterministic Markov networks).
* Intracluster moves (``benchmarks.claims_intracluster``): Figs. 2–4 (IM
  mixes faster than Kawasaki per unit of compute), and why the paper's
  settings accept almost nothing.
* OPAD (``benchmarks.claims_opad``): Figs. 1–4 (KL cut to 1/10–1/1000).

Our runs are one sweep (each claim module's ``audit_runs``), executed on Dask
and stored (``--workers``, ``--scheduler``, ``--results``; a re-run computes
only the runs not stored yet, so an interrupted audit resumes and a finished one
is rewritten from its stored runs); the authors' code, the acceptance
measurements and the exact checks run here. The defaults take about half an
hour on two cores (the authors' code most of it); ``--papers lsb,opad`` picks
papers, ``--authors-seeds 0`` skips their code.

Run:  python -m benchmarks paper_claims [--papers lsb,intracluster,opad --seeds 5 --authors-seeds 5 ...]
"""

from __future__ import annotations

import json
import subprocess
from datetime import datetime, timezone
from pathlib import Path

from dashboard.claims import RECORD

from . import SWEEP_DEFAULTS, SWEEP_HELPS, arguments, claims_intracluster, claims_lsb, claims_lsb_models, claims_opad
from . import sweep_store
from .claims import verdict_table
from .claims_intracluster import acceptance_section, figures_2_to_4
from .claims_lsb import figure_2, table_2
from .claims_lsb_models import lsb_models
from .claims_opad import kl_reduction
from .lsb_runs import save

PAPERS = ("lsb", "intracluster", "opad")
HELPS = {"papers": f"comma-separated papers to audit, of {', '.join(PAPERS)}",
         "seeds": "seeds of our convergence runs (LSB Fig. 2)",
         "iterations": "iterations of the convergence runs (LSB Fig. 2: 2000, all burn-in)",
         "sampling_iterations": "sampling iterations after burn-in for LSB Table 2 (paper: 30000)",
         "chains": "chains per LSB run (paper: 30)",
         "reference_steps": "steps of the long √t run that gives the equilibrium reference",
         "authors_seeds": "seeds of the LSB authors' code for Fig. 2 (Table 2 runs seed 0; 0: skip their code)",
         "models_iterations": "iterations of the RBM (Fig. 4) and Markov network (Fig. 5) runs, all learning, and "
                              "the sampling steps of Table 3",
         "im_scale": "fraction of the intracluster paper's units kept (1: its sizes)",
         "im_trials": "intracluster trials (one chain per sampler each)",
         "im_moves": "moves of the paper's IM per trial (the others get the same compute)",
         "im_acceptance_moves": "moves per chain of each acceptance measurement",
         "opad_chains": "chains per OPAD run (paper: 20)",
         "opad_steps": "the horizon of every OPAD figure (paper: 10⁴)",
         "opad_long_steps": "the longer horizon of OPAD Fig. 1 (paper: 10⁶)",
         "record": "1: also write the verdicts the dashboard's claims card shows (assets/paper_claims.json)"}


def main(argv=None) -> None:
    args = arguments("paper_claims", argv, papers=",".join(PAPERS), seeds=5, iterations=2000,
                     sampling_iterations=30_000, chains=30, reference_steps=200_000, authors_seeds=5,
                     models_iterations=3000, im_scale=0.25,
                     im_trials=5, im_moves=300, im_acceptance_moves=40, opad_chains=20, opad_steps=10_000,
                     opad_long_steps=1_000_000, record=0, **SWEEP_DEFAULTS,
                     helps=HELPS | SWEEP_HELPS)
    commit = _commit()  # the code that runs (the tree may change while it does)
    papers = args.papers.split(",")
    unknown = sorted(set(papers) - set(PAPERS))
    if unknown:
        raise SystemExit(f"unknown paper(s) {unknown}; choose from {PAPERS}")
    audited = {"lsb": (claims_lsb, claims_lsb_models), "intracluster": (claims_intracluster,),
               "opad": (claims_opad,)}
    store = sweep_store("paper_claims", [run for paper in papers for module in audited[paper]
                                         for run in module.audit_runs(args)], args)
    claims, investigations = [], []
    if "lsb" in papers:
        claims += [figure_2(args, store), table_2(args, store), *lsb_models(args, store)]
    if "intracluster" in papers:
        claims += figures_2_to_4(args, store)
        investigations.append("## Intracluster moves: why the paper's settings accept almost nothing\n\n"
                              + "\n".join(acceptance_section(args)))
    if "opad" in papers:
        claims += kl_reduction(args, store)
    sections = [f"## {claim.paper}, {claim.where}: {claim.claim}\n\n" + "\n".join(claim.details) for claim in claims]
    text = "\n\n".join(["# The papers' claims, audited", "\n".join(verdict_table(claims)), *sections,
                         *investigations])
    print(text)
    results = store.directory.parent
    save("paper_claims", text, [figure for claim in claims for figure in claim.figures], results)
    record = {"settings": vars(args), "commit": commit, "measured": datetime.now(timezone.utc).isoformat(),
              "claims": [claim.row() for claim in claims]}
    written = [results / "paper_claims.json"] + ([RECORD] if args.record else [])  # RECORD: the dashboard's
    for path in written:
        path.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n")
    print("written:", results / "paper_claims.md", "and .html,", ", ".join(str(path) for path in written))


def _commit() -> str:
    """The project's git commit (with "+changes" when the tree differs from it), or "unknown"."""
    root = Path(__file__).resolve().parents[1]
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True,
                              check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain"], cwd=root, capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("+changes" if dirty.strip() else "")


if __name__ == "__main__":
    main()
