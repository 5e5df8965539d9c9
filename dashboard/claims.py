"""Which of the papers' claims hold: the verdict table that ``python -m benchmarks paper_claims`` measured.

The audit takes about half an hour (it runs the LSB authors' code too), so a
served page shows its last recorded run — ``assets/paper_claims.json``,
written by ``python -m benchmarks paper_claims --record 1`` with the commit,
the date and the settings it was measured with, all shown above the table.
Each row: the paper's claim and number, ours on the paper's own axis and
accounting, ours on fair axes, the verdict (coloured) and why. Nothing here
runs a sampler.
"""

from __future__ import annotations

import html
import json
from pathlib import Path

import panel as pn
import param

RECORD = Path(__file__).resolve().parents[1] / "assets" / "paper_claims.json"
#: The table's columns: record key → header.
COLUMNS = {"paper": "paper", "where": "where", "claim": "claim", "papers_number": "paper's number",
           "ours_papers_axis": "ours, on the paper's axis and accounting", "ours_fair": "ours, on fair axes",
           "verdict": "verdict", "reason": "why"}
#: Background of each verdict's cell.
COLOURS = {"reproduced": "#d8f0d8", "reproduced only under the paper's accounting": "#fbe7c6",
           "not reproduced": "#f6d0d0", "inconclusive": "#e6e6e6"}
STYLE = """
<style>
table.claims {border-collapse: collapse; font-size: 15px; line-height: 1.35;}
table.claims th, table.claims td {border: 1px solid #bbb; padding: 6px 8px; vertical-align: top; text-align: left;}
table.claims th {background: #f2f2f2;}
table.claims td.verdict {font-weight: bold;}
</style>
"""


def claims_table(rows: list[dict]) -> str:
    """The verdict table as HTML (every value escaped; an unknown verdict gets no colour)."""
    head = "".join(f"<th>{html.escape(title)}</th>" for title in COLUMNS.values())
    body = []
    for row in rows:
        cells = []
        for key in COLUMNS:
            text = html.escape(str(row.get(key) or "—"))
            if key == "verdict":
                cells.append(f'<td class="verdict" style="background:{COLOURS.get(row.get(key), "none")}">{text}</td>')
            else:
                cells.append(f"<td>{text}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    # in a box that scrolls sideways: a narrow screen scrolls the table, not the page
    return (f'{STYLE}<div class="scroll-x" style="overflow-x: auto; max-width: 100%">'
            f'<table class="claims"><tr>{head}</tr>'
            f'{"".join(body)}</table></div>')


def provenance(record: dict) -> str:
    """One sentence: when, at which commit and with which settings the table was measured."""
    settings = ", ".join(f"{key} {value}" for key, value in record.get("settings", {}).items())
    return (f"Measured {record.get('measured', '?')[:10]} at commit {record.get('commit', '?')} by "
            f"`python -m benchmarks paper_claims` ({settings}). Run it again to check: "
            "`python -m benchmarks paper_claims --record 1` rewrites this table.")


class ClaimsCard(pn.viewable.Viewer):
    """The recorded verdicts of the papers' claims, with how and when they were measured."""

    path = param.ClassSelector(class_=Path, default=RECORD, doc="The recorded audit (JSON).")

    def __panel__(self):
        intro = pn.pane.Markdown(
            "Each claim is measured twice: on the paper's own axis and accounting (e.g. LSB2 against √t per "
            "*iteration*, when an iteration is two LSB2 moves and one √t move), and on fair axes (per move, per "
            "target evaluation, per CPU second). The presets named *Claim · …* replay them.",
            sizing_mode="stretch_width")
        try:
            record = json.loads(self.path.read_text(encoding="utf-8"))
            rows = record["claims"]
        except (OSError, ValueError, KeyError, TypeError) as error:
            return pn.Column(intro, pn.pane.Alert(
                f"No recorded audit to show ({type(error).__name__}: {error}). Make one with "
                "`python -m benchmarks paper_claims --record 1`.", alert_type="warning"), sizing_mode="stretch_width")
        return pn.Column(intro, pn.pane.Markdown(provenance(record), sizing_mode="stretch_width"),
                         pn.pane.HTML(claims_table(rows), sizing_mode="stretch_width"), sizing_mode="stretch_width")
