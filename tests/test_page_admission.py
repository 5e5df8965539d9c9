"""A class opening the link at once gets its pages as they are built, not all at the end (issue 44).

A page's document is built in the request for the page; ``serving.LongLinkGuard``
holds each such request until ``turns.TURNS.admit_page`` lets it in: one at a
time, first come first served, each in a turn of its own, with what reached the
loop meanwhile handled between two; the other pages' work (views, drafts, a first
run's drawing) waits while pages are still opening. All structural: nothing is
timed.
"""

from __future__ import annotations

import asyncio
import threading
import urllib.request

import pytest
from tornado import web

from dashboard import explorer as explorer_module, serving, turns as turns_module
from dashboard.explorer import Explorer
from dashboard.serving import PAGE_PATH
from dashboard.turns import OnePerTurn, Rank
from engine.config import RunConfig
from tests.explorer_driver import built, settle
from tests.guarded_server import guarded_server


class Page:
    """A stand-in for a page's Bokeh document: asks its loop for its pieces later."""

    def __init__(self, loop: asyncio.AbstractEventLoop):
        self.loop = loop
        self.asked: list = []

    def add_timeout_callback(self, callback, delay_ms: int) -> None:
        self.asked.append((callback, delay_ms))
        self.loop.call_later(delay_ms / 1000, callback)


def test_pages_asked_for_at_once_are_built_one_a_turn_in_order_with_what_came_meanwhile_handled_between():
    turns, happened = OnePerTurn(), []

    async def serve() -> None:
        loop = asyncio.get_running_loop()

        async def request(name: str) -> None:
            await turns.admit_page()
            turns.page_built(Page(loop))
            happened.append(f"build {name}")
            # what the page's browser sends as soon as it has the page, here already waiting when the build ends
            loop.call_soon(happened.append, f"answer to {name}")

        await asyncio.gather(*(request(name) for name in ("page 1", "page 2", "page 3")))

    asyncio.run(serve())
    assert happened == ["build page 1", "answer to page 1", "build page 2", "answer to page 2", "build page 3",
                        "answer to page 3"]


def test_other_pages_work_waits_while_pages_are_opening_and_runs_once_they_show(monkeypatch):
    monkeypatch.setattr(turns_module, "OPENING_HOLD_MS", 60_000)  # long enough for no machine to outlast it
    monkeypatch.setattr(turns_module, "PAUSE_MS", 0)  # only the opening page holds the view back
    turns, happened = OnePerTurn(), []

    async def serve() -> None:
        loop = asyncio.get_running_loop()
        opening, open_page = Page(loop), Page(loop)
        await turns.admit_page()
        turns.page_built(opening)
        await asyncio.sleep(0.001)  # a later turn, past the pause after a piece

        def view() -> None:
            if turns.claim(open_page, view):
                happened.append("a view of an open page")

        view()
        assert happened == [] and turns.pages_waiting()  # asked again later
        turns.page_shown(opening)
        while not happened:
            await asyncio.sleep(0.01)
        assert not turns.pages_waiting()

    asyncio.run(serve())
    assert happened == ["a view of an open page"]


def test_a_page_built_but_never_shown_holds_the_other_pages_work_for_a_while_only(monkeypatch):
    monkeypatch.setattr(turns_module, "OPENING_HOLD_MS", 0)
    turns = OnePerTurn()

    async def serve() -> None:
        loop = asyncio.get_running_loop()
        await turns.admit_page()
        turns.page_built(Page(loop))  # its browser went away before it asked for the document
        await asyncio.sleep(0.001)
        assert not turns.pages_waiting()

    asyncio.run(serve())


def test_every_pages_first_screen_comes_before_what_any_page_shows_below_it(monkeypatch):
    """Pieces asked for together run by rank (state, lead view, sidebar, rest), and in a rank as they were asked
    for: the last page's state is drawn before the first page's sidebar or its views below."""
    monkeypatch.setattr(turns_module, "PAUSE_MS", 0)
    turns, happened = OnePerTurn(), []

    async def serve() -> None:
        loop = asyncio.get_running_loop()
        pages = {name: Page(loop) for name in ("page 1", "page 2", "page 3")}

        def piece(name: str, what: str, rank: Rank):
            def run() -> None:
                if turns.claim(pages[name], run, rank):
                    happened.append(f"{what} of {name}")
            return run

        turns.take()  # this turn is another piece's: everything below is asked for, none runs yet
        for name, what, rank in (("page 1", "rest", Rank.REST), ("page 1", "sidebar", Rank.SIDEBAR),
                                 ("page 2", "lead", Rank.LEAD), ("page 3", "state", Rank.STATE),
                                 ("page 2", "state", Rank.STATE), ("page 3", "lead", Rank.LEAD)):
            piece(name, what, rank)()
        assert happened == []
        while len(happened) < 6:
            await asyncio.sleep(0.01)

    asyncio.run(serve())
    assert happened == ["state of page 3", "state of page 2", "lead of page 2", "lead of page 3", "sidebar of page 1",
                        "rest of page 1"]


def test_a_piece_that_asks_no_more_stops_holding_the_others_back(monkeypatch):
    """A piece that no longer needs to run (asked for in its turn, it claims nothing) holds no other page's work for
    long (``CALLED_HOLD_MS``)."""
    monkeypatch.setattr(turns_module, "PAUSE_MS", 0)
    monkeypatch.setattr(turns_module, "CALLED_HOLD_MS", 50)
    turns, happened = OnePerTurn(), []

    async def serve() -> None:
        loop = asyncio.get_running_loop()
        gone, open_page = Page(loop), Page(loop)

        def state() -> None:  # its page ended: asked again, it runs nothing and asks no more
            pass

        def rest() -> None:
            if turns.claim(open_page, rest, Rank.REST):
                happened.append("rest of the open page")

        turns.take()
        assert not turns.claim(gone, state, Rank.STATE)
        rest()
        while not happened:
            await asyncio.sleep(0.01)

    asyncio.run(serve())
    assert happened == ["rest of the open page"]


