"""A paper's claim as audited by ``benchmarks.claims.paper_claims``: its sentence, three columns of evidence, a verdict.

Each claim quotes the paper's sentence (``quote``) with its location
(``where``), names the axis that sentence speaks of (``axis``; the paper's
plotting axis beside it in ``plotted`` where it differs) and is judged by one
written criterion (``samplers.diagnostics.verdicts``) on that axis, in up to three
columns:

* the paper's number (``papers_number``);
* the authors' own code run as published (``authors``), where it exists in
  ``../shared/reference/`` — otherwise its verdict is None and the column says
  so;
* our implementation (``ours``), with the fair axes (moves, target
  evaluations, CPU seconds) always shown beside it (``fair``).

The row's verdict (``verdict``) is the weakest of the columns' verdicts, so a
claim the authors' own code contradicts never reads *reproduced*. Where our
model cannot be the paper's, ``stand_in`` says what stands in and the verdict
stays *inconclusive* unless ``equivalent`` argues the stand-in is the same
experiment.

The record (``assets/paper_claims.json``) also stores a digest of the sources
it measured (``source_digest``), so a test notices when the code has changed
since.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from samplers.diagnostics.verdicts import INCONCLUSIVE, VERDICTS, weakest

ROOT = Path(__file__).resolve().parents[2]
#: The sources whose results the record holds: the samplers, the targets, the audit and the paper experiments it
#: runs. The run plumbing the audit also goes through (``engine``'s configuration and session, ``sweeps``) is left
#: out, so that work on the page does not stale the record; its own tests pin what it hands the samplers.
MEASURED_SOURCES = ("samplers/**/*.py", "targets/**/*.py", "benchmarks/claims/*.py", "benchmarks/papers/*.py")
#: Said in the authors' column of a claim whose paper published no code (nothing in ``../shared/reference``).
NO_AUTHORS_CODE = "no code of the authors' in ../shared/reference"
#: The command that re-records the audit the dashboard shows.
RECORD_COMMAND = "python -m benchmarks paper_claims --record 1"


@dataclass(frozen=True)
class Evidence:
    """One column of a claim: what was measured, in words with its numbers, and its verdict (None: no evidence of
    this kind exists, e.g. no published code)."""

    text: str
    verdict: str | None = None

    def __post_init__(self):
        if self.verdict is not None and self.verdict not in VERDICTS:
            raise ValueError(f"not a verdict: {self.verdict!r}; verdicts are {VERDICTS}")


@dataclass(frozen=True)
class Claim:
    """One audited claim: a row of the verdict table, and the sections and figures behind it."""

    paper: str
    where: str
    quote: str
    claim: str
    axis: str
    rule: str
    papers_number: str
    authors: Evidence
    ours: Evidence
    fair: str
    plotted: str = ""
    stand_in: str = ""
    equivalent: str = ""
    reason: str = ""
    replay: str = ""
    details: list[str] = field(default_factory=list, compare=False)
    figures: list = field(default_factory=list, compare=False)

    @property
    def verdict(self) -> str:
        """The weakest of the columns' verdicts; inconclusive on a stand-in not argued equivalent."""
        found = [column.verdict for column in (self.authors, self.ours) if column.verdict is not None]
        combined = weakest(*found)
        return INCONCLUSIVE if self.stand_in and not self.equivalent else combined

    @property
    def verdict_text(self) -> str:
        """The verdict with each column's: e.g. "not reproduced (authors' code: not reproduced; ours: weaker than
        claimed)"."""
        parts = [f"authors' code: {self.authors.verdict}"] if self.authors.verdict is not None else []
        parts.append(f"ours: {self.ours.verdict}" + (" on a stand-in" if self.stand_in else ""))
        return f"{self.verdict} ({'; '.join(parts)})"

    def row(self) -> dict:
        """The record's row (what the dashboard's claims card shows)."""
        return {"paper": self.paper, "where": self.where, "quote": self.quote, "claim": self.claim,
                "axis": self.axis, "plotted": self.plotted, "rule": self.rule, "papers_number": self.papers_number,
                "authors": self.authors.text, "authors_verdict": self.authors.verdict, "ours": self.ours.text,
                "ours_verdict": self.ours.verdict, "fair": self.fair, "stand_in": self.stand_in,
                "equivalent": self.equivalent, "reason": self.reason, "replay": self.replay,
                "verdict": self.verdict, "verdict_text": self.verdict_text}


#: The verdict table's columns: row key → header.
TABLE_COLUMNS = {"where": "where", "claim": "claim", "axis": "axis", "papers_number": "paper's number",
                 "authors": "authors' code", "ours": "ours", "fair": "ours, fair axes", "verdict_text": "verdict"}


def verdict_table(claims: list[Claim]) -> list[str]:
    """The Markdown verdict table, one row per claim."""
    lines = ["| paper | " + " | ".join(TABLE_COLUMNS.values()) + " |", "|---|" + "---|" * len(TABLE_COLUMNS)]
    for claim in claims:
        row = claim.row()
        cells = [claim.paper, *(_cell(row[key]) for key in TABLE_COLUMNS)]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def claim_section(claim: Claim) -> str:
    """The Markdown section of one claim: the quoted sentence, its criterion, the three columns, the details."""
    head = [f"## {claim.paper}, {claim.where}: {claim.claim}", "", f"> {claim.quote}", "",
            f"- **Axis the sentence names:** {claim.axis}" + (f" (the paper plots {claim.plotted})"
                                                              if claim.plotted else ""),
            f"- **Criterion:** {claim.rule}", f"- **Paper's number:** {claim.papers_number}",
            f"- **Authors' code:** {claim.authors.text}" + (f" → *{claim.authors.verdict}*"
                                                            if claim.authors.verdict else ""),
            f"- **Ours:** {claim.ours.text} → *{claim.ours.verdict}*", f"- **Ours on fair axes:** {claim.fair}"]
    if claim.stand_in:
        head.append(f"- **Stand-in:** {claim.stand_in}" + (f" (equivalent: {claim.equivalent})"
                                                          if claim.equivalent else ""))
    head += [f"- **Verdict:** {claim.verdict_text}" + (f" — {claim.reason}" if claim.reason else ""), ""]
    return "\n".join(head + claim.details)


def source_digest(root: Path = ROOT) -> str:
    """SHA-256 of the measured sources (``MEASURED_SOURCES``): every file's path relative to ``root`` and bytes."""
    digest = hashlib.sha256()
    for path in sorted({path for pattern in MEASURED_SOURCES for path in root.glob(pattern)}):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def _cell(value) -> str:
    return (str(value) if value not in (None, "") else "—").replace("|", "\\|").replace("\n", " ")
