"""A paper's claim as audited by ``benchmarks.claims.paper_claims``: its sentence, three columns of evidence, a verdict.

Each claim quotes the paper's sentence (``quote``) with its location
(``where``), names the axis that sentence speaks of (``axis``; the paper's
plotting axis beside it in ``plotted`` where it differs) and is judged by one
written criterion (``samplers.diagnostics.verdicts``) on that axis, in up to three
columns:

* the paper's number (``papers_number``), judged (``papers``) where the paper
  cites its own table as evidence: a paper whose numbers contradict its
  sentence is a finding;
* the authors' own code run as published (``authors``), where it exists in
  ``../shared/reference/`` — otherwise its verdict is None and the column says
  so;
* our implementation (``ours``), with the fair axes (moves, target
  evaluations, CPU seconds) always shown beside it (``fair``).

The row's verdict (``verdict``) is the weakest of the columns' verdicts,
always, so a claim the authors' own code (or the paper's own table)
contradicts never reads *reproduced*. Where our model cannot be the paper's,
``stand_in`` says what stands in, and unless ``equivalent`` argues the
stand-in is the same experiment it caps the row at *inconclusive*: it can
lower a verdict to that, never lift a weaker one.

Every column's verdict is derived from its judgements (``Evidence.judged``:
``samplers.diagnostics.verdicts.Judgement``, a criterion and the numbers it
judged), stored in the record at full precision, so that a test can judge the
record again from its numbers alone; a column that could not be measured says
why (``missing``) and counts as *inconclusive*.

In the record (``assets/paper_claims.json``) each row also keeps the digest of
the sources its runs loaded (``benchmarks.claims.freshness``), so a test
notices when the code has changed since.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from samplers.diagnostics.verdicts import INCONCLUSIVE, Criterion, Judgement, judgement_from_dict, weakest

#: Said in the authors' column of a claim whose paper published no code (nothing in ``../shared/reference``).
NO_AUTHORS_CODE = "no code of the authors' in ../shared/reference"
#: The command that re-records the audit the dashboard shows.
RECORD_COMMAND = "python -m benchmarks paper_claims --record 1"


@dataclass(frozen=True)
class Evidence:
    """One column of a claim: what was measured, in words with its numbers, the judgements its verdict derives
    from, and what could not be measured (``missing``: counts as inconclusive). No judgement and nothing missing:
    no evidence of this kind exists (e.g. no published code), and the column has no verdict."""

    text: str
    judged: tuple[Judgement, ...] = ()
    missing: str = ""

    def __post_init__(self):
        if not all(isinstance(judgement, Judgement) for judgement in self.judged):
            raise TypeError(f"a column's verdict is derived from judgements (samplers.diagnostics.verdicts."
                            f"Judgement), never stated: got {self.judged!r}")

    @classmethod
    def judging(cls, text: str, criterion: Criterion, evidence, label: str = "") -> Evidence:
        """A column of one judgement."""
        return cls(text, (Judgement(label, criterion, evidence),))

    @classmethod
    def not_measured(cls, why: str) -> Evidence:
        return cls(f"not measured: {why}", missing=why)

    @property
    def verdict(self) -> str | None:
        """The weakest of the judgements' verdicts (and inconclusive for what is missing); None without either."""
        if not self.judged and not self.missing:
            return None
        return weakest(*(judgement.verdict for judgement in self.judged), *([INCONCLUSIVE] if self.missing else []))

    def record(self) -> dict:
        """The record's form: each judgement with its numbers, and what is missing."""
        return {"judged": [judgement.as_dict() for judgement in self.judged], "missing": self.missing}


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
    papers: Evidence | None = None
    details: list[str] = field(default_factory=list, compare=False)
    figures: list = field(default_factory=list, compare=False)

    @property
    def columns(self) -> dict[str, Evidence]:
        """The columns that exist, by record key: the paper's numbers (where judged), the authors' code, ours."""
        found = {"papers_number": self.papers, "authors": self.authors, "ours": self.ours}
        return {key: column for key, column in found.items() if column is not None}

    @property
    def capped(self) -> bool:
        """Whether ours ran on a stand-in not argued equivalent (which caps the row at inconclusive)."""
        return bool(self.stand_in) and not self.equivalent

    @property
    def verdict(self) -> str:
        """The weakest of the columns' verdicts, always; a stand-in not argued equivalent caps it at inconclusive
        (never lifts it)."""
        combined = weakest(*(column.verdict for column in self.columns.values() if column.verdict is not None))
        return weakest(combined, INCONCLUSIVE) if self.capped else combined

    @property
    def verdict_text(self) -> str:
        """The verdict with each column's: e.g. "not reproduced (paper's numbers: not reproduced; authors' code:
        inconclusive; ours: direction reproduced, size not shown)"."""
        names = {"papers_number": "paper's numbers", "authors": "authors' code", "ours": "ours"}
        parts = [f"{names[key]}: {column.verdict}" + (" on a stand-in" if key == "ours" and self.stand_in else "")
                 for key, column in self.columns.items() if column.verdict is not None]
        cap = ("; a stand-in not shown equivalent caps the row at inconclusive"
               if self.capped and weakest(*(column.verdict for column in self.columns.values()
                                            if column.verdict is not None)) != self.verdict else "")
        return f"{self.verdict} ({'; '.join(parts)}{cap})"

    def row(self) -> dict:
        """The record's row (what the dashboard's claims card shows)."""
        return {"paper": self.paper, "where": self.where, "quote": self.quote, "claim": self.claim,
                "axis": self.axis, "plotted": self.plotted, "rule": self.rule, "papers_number": self.papers_number,
                "papers_number_verdict": self.papers.verdict if self.papers else None,
                "authors": self.authors.text, "authors_verdict": self.authors.verdict, "ours": self.ours.text,
                "ours_verdict": self.ours.verdict, "fair": self.fair, "stand_in": self.stand_in,
                "equivalent": self.equivalent, "reason": self.reason, "replay": self.replay,
                "verdict": self.verdict, "verdict_text": self.verdict_text,
                "judged": {key: column.record() for key, column in self.columns.items()}}


