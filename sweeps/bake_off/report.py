"""A bake-off's report: the ranked table and verdict as text (its figures are a page: ``dashboard.bakeoff_page``).

The text (``text``) holds the table (each measure as mean [low, high] over
seeds; the samplers that did not settle last), the verdict in the strict
vocabulary ("wins", "tie" or "no winner", and the samplers that lost by not
settling within the budget), the equilibrium reference, how the efficiency
tuning changed each tuned sampler's ESS rate against the acceptance (DISCS)
tuning, every frozen kernel (the first seed's,
JSON: ``samplers.make(sampler, target, **kernel)`` replays it; every seed's is
stored with its run), and the samplers skipped with why. The verdict judges
the measure of the budget's axis; when the other rate (per CPU second against
per evaluation) puts another sampler first, the text says so beside it, with
both numbers, since the evaluation convention alone can decide a ranking (GWG
counts one evaluation a step, the locally balanced sampler 1 + deg, on a
quadratic model where the two are the same kernel).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from engine.numbers import number

from .summary import MEASURES, RANKED_BY, SETTLED_RHAT

#: A list longer than this is elided in a printed kernel.
SHOWN_VALUES = 6


def _cell(mean: float, low: float, high: float) -> str:
    """A measure and its interval, as the dashboard writes numbers (``number``: never exponent notation)."""
    if not math.isfinite(mean):
        return "—"
    return f"{number(mean)} [{number(low)}, {number(high)}]" if math.isfinite(low) else number(mean)


def _short(value):
    """A kernel parameter for print: long lists (a learned g's weights) elided."""
    if isinstance(value, list) and len(value) > SHOWN_VALUES:
        return f"[… {len(value)} values]"
    if isinstance(value, dict):
        return {key: _short(item) for key, item in value.items()}
    return value


def table_text(result) -> str:
    """The ranked table in Markdown."""
    frame = result.table
    columns = ["setting", *MEASURES]
    names = {"equilibrium": f"equilibrium ({result.axis})"}
    lines = ["| rank | sampler | " + " | ".join(names.get(c, c) for c in columns) + " |",
             "|---|---|" + "---|" * len(columns)]
    for rank, (name, row) in enumerate(frame.iterrows(), start=1):
        cells = [row["setting"]] + [_cell(row[m], row[f"{m} low"], row[f"{m} high"]) for m in MEASURES]
        if row["equilibrium censored"] and math.isfinite(row["equilibrium"]):
            cells[1 + MEASURES.index("equilibrium")] += (f" ({row['equilibrium censored']} of {row['seeds']} never "
                                                         "there: counted at the run's length)")
        flags = [f"{row[column]} of {row['seeds']} {column}" for column in ("ESS not usable", "ESS a lower bound")
                 if row[column]]
        flag = f" ({'; '.join(flags)})" if flags else ""
        lines.append(f"| {rank} | {name}{flag} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def text(result) -> str:
    """The whole report as text (module docstring)."""
    tuning = [run.tuning_used / run.used for runs in result.runs.values() for run in runs if run.used > 0]
    budgeted = (f"its budget {result.tuning_share:.0%} of that, which a sampler whose fewest tuning steps cost more "
                "exceeds")
    spent = (f"tuning before it: {min(tuning):.0%}–{max(tuning):.0%} of that more, as measured; {budgeted}"
             if tuning else f"tuning before it: {budgeted}")
    lines = [f"Bake-off on {result.target_name} (d = {result.dim}): {result.budget:g} {result.axis} per run "
             f"({spent}), {result.seeds} seeds × {result.chains} chains, statistic {result.statistic}; ranked by "
             f"{RANKED_BY[result.axis]}.", ""]
    lines += [table_text(result) if not result.table.empty else "(no run finished)", ""]
    if not result.table.empty and result.table["ESS not usable"].any():
        lines += [f"ESS not usable: the chains had not settled (split-R̂ > {SETTLED_RHAT}) on that many seeds; a "
                  "sampler that did not settle on every seed has lost at this budget, and ranks below every sampler "
                  "that did.", ""]
    if not result.table.empty and result.table["ESS a lower bound"].any():
        lines += ["ESS a lower bound: as large as the draws it came from (they look independent at the trace's "
                  "spacing); such a seed's rate is counted at its draws, and a ratio against it is no ratio in the "
                  "verdict.", ""]
    if result.verdict is not None:
        lines += [result.verdict.sentence(RANKED_BY[result.axis]), ""]
        lines += other_rate_line(result)
    if result.reference is not None:
        said = "" if result.reference.reached else " — not reached, so no time to equilibrium is measured"
        lines += [f"Equilibrium reference {result.reference.value:.4g}: {result.reference.method}{said}.", ""]
    gains = result.tuning_gain()
    if gains:
        lines.append(f"Efficiency tuning against acceptance tuning (57.4 %, DISCS), {RANKED_BY[result.axis]} ratio "
                     "efficiency-tuned / acceptance-tuned per seed (settings: medians over seeds):")
        for name, (acceptance_value, efficiency_value, evidence) in gains.items():
            lines.append(f"  {name}: {acceptance_value} → {efficiency_value}: {evidence}")
        lines.append("")
    notes = {name: run.tuning_note for name, runs in result.runs.items() for run in runs if run.tuning_note}
    if notes:
        lines += ["Tuning notes (the first seed with one):"] + [f"  {name}: {note}" for name, note in notes.items()]
        lines.append("")
    lines.append("Frozen kernels (the first seed's; replay: samplers.make(sampler, target, **kernel)):")
    for name, runs in result.runs.items():
        first = min(runs, key=lambda run: run.replicate)
        shown = json.dumps(_short(first.kernel)) if first.kernel else "as requested (nothing tuned)"
        lines.append(f"  {name}: {shown}")
    if result.skipped:
        lines += ["", "Skipped:"] + [f"  {name}: {reason}" for name, reason in result.skipped.items()]
    if result.failed:
        lines += ["", "Failed runs:"] + [f"  {run}: {error}" for run, error in result.failed.items()]
    return "\n".join(lines)


#: The rate printed beside the judged one: per CPU second beside per evaluation or per step, and the reverse.
OTHER_RATE = {"evaluations": "ESS per CPU s", "steps": "ESS per CPU s", "seconds": "ESS per 1k evals"}


def other_rate_line(result) -> list[str]:
    """A line when the other rate (``OTHER_RATE``) ranks another sampler first than the judged measure does."""
    judged, other = RANKED_BY[result.axis], OTHER_RATE[result.axis]
    frame = result.table
    if frame.empty or not frame[other].notna().any():
        return []
    first, first_other = frame.index[0], frame[other].idxmax()
    if first == first_other:
        return [f"On {other} too, {first} is first: {number(frame.at[first, other])}.", ""]
    return [f"Judged on {judged}. On {other}, {first_other} is first instead: {number(frame.at[first_other, other])} "
            f"against {first}'s {number(frame.at[first, other])}.", ""]


def save(result, directory: str | Path, name: str = "bakeoff") -> Path:
    """Write ``<name>.md`` (the text) in ``directory``; its path. The figures are a page, drawn on the page floor
    (``dashboard.bakeoff_page.save``)."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{name}.md"
    path.write_text(text(result) + "\n")
    return path
