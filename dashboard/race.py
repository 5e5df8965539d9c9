"""The Race card: every sampler that applies races on the session's target, and the ranking streams in.

*Race* starts the bake-off (``sweeps.bakeoff``) on the current run's target
with a small budget, in a process of its own (``sweeps.bake_off.race``: one race per
session, refused when the server is busy); *Stop*, a new race or the end of the
session terminates it. At every flush of the page (``flush``) the card takes the
newest ``RaceSnapshot`` and redraws, top down: a progress line (runs done of
the total, and the budget the race raised itself to when no sampler settled
at a smaller one), then, once every run is in, the verdict — the library's
headline (``summary.Verdict``: a winner only when its chains settled and it is
ahead of every other sampler, otherwise a tie or no winner) with a sentence
for a class, written here from the snapshot's numbers: no API words, and an
interval only where there is one — then the ranking (each sampler kernel's
ESS per 1,000 target evaluations with its 95 % interval over the seeds, as a
table and as intervals on a log axis; the samplers that did not settle below
the ones that did, as the verdict ranks them), the samplers skipped and why,
and the runs that failed and why. Every sentence is computed from the settings
and the numbers received; every name and reason (the target's, a sampler's, an
error's) goes through ``plain``.
"""

from __future__ import annotations

import math

import panel as pn
import param
from bokeh.models import ColumnDataSource, FactorRange
from bokeh.plotting import figure

from engine.client import RunClient
from engine.comparison import SETTLED_RHAT
from engine.numbers import number
from engine.statistics import LABELS
from samplers.diagnostics.verdicts import MIN_SEEDS
from sweeps.bake_off.race import (BUDGET, BUDGETS, LARGEST, SECONDS_PER_RUN, TUNING_SHARE, Race, RaceSettings,
                                  RaceSnapshot, RankedRow)

from .plain import plain
from .views.conventions import fit_axis_label, fit_title, key, log_ticks

STYLE = """
<style>
table.race {border-collapse: collapse; font-size: 15px; line-height: 1.35;}
table.race th, table.race td {border: 1px solid #bbb; padding: 4px 8px; text-align: left; vertical-align: top;}
table.race th {background: #f2f2f2;}
table.race td.number {text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap;}
table.race tr.unusable td {color: #666;}
</style>
"""
#: Colours of a sampler's interval: its chains settled on every seed, or not on some seeds (it lost).
USABLE, UNUSABLE = "#1f5fa8", "#999999"
#: Height of the ranking plot: its frame, and per sampler (px).
PLOT_FRAME, PLOT_ROW = 90, 26
#: Background of the verdict: a winner, a tie.
VERDICT_COLOURS = {"winner": "#d8f0d8", "tie": "#e6e6e6"}


def introduction(settings: RaceSettings) -> str:
    """What a race does, from its settings (HTML)."""
    what = LABELS.get(settings.statistic, settings.statistic)
    larger = [number(budget) for budget in settings.raised()]
    raising = (f" If no sampler's chains settle on every seed, the race raises the budget itself "
               f"(to {' and then '.join(larger)}), racing again only the samplers whose runs would take at most "
               f"{number(SECONDS_PER_RUN)} CPU seconds at the larger budget (projected from the last one); the others "
               "have lost at it." if larger else "")
    return (f"<p style='font-size:15px'>Every sampler that applies to the current target runs {settings.seeds} times "
            f"(independent seeds), {settings.chains} chains each, for {number(settings.budget)} target "
            f"{plain(settings.axis)} after a tuning burn-in budgeted at {TUNING_SHARE:.0%} of that (more for a sampler "
            f"whose fewest tuning steps cost more). They are ranked by the effective sample size of {plain(what)} per "
            f"1,000 {plain(settings.axis)}, with 95 % intervals over the seeds. A sampler whose chains did not settle "
            f"(split-R̂ above {SETTLED_RHAT}) on some seed has lost at this budget. A winner is named only when its "
            f"chains settled on every seed and the ratio of its rate to every other settled sampler's has a 95 % "
            f"interval entirely above 1; otherwise it is a tie.{raising}</p>")


