"""The proposal inspector: what the shown chain's last move was, drawn on the state's own geometry.

Opening the card asks the worker to record the shown chain's moves
(``Display.inspect``); each snapshot then may carry a ``ProposalInspection``
(``samplers.diagnostics.inspection``) of its latest step, at most twice a second while the
run goes on and after every Step when paused. The picture is the proposal over
the state's sites on its lattice (or grid, or an RBM's blocks), log₁₀ scale
with a colour bar: for a single-flip proposal the chance Q(x⁽ʲ⁾ | x) that bit
j is the one proposed, for independent flips (DMALA, DLMC) each bit's own flip
probability, for a path (PAS) the first flip's. A proposal the same for every
site (Metropolis, Gibbs), a block, walks or clusters have nothing to colour:
the picture is then the state x before the move, in the state card's colours,
under a key that names them and the marks. The sites the move proposed to
change are ringed in magenta over a white halo (neither colour is in Viridis
nor in the state's colours); a block move (block Gibbs, the Hamming ball) rings
its block's sites and fills those it flipped; a path's sites are numbered discs
in the order it flips them, and so are the walks of an intracluster move, in
the slow-motion colours (``lattice.WALK_COLOURS``, named as the lattice card
names them). Sites are named as the picture shows them (a lattice site by its
(row, column); ``engine.images.site_name``). The text gives the move's
probability (a block's, a path's, the walks' log f of Eq. 3), the reverse
move's, the target ratio and the acceptance probability with the outcome; a
block move is Gibbs sampling, always accepted, so its text says which block was
drawn, which bits it flipped (maybe none) and that it was kept. For proposals
built on the gradient, a scatter of the estimated flip log-ratios against the
exact ones.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace

import numpy as np
import panel as pn
from bokeh.models import ColorBar, ColumnDataSource
from bokeh.plotting import figure

from engine.snapshot import (ProposalInspection, RunInfo, Snapshot, exp_number, grid_shape, in_slice, number, site_name,
                             step_labels, wide_number)

from .base import LiveView
from .lattice import STATE_COLOURS, WALK_COLOUR_NAMES, WALK_COLOURS, ImagePanel, bit_key, key_line, swatch

COLOUR_BAR_PIXELS = 60
KEY_PIXELS = 380  # the state's colour key under the picture
PICTURE_TITLE = "log₁₀ proposal at x"
STATE_TITLE = "state x before the move"
PROPOSAL_PALETTE = "Viridis256"
RING_COLOUR = "#ff006e"  # around a proposed site, over a white halo
#: The step numbers on the discs, one colour for both walks' (dark on red and on cyan): a colour per mark would be
#: a per-row array that Bokeh's text glyph, whose labels it builds asynchronously, can read past the end of when
#: the marks change ("Offset is outside the bounds of the DataView").
NUMBER_COLOUR = "#001219"
PICTURE_SIDE = 320  # pixels of the picture's longer side (its height for an RBM's blocks)
#: A ring's or disc's diameter in pixels: most of a cell, but never too small to find or to hold two digits.
MARK_PIXELS = (16, 26)
#: How far (in cells) a second walk's disc moves off a site the first walk flipped too, so that both show.
SHARED_SITE_SHIFT = 0.3
MARK_COLUMNS = ("x", "y", "label", "colour", "fill_alpha")


def _sites(sites: np.ndarray, name: Callable[[int], str], limit: int = 12, between: str = " → ") -> str:
    """Sites in order, named, the first ``limit`` of a long list; ``between`` separates them."""
    shown = between.join(name(site) for site in sites[:limit])
    return shown + (f"{between}… ({sites.size} in all)" if sites.size > limit else "")


def proposal_picture(inspection: ProposalInspection) -> np.ndarray | None:
    """log₁₀ of the proposal per bit (NaN where impossible), or ``None`` when there is none or it is the same for
    every possible site (a uniform choice: the picture then shows the state)."""
    log_q = inspection.log_q
    if log_q is None:
        return None
    finite = log_q[np.isfinite(log_q)]
    if finite.size == 0 or np.ptp(finite) < 1e-9:
        return None
    return np.where(np.isfinite(log_q), log_q / math.log(10), np.nan)


def _colours_sentence(inspection: ProposalInspection) -> str:
    """What the picture's colours are."""
    kind = inspection.kind
    if proposal_picture(inspection) is not None:
        return {"path": "Colours: the chance wⱼ / W that bit j is the path's first flip (log₁₀); the discs number "
                        "the path's flips in order.",
                "independent flips": "Colours: each bit's own chance to flip in this move (log₁₀); all flips are "
                                     "proposed together."}.get(
            kind, "Colours: the chance Q(x⁽ʲ⁾ | x) that bit j is the one proposed (log₁₀).")
    if kind == "single flip":
        possible = int(np.isfinite(inspection.log_q).sum())
        return (f"Every one of the {possible:,} sites is proposed with the same chance 1/{possible:,}: the picture "
                "is the state x before the move, the proposed site ringed.")
    if kind == "walk":
        return (f"The picture is the state x before the move; the discs number the flips in order, the first walk's "
                f"{WALK_COLOUR_NAMES[0]}, the second's {WALK_COLOUR_NAMES[1]}.")
    if kind == "block":
        return ("The picture is the state x before the move: the block's sites ringed, the bits the move flipped "
                "filled.")
    return "The picture is the state x before the move, the sites the move proposed to change ringed."


