"""The explorer: one session's run client, its controls and live views, and the periodic flush.

``create_app()`` builds an ``Explorer`` for the current session (server or
notebook). The session's sampler runs in a worker (``engine.engine``): a
process of its own when served, a thread of this process in a notebook (or
wherever ``in_process=True``). One periodic callback per session
(``refresh_ms``, default 100 ms, lengthened by ``fair_period`` when many
sessions share the server) takes what the worker sent (``RunClient.poll``)
and hands each snapshot to every view whose card shows, inside
``pn.io.hold()``. After a command, and while a run is built, the page looks
for the answer sooner (``_chase``). A new run (``RunClient.info``: Apply,
a preset, a file, Reset) gets views built afresh, and the race card too, so
that a page after any sequence of clicks reads as a fresh page opened on the
same run (``tests/test_history.py`` walks every preset to check it); only
the cards that apply to it show (a card is built and sent to the page the
first time it applies). A served page builds a new run's views one at a time,
``BUILD_GAP_MS`` apart (the state's first, then the lead view), so that no
other session's click waits for a whole page of views, and draws the run in
those built meanwhile: a view built later draws the run so far
(``RunClient.so_far``) as it is built, so the state shows while the rest
waits, and a new run's open cards stay empty until their views are built.
Every page's heavy pieces (its document, its draft, each view) share the loop
by ``turns.TURNS``: one a turn, a pause after each, none while a click awaits
its answer, so that a click waits for one at most; while pages are still
opening (``TURNS.pages_waiting``: a class opening the link at once) the
others' pieces wait, and a page that shows no run yet takes its first after
them; then every page's state view, then every lead view, then the sidebars'
drafts, then the rest (``turns.Rank``). Each view reaches its card with one
recomputation of the page's Bokeh models. A view is built when its run
arrives with its card open, or when its card is opened (a card that starts
closed, such as the inspector's), and the claims table, the race (``race``:
the sampler bake-off on the session's target, in a process of its own, its
ranking taken at every flush and its process ended with the session or its
run) and the catalogue when their cards are first opened, so a page holds
only the Bokeh models it shows. When a served session ends, its worker is
stopped. In a notebook call ``explorer.close()`` when done.
"""

from __future__ import annotations

import threading
import time
import weakref

import panel as pn
import param
from panel.io.callbacks import PeriodicCallback
from panel.io.resources import CDN_DIST
from panel.theme import Fast

from engine.budget import check
from engine.client import RunClient
from engine.config import RunConfig
from engine.engine import Engine
from engine.links import LONG_LINK_ARG, config_from_link, link_query, too_long

from .catalogue import Catalogue
from .claims import ClaimsCard
from .closed_pages import quiet_closed_pages
from .collector import COLLECTOR, SessionCollector
from .controls import Controls
from .race import RaceCard
from .turns import TURNS, Rank
from .views.adaptation import AdaptationView
from .views.balancing import BalancingView
from .views.base import LiveView, without_unused_glyphs
from .views.comparison import ComparisonView
from .views.dag import DagView
from .views.diagnostics import DiagnosticsView
from .views.inclusion import InclusionView
from .views.inspector import InspectorView
from .views.kl import KLView
from .views.lattice import LatticeView
from .views.tempering import TemperingView
from .views.traces import TraceView
from .views.tuning import TuningView

