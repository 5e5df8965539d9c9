"""The lattice view: the current state of one chain drawn as an image.

2-D lattices are drawn as the lattice, a 3-D lattice as one slice (slider),
a ring as a row of spins, variable selection as a row of named predictors, a
DAG as its adjacency matrix (parents × children, named), a Boltzmann machine
with hidden units in the state (Gabor) as its visible image beside its hidden
units (each block titled under it), an RBM whose hidden units are summed out
as its visible image beside what they say of it, p(h_j = 1 | v) (the chain's
hidden units drawn from it would be on with these probabilities), other targets as a
near-square grid of their bits (row-major; see ``engine.images``). For the
segmentation target the ground-truth object and the noisy observation are
drawn small (``INPUT_SIDE``), side by side under the state, so that the state,
both inputs and their colour key (which names the observation's grey scale
too) fit the first screen of a 1000 px window. The running mean of the
chain's states (its marginals) can be shown too. The controls above the
pictures wrap in a narrow card: the checkbox's label onto a second line, the
button under them. The worker draws the chain, slice and mean asked for here
(``RunClient.show``) into each snapshot's images; Bokeh image sources are
replaced in place, which costs a few milliseconds
(see ``shared/notes/panel-live-streaming.md``).

Slow motion (intracluster moves): the button asks the worker for one move
(``RunClient.replay_move``) and the view plays the ``MoveReplay`` it sends,
flip by flip, the first walk's flips outlined in one colour and the second
walk's, in a smaller square so that a site both walks flipped shows both, in
another (``WALK_COLOURS``, named ``WALK_COLOUR_NAMES`` wherever a text speaks
of them); the key under the state names every colour drawn.
"""

from __future__ import annotations

import time
from dataclasses import replace

import numpy as np
import panel as pn
from bokeh.models import ColorBar, ColumnDataSource, FixedTicker, LinearColorMapper
from bokeh.plotting import figure

from engine.snapshot import ImageAxes, MoveReplay, RunInfo, Snapshot, grid_shape, number

from .base import LiveView

STATE_COLOURS = ["#2b2d42", "#f4d35e"]  # 0 (background / spin down), 1 (object / spin up)
WALK_COLOURS = ("#e63946", "#00b4d8")  # bits flipped by a move's first and second walk
WALK_COLOUR_NAMES = ("red", "cyan")  # how every text names them (the key, the inspector, the presets)
#: Side of a slow-motion outline, in cells, by walk: the second walk's inside the first's.
WALK_OUTLINE_SIDES = (0.9, 0.6)
#: Seconds each frame of a slow-motion move stays on screen.
FRAME_SECONDS = 0.6
MEAN_PALETTE = "Viridis256"
OBSERVATION_PALETTE = "Greys256"


#: What a bit means, by target: (meaning of 0, meaning of 1); a target not named here has units off and on.
BIT_MEANINGS = {"ising_segmentation": ("background", "object"), "rbm": ("pixel off", "pixel on"),
                "gabor_rbm": ("unit off, spin −1", "unit on, spin +1"), "ising1d": ("spin −1", "spin +1"),
                "ising_lattice": ("spin −1", "spin +1"), "discs_ising": ("spin −1", "spin +1"),
                "spin_glass_3d": ("spin −1", "spin +1"),
                "boltzmann": ("spin −1", "spin +1"), "bvs": ("predictor out", "predictor in"),
                "dag": ("no edge", "edge"), "markov_network": ("variable false", "variable true")}
MEAN_BAR_PIXELS = 50
#: Pixels of the longer side of the segmentation's ground truth and observation: two side by side fit a state card
#: 270 px wide (a 1000 px window), under the state and above the key within the first screen.
INPUT_SIDE = 120
#: Pixels of the longer side of an RBM's hidden units p(h | v): with its colour bar, beside the state in the state
#: card of a 1280 px window.
HIDDEN_SIDE = 72
#: Narrowest width of the running-mean checkbox (px): beside the chain input in a 270 px card, its label on two lines.
CHECKBOX_MIN_WIDTH = 120