def marks_key(kind: str) -> list[str]:
    """The key of the marks drawn over the state for a move of ``kind`` (``marks``)."""
    ring = f"border:2.5px solid {RING_COLOUR};border-radius:50%"
    disc = "background:{};border-radius:50%"
    if kind == "walk":
        return [swatch(disc.format(colour), f"{name}: the {walk} walk's flips, numbered in order")
                for colour, name, walk in zip(WALK_COLOURS, WALK_COLOUR_NAMES, ("first", "second"))]
    if kind == "path":
        return [swatch(disc.format(WALK_COLOURS[0]), f"{WALK_COLOUR_NAMES[0]}: the path's flips, numbered in order")]
    if kind == "block":
        return [swatch(ring, "ring: in the block"), swatch(disc.format(RING_COLOUR), "filled: flipped by the move")]
    return [swatch(ring, "ring: proposed to change" if kind != "other" else "ring: changed by the move")]


def _block_move(inspection: ProposalInspection, name: Callable[[int], str], sampler: str) -> str:
    """A block move (block Gibbs, the Hamming ball) in words: the block drawn, the values drawn for it, the bits that
    flipped, and the outcome — always accepted (Gibbs sampling; ``StepRecord.accepted`` says whether a bit changed)."""
    block, flipped = np.sort(inspection.path), np.sort(inspection.proposed_sites)
    drawn = ("drawn within Hamming distance r of a random centre u (probability averaged over u)"
             if sampler == "hamming_ball" else "drawn from their conditional given the rest")
    chance = (f"with probability {exp_number(inspection.log_q_forward)}" if math.isfinite(inspection.log_q_forward)
              else "(too many candidate values to score their probability here)")
    result = (f"flipped {flipped.size} of them (filled): {_sites(flipped, name, between=', ')}" if flipped.size
              else "flipped no bit: the values drawn are the block's current ones")
    return (f"Step {inspection.step:,}. Block {{{_sites(block, name, between=', ')}}} ({block.size} "
            f"site{'' if block.size == 1 else 's'}, ringed), chosen uniformly (P = "
            f"{exp_number(inspection.log_block_choice)}); new values {drawn}, {chance}. The move {result}; "
            f"p̃(y)/p̃(x) = {exp_number(inspection.log_target_ratio)}; <b style='color:#2a9d8f'>accepted</b>: a Gibbs "
            "block move is always kept (acceptance probability 1).")


