"""A bake-off's page: its figures drawn with HoloViews into one HTML file, and the command line that writes it.

The page (``figures``) draws ESS per evaluation and per CPU second with their
95 % intervals over seeds (``sweeps.bake_off.summary``), the chains' mean
statistic against the budget's axis (the first seed, the equilibrium reference
as a dashed line when it was reached), and the tuning curves: the pilots' ESS
of log p̃ per unit of the axis against the tuned value relative to the
acceptance-tuned one (1 = DISCS's setting). It sits on the page floor, as
every drawing does; the library below writes the text report
(``sweeps.bake_off.report``).

``python -m dashboard.bakeoff_page --target my_model.uai --budget 1e7`` takes
the options of ``python -m sweeps bakeoff`` (``--help`` lists them), runs it
(stored runs are read, not computed again) and writes ``bakeoff.html`` beside
``bakeoff.md``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import holoviews as hv
import holoviews.plotting.bokeh  # noqa: F401  (registers the Bokeh backend used by .opts and hv.save)
import numpy as np

from sweeps.__main__ import bakeoff_command


def _intervals(result, measure: str) -> hv.Overlay:
    """``measure`` of every sampler, its mean over seeds with its 95 % interval."""
    frame = result.table
    labels = list(frame.index)
    mean, low, high = (frame[measure].to_numpy(), frame[f"{measure} low"].to_numpy(),
                       frame[f"{measure} high"].to_numpy())
    points = hv.Scatter((labels, mean), "sampler", measure).opts(size=8)
    bars = hv.ErrorBars((labels, mean, mean - low, high - mean), "sampler", [measure, "below", "above"])
    return (bars * points).opts(title=f"{measure}, 95 % interval over seeds", width=560, height=360,
                                xrotation=30, logy=bool(np.all(low > 0)))


def _first_seed(runs):
    """The run of the first seed among one sampler's runs."""
    return min(runs, key=lambda run: run.replicate)


def figures(result) -> list:
    """The page's figures (module docstring)."""
    out = [_intervals(result, "ESS per 1k evals"), _intervals(result, "ESS per CPU s")]
    traces = []
    for name, runs in result.runs.items():
        first = _first_seed(runs)
        traces.append(hv.Curve((first.axis_values[1:], first.chain_mean[1:]), result.axis,
                               f"mean {result.statistic}", label=name))
    if result.reference is not None and result.reference.reached:
        traces.append(hv.HLine(result.reference.value).opts(color="black", line_dash="dashed"))
    out.append(hv.Overlay(traces).opts(title=f"mean {result.statistic} over the chains (the first seed), from "
                                             "over-dispersed starts", width=760, height=360, logx=True,
                                       legend_position="right"))
    curves = []
    for runs in result.runs.values():
        first = _first_seed(runs)
        grid, efficiency, _ = first.tuning
        if len(grid):
            centre = first.acceptance_kernel[first.tuned_parameter]
            curves.append(hv.Curve((grid / centre, efficiency), "tuned value / acceptance-tuned value",
                                   f"pilots' ESS of log p̃ per unit of {result.axis}",
                                   label=f"{first.sampler} ({first.tuned_parameter})"))
    if curves:
        out.append(hv.Overlay(curves).opts(title="tuning curves (the first seed): 1 is the acceptance-tuned setting",
                                           width=560, height=360, logx=True, legend_position="right"))
    return out


def save(result, directory: str | Path | None = None, name: str = "bakeoff") -> Path | None:
    """Write ``<name>.html`` (the figures) in ``directory`` (default: beside the runs); its path, or None when no
    run finished (nothing to draw)."""
    if result.table.empty:
        return None
    directory = Path(directory or result.store.directory)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{name}.html"
    hv.save(hv.Layout(figures(result)).cols(2), path)
    return path


def main(argv: list[str]) -> None:
    """Run ``python -m sweeps bakeoff`` with ``argv`` and write its page beside its text report."""
    result, directory = bakeoff_command(argv, prog="python -m dashboard.bakeoff_page")
    page = save(result, directory)
    print("written:", page if page is not None else "no page: no run finished")


if __name__ == "__main__":
    main(sys.argv[1:])
