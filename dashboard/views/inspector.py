"""The proposal inspector: what the shown chain's last move was, drawn on the state's own geometry.

Opening the card asks the worker to record the shown chain's moves
(``Display.inspect``); each snapshot then may carry a ``ProposalInspection``
(``samplers.inspection``) of its latest step, at most twice a second while the
run goes on and after every Step when paused. The image is the proposal over the
state's sites on its lattice (or grid), log₁₀ scale with a colour bar: for a
single-flip proposal the chance Q(x^(j) | x) that bit j is the one proposed, for
independent flips (DMALA, DLMC) each bit's own flip probability, for a path
(PAS) the first flip's; for a block or walk move, the state itself. The sites
the move proposed to change (a block's, a path's or the walks' sites) are
outlined, red if it was rejected, green if accepted. The text gives the move's
probability (a block's, a path's, the walks' log f of Eq. 3), the reverse
move's, the target ratio and the acceptance probability with the outcome; for
proposals built on the gradient, a scatter of the estimated flip log-ratios
against the exact ones.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import panel as pn
from bokeh.models import ColorBar, ColumnDataSource
from bokeh.plotting import figure

from samplers.inspection import ProposalInspection

from ..model.images import grid_shape
from ..model.snapshot import RunInfo, Snapshot
from .base import LiveView
from .lattice import ImagePanel

OUTCOME_COLOURS = {True: "#2a9d8f", False: "#e63946"}  # accepted, rejected
COLOUR_BAR_PIXELS = 60
PICTURE_TITLE = "log₁₀ proposal at x"


def _sites(sites: np.ndarray, limit: int = 12) -> str:
    """Sites in order, the first ``limit`` of a long list."""
    shown = " → ".join(str(site) for site in sites[:limit])
    return shown + (f" → … ({sites.size} in all)" if sites.size > limit else "")


def describe(inspection: ProposalInspection) -> str:
    """The move in words and numbers (HTML)."""
    sites = inspection.proposed_sites
    where = (f"bit {sites[0]}" if sites.size == 1 else f"{sites.size} bits" if sites.size else "no bit")
    outcome = "<b style='color:#2a9d8f'>accepted</b>" if inspection.accepted else \
        "<b style='color:#e63946'>rejected</b>"
    text = [f"Step {inspection.step:,}. Proposed: flip {where}; "
            f"p̃(y)/p̃(x) = {math.exp(min(inspection.log_target_ratio, 700)):.4g}; {outcome}."]
    kind, path = inspection.kind, inspection.path
    if kind == "block":
        text.append(f"Block {{{', '.join(map(str, path))}}} chosen uniformly (P = "
                    f"{math.exp(inspection.log_block_choice):.3g}); the values drawn for it had probability "
                    f"{math.exp(inspection.log_q_forward):.3g} given the rest. A Gibbs block move is always kept "
                    "(it may keep the block's values).")
    elif kind == "path":
        text.append(f"Path of {path.size} flips {_sites(path)}: q(path | x) = {math.exp(inspection.log_q_forward):.3g}"
                    f", the reversed path from y q = {math.exp(inspection.log_q_reverse):.3g}; acceptance "
                    f"probability {inspection.acceptance:.3g}.")
        text.append("Colours: the chance w_j / W that bit j is the path's first flip (log₁₀).")
    elif kind == "walk":
        half = path.size // 2
        text.append(f"First walk {_sites(path[:half])}; second walk {_sites(path[half:])}. Path probabilities "
                    f"(Eq. 3): log f(forward) = {inspection.log_q_forward:.4g}, log f(reverse) = "
                    f"{inspection.log_q_reverse:.4g}; acceptance probability (Eq. 6) {inspection.acceptance:.3g}.")
    elif kind != "other":
        text.append(f"q(y | x) = {math.exp(inspection.log_q_forward):.3g}, reverse q(x | y) = "
                    f"{math.exp(inspection.log_q_reverse):.3g}; acceptance probability "
                    f"{inspection.acceptance:.3g}.")
    if kind == "single flip":
        text.append("Colours: the chance Q(x^(j) | x) that bit j is the one proposed (log₁₀).")
    elif kind == "independent flips":
        text.append("Colours: each bit's own chance to flip in this move (log₁₀); all flips are proposed together.")
    elif kind == "other":
        text.append("This sampler's proposal is not a distribution over single sites, blocks or paths (clusters "
                    "or replicas): the outlined sites are what the move changed.")
    return "<br>".join(text)


class InspectorView(LiveView):
    """The shown chain's last move: proposal map, move, reverse, acceptance (see the module docstring)."""

    title = "Proposal inspector: the shown chain's last move"
    starts_collapsed = True

    def __init__(self, **params):
        super().__init__(**params)
        self._panel = ImagePanel(PICTURE_TITLE, "Viridis256", low=-3.0, high=0.0)
        self._panel.figure.add_layout(ColorBar(color_mapper=self._panel.mapper, width=10, padding=2), "right")
        self.marks = ColumnDataSource({"x": [], "y": [], "colour": []})
        # A ring of fixed screen size around each proposed site: visible however small the lattice's cells are.
        self._panel.figure.scatter(x="x", y="y", marker="circle", size=16, fill_alpha=0, line_color="colour",
                                   line_width=3, source=self.marks)
        self.text = pn.pane.HTML("Step the run (or Start it) to see its moves.", sizing_mode="stretch_width",
                                 css_classes=["inspector-text"])
        self.ratios = ColumnDataSource({"exact": [], "estimated": []})
        self.scatter = figure(height=220, width=300, title="flip log-ratios log t_j", x_axis_label="exact",
                              y_axis_label="gradient estimate", tools="", toolbar_location=None, visible=False)
        self.scatter.scatter("exact", "estimated", source=self.ratios, size=4, alpha=0.6)
        self._info: RunInfo | None = None
        self._depth = 0
        self._layout = pn.Column(self.text, pn.FlexBox(self._panel.pane, pn.pane.Bokeh(self.scatter)),
                                 sizing_mode="stretch_width")

    @classmethod
    def applies(cls, info: RunInfo) -> bool:
        return True

    def reconfigure(self, info: RunInfo) -> None:
        self._info = info
        self._panel.configure(grid_shape(info.image_shape, info.dim), info.image_axes)
        self._panel.figure.width += COLOUR_BAR_PIXELS  # the colour bar beside the image, not taken from it
        self.marks.data = {"x": [], "y": [], "colour": []}
        self.ratios.data = {"exact": [], "estimated": []}
        self.scatter.visible = False
        self.text.object = "Step the run (or Start it) to see its moves."

    def update(self, snapshot: Snapshot) -> None:
        inspection = snapshot.inspection
        if inspection is None:
            return
        self._depth = self.client.display.depth
        if inspection.log_q is not None:
            log10_q = np.where(np.isfinite(inspection.log_q), inspection.log_q / math.log(10), np.nan)
            finite = log10_q[np.isfinite(log10_q)]
            self._panel.mapper.update(low=float(finite.min()) if finite.size else -3.0,
                                      high=float(finite.max()) if finite.size and finite.max() > finite.min() else 0.0)
            self._panel.show(self._info.picture(log10_q, self._depth))
        else:
            self._panel.show(self._info.picture(inspection.before.astype(float) - 2.0, self._depth))
        self._panel.figure.title.text = f"{PICTURE_TITLE} (step {inspection.step:,})"
        self.marks.data = self._outlines(inspection)
        self.text.object = describe(inspection)
        estimated = inspection.estimated_log_ratio
        self.scatter.visible = estimated is not None and inspection.log_ratio is not None
        if self.scatter.visible:
            self.ratios.data = {"exact": inspection.log_ratio.tolist(), "estimated": estimated.tolist()}

    def _outlines(self, inspection: ProposalInspection) -> dict:
        """Cell centres of the proposed sites, or of the block's, path's or walks' sites, shown in this image (a 3-D
        lattice: the shown slice's only)."""
        sites = inspection.proposed_sites if inspection.path is None else np.unique(inspection.path)
        x, y = self._info.cells(sites, self._depth)
        return {"x": x.tolist(), "y": y.tolist(), "colour": [OUTCOME_COLOURS[inspection.accepted]] * x.size}

    def opened(self, is_open: bool) -> None:
        """Ask the worker to record the shown chain's moves while the card is open, and to stop when it closes."""
        self.client.show(replace(self.client.display, inspect=is_open))

    def __panel__(self):
        return self._layout
