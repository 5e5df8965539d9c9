"""The lattice view: the current state of one chain drawn as an image.

2-D lattices are drawn as the lattice, a 3-D lattice as one slice (slider),
other targets as a near-square grid of their bits (row-major). For the
segmentation target the ground-truth object and the noisy observation are
drawn beside it. The running mean of the chain's states (its marginals) can be
shown too. Bokeh image sources are replaced in place at each flush, which
costs a few milliseconds (see ``shared/notes/panel-live-streaming.md``).
"""

from __future__ import annotations

import math
import time

import numpy as np
import panel as pn
import param
from bokeh.models import ColumnDataSource, LinearColorMapper
from bokeh.plotting import figure

from ..model.move_replay import MoveReplay
from ..model.run_model import RunModel

STATE_COLOURS = ["#2b2d42", "#f4d35e"]  # 0 (background / spin down), 1 (object / spin up)
WALK_COLOURS = ("#e63946", "#00b4d8")  # bits flipped by a move's first and second walk
#: Seconds each frame of a slow-motion move stays on screen.
FRAME_SECONDS = 0.6
MEAN_PALETTE = "Viridis256"
OBSERVATION_PALETTE = "Greys256"


def grid_shape(target) -> tuple[int, int]:
    """The 2-D image shape a state is drawn in."""
    shape = target.image_shape
    if shape is not None and len(shape) >= 2:
        return tuple(shape[-2:])
    cols = math.ceil(math.sqrt(target.dim))
    return math.ceil(target.dim / cols), cols


def as_image(vector: np.ndarray, target, depth: int = 0) -> np.ndarray:
    """A state (or mean state) as a 2-D float image; padding cells are NaN; a 3-D lattice gives slice ``depth``."""
    shape = target.image_shape
    if shape is not None and len(shape) == 3:
        return vector.reshape(shape)[depth].astype(float)
    rows, cols = grid_shape(target)
    image = np.full(rows * cols, np.nan)
    image[: vector.size] = vector
    return image.reshape(rows, cols)


class ImagePanel:
    """One titled image figure whose shape can change without replacing Bokeh models.

    Figures are built once per session and reconfigured on every new run, so
    that the browser's document does not accumulate discarded models.
    """

    SIDE = 260  # pixels of the longer side of the lattice
    TITLE_HEIGHT, BORDER = 28, 4

    def __init__(self, title: str, palette, low: float = 0.0, high: float = 1.0):
        self.source = ColumnDataSource({"image": [np.full((1, 1), np.nan)]})
        self.mapper = LinearColorMapper(palette=palette, low=low, high=high, nan_color="white")
        self.figure = figure(title=title, x_range=(0, 1), y_range=(1, 0), tools="", toolbar_location=None,
                             min_border=self.BORDER)
        # The y axis is flipped so that row 0 of the array is drawn at the top, as in an image.
        self.glyph = self.figure.image(image="image", x=0, y=0, dw=1, dh=1, color_mapper=self.mapper,
                                       source=self.source).glyph
        self.figure.axis.visible = False
        self.figure.grid.visible = False
        self.pane = pn.pane.Bokeh(self.figure, sizing_mode="fixed", width=self.SIDE, height=self.SIDE)

    def configure(self, shape: tuple[int, int]) -> None:
        rows, cols = shape
        longest = max(rows, cols)
        width = max(40, round(self.SIDE * cols / longest)) + 2 * self.BORDER
        height = max(40, round(self.SIDE * rows / longest)) + self.TITLE_HEIGHT + 2 * self.BORDER
        self.figure.x_range.end = self.glyph.dw = cols
        self.figure.y_range.start = self.glyph.dh = rows
        # Only the figure is resized: updating the pane's width/height makes Panel copy every layout
        # property back from the rendered figure, including stylesheets Panel itself has put there as
        # ImportedStyleSheet models, which its own str-typed parameter then refuses.
        self.figure.update(width=width, height=height)
        self.show(np.full(shape, np.nan))

    def show(self, image: np.ndarray) -> None:
        self.source.data = {"image": [image]}


