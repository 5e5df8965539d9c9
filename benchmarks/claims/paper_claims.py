"""Which of the papers' headline claims hold: each sentence quoted, judged on the axis it names, in three columns.

For every claim audited (``benchmarks.claims.claim.Claim``): the paper's sentence
with its location, the axis it speaks of, the criterion (``samplers.diagnostics.verdicts``:
one strict vocabulary over ≥ 5 independent seeds), the paper's number, the
authors' own code run as published (where ``../shared/reference`` has it), our
implementation with the fair axes beside it, and the row's verdict — the
weakest of the columns'. Written to ``paper_claims.md`` beside the sweeps'
directories (figures: ``paper_claims.html``; the rows with the settings, and
each with the commit and the digest of its sources: ``paper_claims.json``;
with ``--record 1`` also ``assets/paper_claims.json``, which the dashboard's
claims card shows and a test holds to the code: it fails when a claim's
sources have changed since).

A claim's sources (``benchmarks.claims.freshness``) are what its claim
module's runs load: the project modules the module, its runs' classes and the
samplers and targets they name reach, and the data files those read. With
``--record 1`` only the claim modules whose sources changed since the record
(or that it lacks, or all when the settings differ from the record's) are
measured again; the others keep their recorded rows (``--fresh-too 1``
measures them too).

* LSB (``benchmarks.claims.lsb``): Fig. 2 on the four segmentation cases,
  Fig. 3 (the latent variables against the ground truth), Table 2 as the
  sentence cites it (LSB2 against each previous function; the paper's own
  table judged too), its caption (a claim of significance), LSB1 during
  burn-in and in case 4, with the authors' code run beside ours; and
  (``benchmarks.claims.lsb_models``) the abstract, the RBM (Fig. 4, §5.2's
  overhead, Appendix F's Table 4) and the Markov networks (Fig. 5, Table 3).
* Intracluster moves (``benchmarks.claims.intracluster``): IM against Kawasaki
  at equal CPU time on Figs. 2–4, Metropolis's ensemble on Figs. 3–4, IM's ACF
  reaching 0 on Fig. 4 (the paper's sizes), §5's "outperforms … by a
  significant margin", and the acceptance rates §4 and §5 call good.
* OPAD (``benchmarks.claims.opad``): Figs. 1–4 at every checkpoint the paper
  plots, the abstract's "consistently and often substantially", §4.4's "more
  noticeable in higher iterations", §5's "several orders of magnitude",
  Inequalities (7) and (9) chain by chain, and the cost (target evaluations
  and CPU).

Each claim module offers ``audit_runs(args)`` (its runs, one sweep named after
the module and its sources' digest, so a stored run is reused only while the
code it loaded is unchanged: executed on Dask and stored; ``--workers``,
``--scheduler``, ``--results``; a re-run computes only the runs not stored
yet) and ``claims(args, store)``; a
module may offer ``investigations(args)`` (Markdown sections). ``--quick 1``
takes every size from ``QUICK`` (the same code paths, under 3 minutes on two
cores; a test runs it end to end); the defaults take about an hour on two
cores.

Run:  python -m benchmarks paper_claims [--papers lsb,intracluster,opad --seeds 5 --quick 1 ...]
"""

from __future__ import annotations

import argparse
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
from benchmarks.claims.claim import RECORD_COMMAND, claim_section, verdict_table
from benchmarks.claims.freshness import ROOT, digests
from benchmarks.papers.lsb_runs import save
from engine.presets import CLAIMS_RECORD
from sweeps.runner import DEFAULT_RESULTS

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
         "record": "1: also write the verdicts the dashboard's claims card shows (assets/paper_claims.json), "
                   "measuring again only the claim modules whose sources changed since",
         "fresh_too": "1: with --record 1, also measure again the claim modules whose sources did not change"}
#: The sizes of ``--quick 1`` (options given on the command line still win).
QUICK = dict(seeds=2, authors_seeds=1, iterations=40, sampling_iterations=200, lsb_authors_cases="3", chains=4,
             reference_steps=2000, models_iterations=30, im_scale=0.03, im_moves=15, im_acceptance_moves=3,
             opad_chains=2, opad_steps=300, opad_long_steps=1000)
#: Settings that describe the machine or what to record, not the measurement (left out of the record).
MACHINE_SETTINGS = ("workers", "scheduler", "results", "record", "fresh_too")


def audit_arguments(argv=None) -> argparse.Namespace:
    """The options of ``argv`` with their defaults, every size from ``QUICK`` with ``--quick 1`` (unless given)."""
    args = arguments("paper_claims", argv, papers=",".join(PAPERS), seeds=5, authors_seeds=5, iterations=2000,
                     sampling_iterations=3000, lsb_authors_cases="1,2,3,4", chains=30, reference_steps=200_000,
                     models_iterations=3000, im_scale=1.0, im_moves=10_000, im_acceptance_moves=40, opad_chains=20,
                     opad_steps=10_000, opad_long_steps=1_000_000, quick=0, record=0, fresh_too=0, **SWEEP_DEFAULTS,
                     helps=HELPS | SWEEP_HELPS)
    if args.quick:
        given = {option.split("=", 1)[0][2:].replace("-", "_") for option in argv or [] if option.startswith("--")}
        for key, value in QUICK.items():
            if key not in given:
                setattr(args, key, value)
    return args