def swatch(style: str, label: str, width: int = 14) -> str:
    """One entry of a key (HTML): a 14 px high swatch drawn with the CSS ``style``, then its label."""
    return (f"<span style='white-space:nowrap'><span style='display:inline-block;width:{width}px;height:14px;"
            f"box-sizing:border-box;vertical-align:middle;margin:0 4px 0 10px;{style}'></span>{label}</span> ")


def key_line(items: list[str]) -> str:
    """Entries of a key (``swatch``) on one wrapping line."""
    return "<span style='font-size:0.9em'>" + "".join(items) + "</span>"


def walk_key() -> list[str]:
    """The key of slow motion's outlines: each walk's colour, named, and what it marks."""
    first, second = (f"border:3px solid {colour}" for colour in WALK_COLOURS)
    return [swatch(first, f"{WALK_COLOUR_NAMES[0]} outline: flipped by the first walk"),
            swatch(second, f"{WALK_COLOUR_NAMES[1]} inner outline: flipped by the second walk")]


def bit_key(target_name: str) -> list[str]:
    """The key of a state's bits: a swatch for 0 and for 1, named by what they mean for this target."""
    meanings = BIT_MEANINGS.get(target_name, ("unit off", "unit on"))
    return [swatch(f"background:{colour};border:1px solid #888", f"{meaning} (x = {bit})")
            for bit, (colour, meaning) in enumerate(zip(STATE_COLOURS, meanings))]


def state_key(target_name: str, observation_spread: float | None = None, hidden_units: int = 0,
              walks: bool = False) -> str:
    """The colour key of a state image (HTML): its bits (``bit_key``); with ``observation_spread`` also the grey
    scale of the noisy observation y, from −spread (black) to +spread; with ``hidden_units`` what the picture
    beside the state shows; with ``walks`` slow motion's outlines (``walk_key``)."""
    items = bit_key(target_name)
    if observation_spread is not None:
        shown = number(observation_spread)
        items.append(swatch("background:linear-gradient(to right, #000, #fff);border:1px solid #888",
                            f"y from −{shown} to {shown}", width=42))
    if hidden_units:
        items.append(f"<span style='margin-left:10px'>beside it, p(hⱼ = 1 | v): how likely each of the "
                     f"{hidden_units} summed-out hidden units is on, given the state</span>")
    if walks:
        items += walk_key()
    return key_line(items)