#: Most of the server's CPU time the sessions' flushes may take together: beyond it, every session refreshes
#: less often (a class of 30 sees about one update a second rather than a server too busy to answer clicks; at
#: 0.35 they saw 2.5, and the server took 28 % of a core the workers could have sampled with).
SERVER_SHARE = 0.2
#: Longest refresh period the share may impose (ms). The cost per flush is the server thread's CPU over a window
#: divided by the flushes in it, so it also holds the pages built meanwhile; while a class arrives that is much
#: more than a flush costs, and without a bound its period stopped a session's flushes — the only moments its
#: period is set again — for minutes after the server was idle again.
MAX_FAIR_MS = 3000
#: How often the server's CPU cost per flush is measured again (seconds).
LOAD_WINDOW_SECONDS = 2.0
#: How soon after a command (Start, Pause, …) the page looks for its answer (ms); it looks again twice as late
#: each time (at most ``CHASE_STEP_MS`` apart) while the answer is due, for ``CHASE_MS`` at most.
ANSWER_MS = 40
CHASE_STEP_MS = 80
CHASE_MS = 5000
#: Pause between the builds of a new run's views (ms): longer than ``ANSWER_MS``, so that a click of another
#: session is answered between two builds (one view cost a served 2-core machine 0.1–1.1 s), not after all.
BUILD_GAP_MS = 50
#: The live explorers of this process, whose flushes share the server.
_LIVE: weakref.WeakSet = weakref.WeakSet()

#: The projector's first screen: the state beside the run's lead view — what the run is about (``LiveView.leads``:
#: the KL curves of an OPAD run, the balancing function an LSB run learns), else its traces.
FIRST_SCREEN = (LatticeView, TraceView)
#: How the first screen's two cards share its width: the state as wide as its picture (at most half), the lead
#: view the rest.
STATE_STYLES = {"flex": "0 1 auto", "max-width": "50%", "min-width": "0"}
LEAD_STYLES = {"flex": "1 1 0", "min-width": "0"}
#: The lead view's card's CSS class (the legibility check finds it by it).
LEAD_CLASS = "lead-card"
#: The live views, in the order of their cards.
VIEWS = (LatticeView, InspectorView, TraceView, ComparisonView, AdaptationView, TuningView, TemperingView,
         BalancingView, KLView, InclusionView, DagView, DiagnosticsView)


class LocalFast(Fast):
    """Panel's Fast design without its web font: everything the page loads comes from this server, so it works
    offline (a classroom without internet) and asks no third party for anything; the system's sans-serif is used."""

    _resources = {**Fast._resources, "font": {}, "js_modules": {
        **Fast._resources["js_modules"],
        # Panel prefixes a relative path with the design's class name; this one names Panel's bundled copy.
        "fast-design": f"{CDN_DIST}bundled/fast/js/fast_design.js"}}


def fair_period(refresh_ms: int, sessions: int, flush_seconds: float) -> int:
    """A session's refresh period (ms): its own setting, lengthened when the sessions' flushes together would
    take more than ``SERVER_SHARE`` of the server's time (period ≥ sessions × CPU per flush / share), but not
    beyond ``MAX_FAIR_MS``."""
    return max(refresh_ms, min(MAX_FAIR_MS, round(1000 * sessions * flush_seconds / SERVER_SHARE)))


class ServerLoad:
    """The server thread's CPU time per flush, everything included, measured over windows of wall time.

    A flush's own duration misses what follows it on the server's thread —
    Bokeh serialising the changes, tornado writing them out — and the pages
    built meanwhile; that thread's CPU time over a window, divided by the
    flushes in it, holds all of it, so ``fair_period`` keeps the server
    within its share. (The thread's, not the process's: in a notebook the
    sampler runs in a thread of the same process.)
    """

    def __init__(self, window_seconds: float = LOAD_WINDOW_SECONDS):
        self.window_seconds = window_seconds
        self.cost = 0.0
        self._start_window(threading.get_ident())

    def _start_window(self, thread: int) -> None:
        self._thread, self._flushes = thread, 0
        self._since, self._cpu = time.monotonic(), time.thread_time()

    def count_flush(self) -> None:
        """Count a flush (called on the thread that flushes); closes the window when it is over."""
        if threading.get_ident() != self._thread:  # flushes moved to another thread: measure afresh there
            self._start_window(threading.get_ident())
        self._flushes += 1
        if time.monotonic() - self._since >= self.window_seconds:
            measured = (time.thread_time() - self._cpu) / self._flushes
            self.cost = measured if not self.cost else 0.5 * (self.cost + measured)
            self._start_window(self._thread)