def main(argv=None) -> None:
    args = audit_arguments(argv)
    papers = args.papers.split(",")
    unknown = sorted(set(papers) - set(PAPERS))
    if unknown:
        raise SystemExit(f"unknown paper(s) {unknown}; choose from {tuple(PAPERS)}")
    modules = [module for paper in papers for module in PAPERS[paper]]
    runs = {module.__name__: module.audit_runs(args) for module in modules}
    commit, sources = _commit(), digests(runs)  # the code that runs (the tree may change while it does)
    settings = {key: value for key, value in vars(args).items() if key not in MACHINE_SETTINGS}
    kept = _kept_rows(settings, sources, args.fresh_too) if args.record and not args.quick else {}
    audited = {module: module.claims(args, sweep_store(sweep_name(module.__name__, sources[module.__name__]),
                                                       runs[module.__name__], args))
               for module in modules if module.__name__ not in kept}
    claims = [claim for found in audited.values() for claim in found]
    investigations = [section for module in audited if hasattr(module, "investigations")
                      for section in module.investigations(args)]
    text = "\n\n".join(["# The papers' claims, audited", "\n".join(verdict_table(claims)),
                        *map(claim_section, claims), *investigations, *_kept_note(kept)])
    print(text)
    results = Path(args.results) if args.results else DEFAULT_RESULTS
    save("paper_claims", text, [figure for claim in claims for figure in claim.figures], results)
    measured = datetime.now(timezone.utc).isoformat()
    rows = kept | {module.__name__: [claim.row() | {"module": module.__name__, "sources": sources[module.__name__],
                                                    "commit": commit, "measured": measured} for claim in found]
                   for module, found in audited.items()}
    settings["papers"] = ",".join(paper for paper, found in PAPERS.items()
                                  if any(module.__name__ in rows for module in found))
    record = {"settings": settings, "claims": [row for found in PAPERS.values() for module in found
                                               for row in rows.get(module.__name__, [])]}
    written = [results / "paper_claims.json"] + ([CLAIMS_RECORD] if args.record else [])  # the dashboard's
    if args.record and (args.quick or digests(runs) != sources):
        written.pop()
        print("not recorded for the dashboard: " + ("a quick audit decides nothing" if args.quick else
                                                    "the measured sources changed while the audit ran"),
              file=sys.stderr)
    for path in written:
        path.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n")
    print("written:", results / "paper_claims.md", "and .html,", ", ".join(str(path) for path in written))


def sweep_name(module: str, digest: str) -> str:
    """The sweep of claim module ``module``'s runs on the sources of digest ``digest``: a stored run is reused
    only while the code it loaded is unchanged."""
    return f"paper_claims-{module.rpartition('.')[2]}-{digest[:12]}"


def current_sources(settings: dict, root: Path = ROOT) -> dict[str, str]:
    """Each claim module's digest of its sources as they are now under ``root``, its runs those of ``settings``
    (a record's)."""
    args = argparse.Namespace(**settings)
    return digests({module.__name__: module.audit_runs(args) for found in PAPERS.values() for module in found}, root)


def _kept_rows(settings: dict, sources: dict[str, str], fresh_too: bool) -> dict[str, list[dict]]:
    """The recorded rows that stay, by claim module: those of the modules audited now whose sources are unchanged
    (``sources``; none if ``fresh_too``), and those of the modules not audited now, as recorded — none when the
    record was measured with other settings (``papers`` aside)."""
    try:
        record = json.loads(CLAIMS_RECORD.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if _measurement(record.get("settings", {})) != _measurement(settings):
        print("the record was measured with other settings: every claim is measured again", file=sys.stderr)
        return {}
    rows: dict[str, list[dict]] = {}
    for row in record.get("claims", []):
        rows.setdefault(row.get("module", ""), []).append(row)
    return {module: found for module, found in rows.items() if module and (
        module not in sources or not fresh_too and all(row.get("sources") == sources[module] for row in found))}


def _measurement(settings: dict) -> dict:
    """The settings that decide a claim module's measurement (which papers are audited does not)."""
    return {key: value for key, value in settings.items() if key != "papers"}


def _kept_note(kept: dict[str, list[dict]]) -> list[str]:
    """A Markdown line naming the claim modules whose recorded rows were kept, if any."""
    if not kept:
        return []
    return [f"Kept from the record (sources unchanged, or not audited now; `{RECORD_COMMAND} --fresh-too 1` "
            "measures them again): " + ", ".join(f"`{module}` ({len(rows)} claims)" for module, rows in kept.items())]


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
