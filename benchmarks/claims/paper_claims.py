"""Which of the papers' headline claims hold: each sentence quoted, judged on the axis it names, in three columns.

For every claim audited (``benchmarks.claims.claim.Claim``): the paper's sentence
with its location, the axis it speaks of, the criterion (``samplers.diagnostics.verdicts``:
one strict vocabulary over ≥ 5 independent seeds), the paper's number, the
authors' own code run as published (where ``../shared/reference`` has it), our
implementation with the fair axes beside it, and the row's verdict — the
weakest of the columns'. Written to ``paper_claims.md`` beside the sweep's
directory (figures: ``paper_claims.html``; the rows with the settings, the
commit and the digest of the measured sources: ``paper_claims.json``; with
``--record 1`` also ``assets/paper_claims.json``, which the dashboard's
claims card shows and a test holds to the code: it fails when the sources'
digest has changed since).

* LSB (``benchmarks.claims.lsb``): Fig. 2 and Table 2 on the four
  segmentation cases, with the authors' code run beside ours; and
  (``benchmarks.claims.lsb_models``) the RBM (Fig. 4), Appendix F and the
  Markov networks (Fig. 5, Table 3).
* Intracluster moves (``benchmarks.claims.intracluster``): IM against Kawasaki
  at equal CPU time on Figs. 2–4, Metropolis's ensemble on Figs. 3–4, IM's ACF
  reaching 0 on Fig. 4 (the paper's sizes), and why the paper's settings
  accept almost nothing.
* OPAD (``benchmarks.claims.opad``): Figs. 1–4, at every checkpoint the
  paper plots.

Each claim module offers ``audit_runs(args)`` (its runs, one sweep for all:
executed on Dask and stored; ``--workers``, ``--scheduler``, ``--results``; a
re-run computes only the runs not stored yet) and ``claims(args, store)``; a
module may offer ``investigations(args)`` (Markdown sections). ``--quick 1``
takes every size from ``QUICK`` (the same code paths, under 3 minutes on two
cores; a test runs it end to end); the defaults take about an hour on two
cores.

Run:  python -m benchmarks paper_claims [--papers lsb,intracluster,opad --seeds 5 --quick 1 ...]
"""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

from benchmarks import SWEEP_DEFAULTS, SWEEP_HELPS, arguments, sweep_store
from benchmarks.claims import intracluster as claims_intracluster
from benchmarks.claims import lsb as claims_lsb
from benchmarks.claims import lsb_models as claims_lsb_models
from benchmarks.claims import opad as claims_opad
from benchmarks.claims.claim import claim_section, source_digest, verdict_table
from benchmarks.papers.lsb_runs import save
from engine.presets import CLAIMS_RECORD

#: The claim modules of each paper.
PAPERS = {"lsb": (claims_lsb, claims_lsb_models), "intracluster": (claims_intracluster,), "opad": (claims_opad,)}
HELPS = {"papers": f"comma-separated papers to audit, of {', '.join(PAPERS)}",
         "seeds": "independent seeds of each of our runs (a decisive verdict needs at least 5)",
         "authors_seeds": "independent seeds of the LSB authors' code (0: skip their code)",
         "iterations": "iterations of the LSB convergence runs (Fig. 2: 2000, all burn-in)",
         "sampling_iterations": "sampling iterations after burn-in for LSB Table 2 (paper: 30000; the default keeps "
                                "the audit, the authors' code included, within its budget)",
         "lsb_authors_cases": "comma-separated LSB segmentation cases (1–4) the authors' code runs on",
         "chains": "chains per LSB run (paper: 30)",
         "reference_steps": "steps of the long √t runs that give equilibrium references",
         "models_iterations": "RBM (Fig. 4, App. F): burn-in iterations (FLSB learning; paper 24,000) and as many "
                              "sampling ones (paper 120,000); Markov networks (Fig. 5, Table 3): sampling iterations "
                              "after K = 500 (paper 10,000)",
         "im_scale": "fraction of the intracluster paper's units kept (1: its sizes)",
         "im_moves": "moves of the paper's IM per trial, the others getting the same CPU time (paper: 10⁴ on the "
                     "RBM, 10⁵ on the lattices)",
         "im_acceptance_moves": "moves per chain of each acceptance measurement",
         "opad_chains": "chains per OPAD run (paper: 20)",
         "opad_steps": "the horizon of every OPAD figure (paper: 10⁴)",
         "opad_long_steps": "the longer horizon of OPAD Fig. 1 (paper: 10⁶)",
         "quick": "1: every size from QUICK (same code paths, a few minutes; verdicts not decisive)",
         "record": "1: also write the verdicts the dashboard's claims card shows (assets/paper_claims.json)"}