#: This server process's load, shared by its sessions.
_LOAD = ServerLoad()


class Explorer(pn.viewable.Viewer):
    """The whole dashboard for one session."""

    refresh_ms = param.Integer(100, bounds=(20, 5000), doc="Period of the plot refresh (ms).")

    def __init__(self, config: RunConfig | None = None, engine: Engine | None = None, from_link: bool = False,
                 **params):
        """``from_link``: ``config`` came from a page's link; should its worker refuse it before any run was
        built, the default run is shown instead, with the reason (``_refused_link``)."""
        super().__init__(**params)
        self.client = RunClient(engine or Engine(in_process=True), config)
        self._link_pending = from_link
        self.controls = Controls(client=self.client)
        self.views: dict[type, LiveView] = {}  # built the first time they apply to a run
        self._unbuilt: list[type] = []  # the views of the run shown still to build, in order (``_build_next``)
        # the views' cards: the first screen's now, every other one when it first applies to a run, and below the
        # first screen only those that apply to the run shown (a card that would hold nothing is neither built
        # nor sent: a quarter of a new page's models and of the server's time to make it)
        self.cards: dict[type, pn.Card] = {}
        for kind in FIRST_SCREEN:
            self._add_card(kind)
        state, traces = (self.cards[kind] for kind in FIRST_SCREEN)
        state.param.update(sizing_mode=None, styles=STATE_STYLES)
        traces.param.update(styles=LEAD_STYLES, css_classes=[*traces.css_classes, LEAD_CLASS])
        self.lead = TraceView
        self.top = pn.FlexBox(state, traces, flex_wrap="nowrap", align_items="flex-start",
                              sizing_mode="stretch_width")
        self.below = pn.Column(sizing_mode="stretch_width")
        self.catalogue = pn.Card(title="All targets and samplers", collapsed=True, sizing_mode="stretch_width")
        self.catalogue.param.watch(self._open_catalogue, "collapsed")
        self.claims = pn.Card(title="Which of the papers' claims hold?", collapsed=True, sizing_mode="stretch_width")
        self.claims.param.watch(self._open_claims, "collapsed")
        self.race = pn.Card(title="Race: which sampler mixes fastest on this target?", collapsed=True,
                            sizing_mode="stretch_width")
        self.race.param.watch(self._open_race, "collapsed")
        self.race_card: RaceCard | None = None  # built when its card is first opened
        self.waiting = pn.pane.HTML("", css_classes=["run-waiting"])
        self.refresh = pn.widgets.IntInput.from_param(self.param.refresh_ms, label="plot refresh period (ms)")
        # below the first screen: the closed cards under the views, and the refresh period under the sidebar's draft
        self._closed_cards = [self.race, self.claims, self.catalogue]
        self.below_views = pn.Column(*self._closed_cards, sizing_mode="stretch_width")
        self.sidebar_tail = pn.Column(self.refresh, sizing_mode="stretch_width", margin=0)
        self._callback = None
        self._document = None
        self.collector: SessionCollector | None = None  # a served session's: told when views are built, and closing
        self.flush_seconds: list[float] = []
        self.client.param.watch(self._on_info, "info")
        self.client.param.watch(self._show_waiting, "building")
        self._show_waiting()
        self.client.param.watch(self._answer_soon, "commands")
        self.client.param.watch(self._refused_link, "error")

    def _refused_link(self, event) -> None:
        """A link's run refused by the worker (an unknown statistic, a parameter its sampler does not take), or
        lost with it, before any run was built: the default run instead, and why, as for a link that could not
        be read. The refusal arrives after ``building`` went False; a run built once ends the wait."""
        client = self.client
        if not self._link_pending or client.info is not None:
            self._link_pending = False
            return
        if client.building or not event.new:
            return
        self._link_pending = False
        if client.apply(RunConfig()):
            client.error = link_refusal("built", event.new)

    def _show_waiting(self, event=None) -> None:
        """Until the first run is built: that it is being built, or that none is (the error says why)."""
        self.waiting.object = ("<b>Building the run…</b>" if self.client.building
                               else "<b>No run: see the message above.</b>")

    def _on_info(self, event) -> None:
        """A new run (Apply, a preset, a file, Reset): every view is built afresh for it, so that the page reads
        as a fresh page opened on that run, whatever the session showed before (no axis range, legend, text or
        widget value of an earlier run survives); a closed card's view waits until it is opened, so a page's
        first load holds fewer models. A served page builds them one per turn of the server's event loop
        (``_build_next``: the state's first, then the lead view), so that no other session waits for a whole
        page of views."""
        info = event.new
        lead = next((kind for kind in VIEWS if kind.applies(info) and kind.leads(info)), TraceView)
        due, emptied = [], []
        with pn.io.hold(freeze=True):  # one recomputation of the document's models, not one per card
            self.waiting.visible = False
            for kind in VIEWS:
                applies = kind.applies(info)
                if applies and kind not in self.cards:
                    self._add_card(kind)
                card = self.cards.get(kind)
                if card is None:
                    continue
                card.visible = applies
                stale = self.views.pop(kind, None)
                if stale is not None:
                    stale.close()
                if applies and stale is not None:  # empty until its view is built or opened, as on a fresh page: no
                    emptied.append(card)  # plot of the run before shows beside this one (a card leaving the page is
                if applies and not card.collapsed:  # left as it is: the browser drops its view in this change)
                    due.append(kind)
            self._place_lead(lead)
            for card in emptied:  # once in its place: a card emptied and moved in one change reaches the browser
                card[:] = []  # without its header
            if self.race_card is not None:  # a race of the run shown before: a fresh page has none
                self.race_card.close()
                self.race_card = None
                self._build_race()
            due.sort(key=lambda kind: (kind is not LatticeView, kind is not lead))
            self._unbuilt = due
        if not self._served():
            while self._unbuilt:
                self._build_next()
        elif self._unbuilt:
            self._document.add_timeout_callback(self._build_next, BUILD_GAP_MS)
        elif self.collector is not None:
            self.collector.views_built()

    def _served(self) -> bool:
        """Whether the explorer is a server's session (its flushes share the server's event loop)."""
        return self._document is not None and self._document.session_context is not None

    def _build_next(self) -> None:
        """Build the first view still due for the run shown (if its card still shows open), and the next one
        ``BUILD_GAP_MS`` later at least (``TURNS``: not in the turn of another page's piece, nor while a click
        awaits its answer): the other sessions' clicks are answered in between. The views built already draw the run
        meanwhile (``flush``); each later one draws the run so far as it is built (``_build``)."""
        if not self._unbuilt or self._callback is None and self._served():
            return
        if self._served() and not TURNS.claim(self._document, self._build_next, self._rank(self._unbuilt[0])):
            return  # asked again in its turn
        kind = self._unbuilt.pop(0)
        card = self.cards[kind]
        try:
            if kind not in self.views and card.visible and not card.collapsed:
                self._build(kind, self.client.info)
        finally:  # a view that failed to build (logged by the server) leaves the others and the flush going
            if self._unbuilt:
                if self._served():
                    self._document.add_timeout_callback(self._build_next, BUILD_GAP_MS)
            elif self.collector is not None:
                self.collector.views_built()

    def _rank(self, kind: type) -> Rank:
        """How urgent building the view of ``kind`` is among every page's work: the state first, then the lead view
        (a class's pages each show their first screen before any page builds what lies below it)."""
        return Rank.STATE if kind is LatticeView else Rank.LEAD if kind is self.lead else Rank.REST

    def _place_lead(self, lead: type) -> None:
        """Put the card of ``lead`` beside the state on the first screen, and every other card that shows below,
        the traces first. A card that moves leaves its place before it takes the other: Panel lets go of a card's
        page model when the card leaves a layout, so a card added elsewhere first would be left unlinked."""
        moves = lead is not self.lead
        if moves:
            old, new = self.cards[self.lead], self.cards[lead]
            self.top[:] = [self.cards[LatticeView]]
            old.param.update(styles={}, css_classes=[name for name in old.css_classes if name != LEAD_CLASS])
            new.param.update(styles=LEAD_STYLES, css_classes=[*new.css_classes, LEAD_CLASS])
            self.lead = lead
        order = (TraceView,) + tuple(kind for kind in VIEWS if kind not in FIRST_SCREEN)
        self.below[:] = [self.cards[kind] for kind in order
                         if kind is not lead and kind in self.cards and self.cards[kind].visible]
        if moves:
            self.top.append(self.cards[lead])

    def _add_card(self, kind: type) -> None:
        """Make the card of the views of ``kind`` (hidden until a run it applies to is shown)."""
        card = self.cards[kind] = pn.Card(title=kind.title, sizing_mode="stretch_width", visible=False,
                                          collapsed=kind.starts_collapsed)
        card.param.watch(lambda event: self._on_card_toggled(kind, not event.new), "collapsed")

    def _build(self, kind: type, info) -> None:
        """Build the view of ``kind`` for a run, fit it and only then put it in its card, without the glyphs it
        never uses, and the run so far drawn in it (``RunClient.so_far``: a view built after the run's first snapshots,
        or when its card is first opened, reads as one built before them), so that its models reach the page once and
        as they stay; the page's models are recomputed once, when the view is in its card (Bokeh recomputes a frozen
        document's models when it thaws)."""
        with pn.io.hold(freeze=True):
            view = self.views[kind] = kind(client=self.client)
            view.reconfigure(info)  # a view may place its figures here
            without_unused_glyphs(view)
            so_far = self.client.so_far()
            if so_far is not None:  # built after the run's first snapshots: it draws the run so far at once
                view.update(so_far)
            self.cards[kind][:] = [view]

    def _on_card_toggled(self, kind: type, is_open: bool) -> None:
        if is_open and kind not in self.views and self.cards[kind].visible and self.client.info is not None:
            self._build(kind, self.client.info)
        if kind in self.views:
            self.views[kind].opened(is_open)

    def _open_catalogue(self, event) -> None:
        if not event.new and not len(self.catalogue):
            self.catalogue[:] = [Catalogue()]

    def _open_claims(self, event) -> None:
        if not event.new and not len(self.claims):
            self.claims[:] = [ClaimsCard()]

    def _open_race(self, event) -> None:
        if not event.new and self.race_card is None:
            self._build_race()

    def _build_race(self) -> None:
        self.race_card = RaceCard(client=self.client)
        without_unused_glyphs(self.race_card)
        self.race[:] = [self.race_card]

    @param.depends("refresh_ms", watch=True)
    def _on_refresh_period(self) -> None:
        if self._callback is not None:
            self._callback.period = self.refresh_ms

    def start_updates(self) -> None:
        """Start this session's periodic flush (idempotent)."""
        if self._callback is None:
            # In the background: not counted by Panel's global busy state, whose every change updates the
            # busy indicator of every session of the server (N sessions flushing would cost N² updates).
            self._callback = PeriodicCallback(callback=self.flush, period=self.refresh_ms, background=True, log=False)
            self._callback.start()
            self._document = pn.state.curdoc
            TURNS.page_shown(self._document)
            _LIVE.add(self)
            if self._served():  # the rest of the page, held back from the first screen (``create_app``)
                self._document.add_timeout_callback(self._show_the_rest, BUILD_GAP_MS)
            self._answer_soon()  # the first run is being built: draw it as soon as it is there

    def hold_back_the_rest(self) -> None:
        """Leave out of the page what its first screen does not show: the sidebar's draft (``Controls``), the
        refresh period under it and the closed cards under the views; ``_show_the_rest`` adds them, in a turn of
        the server's event loop of its own once the page holds its document."""
        self.controls.hold_back_the_draft()
        self.sidebar_tail[:] = []
        self.below_views[:] = []

    def _show_the_rest(self) -> None:
        if TURNS.claim(self._document, self._show_the_rest, Rank.SIDEBAR):
            with pn.io.hold(freeze=True):  # one recomputation of the document's models
                self.controls.show_the_draft()
                if not len(self.below_views):  # once
                    self.sidebar_tail[:] = [self.refresh]
                    self.below_views[:] = self._closed_cards

    def _answer_soon(self, *events) -> None:
        """After a command, look for its answer sooner than the refresh period: a click shows its effect at once.

        Flushes ``ANSWER_MS`` later, then at doubling intervals (at most
        ``CHASE_STEP_MS``) while the client is still ``awaiting``, for up to
        ``CHASE_MS`` (the refresh period of a busy server may be seconds).
        """
        if self._served():
            if events:  # a click's command: other pages' work waits for its answer (``TURNS``)
                TURNS.answering(self)
            self._document.add_timeout_callback(lambda: self._chase(ANSWER_MS, 0), ANSWER_MS)

    def _chase(self, delay_ms: int, waited_ms: int) -> None:
        if self._callback is None:
            TURNS.answered(self)
            return  # the session has ended
        self.flush()
        waited_ms += delay_ms
        if self.client.awaiting and waited_ms < CHASE_MS:
            delay_ms = min(2 * delay_ms, CHASE_STEP_MS)
            self._document.add_timeout_callback(lambda: self._chase(delay_ms, waited_ms), delay_ms)
        else:
            TURNS.answered(self)

    def _fair_period(self) -> None:
        """Follow ``fair_period`` when it moved by more than a fifth."""
        period = fair_period(self.refresh_ms, len(_LIVE), _LOAD.cost)
        if self._callback is not None and abs(period - self._callback.period) > 0.2 * self._callback.period:
            self._callback.period = period

    def flush(self) -> None:
        """Move what the worker sent since the last flush into the views built so far (a view built later draws the
        run so far when it is built: ``_build``)."""
        if self.client.info is None and TURNS.pages_waiting():
            return  # a page that shows no run yet takes its first in its turn, after the pages still to be sent
        started = time.perf_counter()
        with pn.io.hold():  # not frozen: Bokeh recomputes a frozen document's models when it thaws, changed or not
            snapshots = self.client.poll()
            shown = [view for kind, view in self.views.items() if self.cards[kind].visible]
            for snapshot in snapshots:
                for view in shown:
                    view.update(snapshot)
            for view in shown:
                view.tick()
            if self.race_card is not None:
                self.race_card.flush()
            self.controls.runs.update_status()
        spent = time.perf_counter() - started
        self.flush_seconds.append(spent)
        del self.flush_seconds[:-1000]
        _LOAD.count_flush()
        self._fair_period()

    def follow_in_url(self, location) -> None:
        """Keep the page URL's ``?run=`` query on the run shown (``engine.links``), so the URL is a link to it."""
        def show(event=None) -> None:
            config = self.client.config
            query = link_query(config) if config is not None else None
            location.search = f"?run={query}" if query else ""

        self.client.param.watch(show, "config")
        show()

    def close(self, *args) -> None:
        """Stop the flush and the worker (called when the session ends); a served session tells its collector."""
        if self._callback is not None:
            self._callback.stop()
            self._callback = None
        was_live = self in _LIVE
        _LIVE.discard(self)
        if self.race_card is not None:
            self.race_card.close()
        self.client.close()
        if was_live and self.collector is not None:
            self.collector.session_closed(open_sessions=len(_LIVE))

    def main_area(self) -> pn.viewable.Viewable:
        """The projector's first screen: the state beside the run's lead view (the status is at the sidebar's
        top); every other card below them, the traces first."""
        return pn.Column(self.waiting, self.top, self.below, self.below_views, sizing_mode="stretch_width")

    def sidebar(self) -> pn.viewable.Viewable:
        return pn.Column(self.controls, self.sidebar_tail, sizing_mode="stretch_width")

    def template(self) -> pn.template.FastListTemplate:
        return pn.template.FastListTemplate(
            title="Discrete-sampler explorer",
            sidebar=[self.sidebar()],
            main=[self.main_area()],
            sidebar_width=380,
            busy_indicator=None,  # the status line says what runs; a spinner would follow the server's global busy
            design=LocalFast,
            font="system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, sans-serif",
        )

    def __panel__(self):
        return pn.Row(pn.Column(self.sidebar(), width=380), self.main_area(), sizing_mode="stretch_width")