def test_the_queues_first_piece_is_asked_for_once_and_at_once_when_a_piece_may_start(monkeypatch):
    """No piece polls: a refused piece is asked of its page again exactly once, with no delay, when its turn comes;
    a piece that is not first is not asked for meanwhile."""
    monkeypatch.setattr(turns_module, "PAUSE_MS", 20)
    turns, happened = OnePerTurn(), []

    async def serve() -> None:
        loop = asyncio.get_running_loop()
        first, second = Page(loop), Page(loop)

        def piece(page: Page, name: str, rank: Rank):
            def run() -> None:
                if turns.claim(page, run, rank):
                    happened.append(name)
            return run

        turns.take()
        piece(second, "rest", Rank.REST)()
        piece(first, "state", Rank.STATE)()
        while len(happened) < 2:
            await asyncio.sleep(0.01)
        assert [delay for _, delay in first.asked] == [0] and [delay for _, delay in second.asked] == [0]

    asyncio.run(serve())
    assert happened == ["state", "rest"]


def test_a_closed_pages_queued_pieces_leave_the_queue_at_once(monkeypatch):
    """A page closed while its pieces waited holds no other page's work (not even for ``CALLED_HOLD_MS``)."""
    monkeypatch.setattr(turns_module, "PAUSE_MS", 0)
    monkeypatch.setattr(turns_module, "CALLED_HOLD_MS", 60_000)  # a piece of a closed page must not be waited for
    turns, happened = OnePerTurn(), []

    class Gone:
        """A page whose session ended: asked for a piece, it runs nothing."""

        def add_timeout_callback(self, callback, delay_ms: int) -> None:
            happened.append("the closed page was asked")

    async def serve() -> None:
        loop = asyncio.get_running_loop()
        gone, open_page = Gone(), Page(loop)

        def rest() -> None:
            if turns.claim(open_page, rest, Rank.REST):
                happened.append("rest of the open page")

        turns.take()
        assert not turns.claim(gone, lambda: None, Rank.STATE)
        rest()
        turns.page_closed(gone)
        while "rest of the open page" not in happened:
            await asyncio.sleep(0.01)

    asyncio.run(serve())
    assert happened == ["rest of the open page"]


def test_the_server_lets_a_page_request_in_at_its_turn_and_every_other_request_at_once(monkeypatch):
    """A page's request waits while a session's click awaits its answer; a request for anything else does not."""
    monkeypatch.setattr(turns_module, "ANSWER_HOLD_MS", 60_000)
    turns = OnePerTurn()
    monkeypatch.setattr(serving, "TURNS", turns)
    seen: list[str] = []
    clicking = object()

    class PageHandler(web.RequestHandler):
        def get(self):
            turns.page_built(self)
            seen.append("page")
            self.write("page")

    class Other(web.RequestHandler):
        def get(self):
            seen.append("other")
            self.write("other")

    with guarded_server([(PAGE_PATH, PageHandler), (r"/static/x", Other)]) as server:
        server.loop.add_callback(turns.answering, clicking)  # a click's command went to its worker: pages wait
        answers: dict[str, bytes] = {}

        def fetch(path: str) -> None:
            with urllib.request.urlopen(f"http://127.0.0.1:{server.port}{path}", timeout=120) as response:
                answers[path] = response.read()

        page = threading.Thread(target=fetch, args=(f"{PAGE_PATH}?run=abc",))
        page.start()
        fetch("/static/x")  # answered while the page's request waits
        assert seen == ["other"] and answers == {"/static/x": b"other"}
        server.loop.add_callback(turns.answered, clicking)  # the click's answer is on its page
        page.join(120)
        assert seen == ["other", "page"] and answers[f"{PAGE_PATH}?run=abc"] == b"page"


@pytest.mark.parametrize("path, gated", [("/app", True), ("/app/", True), ("/app?run=x", True), ("/app/ws", False),
                                         ("/static/js/bokeh.min.js", False), ("/liveness", False)])
def test_only_requests_for_the_apps_page_wait_for_a_turn(path, gated):
    guard = serving.LongLinkGuard(app=_Recorder(), connection=None)
    start_line = type("StartLine", (), {"method": "GET", "path": path})()
    result = guard.headers_received(start_line, {})
    assert (result is not None) == gated
    if result is not None:
        result.close()  # a coroutine never awaited here


class _Recorder:
    def headers_received(self, start_line, headers):
        return None


def test_a_page_without_a_run_yet_draws_its_first_once_no_page_waits_to_open(monkeypatch):
    waiting = [True]
    monkeypatch.setattr(explorer_module.TURNS, "pages_waiting", lambda: waiting[0])
    app = Explorer(RunConfig())
    polls = []
    poll = app.client.poll
    app.client.poll = lambda: polls.append(1) or poll()
    try:
        app.flush()
        app.flush()
        assert polls == [] and app.client.info is None
        waiting[0] = False
        settle(app, lambda: built(app.client))
        waiting[0] = True  # a page that shows its run goes on flushing: its clicks are answered while pages open
        before = len(polls)
        app.flush()
        assert len(polls) == before + 1
    finally:
        app.close()