class ImagePanel:
    """One titled image figure whose shape can change without replacing Bokeh models; a picture of named variables
    (``ImageAxes``: a BVS row of predictors, a DAG's parent × child matrix) has its rows and columns labelled, a
    picture made of blocks (``ImageAxes.parts``: an RBM's visible image and hidden units) each block's title under
    it."""

    SIDE = 260  # pixels of the longer side of the lattice (of the height of a picture made of blocks)
    TITLE_HEIGHT, BORDER = 28, 4
    PART_TITLE_PIXELS = 16  # a line of a block's title
    PARTS_WIDTH = 1.75  # the widest a picture made of blocks is, in ``side``s
    #: Room for an axis's labels and title: horizontal names, names written upwards, a row's names.
    X_AXIS_PIXELS, X_AXIS_UPRIGHT_PIXELS, Y_AXIS_PIXELS = 45, 80, 70
    CHAR_PIXELS = 7  # width of a label's character (11 px font)
    NAMED_CELL_PIXELS = 40

    def __init__(self, title: str, palette, low: float = 0.0, high: float = 1.0, side: int = SIDE):
        self.side = side
        self.cell_pixels = float(side)
        self.source = ColumnDataSource({"image": [np.full((1, 1), np.nan)]})
        self.mapper = LinearColorMapper(palette=palette, low=low, high=high, nan_color="white")
        self.figure = figure(title=title, x_range=(0, 1), y_range=(1, 0), tools="", toolbar_location=None,
                             min_border=self.BORDER)
        # The y axis is flipped so that row 0 of the array is drawn at the top, as in an image.
        self.glyph = self.figure.image(image="image", x=0, y=0, dw=1, dh=1, color_mapper=self.mapper,
                                       source=self.source).glyph
        self.part_titles = ColumnDataSource({"x": [], "y": [], "text": []})
        self.figure.text("x", "y", text="text", source=self.part_titles, text_align="center", text_baseline="top",
                         text_font_size="11px", text_font_style="bold", text_color="#333333")
        self.figure.axis.visible = False
        self.figure.grid.visible = False
        self.pane = pn.pane.Bokeh(self.figure, sizing_mode="fixed", width=side, height=side)

    def configure(self, shape: tuple[int, int], axes: ImageAxes | None = None) -> None:
        rows, cols = shape
        longest = max(rows, cols)
        parts = axes.parts if axes is not None else ()
        # blocks side by side are as tall as a lattice, and wider by at most PARTS_WIDTH
        cell = min(self.side / rows, self.PARTS_WIDTH * self.side / cols) if parts else self.side / longest
        if axes is not None and (axes.rows or axes.columns):  # named cells are wide enough for their names, up to
            cell = min(max(cell, self.NAMED_CELL_PIXELS), 2 * self.side / longest)  # twice the usual side
        self.cell_pixels = cell
        width = max(40, round(cell * cols)) + 2 * self.BORDER
        height = max(40, round(cell * rows)) + self.TITLE_HEIGHT + 2 * self.BORDER
        width, height = self._label(axes, width, height, cell)
        title_pixels = self._title_parts(parts, rows)
        self.figure.x_range.end = self.glyph.dw = cols
        self.glyph.dh = rows
        self.figure.y_range.start = rows + title_pixels / cell
        height += title_pixels
        # Only the figure is resized: updating the pane's width/height makes Panel copy every layout
        # property back from the rendered figure, including stylesheets Panel itself has put there as
        # ImportedStyleSheet models, which its own str-typed parameter then refuses.
        self.figure.update(width=width, height=height)
        self.show(np.full(shape, np.nan))

    def show(self, image: np.ndarray) -> None:
        self.source.data = {"image": [image]}

    def _title_parts(self, parts: tuple, rows: int) -> int:
        """Write each block's title under it; the pixels of room the titles take."""
        self.part_titles.data = {"x": [part.left + part.shape[1] / 2 for part in parts],
                                 "y": [rows + 0.1] * len(parts), "text": [part.title for part in parts]}
        lines = max((part.title.count("\n") + 1 for part in parts), default=0)
        return lines * self.PART_TITLE_PIXELS + (4 if lines else 0)

    def _label(self, axes: ImageAxes | None, width: int, height: int, cell_pixels: float) -> tuple[int, int]:
        """Name the rows and columns of a picture of named variables (none for a lattice); the figure's size
        with room for the names."""
        x_axis, y_axis = self.figure.xaxis[0], self.figure.yaxis[0]
        x_axis.visible = bool(axes and axes.columns)
        y_axis.visible = bool(axes and axes.rows)
        for axis, names, title in ((x_axis, axes.columns, axes.columns_title),
                                   (y_axis, axes.rows, axes.rows_title)) if axes else ():
            axis.ticker = FixedTicker(ticks=[i + 0.5 for i in range(len(names))])
            axis.major_label_overrides = {i + 0.5: name for i, name in enumerate(names)}
            axis.axis_label = title
            axis.major_tick_line_color = axis.minor_tick_line_color = None
        if x_axis.visible:
            upright = self.CHAR_PIXELS * max(map(len, axes.columns)) + 8 > cell_pixels
            x_axis.major_label_orientation = "vertical" if upright else "horizontal"
            height += self.X_AXIS_UPRIGHT_PIXELS if upright else self.X_AXIS_PIXELS
        return width + (self.Y_AXIS_PIXELS if y_axis.visible else 0), height


