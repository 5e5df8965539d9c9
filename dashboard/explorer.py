"""The explorer: one run model, its controls and live views, and the periodic flush.

``create_app()`` builds an ``Explorer`` for the current session (server or
notebook). One periodic callback per session (``refresh_ms``, default 100 ms)
drains the run's buffer and updates the hot views (status, lattice, traces)
inside ``pn.io.hold()``; the diagnostics are refreshed about once a second and
the balancing-function and OPAD views (KL curves, inclusion probabilities,
DAG edge probabilities) at most twice a second. When a served session ends, its sampler thread
is stopped and joined. In a notebook call ``explorer.close()`` when done.
"""

from __future__ import annotations

import sys
import time

import panel as pn
import param

from .views.adaptation import AdaptationView
from .views.balancing import BalancingView
from .catalogue import Catalogue
from .views.comparison import ComparisonView
from .model.config import RunConfig
from .controls import Controls
from .views.dag import DagView
from .views.diagnostics import DiagnosticsView
from .views.inclusion import InclusionView
from .views.kl import KLView
from .views.lattice import LatticeView
from .model.run_model import RunModel
from .views.traces import TraceView

SLOW_VIEW_SECONDS = 1.0


class Explorer(pn.viewable.Viewer):
    """The whole dashboard for one session."""

    refresh_ms = param.Integer(100, bounds=(20, 5000), doc="Period of the plot refresh (ms).")

    def __init__(self, config: RunConfig | None = None, **params):
        super().__init__(**params)
        self.model = RunModel(config)
        self.controls = Controls(model=self.model)
        self.lattice = LatticeView(model=self.model)
        self.traces = TraceView(model=self.model)
        self.balancing = BalancingView(model=self.model)
        self.diagnostics = DiagnosticsView(model=self.model)
        self.kl = KLView(model=self.model)
        self.inclusion = InclusionView(model=self.model)
        self.dag = DagView(model=self.model)
        self.comparison = ComparisonView(model=self.model)
        self.adaptation = AdaptationView(model=self.model)
        self.refresh = pn.widgets.IntInput.from_param(self.param.refresh_ms, label="plot refresh period (ms)")
        self._balancing_card = pn.Card(self.balancing, title="Balancing function", sizing_mode="stretch_width")
        self._inclusion_card = pn.Card(self.inclusion, title="Variable selection: inclusion probabilities",
                                       sizing_mode="stretch_width")
        self._dag_card = pn.Card(self.dag, title="Structure learning: DAG and edge probabilities",
                                 sizing_mode="stretch_width")
        self._comparison_card = pn.Card(self.comparison, title="Side by side at equal compute time",
                                        sizing_mode="stretch_width")
        self._adaptation_card = pn.Card(self.adaptation, title="Tuning the walks (γ, walk length)",
                                        sizing_mode="stretch_width")
        self._callback = None
        self._last_slow = 0.0
        self.flush_seconds: list[float] = []
        self.model.param.watch(self._on_config, "config")
        self._on_config()

    def _on_config(self, *events) -> None:
        self._balancing_card.visible = self.balancing.applies
        self._inclusion_card.visible = self.inclusion.applies
        self._dag_card.visible = self.dag.applies
        self._comparison_card.visible = self.comparison.applies
        self._adaptation_card.visible = self.adaptation.applies

    @param.depends("refresh_ms", watch=True)
    def _on_refresh_period(self) -> None:
        if self._callback is not None:
            self._callback.period = self.refresh_ms

    def start_updates(self) -> None:
        """Start this session's periodic flush (idempotent)."""
        if self._callback is None:
            self._callback = pn.state.add_periodic_callback(self.flush, period=self.refresh_ms)

    def flush(self) -> None:
        """Move what the sampler produced since the last flush into the plots."""
        started = time.perf_counter()
        drained = self.model.poll()
        with pn.io.hold():
            self.controls.update_status()
            self.lattice.update(drained)
            self.traces.update(drained)
            self.balancing.refresh()
            self.kl.refresh()
            self.inclusion.refresh()
            self.dag.update(drained)
            self.dag.refresh()
            self.comparison.refresh()
            self.adaptation.refresh()
            if started - self._last_slow >= SLOW_VIEW_SECONDS:
                self._last_slow = started
                self.diagnostics.refresh()
        self.flush_seconds.append(time.perf_counter() - started)
        del self.flush_seconds[:-1000]

    def close(self, *args) -> None:
        """Stop the flush and the sampler thread (called when the session ends)."""
        if self._callback is not None:
            self._callback.stop()
            self._callback = None
        self.model.close()

    def main_area(self) -> pn.viewable.Viewable:
        return pn.Column(
            pn.Card(self.lattice, title="Lattice", sizing_mode="stretch_width"),
            pn.Card(self.traces, title="Traces", sizing_mode="stretch_width"),
            self._comparison_card,
            self._adaptation_card,
            self._balancing_card,
            pn.Card(self.kl, title="OPAD: KL to the target", sizing_mode="stretch_width"),
            self._inclusion_card,
            self._dag_card,
            pn.Card(self.diagnostics, title="Diagnostics", sizing_mode="stretch_width"),
            pn.Card(Catalogue(), title="All targets and samplers", collapsed=True, sizing_mode="stretch_width"),
            sizing_mode="stretch_width",
        )

    def sidebar(self) -> pn.viewable.Viewable:
        return pn.Column(self.controls, self.refresh, sizing_mode="stretch_width")

    def template(self) -> pn.template.FastListTemplate:
        return pn.template.FastListTemplate(
            title="Discrete-sampler explorer",
            sidebar=[self.sidebar()],
            main=[self.main_area()],
            sidebar_width=380,
        )

    def __panel__(self):
        return pn.Row(pn.Column(self.sidebar(), width=380), self.main_area(), sizing_mode="stretch_width")


def prefer_responsiveness(switch_interval: float = 0.001) -> None:
    """Let the server thread take the GIL sooner (default 5 ms) while sampler threads compute.

    Every served session runs a CPU-bound sampler thread; the Bokeh server's
    thread mostly waits on sockets and must win the GIL back after each wait.
    A 1 ms switch interval keeps page loads and clicks prompt with several
    sessions sampling, at a small cost in context switches.
    """
    sys.setswitchinterval(switch_interval)


def create_app(config: RunConfig | None = None, **params) -> Explorer:
    """An ``Explorer`` with its refresh running; in a served session, closed with the session."""
    explorer = Explorer(config, **params)
    explorer.start_updates()
    document = pn.state.curdoc
    if document is not None and document.session_context is not None:
        pn.state.on_session_destroyed(explorer.close)
    return explorer