def describe(inspection: ProposalInspection, name: Callable[[int], str] = lambda site: f"bit {site}",
             sampler: str = "") -> str:
    """The move in words and numbers (HTML); ``name`` names a site as the picture shows it; ``sampler`` is the
    run's (a registry name)."""
    kind, path = inspection.kind, inspection.path
    if kind == "block":
        return "<br>".join((_block_move(inspection, name, sampler), _colours_sentence(inspection)))
    sites = inspection.proposed_sites
    where = (name(sites[0]) if sites.size == 1 else f"{sites.size} bits" if sites.size else "no bit")
    outcome = "<b style='color:#2a9d8f'>accepted</b>" if inspection.accepted else \
        "<b style='color:#e63946'>rejected</b>"
    text = [f"Step {inspection.step:,}. Proposed: flip {where}; "
            f"p̃(y)/p̃(x) = {exp_number(inspection.log_target_ratio)}; {outcome}."]
    if kind == "path":
        text.append(f"Path of {path.size} flip{'' if path.size == 1 else 's'} {_sites(path, name)}: q(path | x) = "
                    f"{exp_number(inspection.log_q_forward)}, the reversed path from y q = "
                    f"{exp_number(inspection.log_q_reverse)}; acceptance probability "
                    f"{wide_number(inspection.acceptance)}.")
    elif kind == "walk":
        half = path.size // 2
        text.append(f"First walk ({WALK_COLOUR_NAMES[0]}, 1–{half}) {_sites(path[:half], name)}; second walk "
                    f"({WALK_COLOUR_NAMES[1]}, {half + 1}–{path.size}) {_sites(path[half:], name)}. Path "
                    f"probabilities (Eq. 3): log f(forward) = {number(inspection.log_q_forward)}, log f(reverse) = "
                    f"{number(inspection.log_q_reverse)}; acceptance probability (Eq. 6) "
                    f"{wide_number(inspection.acceptance)}.")
    elif kind != "other":
        text.append(f"q(y | x) = {exp_number(inspection.log_q_forward)}, reverse q(x | y) = "
                    f"{exp_number(inspection.log_q_reverse)}; acceptance probability "
                    f"{wide_number(inspection.acceptance)}.")
    if kind == "other":
        text.append("This sampler's proposal is not a distribution over single sites, blocks or paths (clusters "
                    "or replicas): the ringed sites are what the move changed.")
    text.append(_colours_sentence(inspection))
    return "<br>".join(text)


def _mark_columns(info: RunInfo, depth: int, sites: np.ndarray, labels: list[str], colour: str,
                  filled: bool) -> dict:
    """One mark per site shown in the picture (a 3-D lattice: the shown slice's): a ring, or a disc with a label."""
    shown = in_slice(sites, info.image_shape, depth)
    x, y = info.cells(sites[shown], depth)
    count = x.size
    return {"x": x.tolist(), "y": y.tolist(), "label": [label for label, keep in zip(labels, shown) if keep],
            "colour": [colour] * count, "fill_alpha": [1.0 if filled else 0.0] * count}