def _scaled_picture(title: str, side: int, shape: tuple[int, int], axes: ImageAxes | None = None) -> ImagePanel:
    """A picture of probabilities fitted to ``shape``, its colour scale at its right, beside the image and not
    taken from it."""
    panel = ImagePanel(title, MEAN_PALETTE, side=side)
    panel.figure.add_layout(ColorBar(color_mapper=panel.mapper, width=8, padding=2), "right")
    panel.configure(shape, axes)
    panel.figure.width += MEAN_BAR_PIXELS
    return panel


class LatticeView(LiveView):
    """Current state (and optionally running mean) of a chosen chain, plus segmentation inputs."""

    title = "State of the chain shown"

    def __init__(self, **params):
        super().__init__(**params)
        self.chain = pn.widgets.IntInput(label="chain shown", value=0, start=0, width=110,
                                         description="Index of the chain drawn in the lattice view.")
        self.depth = pn.widgets.IntSlider(label="slice (3-D lattice)", value=0, start=0, end=1, width=200)
        self.show_mean = pn.widgets.Checkbox(label="show running mean (marginals)", value=False,
                                             sizing_mode="stretch_width", min_width=CHECKBOX_MIN_WIDTH,
                                             styles={"flex": f"1 1 {CHECKBOX_MIN_WIDTH}px"})
        self._state = ImagePanel("current state", STATE_COLOURS)
        self.walk_source = ColumnDataSource({"x": [], "y": [], "color": [], "side": []})
        self._state.figure.rect("x", "y", "side", "side", source=self.walk_source, fill_alpha=0.0,
                                line_color="color", line_width=3)
        self.slow_motion = pn.widgets.Button(
            label="Slow-motion move", color="primary", width=150,
            description=f"Pause, make one move of the chain shown and play it flip by flip: first walk "
                        f"{WALK_COLOUR_NAMES[0]}, second walk {WALK_COLOUR_NAMES[1]}.")
        self.slow_motion.on_click(lambda event: self.client.replay_move(self.chain.value or 0))
        self.replay_status = pn.pane.HTML("", sizing_mode="stretch_width", css_classes=["replay-status"])
        self._replay: MoveReplay | None = None
        self._frame = 0
        self._frame_shown_at = -np.inf
        # the other pictures are made when the run shows them (a figure is about forty of the page's models): the
        # running mean when first asked for, the hidden units and the inputs for a run that has them
        self._mean: ImagePanel | None = None
        self._hidden: ImagePanel | None = None
        self._truth: ImagePanel | None = None
        self._observation: ImagePanel | None = None
        self._inputs: pn.FlexBox | None = None
        self._figures = pn.FlexBox(sizing_mode="stretch_width")
        self.key = pn.pane.HTML("", sizing_mode="stretch_width", css_classes=["state-key"])
        self._layout = pn.Column(pn.FlexBox(self.chain, self.depth, self.show_mean, self.slow_motion,
                                            align_items="center", sizing_mode="stretch_width"),
                                 self.replay_status, self._figures, self.key, sizing_mode="stretch_width")
        self._info: RunInfo | None = None
        self._last_image: np.ndarray | None = None
        for widget in (self.chain, self.depth, self.show_mean):
            widget.param.watch(self._on_display, "value")
        self.watch_client(self._on_replay, "replay")

    def reconfigure(self, info: RunInfo) -> None:
        """Fit the state's picture to the run's state shape; picture an RBM's hidden units and a segmentation's
        inputs, for a run that has them."""
        self._info = info
        shape = grid_shape(info.image_shape, info.dim)
        self.chain.end = info.n_chains - 1
        self.chain.value = min(self.chain.value, self.chain.end)
        is_3d = info.image_shape is not None and len(info.image_shape) == 3
        self.depth.visible = is_3d
        if is_3d:
            self.depth.end = info.image_shape[0] - 1
            self.depth.value = min(self.depth.value, self.depth.end)
        self._state.configure(shape, info.image_axes)
        if info.hidden_units:
            self._hidden = _scaled_picture("p(hⱼ = 1 | v)", HIDDEN_SIDE, grid_shape(None, info.hidden_units))
        spread = None
        if info.inputs:
            spread = float(np.abs(info.inputs["observation"]).max())
            self._truth = ImagePanel("ground truth", STATE_COLOURS, side=INPUT_SIDE)
            self._observation = ImagePanel("observation y", OBSERVATION_PALETTE, low=-spread, high=spread,
                                           side=INPUT_SIDE)
            for panel, image in ((self._truth, info.inputs["ground_truth"]),
                                 (self._observation, info.inputs["observation"])):
                panel.configure(shape)
                panel.show(image)
            self._inputs = pn.FlexBox(self._truth.pane, self._observation.pane)  # one item: never split
        self.key.object = state_key(info.target_name, spread, info.hidden_units, info.capabilities.replays_moves)
        self._arrange()
        self.slow_motion.visible = info.capabilities.replays_moves
        self._stop_replay()

    def _arrange(self) -> None:
        """The state, an RBM's hidden units given it, the running mean if asked for, then the target's inputs
        (segmentation), as a pair."""
        hidden = [self._hidden.pane] if self._hidden is not None else []
        mean = [self._mean_panel().pane] if self.show_mean.value and self._info is not None else []
        inputs = [self._inputs] if self._inputs is not None else []
        self._figures[:] = [self._state.pane, *hidden, *mean, *inputs]

    def _mean_panel(self) -> ImagePanel:
        """The running mean's picture, made and fitted to the run the first time it is shown."""
        if self._mean is None:
            info = self._info
            self._mean = _scaled_picture("running mean", ImagePanel.SIDE, grid_shape(info.image_shape, info.dim),
                                         info.image_axes)
        return self._mean

    def _on_display(self, *events) -> None:
        """A widget changed what to draw: tell the worker (its next snapshot draws it)."""
        with pn.io.hold():  # widget callbacks may run without the document lock
            self._arrange()
        self.client.show(replace(self.client.display, chain=max(0, self.chain.value or 0), depth=self.depth.value,
                                 mean=self.show_mean.value))

    # -- slow motion ------------------------------------------------------------------------------
    def _on_replay(self, event) -> None:
        if event.new is not None:
            self._replay, self._frame, self._frame_shown_at = event.new, 0, -np.inf

    def _stop_replay(self) -> None:
        self._replay = None
        self.walk_source.data = {"x": [], "y": [], "color": [], "side": []}
        self.replay_status.object = ""

    def _advance_replay(self) -> None:
        """Show the next frame if the current one has been on screen for ``FRAME_SECONDS``."""
        now = time.perf_counter()
        if now - self._frame_shown_at < FRAME_SECONDS:
            return
        if self._frame >= len(self._replay):
            self._stop_replay()
            if self._last_image is not None:
                self._state.show(self._last_image)
            return
        frame = self._replay.frame(self._frame)
        self._frame += 1
        self._frame_shown_at = now
        self._state.show(self._info.picture(frame.state, self.depth.value))
        columns = {"x": [], "y": [], "color": [], "side": []}
        for sites, color, side in zip((frame.first_walk, frame.second_walk), WALK_COLOURS, WALK_OUTLINE_SIDES):
            x, y = self._info.cells(sites, self.depth.value)
            columns["x"] += x.tolist()
            columns["y"] += y.tolist()
            columns["color"] += [color] * x.size
            columns["side"] += [side] * x.size
        self.walk_source.data = columns
        self.replay_status.object = frame.text

    def tick(self) -> None:
        """At every flush: the next frame of a slow-motion move, when one is playing."""
        if self._replay is not None:
            self._advance_replay()

    def update(self, snapshot: Snapshot) -> None:
        """Draw the snapshot's images (the state waits while a slow-motion move plays)."""
        if snapshot.image is not None:
            self._last_image = snapshot.image
            if self._replay is None:
                self._state.show(snapshot.image)
        if snapshot.mean_image is not None and self._mean is not None and self.show_mean.value:
            self._mean.show(snapshot.mean_image)
        if snapshot.hidden_image is not None and self._hidden is not None:
            self._hidden.show(snapshot.hidden_image)

    def __panel__(self):
        return self._layout
