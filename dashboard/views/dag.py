"""Structure learning: the current DAG of one chain and the posterior edge probabilities.

Left, the DAG the chain shown in the lattice card holds now, on a ``networkx`` circular layout of the nodes
(edges end in an arrowhead at the child). Right, in a 2 × 2 grid with one colour scale, four heatmaps of the
posterior probability of every edge i → j (row i = parent, column j = child):
from the chains' frequencies (MCMC), from the visited DAGs reweighted ∝ p̃
(OPAD), from the visited and proposed DAGs (OPAD+), and exact by enumerating
every DAG (OPAD paper §4.3, Figs. 3–4). Edges of the graph that generated
synthetic data have a black border, which a caption under the heatmaps
explains. The heatmaps come from the run's
``OpadSnapshot`` (see ``dashboard.views.snapshot``); the current DAG from each
flush's states.
"""

from __future__ import annotations

import networkx as nx
import numpy as np
import panel as pn
from bokeh.models import ColorBar, ColumnDataSource, LinearColorMapper
from bokeh.palettes import Blues256
from bokeh.plotting import figure

from engine.snapshot import DagInfo, RunInfo, Snapshot

from .base import LiveView, plain
from .inclusion import BAR_LABELS, SERIES, largest_errors

NODE_RADIUS = 0.16
HEAT_SIDE = 215
COLOUR_BAR_PIXELS = 75
PALETTE = tuple(reversed(Blues256))  # light for improbable edges, dark for likely ones
TRUE_EDGE_CAPTION = ("<span style='display:inline-block;width:12px;height:12px;border:2px solid black;"
                     "vertical-align:middle;margin-right:6px'></span>black outline: an edge of the true graph, the "
                     "one that generated the data")


def node_positions(n: int) -> np.ndarray:
    """``(n, 2)`` positions of the nodes on a circle (networkx's circular layout)."""
    layout = nx.circular_layout(nx.empty_graph(n))
    return np.array([layout[i] for i in range(n)])


def edge_columns(adjacency: np.ndarray, positions: np.ndarray) -> dict:
    """Segments from parent to child, stopped at the node circles, and the arrowheads' positions and angles."""
    parents, children = np.nonzero(adjacency)
    start, end = positions[parents], positions[children]
    direction = end - start
    unit = direction / np.maximum(np.linalg.norm(direction, axis=1, keepdims=True), 1e-12)
    tip = end - unit * NODE_RADIUS
    tail = start + unit * NODE_RADIUS
    return {"x0": tail[:, 0], "y0": tail[:, 1], "x1": tip[:, 0], "y1": tip[:, 1],
            "angle": np.arctan2(unit[:, 1], unit[:, 0]) - np.pi / 2}


def heat_columns(dag: DagInfo, marginals: dict) -> dict:
    """One row per ordered pair (i, j), i ≠ j: its edge probability under each estimate, and the true edges."""
    pairs = dag.edge_pairs
    blank = np.full(len(pairs), np.nan)
    truth = dag.true_adjacency
    border = (np.where(truth[pairs[:, 0], pairs[:, 1]] == 1, "black", None) if truth is not None
              else [None] * len(pairs))
    names = dag.node_names
    return {"parent": [names[i] for i in pairs[:, 0]], "child": [names[j] for j in pairs[:, 1]],
            **{kind: marginals.get(kind, blank) for kind in SERIES}, "border": list(border)}