def judge_again(row: dict) -> dict[str, str | None]:
    """A recorded row's verdicts derived again from its stored numbers alone (``row()["judged"]``): each column's
    (key + "_verdict") and the row's ("verdict"), by the rules ``Evidence.verdict`` and ``Claim.verdict`` apply."""
    columns = {key: Evidence("", tuple(map(judgement_from_dict, stored["judged"])), stored["missing"]).verdict
               for key, stored in row["judged"].items()}
    combined = weakest(*(verdict for verdict in columns.values() if verdict is not None))
    capped = bool(row["stand_in"]) and not row["equivalent"]
    return {**{f"{key}_verdict": verdict for key, verdict in columns.items()},
            "verdict": weakest(combined, INCONCLUSIVE) if capped else combined}


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
            f"- **Criterion:** {claim.rule}", f"- **Paper's number:** {claim.papers_number}" + (
                f" → *{claim.papers.verdict}*" if claim.papers and claim.papers.verdict else ""),
            f"- **Authors' code:** {claim.authors.text}" + (f" → *{claim.authors.verdict}*"
                                                            if claim.authors.verdict else ""),
            f"- **Ours:** {claim.ours.text} → *{claim.ours.verdict}*", f"- **Ours on fair axes:** {claim.fair}"]
    if claim.stand_in:
        head.append(f"- **Stand-in:** {claim.stand_in}" + (f" (equivalent: {claim.equivalent})"
                                                          if claim.equivalent else ""))
    head += [f"- **Verdict:** {claim.verdict_text}" + (f" — {claim.reason}" if claim.reason else ""), ""]
    return "\n".join(head + claim.details)


def _cell(value) -> str:
    return (str(value) if value not in (None, "") else "—").replace("|", "\\|").replace("\n", " ")