def progress(race: Race) -> str:
    """The progress line (HTML): runs done of the total, the time, or why there is no race."""
    latest, settings = race.latest, race.settings
    seconds = f"{race.seconds:.0f} s"
    if race.state == "refused":
        return f"<b style='color:#a33'>No race: {plain(race.message)}</b>"
    if settings is None:
        return "<b>Press Race to start.</b>"
    where = (f"{plain(latest.target)} (d = {number(latest.dim)})" if latest is not None else plain(settings.target))
    runs = f"{latest.done} of {latest.total} runs" if latest is not None else ""
    if latest is not None and latest.raised_from:
        runs += f" at {number(latest.budget)} evaluations per run"
    if race.state == "running":
        return f"<b>Racing on {where}: {runs or 'the first run is under way'}</b> ({seconds} so far)"
    if race.state == "finished":
        return f"<b>Finished on {where}: {runs}</b> in {seconds}"
    if race.state == "stopped":
        return f"<b>Stopped on {where} {f'after {runs}' if runs else 'before its first run finished'}</b> ({seconds})"
    return (f"<b style='color:#a33'>The race on {where} failed{f' after {runs}' if runs else ''}: "
            f"{plain(race.message)}</b>")


def _interval(low: float, high: float) -> str:
    return f"{number(low)} – {number(high)}" if math.isfinite(low) and math.isfinite(high) else "—"


def _rate(value: float) -> str:
    return number(value) if math.isfinite(value) else "—"


def _flags(row: RankedRow) -> str:
    """On how many seeds the row's chains did not settle, or its ESS is only a lower bound ('' when on none)."""
    flags = [f"did not settle on {row.unusable} of {row.seeds}: lost"] * bool(row.unusable) + \
        [f"ESS only a lower bound on {row.lower_bound}"] * bool(row.lower_bound)
    return f" ({'; '.join(flags)})" if flags else ""


def ranking_table(latest: RaceSnapshot) -> str:
    """The ranking (HTML): rank, sampler, its frozen setting, the rate and its 95 % interval, its seeds (and on how
    many its chains did not settle, or its ESS is only a lower bound)."""
    if not latest.rows:
        return ""
    head = (f"<tr><th>rank</th><th>sampler</th><th>setting</th><th>{plain(latest.measure)}</th>"
            "<th>95 % interval</th><th>seeds</th></tr>")
    body = "".join(
        f"<tr class='{'unusable' if row.unusable else ''}'><td class='number'>{rank}</td><td>{plain(row.sampler)}</td>"
        f"<td>{plain(row.setting)}</td><td class='number'>{_rate(row.rate)}</td>"
        f"<td class='number'>{_interval(row.low, row.high)}</td>"
        f"<td>{row.seeds}{_flags(row)}</td></tr>"
        for rank, row in enumerate(latest.rows, 1))
    note = ""
    if any(row.unusable for row in latest.rows):
        note += (f"<p>Did not settle: on that many seeds the chains still disagreed (split-R̂ above {SETTLED_RHAT}) "
                 "when the budget was spent, and the effective sample size of chains that disagree measures nothing. "
                 "Such a sampler has lost at this budget and ranks below every sampler that settled on every seed, "
                 "whatever its rate.</p>")
    if any(row.lower_bound for row in latest.rows):
        note += ("<p>ESS only a lower bound: as large as the draws it came from; such a seed's rate counts at its "
                 "draws, and a ratio against it is unknown.</p>")
    return f"{STYLE}<table class='race'>{head}{body}</table>{note}"


def _ratio(latest: RaceSnapshot) -> str:
    """The leader's rate over the runner-up's with its interval, in words (a decisive ratio only)."""
    centre, low, high = latest.ratio
    return (f"{plain(latest.leader)}'s {plain(latest.measure)} is {number(centre)} times {plain(latest.runner_up)}'s "
            f"(95 % interval {number(low)} – {number(high)} over {latest.ratio_seeds} seeds, paired by seed)")


def _no_interval(latest: RaceSnapshot) -> str:
    """Why the leader's ratio over the runner-up has no interval, in words."""
    if latest.ratio_seeds < MIN_SEEDS:
        return (f"only {latest.ratio_seeds} seeds were finished by both, and an interval needs {MIN_SEEDS}")
    bounded = next((row.lower_bound for row in latest.rows if row.sampler == latest.runner_up), 0)
    why = (f"; {plain(latest.runner_up)}'s effective sample size was as large as its draws on {bounded} seeds, "
           "only a lower bound" if bounded else "")
    return f"the ratio is unknown on {latest.unknown_seeds} of the {latest.ratio_seeds} seeds{why}"


