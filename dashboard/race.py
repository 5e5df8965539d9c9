"""The Race card: every sampler that applies races on the session's target, and the ranking streams in.

*Race* starts the bake-off (``sweeps.bakeoff``) on the current run's target
with a small budget, in a process of its own (``model.race``: one race per
session, refused when the server is busy); *Stop*, a new race or the end of the
session terminates it. At every flush of the page (``flush``) the card takes the
newest ``RaceSnapshot`` and redraws: a progress line (runs done of the total),
the ranking — each sampler kernel's ESS per 1,000 target evaluations with its
95 % interval over the seeds, as a table and as intervals on a log axis — and,
once every run is in, the verdict as the library words it (a winner only when
its lead over the runner-up clears the strict rule, otherwise "tie"), the
samplers skipped and why, and the runs that failed and why. Every sentence is
computed from the settings and the numbers received; every name and reason
(the target's, a sampler's, an error's) goes through ``plain``.
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
from sweeps.bake_off.race import BUDGET, BUDGETS, TUNING_SHARE, Race, RaceSettings, RaceSnapshot, RankedRow

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
#: Colours of a sampler's interval: every seed's ESS usable in a verdict, or not on some seeds.
USABLE, UNUSABLE = "#1f5fa8", "#999999"
#: Height of the ranking plot: its frame, and per sampler (px).
PLOT_FRAME, PLOT_ROW = 90, 26
#: Background of the verdict: a winner, a tie.
VERDICT_COLOURS = {"winner": "#d8f0d8", "tie": "#e6e6e6"}


def introduction(settings: RaceSettings) -> str:
    """What a race does, from its settings (HTML)."""
    what = LABELS.get(settings.statistic, settings.statistic)
    return (f"<p style='font-size:15px'>Every sampler that applies to the current target runs {settings.seeds} times "
            f"(independent seeds), {settings.chains} chains each, for {number(settings.budget)} target "
            f"{plain(settings.axis)} after a tuning burn-in budgeted at {TUNING_SHARE:.0%} of that (more for a sampler "
            f"whose fewest tuning steps cost more). They are ranked by the effective sample size of {plain(what)} per "
            f"1,000 {plain(settings.axis)}, with 95 % intervals over the "
            f"seeds. A winner is named only when the ratio of its rate to every other sampler's has a 95 % "
            f"interval entirely above 1; otherwise it is a tie.</p>")


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
    """On how many seeds the row's ESS is not usable, or only a lower bound ('' when on none)."""
    flags = [f"ESS not usable on {row.unusable}"] * bool(row.unusable) + \
        [f"ESS a lower bound on {row.lower_bound}"] * bool(row.lower_bound)
    return f" ({'; '.join(flags)})" if flags else ""


def ranking_table(latest: RaceSnapshot) -> str:
    """The ranking (HTML): rank, sampler, its frozen setting, the rate and its 95 % interval, its seeds (and on how
    many its ESS is not usable)."""
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
        note += (f"<p>ESS not usable: the chains had not settled (split-R̂ > {SETTLED_RHAT}); such a seed gives no "
                 "ratio in the verdict.</p>")
    if any(row.lower_bound for row in latest.rows):
        note += ("<p>ESS a lower bound: as large as the draws it came from; such a seed's rate counts at its draws, "
                 "and a ratio against it is no ratio in the verdict.</p>")
    return f"{STYLE}<table class='race'>{head}{body}</table>{note}"


def outcome(latest: RaceSnapshot) -> str:
    """Once the race is over: the verdict (a winner or a tie, and the library's sentence), the samplers skipped and
    the runs that failed, each with its reason (HTML)."""
    parts = []
    if latest.verdict:
        headline = plain(latest.headline)
        colour = VERDICT_COLOURS["winner" if latest.winner else "tie"]
        parts.append(f"<div class='race-verdict' style='background:{colour};padding:6px 10px;font-size:15px'>"
                     f"<b style='font-size:18px'>"
                     f"{headline}</b><br>{plain(latest.verdict)}</div>")
    elif latest.rows:
        parts.append(f"<p><b>No verdict:</b> only {plain(latest.rows[0].sampler)} ran; a verdict needs two.</p>")
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
    """The Race card (module docstring): its buttons, progress line, ranking, plot and verdict."""

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
        self.verdict = pn.pane.HTML("", sizing_mode="stretch_width", css_classes=["race-outcome"])
        self.source = ColumnDataSource({"sampler": [], "rate": [], "low": [], "high": [], "colour": []})
        self.figure = self._figure()
        self.chart = pn.Column(pn.pane.HTML(key([("every seed's ESS usable", USABLE, 4),
                                                 ("ESS not usable on some seeds", UNUSABLE, 4)])),
                               pn.pane.Bokeh(self.figure, sizing_mode="stretch_width"), visible=False,
                               min_width=300, styles={"flex": "1 1 300px"})
        self._shown_seconds = -1
        budget = pn.Row(pn.pane.HTML("<b>target evaluations per run:</b>", styles={"font-size": "15px"},
                                     align="center", margin=(0, 5, 0, 20)), self.budget)
        self._layout = pn.Column(self.intro, pn.Row(self.go, self.halt, budget), self.status,
                                 pn.FlexBox(self.table, self.chart, flex_wrap="wrap", sizing_mode="stretch_width"),
                                 self.verdict, sizing_mode="stretch_width")

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
        self.go.disabled, self.halt.disabled = running, not running
        self.status.object = progress(race)
        if latest is None:
            self.table.object = self.verdict.object = ""
            self.chart.visible = False
            return
        self.table.object = ranking_table(latest)
        self.verdict.object = outcome(latest) if latest.finished else ""
        columns = plotted(latest)
        fit_title(self.figure, f"{latest.measure}: 95 % interval over seeds, best on top")
        fit_axis_label(self.figure.xaxis, f"{latest.measure} (log scale)", 300)
        self.figure.y_range.factors = columns["sampler"][::-1]
        self.figure.height = PLOT_FRAME + PLOT_ROW * len(columns["sampler"])
        self.source.data = columns
        self.chart.visible = bool(columns["sampler"])

    def close(self) -> None:
        """Stop the race (the session ends)."""
        self.race.stop()

    def __panel__(self):
        return self._layout