#: The sizes of ``--quick 1`` (options given on the command line still win).
QUICK = dict(seeds=2, authors_seeds=1, iterations=40, sampling_iterations=200, lsb_authors_cases="3", chains=4,
             reference_steps=2000, models_iterations=30, im_scale=0.03, im_moves=15, im_acceptance_moves=3,
             opad_chains=2, opad_steps=300, opad_long_steps=1000)
#: Settings that describe the machine, not the measurement (left out of the record).
MACHINE_SETTINGS = ("workers", "scheduler", "results")


def main(argv=None) -> None:
    args = arguments("paper_claims", argv, papers=",".join(PAPERS), seeds=5, authors_seeds=5, iterations=2000,
                     sampling_iterations=3000, lsb_authors_cases="1,2,3,4", chains=30, reference_steps=200_000,
                     models_iterations=3000, im_scale=1.0, im_moves=10_000, im_acceptance_moves=40, opad_chains=20,
                     opad_steps=10_000, opad_long_steps=1_000_000, quick=0, record=0, **SWEEP_DEFAULTS,
                     helps=HELPS | SWEEP_HELPS)
    if args.quick:
        given = {option.split("=", 1)[0][2:].replace("-", "_") for option in argv or [] if option.startswith("--")}
        for key, value in QUICK.items():
            if key not in given:
                setattr(args, key, value)
    commit, digest = _commit(), source_digest()  # the code that runs (the tree may change while it does)
    papers = args.papers.split(",")
    unknown = sorted(set(papers) - set(PAPERS))
    if unknown:
        raise SystemExit(f"unknown paper(s) {unknown}; choose from {tuple(PAPERS)}")
    modules = [module for paper in papers for module in PAPERS[paper]]
    store = sweep_store("paper_claims", [run for module in modules for run in module.audit_runs(args)], args)
    claims = [claim for module in modules for claim in module.claims(args, store)]
    investigations = [section for module in modules if hasattr(module, "investigations")
                      for section in module.investigations(args)]
    text = "\n\n".join(["# The papers' claims, audited", "\n".join(verdict_table(claims)),
                         *map(claim_section, claims), *investigations])
    print(text)
    results = store.directory.parent
    save("paper_claims", text, [figure for claim in claims for figure in claim.figures], results)
    settings = {key: value for key, value in vars(args).items() if key not in MACHINE_SETTINGS}
    record = {"settings": settings, "commit": commit, "digest": digest,
              "measured": datetime.now(timezone.utc).isoformat(), "claims": [claim.row() for claim in claims]}
    written = [results / "paper_claims.json"] + ([CLAIMS_RECORD] if args.record else [])  # the dashboard's
    if args.record and (args.quick or digest != source_digest()):
        written.pop()
        print("not recorded for the dashboard: " + ("a quick audit decides nothing" if args.quick else
                                                    "the measured sources changed while the audit ran"),
              file=sys.stderr)
    for path in written:
        path.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n")
    print("written:", results / "paper_claims.md", "and .html,", ", ".join(str(path) for path in written))


def _commit() -> str:
    """The project's git commit (with "+changes" when the tree differs from it), or "unknown"."""
    root = Path(__file__).resolve().parents[2]
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True,
                              check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain"], cwd=root, capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("+changes" if dirty.strip() else "")


if __name__ == "__main__":
    main()