def verdict_sentence(latest: RaceSnapshot) -> str:
    """The verdict for a class (HTML, module docstring): what the headline rests on, the samplers that lost by not
    settling, and the budgets the race raised from."""
    leader, runner_up = plain(latest.leader), plain(latest.runner_up)
    budget = f"{number(latest.budget)} evaluations per run"
    if latest.outcome == "wins" and latest.runner_up_lost:
        said = (f"{leader}'s chains settled on every seed; every other sampler's chains did not settle on some seeds "
                f"within {budget}.")
    elif latest.outcome == "wins":
        said = f"{_ratio(latest)}: entirely above 1. {runner_up} is the closest other sampler."
    elif latest.outcome == "tie":
        said = f"{_ratio(latest)}: not entirely above 1, so neither is shown ahead of the other."
    elif latest.outcome == "no interval":
        said = f"{leader} ranks first, but there is no interval against {runner_up}: {_no_interval(latest)}."
    else:
        largest = " — the largest budget a race runs here" if latest.budget >= LARGEST else ""
        said = (f"No sampler's chains settled (split-R̂ at most {SETTLED_RHAT}) on every seed within {budget}"
                f"{largest}; the effective sample size of chains that have not settled measures nothing.")
    if latest.lost and latest.outcome != "nothing settled":
        names = ", ".join(f"{plain(name)} ({count} of {seeds} seeds)" for name, count, seeds in latest.lost)
        said += (f" Did not settle within the budget on some seeds, so lost at this budget ({len(latest.lost)}): "
                 f"{names}.")
    if latest.out_of_time:
        names = ", ".join(f"{plain(name)} (about {seconds:.0f} s)" for name, seconds in latest.out_of_time.items())
        said += (f" Too slow to race at {number(latest.budget)} evaluations per run, so lost at this budget "
                 f"({len(latest.out_of_time)}; a run would take more than the {number(SECONDS_PER_RUN)} CPU seconds "
                 f"a raised race allows): {names}.")
    if latest.raised_from:
        said += (f" At {' and '.join(number(b) for b in latest.raised_from)} evaluations per run no sampler's "
                 f"chains settled, so the race raised the budget itself to {number(latest.budget)}.")
    return said


def verdict_box(latest: RaceSnapshot) -> str:
    """Once the race is over, the verdict at the top of the card: the headline and ``verdict_sentence`` (HTML);
    with a single sampler, why there is none."""
    if latest.headline:
        colour = VERDICT_COLOURS["winner" if latest.winner else "tie"]
        return (f"<div class='race-verdict' style='background:{colour};padding:6px 10px;font-size:15px'>"
                f"<b style='font-size:18px'>{plain(latest.headline)}</b><br>{verdict_sentence(latest)}</div>")
    if latest.rows:
        return f"<p><b>No verdict:</b> only {plain(latest.rows[0].sampler)} ran; a verdict needs two.</p>"
    return ""


def outcome(latest: RaceSnapshot) -> str:
    """Once the race is over, below the ranking: the samplers skipped and the runs that failed, each with its
    reason (HTML)."""
    parts = []
    if latest.skipped:
        items = "".join(f"<li><b>{plain(name)}</b>: {plain(reason)}</li>" for name, reason in latest.skipped.items())
        parts.append(f"<p style='margin-bottom:0'><b>Skipped ({len(latest.skipped)}): these samplers do not apply"
                     f"</b></p><ul style='margin-top:2px'>{items}</ul>")
    if latest.failed:
        items = "".join(f"<li><b>{plain(name)}</b>: {plain(error)}</li>" for name, error in latest.failed.items())
        parts.append(f"<p style='margin-bottom:0'><b>Failed runs ({len(latest.failed)})</b></p>"
                     f"<ul style='margin-top:2px'>{items}</ul>")
    return "".join(parts)


def plotted(latest: RaceSnapshot) -> dict:
    """The plot's columns: the samplers with a positive rate (a log axis), best on top, their interval (the rate
    itself where there is none) and colour."""
    rows = [row for row in latest.rows if math.isfinite(row.rate) and row.rate > 0]
    finite = [math.isfinite(row.low) and math.isfinite(row.high) and row.low > 0 for row in rows]
    return {"sampler": [row.sampler for row in rows], "rate": [row.rate for row in rows],
            "low": [row.low if ok else row.rate for row, ok in zip(rows, finite)],
            "high": [row.high if ok else row.rate for row, ok in zip(rows, finite)],
            "colour": [UNUSABLE if row.unusable else USABLE for row in rows]}


