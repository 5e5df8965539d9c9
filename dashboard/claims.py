"""Which of the papers' claims hold: the verdicts that ``python -m benchmarks paper_claims`` recorded.

The audit takes about an hour (it runs the LSB authors' code too), so a served
page shows its last recorded run — ``assets/paper_claims.json``, written by
``python -m benchmarks paper_claims --record 1`` with the settings and, per
claim, the date and the digest of the sources its runs loaded (a test fails
when they have changed since). One row per claim: the verdict (coloured), where in the paper,
the paper's own sentence (not a paraphrase: what is judged, and on which axis,
beneath it), and the three columns of evidence —
the paper's number, the authors' code, ours, each with its own verdict where it has one
(the paper's when it cites its own table; ours says when it ran on a stand-in); the
paper's sentence, the rule, the fair axes, why, and a link that replays the
claim's preset open on demand. Nothing here runs a sampler; every recorded
text is escaped.
"""

from __future__ import annotations

import html
import json
from pathlib import Path

import panel as pn
import param

from engine.links import link_query
from engine.presets import CLAIMS_RECORD, load_presets

#: The evidence columns: record key (its verdict under key + "_verdict") → header.
EVIDENCE = {"papers_number": "paper's number", "authors": "authors' code", "ours": "ours"}
#: Background of each verdict (``samplers.diagnostics.verdicts.VERDICTS``).
COLOURS = {"reproduced": "#d8f0d8", "direction reproduced, size not shown": "#e8f3d0", "weaker than claimed": "#fbe7c6",
           "inconclusive": "#e6e6e6", "not reproduced": "#f6d0d0"}
STYLE = """
<style>
table.claims {border-collapse: collapse; font-size: 14px; line-height: 1.35; width: 100%; table-layout: fixed;}
table.claims th, table.claims td {border: 1px solid #bbb; padding: 5px 7px; vertical-align: top; text-align: left;
  overflow-wrap: break-word; hyphens: auto;}
table.claims th {background: #f2f2f2;}
table.claims .verdict {font-weight: bold;}
table.claims .column-verdict {display: block; font-size: 12px; margin-top: 3px; padding: 1px 4px;}
table.claims .evidence {display: -webkit-box; -webkit-line-clamp: 4; -webkit-box-orient: vertical; overflow: hidden;}
table.claims details summary {cursor: pointer; color: #1f5fa8;}
table.claims blockquote {margin: 4px 0; padding-left: 8px; border-left: 3px solid #bbb; font-style: italic;}
table.claims blockquote.sentence {display: -webkit-box; -webkit-line-clamp: 5; -webkit-box-orient: vertical;
  overflow: hidden; font-style: normal;}
</style>
"""
#: Column widths: the verdict's column holds "inconclusive" whole at 1280 px (words wrap only between words, or are
#: hyphenated where they must break).
WIDTHS = {"verdict": "14%", "where": "12%", "claim": "28%", "papers_number": "12%", "authors": "17%", "ours": "17%"}


def claims_table(rows: list[dict], replay_links: dict[str, str] | None = None) -> str:
    """The verdict table as HTML: every recorded value escaped; an unknown verdict gets no colour.
    ``replay_links`` maps a preset name to its ``?run=`` query (a row naming another preset gets no link)."""
    head = "".join(f'<th style="width:{width}">{html.escape(_header(key))}</th>' for key, width in WIDTHS.items())
    body = "".join(_row(row, replay_links or {}) for row in rows)
    return f'{STYLE}<table class="claims" lang="en"><tr>{head}</tr>{body}</table>'


def _header(key: str) -> str:
    return {**EVIDENCE, "claim": "the paper's sentence"}.get(key, key)


def _row(row: dict, replay_links: dict[str, str]) -> str:
    verdict = str(row.get("verdict") or "—")
    cells = [f'<td class="verdict" style="background:{COLOURS.get(verdict, "none")}">{_text(verdict)}</td>',
             f"<td>{_text(row.get('paper'))} · {_text(row.get('where'))}</td>",
             f'<td><blockquote class="sentence">{_text(row.get("quote"))}</blockquote><small>judged: '
             f"{_text(row.get('claim'))}, on {_text(row.get('axis'))}</small>{_details(row, replay_links)}</td>"]
    for key in EVIDENCE:
        judged = row.get(f"{key}_verdict")
        where = " on a stand-in" if key == "ours" and row.get("stand_in") else ""
        tag = (f'<span class="column-verdict" style="background:{COLOURS.get(judged, "none")}">{_text(judged)}'
               f"{where}</span>" if judged else "")
        cells.append(f'<td><span class="evidence">{_text(row.get(key))}</span>{tag}</td>')
    return "<tr>" + "".join(cells) + "</tr>"


