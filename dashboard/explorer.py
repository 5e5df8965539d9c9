"""The explorer: one session's run client, its controls and live views, and the periodic flush.

``create_app()`` builds an ``Explorer`` for the current session (server or
notebook). The session's sampler runs in a worker (``model.engine``): a
process of its own when served, a thread of this process in a notebook (or
wherever ``in_process=True``). One periodic callback per session
(``refresh_ms``, default 100 ms) takes what the worker sent (``RunClient.poll``)
and hands each snapshot to every view whose card shows, inside
``pn.io.hold()``. A new run (``RunClient.info``) reconfigures the views and
shows only the cards that apply to it; a view is built the first time it
applies, and the catalogue when its card is first opened, so a page holds only
the Bokeh models its runs need. When a served session ends, its worker is
stopped. In a notebook call ``explorer.close()`` when done.
"""

from __future__ import annotations

import time
import weakref

import panel as pn
import param

from .catalogue import Catalogue
from .controls import Controls
from .model.client import RunClient
from .model.config import RunConfig
from .model.engine import Engine
from .views.adaptation import AdaptationView
from .views.balancing import BalancingView
from .views.base import LiveView
from .views.comparison import ComparisonView
from .views.dag import DagView
from .views.diagnostics import DiagnosticsView
from .views.inclusion import InclusionView
from .views.kl import KLView
from .views.lattice import LatticeView
from .views.traces import TraceView

#: Most of the server's time the sessions' flushes may take together: beyond it, every session refreshes
#: less often (a class of 30 sees 1–2 updates a second rather than a server too busy to answer clicks).
SERVER_SHARE = 0.5
#: How soon after a command (Start, Pause, …) the page looks for its answer (ms).
ANSWER_MS = 40
#: The live explorers of this process, whose flushes share the server.
_LIVE: weakref.WeakSet = weakref.WeakSet()

#: The live views, in the order of their cards.
VIEWS = (LatticeView, TraceView, ComparisonView, AdaptationView, BalancingView, KLView, InclusionView, DagView,
         DiagnosticsView)


def fair_period(refresh_ms: int, sessions: int, flush_seconds: float) -> int:
    """A session's refresh period (ms): its own setting, lengthened when the sessions' flushes together would
    take more than ``SERVER_SHARE`` of the server's time (period ≥ sessions × mean flush time / share)."""
    return max(refresh_ms, round(1000 * sessions * flush_seconds / SERVER_SHARE))


class Explorer(pn.viewable.Viewer):
    """The whole dashboard for one session."""

    refresh_ms = param.Integer(100, bounds=(20, 5000), doc="Period of the plot refresh (ms).")

    def __init__(self, config: RunConfig | None = None, engine: Engine | None = None, **params):
        super().__init__(**params)
        self.client = RunClient(engine or Engine(in_process=True), config)
        self.controls = Controls(client=self.client)
        self.views: dict[type, LiveView] = {}  # built the first time they apply to a run
        self.cards = {kind: pn.Card(title=kind.title, sizing_mode="stretch_width", visible=False) for kind in VIEWS}
        self.catalogue = pn.Card(title="All targets and samplers", collapsed=True, sizing_mode="stretch_width")
        self.catalogue.param.watch(self._open_catalogue, "collapsed")
        self.waiting = pn.pane.HTML("<b>Building the run…</b>", css_classes=["run-waiting"])
        self.refresh = pn.widgets.IntInput.from_param(self.param.refresh_ms, label="plot refresh period (ms)")
        self._callback = None
        self._document = None
        self._flush_cost = 0.0  # running mean of this session's flush time (seconds)
        self.flush_seconds: list[float] = []
        self.client.param.watch(self._on_info, "info")
        self.client.param.watch(self._answer_soon, "commands")

    def _on_info(self, event) -> None:
        info = event.new
        with pn.io.hold():
            self.waiting.visible = False
            for kind, card in self.cards.items():
                card.visible = kind.applies(info)
                if card.visible:
                    if kind not in self.views:
                        self.views[kind] = kind(client=self.client)
                        card[:] = [self.views[kind]]
                    self.views[kind].reconfigure(info)

    def _open_catalogue(self, event) -> None:
        if not event.new and not len(self.catalogue):
            self.catalogue[:] = [Catalogue()]

    @param.depends("refresh_ms", watch=True)
    def _on_refresh_period(self) -> None:
        if self._callback is not None:
            self._callback.period = self.refresh_ms

    def start_updates(self) -> None:
        """Start this session's periodic flush (idempotent)."""
        if self._callback is None:
            self._callback = pn.state.add_periodic_callback(self.flush, period=self.refresh_ms)
            self._document = pn.state.curdoc
            _LIVE.add(self)

    def _answer_soon(self, *events) -> None:
        """After a command, flush once more in ``ANSWER_MS``, so that a click shows its effect at once."""
        if self._document is not None and self._document.session_context is not None:
            self._document.add_timeout_callback(self.flush, ANSWER_MS)

    def _fair_period(self) -> None:
        """Follow ``fair_period`` when it moved by more than a fifth."""
        period = fair_period(self.refresh_ms, len(_LIVE), self._flush_cost)
        if self._callback is not None and abs(period - self._callback.period) > 0.2 * self._callback.period:
            self._callback.period = period

    def flush(self) -> None:
        """Move what the worker sent since the last flush into the views."""
        started = time.perf_counter()
        with pn.io.hold():
            snapshots = self.client.poll()
            shown = [view for kind, view in self.views.items() if self.cards[kind].visible]
            for snapshot in snapshots:
                for view in shown:
                    view.update(snapshot)
            for view in shown:
                view.tick()
            self.controls.update_status()
        spent = time.perf_counter() - started
        self.flush_seconds.append(spent)
        del self.flush_seconds[:-1000]
        self._flush_cost += 0.1 * (spent - self._flush_cost)
        self._fair_period()

    def close(self, *args) -> None:
        """Stop the flush and the worker (called when the session ends)."""
        if self._callback is not None:
            self._callback.stop()
            self._callback = None
        _LIVE.discard(self)
        self.client.close()

    def main_area(self) -> pn.viewable.Viewable:
        return pn.Column(
            self.waiting, *self.cards.values(), self.catalogue, sizing_mode="stretch_width",
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


def create_app(config: RunConfig | None = None, engine: Engine | None = None, **params) -> Explorer:
    """An ``Explorer`` with its refresh running; in a served session, closed with the session.

    ``engine`` runs the session's sampler: a served app passes the server's
    shared engine (a worker process per session); the default runs the worker
    in this process (notebooks, tests).
    """
    explorer = Explorer(config, engine, **params)
    document = pn.state.curdoc
    if document is not None and document.session_context is not None:
        # Views change the document (new figures for a run) only once the page holds it: a change sent
        # while the page is still loading can name models the page never received.
        pn.state.onload(explorer.start_updates)
        pn.state.on_session_destroyed(explorer.close)
    else:
        explorer.start_updates()
    return explorer
