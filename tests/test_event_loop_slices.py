"""No session's work holds the server's event loop for a whole page (issue 41, the inputs still over a second).

A served page builds a new run's views one at a time, a pause apart, and
takes no snapshot until they are all built; the sidebar and every view
thaw the page's document once, not once per form or card (Bokeh recomputes
a document's every model at each thaw); a link too long to read is answered
with a redirect before any page is built around it. All structural: nothing
is timed.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import time
import urllib.error
import urllib.request
from types import SimpleNamespace

import panel as pn
import pytest
from bokeh.document import Document
from panel.io.state import set_curdoc
from tornado import web

from dashboard.explorer import BUILD_GAP_MS, VIEWS, Explorer, page_explorer
from dashboard.serving import GuardedHTTPServer
from dashboard import turns as turns_module
from dashboard.turns import TURNS, OnePerTurn, Rank
from dashboard.views.diagnostics import DiagnosticsView
from dashboard.views.lattice import LatticeView
from dashboard.views.traces import TraceView
from engine.config import RunConfig
from engine.links import LONG_LINK_ARG, MAX_LINK_CHARS, long_link_redirect, too_long
from tests.explorer_driver import TIMEOUT, advance, built, make_explorer, settle
from tests.page_models import PageModels, first_difference
from tests.guarded_server import guarded_server


class RunningFlush:
    """A stand-in for the session's periodic flush: running, at the default period."""

    period = Explorer.refresh_ms

    def stop(self) -> None:
        pass


class ServedDocument:
    """What a served explorer asks of its Bokeh document: a session, and callbacks it keeps to run by hand."""

    session_context = object()

    def __init__(self):
        self.timeouts: list[tuple] = []
        self.callbacks = SimpleNamespace(session_destroyed_callbacks=set())

    def add_timeout_callback(self, callback, delay_ms: int) -> None:
        self.timeouts.append((callback, delay_ms))

    def add_periodic_callback(self, callback, period_ms: int) -> None:
        """The session's flush: these tests run it by hand."""


def served(app: Explorer) -> ServedDocument:
    """Make ``app`` act as a served session (its flush running), its event-loop callbacks kept in the result."""
    document = ServedDocument()
    app._document, app._callback = document, RunningFlush()
    return document


def builds(app: Explorer, document: ServedDocument) -> list[tuple]:
    """The view builds ``app`` asked its event loop for (taken: the page's other callbacks are left)."""
    taken = [(callback, delay_ms) for callback, delay_ms in document.timeouts if callback == app._build_next]
    document.timeouts = [entry for entry in document.timeouts if entry not in taken]
    return taken




def test_a_served_page_builds_a_new_runs_views_one_at_a_time_and_those_built_late_read_as_built_at_once():
    """The run goes on while its views are built, drawn in those built already; each later one draws the run so far
    as it is built (``RunClient.so_far``), so that once the run stops every view reads as the view of a page that
    built them all before the run's first snapshot."""
    config = RunConfig(seed=4)
    app = make_explorer(RunConfig())
    document = served(app)
    assert app.client.apply(config)
    settle(app, lambda: built(app.client) and app.client.config is config)
    assert not app.views, "a view was built in the flush that brought the run"
    built_in_order = []
    while pending := builds(app, document):
        [(callback, delay_ms)] = pending
        assert delay_ms == BUILD_GAP_MS
        advance(app, 3)  # between two builds the run goes on, and the views built so far draw it
        before = set(app.views)
        callback()
        assert len(set(app.views) - before) == 1, "not one view per turn of the event loop"
        built_in_order += sorted(set(app.views) - before, key=VIEWS.index)
    assert built_in_order[0] is LatticeView and built_in_order[1] is app.lead
    fresh = make_explorer(config)  # every view built before the run's first snapshot, and fed each one
    try:
        assert set(fresh.views) == set(app.views)
        advance(fresh, app.client.status.n_steps)
        pages = {kind: (PageModels(app.views[kind]), PageModels(fresh.views[kind])) for kind in app.views
                 if kind is not DiagnosticsView}  # its rates per second are the two runs' own: compared without them

        def differences() -> dict:
            found = {kind.__name__: difference for kind, (late, early) in pages.items()
                     if (difference := first_difference(late.describe(), early.describe())) is not None}
            late, early = (untimed_diagnostics(page.views[DiagnosticsView]) for page in (app, fresh))
            return found | ({} if late.equals(early) else {"DiagnosticsView": f"{late} ≠ {early}"})

        end = time.monotonic() + TIMEOUT
        while found := differences():
            assert time.monotonic() < end, f"views built late differ from views built at once: {found}"
            app.flush()  # slower displays (diagnostics) come a few snapshots after the step
            fresh.flush()
            time.sleep(0.05)
    finally:
        fresh.close()
        app.close()