def marks(inspection: ProposalInspection, info: RunInfo, depth: int = 0) -> dict:
    """The marks on the picture: a path's or the walks' sites as discs numbered in flip order (the second walk in
    its own colour, moved off a site the first walk flipped too), a block's sites as rings and the bits it flipped
    as filled discs, any other move's proposed sites as rings."""
    path = inspection.path
    if inspection.kind == "block":
        flipped = np.isin(path, inspection.proposed_sites)
        return _joined([_mark_columns(info, depth, np.sort(sites), [""] * sites.size, RING_COLOUR, filled)
                        for sites, filled in ((path[~flipped], False), (path[flipped], True))])
    if inspection.kind not in ("path", "walk"):
        sites = inspection.proposed_sites
        return _mark_columns(info, depth, sites, [""] * sites.size, RING_COLOUR, filled=False)
    walks = (path,) if inspection.kind == "path" else (path[:path.size // 2], path[path.size // 2:])
    parts, first_step, earlier = [], 1, np.array([], dtype=np.int64)
    for walk, colour in zip(walks, WALK_COLOURS):
        sites, labels = step_labels(walk, first_step)
        part = _mark_columns(info, depth, sites, labels, colour, True)
        shift = SHARED_SITE_SHIFT * np.isin(sites[in_slice(sites, info.image_shape, depth)], earlier)
        part["x"] = (np.asarray(part["x"]) + shift).tolist()
        part["y"] = (np.asarray(part["y"]) + shift).tolist()
        parts.append(part)
        first_step, earlier = first_step + walk.size, sites
    return _joined(parts)


def _joined(parts: list[dict]) -> dict:
    """Mark columns one after another."""
    return {name: [value for part in parts for value in part[name]] for name in MARK_COLUMNS}


class InspectorView(LiveView):
    """The shown chain's last move: proposal map, move, reverse, acceptance (see the module docstring)."""

    title = "Proposal inspector: the shown chain's last move"
    starts_collapsed = True

    def __init__(self, **params):
        super().__init__(**params)
        self._panel = ImagePanel(PICTURE_TITLE, PROPOSAL_PALETTE, low=-3.0, high=0.0, side=PICTURE_SIDE)
        self.colour_bar = ColorBar(color_mapper=self._panel.mapper, width=10, padding=2, title="log₁₀ Q")
        self._panel.figure.add_layout(self.colour_bar, "right")
        self.marks = ColumnDataSource({name: [] for name in MARK_COLUMNS})
        # Marks of a fixed screen size (``MARK_PIXELS``): visible however small the lattice's cells are. A white
        # halo under each ring or disc sets it off from any cell colour.
        fig = self._panel.figure
        self._halo = fig.scatter(x="x", y="y", marker="circle", source=self.marks, fill_color="colour",
                                 fill_alpha="fill_alpha", line_color="white", line_width=4)
        self._ring = fig.scatter(x="x", y="y", marker="circle", source=self.marks, fill_alpha=0,
                                 line_color="colour", line_width=2.5)
        fig.text(x="x", y="y", text="label", source=self.marks, text_color=NUMBER_COLOUR, text_align="center",
                 text_baseline="middle", text_font_size="10px", text_font_style="bold")
        self.key = pn.pane.HTML("", width=KEY_PIXELS, visible=False)  # not stretched: the scatter stays beside
        self.text = pn.pane.HTML("Step the run (or Start it) to see its moves.", sizing_mode="stretch_width",
                                 css_classes=["inspector-text"])
        self.ratios = ColumnDataSource({"exact": [], "estimated": []})
        self.scatter = figure(height=220, width=300, title="flip log-ratios log tⱼ", x_axis_label="exact",
                              y_axis_label="gradient estimate", tools="", toolbar_location=None, visible=False)
        self.scatter.scatter("exact", "estimated", source=self.ratios, size=4, alpha=0.6)
        self._info: RunInfo | None = None
        self._depth = 0
        self._layout = pn.Column(self.text, pn.FlexBox(pn.Column(self._panel.pane, self.key),
                                                       pn.pane.Bokeh(self.scatter)),
                                 sizing_mode="stretch_width")

    @classmethod
    def applies(cls, info: RunInfo) -> bool:
        return True

    def reconfigure(self, info: RunInfo) -> None:
        self._info = info
        self._panel.configure(grid_shape(info.image_shape, info.dim), info.image_axes)
        self._panel.figure.width += COLOUR_BAR_PIXELS  # the colour bar beside the image, not taken from it
        size = min(max(0.9 * self._panel.cell_pixels, MARK_PIXELS[0]), MARK_PIXELS[1])
        self._halo.glyph.size = self._ring.glyph.size = size
        self.marks.data = {name: [] for name in MARK_COLUMNS}
        self.ratios.data = {"exact": [], "estimated": []}
        self.scatter.visible = False
        self.key.object = ""
        self.text.object = "Step the run (or Start it) to see its moves."

    def _name_site(self, site: int) -> str:
        """A site named as the picture shows it (``engine.images.site_name``)."""
        info = self._info
        return site_name(site, info.image_shape, info.image_positions, info.image_axes)

    def update(self, snapshot: Snapshot) -> None:
        inspection = snapshot.inspection
        if inspection is None:
            return
        self._depth = self.client.display.depth
        self._draw_picture(inspection)
        self.marks.data = marks(inspection, self._info, self._depth)
        self.text.object = describe(inspection, self._name_site, self._info.sampler)
        self.key.object = key_line(bit_key(self._info.target_name) + marks_key(inspection.kind))
        estimated = inspection.estimated_log_ratio
        self.scatter.visible = estimated is not None and inspection.log_ratio is not None
        if self.scatter.visible:
            self.ratios.data = {"exact": inspection.log_ratio.tolist(), "estimated": estimated.tolist()}

    def _draw_picture(self, inspection: ProposalInspection) -> None:
        """The proposal on its colour bar, or (nothing to colour) the state before the move under its key."""
        log10_q = proposal_picture(inspection)
        showing_proposal = log10_q is not None
        if showing_proposal:
            finite = log10_q[np.isfinite(log10_q)]
            self._panel.mapper.update(palette=PROPOSAL_PALETTE, low=float(finite.min()), high=float(finite.max()))
        else:
            self._panel.mapper.update(palette=STATE_COLOURS, low=0.0, high=1.0)
        values = log10_q if showing_proposal else inspection.before.astype(float)
        self._panel.show(self._info.picture(values, self._depth))
        self.colour_bar.visible = showing_proposal
        self.key.visible = not showing_proposal
        title = PICTURE_TITLE if showing_proposal else STATE_TITLE
        self._panel.figure.title.text = f"{title} (step {inspection.step:,})"

    def opened(self, is_open: bool) -> None:
        """Ask the worker to record the shown chain's moves while the card is open, and to stop when it closes."""
        self.client.show(replace(self.client.display, inspect=is_open))

    def __panel__(self):
        return self._layout