def _details(row: dict, replay_links: dict[str, str]) -> str:
    """The claim's sentence, rule, both columns in full (the table shows their first lines), fair axes, stand-in,
    why and replay link, folded under "details"."""
    parts = [f"<blockquote>{_text(row.get('quote'))}</blockquote>"]
    facts = {"the paper plots": row.get("plotted"), "rule": row.get("rule"),
             "paper's number": row.get("papers_number"), "authors' code": row.get("authors"),
             "ours": row.get("ours"), "ours on fair axes": row.get("fair"),
             "stands in for the paper's model": row.get("stand_in"), "why": row.get("reason"),
             "verdict": row.get("verdict_text")}
    parts += [f"<div><b>{html.escape(name)}:</b> {_text(value)}</div>" for name, value in facts.items() if value]
    query = replay_links.get(row.get("replay") or "")
    if query:
        parts.append(f'<div><a href="?run={html.escape(query)}" target="_blank">replay: '
                     f"{_text(row.get('replay'))}</a></div>")
    return f"<details><summary>details</summary>{''.join(parts)}</details>"


def _text(value) -> str:
    return html.escape(str(value if value not in (None, "") else "—"))


def replay_links(rows: list[dict]) -> dict[str, str]:
    """The ``?run=`` query of each preset the rows name (a preset that is gone, or too large for a link, has none)."""
    presets = load_presets()
    named = {row.get("replay") for row in rows} & set(presets)
    return {name: query for name in named if (query := link_query(presets[name].run_config())) is not None}


def provenance(record: dict) -> str:
    """One sentence (HTML, the record's values escaped): when (the days of its rows' measurements) and with which
    settings the table was measured, each claim on the sources whose digest its row keeps."""
    settings = html.escape(", ".join(f"{key} {value}" for key, value in record.get("settings", {}).items()))
    days = sorted({str(row.get("measured", record.get("measured", "?")))[:10] for row in record.get("claims", [])})
    measured = html.escape(" to ".join(dict.fromkeys(days[:1] + days[-1:])) or "?")
    return (f"<p>Measured {measured} by <code>python -m benchmarks paper_claims</code> ({settings}), each claim with "
            "the digest of the sources its runs loaded (a test fails when they change without a new record). "
            "<code>python -m benchmarks paper_claims --record 1</code> measures again the claims whose sources "
            "changed.</p>")


class ClaimsCard(pn.viewable.Viewer):
    """The recorded verdicts of the papers' claims, with how and when they were measured."""

    path = param.ClassSelector(class_=Path, default=CLAIMS_RECORD, doc="The recorded audit (JSON).")

    def __panel__(self):
        intro = pn.pane.Markdown(
            "Each claim is the paper's sentence, judged on the axis it names by one rule (over at least 5 "
            "independent seeds): **reproduced** (the claimed size demonstrated), **direction reproduced, size not "
            "shown**, **weaker than claimed**, **inconclusive** or **not reproduced**. Three columns of evidence: "
            "the paper's own numbers (judged where it cites its own table), the authors' own code run as published, "
            "and ours; the row's verdict is the weakest of the columns', and no better than *inconclusive* when ours "
            "ran on a stand-in for the paper's model not shown equivalent. *details* shows the sentence, the rule "
            "and a replay link.",
            sizing_mode="stretch_width")
        try:
            record = json.loads(self.path.read_text(encoding="utf-8"))
            rows = record["claims"]
            table = claims_table(rows, replay_links(rows))
            measured = provenance(record)
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as error:
            return pn.Column(intro, pn.pane.Alert(
                f"No recorded audit to show ({type(error).__name__}). Make one with "
                "`python -m benchmarks paper_claims --record 1`.", alert_type="warning"), sizing_mode="stretch_width")
        return pn.Column(intro, pn.pane.HTML(measured, sizing_mode="stretch_width"),
                         pn.pane.HTML(table, sizing_mode="stretch_width"), sizing_mode="stretch_width")