def link_refusal(step: str, reason: str) -> str:
    """What a page says when the run of its link could not be read or built (``step``), and why."""
    return f"This link's run could not be {step}: {reason.rstrip('.')}. Here is the default run instead."


def open_link(query: str | bytes, engine: Engine | None = None, **params) -> Explorer:
    """An ``Explorer`` of the run a page's ``?run=`` query carries (``engine.links``). Whichever layer refuses the
    link — it cannot be read, it is over the server's budget, its worker cannot build it — the page shows the
    default run, and why."""
    engine = engine or Engine(in_process=True)
    try:
        config = config_from_link(query)
    except ValueError as error:
        return _default_run(link_refusal("read", str(error)), engine, **params)
    try:
        check(config, engine.budget)
    except ValueError as error:
        return _default_run(link_refusal("built", str(error)), engine, **params)
    return Explorer(config, engine, from_link=True, **params)


def _default_run(message: str, engine: Engine | None, **params) -> Explorer:
    """An ``Explorer`` of the default run that says ``message`` (unless the default was refused too: server busy)."""
    explorer = Explorer(None, engine, **params)
    if explorer.client.building:
        explorer.client.error = message
    return explorer


def page_explorer(arguments: dict, engine: Engine | None = None, **params) -> Explorer:
    """The ``Explorer`` a page's address asks for (``arguments``: its query, as Bokeh gives it): its link's run
    (``open_link``); the default run and why, when the server sent the page on from a link too long to read
    (``dashboard.serving.LongLinkGuard``); else the default run."""
    link, long_link = arguments.get("run"), arguments.get(LONG_LINK_ARG)
    if link:
        return open_link(link[0], engine, **params)
    if long_link:
        return _default_run(link_refusal("read", too_long(long_link[0].decode("ascii", "replace"))), engine,
                            **params)
    return Explorer(None, engine, **params)


def create_app(config: RunConfig | None = None, engine: Engine | None = None, **params) -> Explorer:
    """An ``Explorer`` with its refresh running; in a served session, closed with the session.

    ``engine`` runs the session's sampler: a served app passes the server's
    shared engine (a worker process per session); the default runs the worker
    in this process (notebooks, tests).
    """
    document = pn.state.curdoc
    served = document is not None and document.session_context is not None
    if served:
        TURNS.page_built(document)  # this page's document is this turn's heavy piece
    arguments = pn.state.session_args if served and config is None else {}
    explorer = page_explorer(arguments, engine, **params) if arguments else Explorer(config, engine, **params)
    if served:
        explorer.hold_back_the_rest()  # sent after the page's first screen (``start_updates``)
        quiet_closed_pages()
        explorer.follow_in_url(pn.state.location)
        # Views change the document (new figures for a run) only once the page holds it: a change sent
        # while the page is still loading can name models the page never received.
        explorer.collector = COLLECTOR
        pn.state.onload(explorer.start_updates)
        pn.state.on_session_destroyed(explorer.close)
        pn.state.on_session_destroyed(lambda context: TURNS.page_closed(document))  # its queued pieces too
    else:
        explorer.start_updates()
    return explorer