def untimed_diagnostics(view: DiagnosticsView):
    """The diagnostics table's rows, but those per second (the wall clock's, which no two runs share)."""
    [table] = [pane.object for pane in pn.panel(view).select(pn.pane.DataFrame)]
    if "diagnostic" not in table:
        return table  # none yet
    return table[~table["diagnostic"].str.contains("per second")].reset_index(drop=True)


def widget_names(viewable) -> list[str]:
    return [widget.name for widget in pn.panel(viewable).select(pn.widgets.Widget)]


def test_a_served_page_is_sent_with_its_run_buttons_and_presets_and_the_rest_of_the_page_a_turn_later():
    app = make_explorer(RunConfig())
    whole, whole_page = widget_names(app.controls), widget_names(app)
    cards = [card.title for card in pn.panel(app).select(pn.Card)]
    app.hold_back_the_rest()  # as ``create_app`` does for a served page, before its document is built
    first = widget_names(app.controls)
    assert {"Start", "Pause", "Step", "Reset", "Preset", "Load preset"} <= set(first)
    assert "Target" not in first and "Apply settings" not in first and len(first) < len(whole) / 2
    assert "plot refresh period (ms)" not in widget_names(app)
    first_cards = [card.title for card in pn.panel(app).select(pn.Card)]
    assert first_cards == [title for title in cards if title not in (app.race.title, app.claims.title,
                                                                      app.catalogue.title)]
    document = ServedDocument()
    with set_curdoc(document):
        app.start_updates()  # the page holds its document: the rest of the sidebar is due, in a turn of its own
    [(callback, delay_ms)] = [entry for entry in document.timeouts if entry[0] == app._show_the_rest]
    assert delay_ms == BUILD_GAP_MS
    callback()
    # the sidebar and the cards of a page built at once
    assert widget_names(app.controls) == whole and widget_names(app) == whole_page
    assert [card.title for card in pn.panel(app).select(pn.Card)] == cards
    callback()  # once
    assert widget_names(app.controls) == whole and widget_names(app) == whole_page
    app.close()


def test_page_work_due_in_one_turn_runs_one_piece_a_turn_and_a_click_read_meanwhile_is_answered_between():
    """Two pages' views and a draft fall due together; a click reaches the server while the first is built."""
    turns, happened = OnePerTurn(), []

    async def serve() -> None:
        loop = asyncio.get_running_loop()
        reader, writer = socket.socketpair()
        loop.add_reader(reader, lambda: happened.append(f"click {reader.recv(1).decode()}"))

        class Document:
            def add_timeout_callback(self, callback, delay_ms: int) -> None:
                loop.call_later(delay_ms / 1000, callback)

        document = Document()

        def piece(name: str):
            def run() -> None:
                if turns.claim(document, run):
                    happened.append(name)
                    if name == "view of page 1":
                        writer.send(b"x")

            return run

        due = loop.time() + 0.01
        for name in ("view of page 1", "view of page 2", "draft of page 3"):
            loop.call_at(due, piece(name))
        await asyncio.sleep(0.3)
        loop.remove_reader(reader)
        reader.close()
        writer.close()

    asyncio.run(serve())
    assert happened[:2] == ["view of page 1", "click x"]  # the others wait for a turn of their own, in either order
    assert sorted(happened[2:]) == ["draft of page 3", "view of page 2"]