class RaceCard(pn.viewable.Viewer):
    """The Race card (module docstring): its buttons, progress line, verdict, ranking, plot, and what was skipped or
    failed."""

    client = param.ClassSelector(class_=RunClient, doc="The session's run: its target is raced.")

    def __init__(self, **params):
        super().__init__(**params)
        self.race = Race(self.client.engine, self.client.owner)
        self.go = pn.widgets.Button(label="Race", color="primary", width=110)
        self.halt = pn.widgets.Button(label="Stop", color="warning", width=90, disabled=True)
        self.go.on_click(self._start)
        self.halt.on_click(self._stop)
        self.budget = pn.widgets.RadioButtonGroup(options={number(budget): budget for budget in BUDGETS},
                                                  value=BUDGET, width=300)
        self.intro = pn.pane.HTML(introduction(RaceSettings("")), sizing_mode="stretch_width")
        self.budget.param.watch(self._describe, "value")
        self.status = pn.pane.HTML(progress(self.race), sizing_mode="stretch_width", css_classes=["race-progress"],
                                   styles={"font-size": "16px"})
        self.table = pn.pane.HTML("", css_classes=["race-ranking"])
        self.verdict = pn.pane.HTML("", sizing_mode="stretch_width", css_classes=["race-verdict-pane"])
        self.details = pn.pane.HTML("", sizing_mode="stretch_width", css_classes=["race-outcome"])
        self.source = ColumnDataSource({"sampler": [], "rate": [], "low": [], "high": [], "colour": []})
        self.figure = self._figure()
        self.chart = pn.Column(pn.pane.HTML(key([("settled on every seed", USABLE, 4),
                                                 ("did not settle on some seeds: lost", UNUSABLE, 4)])),
                               pn.pane.Bokeh(self.figure, sizing_mode="stretch_width"), visible=False,
                               min_width=300, styles={"flex": "1 1 300px"})
        self._shown_seconds = -1
        budget = pn.Row(pn.pane.HTML("<b>target evaluations per run:</b>", styles={"font-size": "15px"},
                                     align="center", margin=(0, 5, 0, 20)), self.budget)
        self._layout = pn.Column(self.intro, pn.Row(self.go, self.halt, budget), self.status, self.verdict,
                                 pn.FlexBox(self.table, self.chart, flex_wrap="wrap", sizing_mode="stretch_width"),
                                 self.details, sizing_mode="stretch_width")
        self._building = self.client.param.watch(self._enable, "building")
        self._enable()

    def _enable(self, event=None) -> None:
        """Race is pressable unless a race runs or the session's run is being built (a new preset, Apply, a file):
        a race started then would race the run before it, and the new run's arrival ends it (``Explorer``)."""
        self.go.disabled = self.race.state == "running" or self.client.building

    def _figure(self):
        fig = figure(height=PLOT_FRAME, y_range=FactorRange(), x_axis_type="log", toolbar_location=None,
                     tools="", sizing_mode="stretch_width")
        log_ticks(fig.xaxis)
        fig.title.text_font_size = fig.xaxis.axis_label_text_font_size = "13px"
        fig.xaxis.major_label_text_font_size = fig.yaxis.major_label_text_font_size = "13px"
        fig.segment("low", "sampler", "high", "sampler", source=self.source, line_width=4, line_color="colour")
        fig.scatter("rate", "sampler", source=self.source, size=11, color="colour")
        return fig

    def _describe(self, event=None) -> None:
        self.intro.object = introduction(RaceSettings("", budget=self.budget.value))

    def _start(self, event=None) -> None:
        config = self.client.config
        if config is None:
            self.status.object = "<b>No run yet: a race needs the current run's target.</b>"
            return
        self.race.start(RaceSettings.of(config, self.budget.value))
        self._draw()

    def _stop(self, event=None) -> None:
        self.race.stop()
        self._draw()

    def flush(self) -> None:
        """Take what the race sent (called at every flush of the page); redraw when something arrived, and the
        progress line's time every second while it runs."""
        if self.race.poll():
            self._draw()
        elif self.race.state == "running" and int(self.race.seconds) != self._shown_seconds:
            self._shown_seconds = int(self.race.seconds)
            self.status.object = progress(self.race)

    def _draw(self) -> None:
        race, latest = self.race, self.race.latest
        running = race.state == "running"
        self.halt.disabled = not running
        self._enable()
        self.status.object = progress(race)
        if latest is None:
            self.table.object = self.verdict.object = self.details.object = ""
            self.chart.visible = False
            return
        self.table.object = ranking_table(latest)
        self.verdict.object = verdict_box(latest) if latest.finished else ""
        self.details.object = outcome(latest) if latest.finished else ""
        columns = plotted(latest)
        fit_title(self.figure, f"{latest.measure}: 95 % interval over seeds, best on top")
        fit_axis_label(self.figure.xaxis, f"{latest.measure} (log scale)", 300)
        self.figure.y_range.factors = columns["sampler"][::-1]
        self.figure.height = PLOT_FRAME + PLOT_ROW * len(columns["sampler"])
        self.source.data = columns
        self.chart.visible = bool(columns["sampler"])

    def close(self) -> None:
        """Stop the race and stop following the session's run (the session ends, or its run is replaced)."""
        self.client.param.unwatch(self._building)
        self.race.stop()

    def __panel__(self):
        return self._layout