class LatticeView(pn.viewable.Viewer):
    """Current state (and optionally running mean) of a chosen chain, plus segmentation inputs."""

    model = param.ClassSelector(class_=RunModel)

    def __init__(self, **params):
        super().__init__(**params)
        self.chain = pn.widgets.IntInput(label="chain shown", value=0, start=0, width=110,
                                         description="Index of the chain drawn in the lattice view.")
        self.depth = pn.widgets.IntSlider(label="slice (3-D lattice)", value=0, start=0, end=1, width=200)
        self.show_mean = pn.widgets.Checkbox(label="show running mean (marginals)", value=False)
        self._state = ImagePanel("current state", STATE_COLOURS)
        self.walk_source = ColumnDataSource({"x": [], "y": [], "color": []})
        self._state.figure.rect("x", "y", 0.9, 0.9, source=self.walk_source, fill_alpha=0.0, line_color="color",
                                line_width=3)
        self.slow_motion = pn.widgets.Button(label="Slow-motion move", color="primary", width=150,
                                             description="Pause, make one move of the chain shown and play it "
                                                         "flip by flip: first walk red, second walk blue.")
        self.slow_motion.on_click(self._start_replay)
        self.replay_status = pn.pane.HTML("", sizing_mode="stretch_width", css_classes=["replay-status"])
        self._replay: MoveReplay | None = None
        self._frame = 0
        self._frame_shown_at = -np.inf
        self._mean = ImagePanel("running mean", MEAN_PALETTE)
        self._truth = ImagePanel("ground truth", STATE_COLOURS)
        self._observation = ImagePanel("noisy observation y", OBSERVATION_PALETTE, low=-1.0)
        self._figures = pn.FlexBox(sizing_mode="stretch_width")
        self._layout = pn.Column(pn.Row(self.chain, self.depth, self.show_mean, self.slow_motion),
                                 self.replay_status, self._figures, sizing_mode="stretch_width")
        self._last_states = None
        self._last_mean = None
        self.chain.param.watch(self._redraw_held, "value")
        self.depth.param.watch(self._redraw_held, "value")
        self.show_mean.param.watch(self._on_mean_toggle, "value")
        self.model.param.watch(self._reconfigure, "config")
        self._reconfigure()

    def _reconfigure(self, *events) -> None:
        """Fit the figures to the current target's shape and show its inputs, if any."""
        target = self.model.target
        shape = grid_shape(target)
        self.chain.end = self.model.sampler.n_chains - 1
        self.chain.value = min(self.chain.value, self.chain.end)
        is_3d = target.image_shape is not None and len(target.image_shape) == 3
        self.depth.visible = is_3d
        if is_3d:
            self.depth.end = target.image_shape[0] - 1
            self.depth.value = min(self.depth.value, self.depth.end)
        for panel in (self._state, self._mean, self._truth, self._observation):
            panel.configure(shape)
        self._has_inputs = hasattr(target, "ground_truth")
        if self._has_inputs:
            spread = float(np.abs(target.observation).max())
            self._observation.mapper.update(low=-spread, high=spread)
            self._truth.show((target.ground_truth > 0).astype(float))
            self._observation.show(target.observation)
        self._arrange()
        self._last_states = None
        self._last_mean = None
        self.slow_motion.visible = self.model.replays_moves
        self._stop_replay()
        self._redraw()

    def _arrange(self) -> None:
        """The state, the running mean if asked for, then the target's inputs (segmentation)."""
        shown = [self._state] + ([self._mean] if self.show_mean.value else [])
        shown += [self._truth, self._observation] if self._has_inputs else []
        self._figures[:] = [panel.pane for panel in shown]

    def _on_mean_toggle(self, event) -> None:
        with pn.io.hold():
            self._arrange()
            self._redraw()

    # -- slow motion ------------------------------------------------------------------------------
    def _start_replay(self, event=None) -> None:
        try:
            replay = self.model.replay_next_move(min(self.chain.value or 0, self.model.sampler.n_chains - 1))
        except (ValueError, RuntimeError) as error:
            self.model.error = str(error)
            return
        self._replay, self._frame, self._frame_shown_at = replay, 0, -np.inf
        with pn.io.hold():
            self._advance_replay()

    def _stop_replay(self) -> None:
        self._replay = None
        self.walk_source.data = {"x": [], "y": [], "color": []}
        self.replay_status.object = ""

    def _advance_replay(self) -> None:
        """Show the next frame if the current one has been on screen for ``FRAME_SECONDS``."""
        now = time.perf_counter()
        if now - self._frame_shown_at < FRAME_SECONDS:
            return
        if self._frame >= len(self._replay):
            self._stop_replay()
            self._redraw()
            return
        frame = self._replay.frame(self._frame)
        self._frame += 1
        self._frame_shown_at = now
        target = self.model.target
        self._state.show(as_image(frame.state, target, self.depth.value))
        rows, cols = grid_shape(target)
        xs, ys, colors = [], [], []
        for sites, color in zip((frame.first_walk, frame.second_walk), WALK_COLOURS):
            flat = sites % (rows * cols)  # a 3-D lattice: the bit's position within its slice
            xs += (flat % cols + 0.5).tolist()
            ys += (flat // cols + 0.5).tolist()
            colors += [color] * len(sites)
        self.walk_source.data = {"x": xs, "y": ys, "color": colors}
        self.replay_status.object = frame.text

    def update(self, drained) -> None:
        """Draw the newest states from a ``Drained`` buffer read (or the next frame of a slow-motion move)."""
        if self._replay is not None:
            self._advance_replay()
            return
        if drained.states is None:
            return
        self._last_states, self._last_mean = drained.states, drained.mean_states
        self._redraw()

    def _redraw_held(self, *events) -> None:
        """Redraw from a widget callback, which may run without the document lock."""
        with pn.io.hold():
            self._redraw()

    def _redraw(self, *events) -> None:
        if self._last_states is None:
            self._last_states = self.model.buffer.latest_states()
        chain = min(self.chain.value or 0, self._last_states.shape[0] - 1)
        target = self.model.target
        self._state.show(as_image(self._last_states[chain], target, self.depth.value))
        if self.show_mean.value and self._last_mean is not None:
            self._mean.show(as_image(self._last_mean[chain], target, self.depth.value))

    def __panel__(self):
        return self._layout