def test_no_piece_of_page_work_starts_just_after_another_nor_while_a_sessions_click_awaits_its_answer(monkeypatch):
    monkeypatch.setattr(turns_module, "PAUSE_MS", 60_000)  # long enough for no machine to outlast it
    monkeypatch.setattr(turns_module, "ANSWER_HOLD_MS", 60_000)
    after_a_piece, beside_a_click, asked = OnePerTurn(), OnePerTurn(), []
    clicking, other = object(), object()

    class Document:
        def add_timeout_callback(self, callback, delay_ms: int) -> None:
            asked.append(delay_ms)

    async def serve() -> None:
        assert after_a_piece.claim(Document(), lambda: None)
        await asyncio.sleep(0)  # the next turn: the piece has just ended
        assert not after_a_piece.claim(Document(), lambda: None)
        beside_a_click.answering(clicking)  # a click's command went to its worker
        beside_a_click.answered(other)  # another session's answer changes nothing
        page, piece = Document(), lambda: None
        assert not beside_a_click.claim(page, piece)
        beside_a_click.answered(clicking)  # its answer is on its page
        assert beside_a_click.claim(page, piece)  # the piece, asked again

    asyncio.run(serve())
    assert asked == []  # no page is asked for its refused piece again before the pause or the hold is over


def test_a_page_builds_no_view_and_sends_no_draft_in_a_turn_that_another_pages_work_took():
    app = make_explorer(RunConfig())
    document = served(app)
    assert app.client.apply(RunConfig(seed=6))
    settle(app, lambda: built(app.client) and app.client.config.seed == 6)
    app.hold_back_the_rest()
    [(build, _)] = builds(app, document)

    async def another_page_is_built_as_these_fall_due() -> None:
        TURNS.take()
        build()
        app._show_the_rest()
        assert not app.views and "Target" not in widget_names(app.controls)
        while not asked_again(app, document):  # a later turn, its own: the most urgent piece is asked for first
            await asyncio.sleep(0.01)

    try:
        asyncio.run(another_page_is_built_as_these_fall_due())
        assert [callback for callback, _ in asked_again(app, document)] == [app._build_next]  # the state's view
        build()
        assert len(app.views) == 1
        app._show_the_rest()
        assert "Target" in widget_names(app.controls)
    finally:
        TURNS.page_closed(document)
        app.close()


def asked_again(app: Explorer, document: ServedDocument) -> list:
    """The page's pieces its document was asked for by ``TURNS`` (at once, in their turn)."""
    return [entry for entry in document.timeouts if entry[0] in (app._build_next, app._show_the_rest) and not entry[1]]


def test_a_closed_card_is_not_built_and_a_card_opened_meanwhile_is_built_once():
    app = make_explorer(RunConfig())
    document = served(app)
    assert app.client.apply(RunConfig(seed=5))
    settle(app, lambda: built(app.client) and app.client.config.seed == 5)
    pending = list(app._unbuilt)
    closing, opening = pending[-1], pending[-2]
    app.cards[closing].collapsed = True
    app.cards[opening].collapsed = True
    app.cards[opening].collapsed = False  # opened by hand: built now
    assert opening in app.views
    opened = app.views[opening]
    while pending := builds(app, document):
        pending[0][0]()
    assert closing not in app.views and app.views[opening] is opened
    app.close()


def test_a_view_that_fails_to_build_leaves_the_others_and_the_flush_going(monkeypatch):
    app = make_explorer(RunConfig())
    document = served(app)

    def failing(self, info):
        raise RuntimeError("planted")

    monkeypatch.setattr(LatticeView, "reconfigure", failing)
    assert app.client.apply(RunConfig(seed=6))
    settle(app, lambda: built(app.client) and app.client.config.seed == 6)
    while pending := builds(app, document):
        with pytest.raises(RuntimeError, match="planted") if not app.views and app._unbuilt[0] is LatticeView \
                else contextlib.nullcontext():
            pending[0][0]()
    assert not app._unbuilt and TraceView in app.views  # built after the one that failed
    app.client.step(1)
    settle(app, lambda: app.client.status.n_steps >= 1)
    app.close()


def recomputations(document: Document, monkeypatch) -> list:
    """Every recomputation of ``document``'s models from now on."""
    counted = []
    recompute = document.models.recompute

    def counting():
        counted.append(1)
        recompute()

    monkeypatch.setattr(document.models, "recompute", counting)
    return counted


@pytest.fixture
def page(monkeypatch):
    """An explorer of the default run in a Bokeh document, as a page holds it, and that document as current."""
    app = make_explorer(RunConfig())
    document = Document()
    app.template().server_doc(document)
    monkeypatch.setattr(pn.state, "curdoc", document)
    yield app, document
    app.close()


