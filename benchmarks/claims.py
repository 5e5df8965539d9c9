"""A paper's claim as audited by ``benchmarks.paper_claims``: the paper's number, ours on both accountings, a verdict.

A claim is judged on each accounting as holding (True), failing (False) or
undecided (None: the measurement cannot tell, or could not be made);
``verdict`` turns the two judgements into the table's words — reproduced when
it holds on the paper's own axis and accounting and on fair ones,
reproduced only under the paper's accounting when it holds on the first
alone, not reproduced when it fails on the paper's own terms, and
inconclusive otherwise.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from dashboard.claims import COLUMNS
from samplers.convergence import Interval

VERDICTS = ("reproduced", "reproduced only under the paper's accounting", "not reproduced", "inconclusive")


def judge(speedup: Interval, claimed: float = 1.0) -> bool | None:
    """A claimed speed-up (``claimed``× or, at 1, "faster") judged from a ratio's confidence interval: it holds
    if the interval lies above 1, fails if it lies below ``claimed`` (or below 1), and is undecided otherwise."""
    if speedup.n == 0:
        return None
    if speedup.low > 1:
        return True
    if speedup.high < max(claimed, 1.0):
        return False
    return None


def verdict(on_papers_accounting: bool | None, on_fair_accounting: bool | None) -> str:
    """The verdict of a claim judged (``judge``) on the paper's accounting and on fair ones."""
    if on_papers_accounting is False:
        return VERDICTS[2]
    if on_papers_accounting and on_fair_accounting is not None:
        return VERDICTS[0] if on_fair_accounting else VERDICTS[1]
    return VERDICTS[3]


@dataclass(frozen=True)
class Claim:
    """One audited claim: a row of the verdict table, and the sections and figures that support it."""

    paper: str
    where: str
    claim: str
    papers_number: str
    ours_papers_axis: str
    ours_fair: str
    verdict: str
    reason: str
    details: list[str] = field(default_factory=list, compare=False)
    figures: list = field(default_factory=list, compare=False)

    def row(self) -> dict[str, str]:
        """The verdict-table row (what the dashboard's claims card shows)."""
        return {key: value for key, value in asdict(self).items() if key not in ("details", "figures")}


def verdict_table(claims: list[Claim]) -> list[str]:
    """The Markdown verdict table, one row per claim (the columns of the dashboard's claims card)."""
    lines = ["| " + " | ".join(COLUMNS.values()) + " |", "|" + "---|" * len(COLUMNS)]
    return lines + ["| " + " | ".join(claim.row()[key] or "—" for key in COLUMNS) + " |" for claim in claims]
