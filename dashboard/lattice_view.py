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

import numpy as np
import panel as pn
import param
from bokeh.models import ColumnDataSource, LinearColorMapper
from bokeh.plotting import figure

from .run_model import RunModel

STATE_COLOURS = ["#2b2d42", "#f4d35e"]  # 0 (background / spin down), 1 (object / spin up)
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


def image_figure(title: str, shape: tuple[int, int], mapper: LinearColorMapper, source: ColumnDataSource):
    rows, cols = shape
    side = 260  # pixels of the longer side of the lattice
    title_height, border = 28, 4
    fig = figure(title=title, width=max(40, round(side * cols / max(rows, cols))) + 2 * border,
                 height=max(40, round(side * rows / max(rows, cols))) + title_height + 2 * border,
                 x_range=(0, cols), y_range=(rows, 0), tools="", toolbar_location=None, min_border=border)
    # The y axis is flipped so that row 0 of the array is drawn at the top, as in an image.
    fig.image(image="image", x=0, y=0, dw=cols, dh=rows, color_mapper=mapper, source=source)
    fig.axis.visible = False
    fig.grid.visible = False
    return fig


def figure_pane(fig) -> pn.pane.Bokeh:
    """A pane with the figure's own fixed size, so that the layout around it reserves all of it."""
    return pn.pane.Bokeh(fig, width=fig.width, height=fig.height, sizing_mode="fixed")


class LatticeView(pn.viewable.Viewer):
    """Current state (and optionally running mean) of a chosen chain, plus segmentation inputs."""

    model = param.ClassSelector(class_=RunModel)

    def __init__(self, **params):
        super().__init__(**params)
        self.chain = pn.widgets.IntInput(label="chain shown", value=0, start=0, width=110,
                                         description="Index of the chain drawn in the lattice view.")
        self.depth = pn.widgets.IntSlider(label="slice (3-D lattice)", value=0, start=0, end=1, width=200)
        self.show_mean = pn.widgets.Checkbox(label="show running mean (marginals)", value=False)
        self._state_source = ColumnDataSource({"image": [np.zeros((1, 1))]})
        self._mean_source = ColumnDataSource({"image": [np.zeros((1, 1))]})
        self._layout = pn.Column(sizing_mode="stretch_width")
        self._last_states = None
        self._last_mean = None
        self.chain.param.watch(self._redraw_held, "value")
        self.depth.param.watch(self._redraw_held, "value")
        self.show_mean.param.watch(self._on_mean_toggle, "value")
        self.model.param.watch(self._rebuild, "config")
        self._rebuild()

    def _rebuild(self, *events) -> None:
        """New figures for the current target's shape."""
        target = self.model.target
        shape = grid_shape(target)
        self.chain.end = self.model.sampler.n_chains - 1
        self.chain.value = min(self.chain.value, self.chain.end)
        is_3d = target.image_shape is not None and len(target.image_shape) == 3
        self.depth.visible = is_3d
        if is_3d:
            self.depth.end = target.image_shape[0] - 1
            self.depth.value = min(self.depth.value, self.depth.end)
        self._state_source = ColumnDataSource({"image": [np.full(shape, np.nan)]})
        self._mean_source = ColumnDataSource({"image": [np.full(shape, np.nan)]})
        state_fig = image_figure("current state", shape, LinearColorMapper(palette=STATE_COLOURS, low=0, high=1,
                                                                            nan_color="white"), self._state_source)
        mean_fig = image_figure("running mean", shape, LinearColorMapper(palette=MEAN_PALETTE, low=0, high=1,
                                                                               nan_color="white"), self._mean_source)
        self._state_pane = figure_pane(state_fig)
        self._mean_pane = figure_pane(mean_fig)
        figures = []
        if hasattr(target, "ground_truth"):
            truth = ColumnDataSource({"image": [(target.ground_truth > 0).astype(float)]})
            observed = ColumnDataSource({"image": [target.observation]})
            spread = float(np.abs(target.observation).max())
            figures += [
                figure_pane(image_figure("ground truth", shape, LinearColorMapper(
                    palette=STATE_COLOURS, low=0, high=1), truth)),
                figure_pane(image_figure("noisy observation y", shape, LinearColorMapper(
                    palette=OBSERVATION_PALETTE, low=-spread, high=spread), observed)),
            ]
        self._input_panes = figures
        self._figures = pn.FlexBox(sizing_mode="stretch_width")
        self._layout[:] = [pn.Row(self.chain, self.depth, self.show_mean), self._figures]
        self._arrange()
        self._last_states = None
        self._last_mean = None
        self._redraw()

    def _arrange(self) -> None:
        """The state, the running mean if asked for, then the target's inputs (segmentation)."""
        shown = [self._state_pane] + ([self._mean_pane] if self.show_mean.value else [])
        self._figures[:] = shown + self._input_panes

    def _on_mean_toggle(self, event) -> None:
        with pn.io.hold():
            self._arrange()
            self._redraw()

    def update(self, drained) -> None:
        """Draw the newest states from a ``Drained`` buffer read."""
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
        self._state_source.data = {"image": [as_image(self._last_states[chain], target, self.depth.value)]}
        if self.show_mean.value and self._last_mean is not None:
            self._mean_source.data = {"image": [as_image(self._last_mean[chain], target, self.depth.value)]}

    def __panel__(self):
        return self._layout