def test_the_sidebar_shows_a_configuration_with_one_recomputation_of_the_page(page, monkeypatch):
    app, document = page
    counted = recomputations(document, monkeypatch)
    app.controls.show_config(RunConfig(target="boltzmann", sampler="gibbs", n_chains=3))
    assert app.controls.target.value == "boltzmann"
    assert len(counted) == 1


def test_a_view_reaches_its_card_with_one_recomputation_of_the_page(page, monkeypatch):
    app, document = page
    counted = recomputations(document, monkeypatch)
    app._build(LatticeView, app.client.info)
    assert len(counted) == 1


@pytest.mark.parametrize("query, expected", [
    ("run=" + "A" * 100_000, f"/app?{LONG_LINK_ARG}=100000"),
    ("x=1&run=" + "A" * (MAX_LINK_CHARS + 1) + "&y=" + "B" * 3 * MAX_LINK_CHARS,
     f"/app?{LONG_LINK_ARG}={MAX_LINK_CHARS + 1}"),
    ("run=" + "A" * MAX_LINK_CHARS + "&y=" + "B" * 3 * MAX_LINK_CHARS, None),  # a run a link may have
    ("run=" + "A" * 100, None),
    ("y=" + "B" * 100_000, None),  # long, but no run: the app's to judge
])
def test_only_a_run_longer_than_a_link_is_read_is_sent_on(query, expected):
    assert long_link_redirect(f"/app?{query}") == expected


def test_a_page_sent_on_from_a_long_link_says_why_as_a_link_read_by_the_app_does():
    assert too_long("2000000") == f"the link's run is 2,000,000 characters long; at most {MAX_LINK_CHARS:,} are read"
    assert "<" not in too_long("<b>x</b>") and "x" not in too_long("<b>x</b>")  # not a number: not repeated


def test_the_server_answers_a_long_link_with_a_redirect_before_the_app_sees_it():
    seen: list[int] = []

    class App(web.RequestHandler):
        def get(self):
            seen.append(len(self.request.uri))
            self.write("page")

    with guarded_server([(r"/app", App)]) as server:
        assert isinstance(server.server, GuardedHTTPServer)
        port = server.port

        class NoRedirect(urllib.request.HTTPRedirectHandler):
            def redirect_request(self, *args, **kwargs):
                return None

        opener = urllib.request.build_opener(NoRedirect)
        with pytest.raises(urllib.error.HTTPError) as answer:
            opener.open(f"http://127.0.0.1:{port}/app?run={'A' * 500_000}", timeout=60)
        assert answer.value.code == 303
        assert answer.value.headers["Location"] == f"/app?{LONG_LINK_ARG}=500000"
        assert seen == []
        with opener.open(f"http://127.0.0.1:{port}/app?run={'A' * 100}", timeout=60) as response:
            assert response.read() == b"page"
        assert len(seen) == 1


def test_the_page_a_long_link_is_sent_on_to_shows_the_default_run_and_why():
    app = page_explorer({LONG_LINK_ARG: [b"2000000"]})
    try:
        assert app.client.error.startswith("This link's run could not be read: the link's run is 2,000,000 characters")
        assert app.client.error.endswith("Here is the default run instead.")
        settle(app, lambda: built(app.client))
        assert app.client.config.target == RunConfig().target
    finally:
        app.close()


def test_a_served_page_asks_for_its_state_then_its_lead_view_then_its_sidebar_before_the_rest(monkeypatch):
    """The ranks every page's pieces are claimed with (``turns.Rank``): across a class, each page's first screen
    comes before what any page shows below it."""
    app = make_explorer(RunConfig())
    document = served(app)
    claimed = []
    monkeypatch.setattr(TURNS, "claim", lambda page, piece, rank: claimed.append((piece.__name__, rank)) or 1)
    assert app.client.apply(RunConfig(seed=4))
    settle(app, lambda: built(app.client) and app.client.config.seed == 4)
    while pending := builds(app, document):
        [(callback, _)] = pending
        callback()
    app._show_the_rest()
    ranks = [rank for _, rank in claimed]
    assert ranks[:2] == [Rank.STATE, Rank.LEAD] and ranks[-1] == Rank.SIDEBAR
    assert set(ranks[2:-1]) == {Rank.REST} and len(ranks) == len(app.views) + 1
    app.close()