class DagView(LiveView):
    """The current DAG (the chain shown) and heatmaps of edge probabilities: MCMC, OPAD, OPAD+ and exact."""

    title = "Structure learning: DAG and edge probabilities"

    def __init__(self, **params):
        super().__init__(**params)
        self.node_source = ColumnDataSource({"x": [], "y": [], "name": []})
        self.edge_source = ColumnDataSource(edge_columns(np.zeros((0, 0)), np.zeros((0, 2))))
        self.graph_figure = self._graph_figure()
        self.heat_source = ColumnDataSource({"parent": [], "child": [], "border": [],
                                             **{kind: [] for kind in SERIES}})
        self.mapper = LinearColorMapper(palette=PALETTE, low=0.0, high=1.0, nan_color="#eeeeee")
        self.heat_figures = []  # made for a run whose estimates are tracked (``reconfigure``)
        self.status = pn.pane.HTML("", sizing_mode="stretch_width")
        # as wide as the heatmaps' grid, not stretched: the grid stays beside the graph
        self.caption = pn.pane.HTML(TRUE_EDGE_CAPTION, width=2 * HEAT_SIDE + COLOUR_BAR_PIXELS,
                                    css_classes=["true-edges"], visible=False)
        self._heatmaps = pn.Column(self.caption)
        self._layout = pn.Column(
            self.status,
            pn.FlexBox(pn.pane.Bokeh(self.graph_figure),  # the grid goes under the graph on narrow screens
                       self._heatmaps, sizing_mode="stretch_width"),
            sizing_mode="stretch_width")
        self._info: RunInfo | None = None
        self._positions = np.zeros((0, 2))

    def _graph_figure(self):
        fig = figure(width=280, height=280, x_range=(-1.35, 1.35), y_range=(-1.35, 1.35), title="DAG of the chain shown",
                     tools="save", match_aspect=True)
        fig.axis.visible = fig.grid.visible = False
        fig.toolbar.logo = None
        fig.circle("x", "y", radius=NODE_RADIUS, source=self.node_source, fill_color="#f4d35e",
                   line_color="#2b2d42")
        # edges after the nodes: they stop at the circles, and the arrowheads sit on them, drawn on top
        fig.segment("x0", "y0", "x1", "y1", source=self.edge_source, color="#555555", line_width=2)
        fig.scatter("x1", "y1", source=self.edge_source, marker="triangle", angle="angle", size=12, color="#c1121f")
        fig.text("x", "y", text="name", source=self.node_source, text_align="center", text_baseline="middle",
                 text_font_size="9pt")
        return fig

    def _heat_figure(self, kind: str, colour_bar: bool):
        """One estimate's heatmap; those of the right column carry the shared colour scale."""
        fig = figure(width=HEAT_SIDE + (COLOUR_BAR_PIXELS if colour_bar else 0), height=HEAT_SIDE + 30, x_range=[],
                     y_range=[], title=BAR_LABELS[kind], x_axis_label="child", y_axis_label="parent",
                     tools="hover", toolbar_location=None,
                     tooltips=[("edge", "@parent → @child"), ("P", f"@{kind}{{0.000}}")])
        fig.rect("child", "parent", 0.95, 0.95, source=self.heat_source,
                 fill_color={"field": kind, "transform": self.mapper}, line_color="border", line_width=2)
        fig.xaxis.major_label_orientation = 0.8
        if colour_bar:
            fig.add_layout(ColorBar(color_mapper=self.mapper, width=10, padding=2, title="P(edge)"), "right")
        return fig

    @classmethod
    def applies(cls, info: RunInfo) -> bool:
        return info.dag is not None

    def reconfigure(self, info: RunInfo) -> None:
        self._info = info
        dag = info.dag
        self._positions = node_positions(len(dag.node_names))
        self.node_source.data = plain({"x": self._positions[:, 0], "y": self._positions[:, 1],
                                        "name": list(dag.node_names)})
        self.edge_source.data = edge_columns(np.zeros((0, 0)), self._positions)
        names = list(dag.node_names)
        if info.opad_tracked:
            self.heat_figures = [self._heat_figure(kind, colour_bar=column == 1)
                                 for kind, column in zip(SERIES, (0, 1, 0, 1))]
            for fig in self.heat_figures:
                fig.x_range.factors = names
                fig.y_range.factors = names[::-1]
            self._heatmaps.insert(0, pn.GridBox(*(pn.pane.Bokeh(fig) for fig in self.heat_figures), ncols=2))
        self.heat_source.data = plain(heat_columns(dag, {}))
        self.caption.visible = info.opad_tracked and dag.true_adjacency is not None
        self.status.object = ("Edge probabilities appear after the first steps (exact values by enumerating "
                              "every DAG)." if info.opad_tracked else f"No edge probabilities: {info.opad_problem}.")

    def update(self, snapshot: Snapshot) -> None:
        """Redraw the current DAG and, when the OPAD snapshot is new, the edge probabilities."""
        if snapshot.adjacency is not None:
            self.edge_source.data = plain(edge_columns(snapshot.adjacency, self._positions))
        if snapshot.opad is not None and snapshot.opad.marginals:
            self.heat_source.data = plain(heat_columns(self._info.dag, snapshot.opad.marginals))
            self.status.object = largest_errors(snapshot.opad.marginals, "an edge probability")

    def __panel__(self):
        return self._layout
