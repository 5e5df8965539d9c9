"""The served app's garbage collection: what lives when a session's views are built is frozen; the frozen
garbage is collected after a few freezes or closed sessions (``dashboard.collector``)."""

from __future__ import annotations

import gc
import weakref

import pytest

from dashboard.collector import SessionCollector


class Node:
    """An object in a reference cycle: only the cyclic collector frees it."""

    def __init__(self):
        self.me = self


@pytest.fixture
def unfrozen():
    yield
    gc.unfreeze()


def test_built_views_are_frozen_and_their_cyclic_garbage_is_collected_after_enough_sessions_closed(unfrozen):
    collector = SessionCollector(closed_before_collect=2)
    node = Node()
    alive = weakref.ref(node)
    collector.views_built()
    assert gc.get_freeze_count() > 0
    del node
    gc.collect()
    assert alive() is not None  # frozen: out of the collector's reach
    collector.session_closed(open_sessions=3)
    assert alive() is not None and collector.collections == 0
    collector.session_closed(open_sessions=2)  # the second closed session: one full collection
    assert alive() is None and collector.collections == 1 and collector.closed == 0
    assert gc.get_freeze_count() > 0  # what lives is frozen again


def test_the_last_session_closing_collects_at_once(unfrozen):
    collector = SessionCollector(closed_before_collect=8)
    node = Node()
    alive = weakref.ref(node)
    collector.views_built()
    del node
    collector.session_closed(open_sessions=0)
    assert alive() is None and collector.collections == 1


def test_frozen_garbage_is_collected_after_enough_freezes(unfrozen):
    collector = SessionCollector(freezes_before_collect=3)
    node = Node()
    alive = weakref.ref(node)
    collector.views_built()
    del node  # the figures of a run the session replaced
    collector.views_built()
    assert alive() is not None and collector.collections == 0
    collector.views_built()  # the third: one full collection, then what lives is frozen again
    assert alive() is None and collector.collections == 1 and collector.freezes == 0
    assert gc.get_freeze_count() > 0


def test_an_explorer_tells_its_collector_when_its_views_were_built_for_a_new_run():
    from dashboard.explorer import Explorer
    from engine.config import RunConfig
    from tests.explorer_driver import applied, built, settle

    class Counting(SessionCollector):
        def views_built(self) -> None:
            self.freezes += 1

    app = Explorer(RunConfig(target="ising1d", sampler="metropolis", n_chains=2))
    try:
        assert app.collector is None  # not served: the collector is left alone
        app.collector = counting = Counting()
        settle(app, lambda: built(app.client))
        assert counting.freezes == 1
        applied(app, RunConfig(target="ising1d", sampler="gibbs", n_chains=2))
        assert counting.freezes == 2
    finally:
        app.close()


def test_a_due_collection_waits_for_a_turn_of_the_event_loop_that_no_other_heavy_piece_has(unfrozen):
    import asyncio

    from dashboard.turns import TURNS

    collector = SessionCollector(closed_before_collect=1)
    seen = []

    async def serve() -> None:
        TURNS.take()  # another page's piece has this turn
        collector.session_closed(open_sessions=3)
        collector.session_closed(open_sessions=2)  # due twice meanwhile: collected once
        seen.append(collector.collections)
        for _ in range(200):
            await asyncio.sleep(0.05)
            if collector.collections:
                break
        await asyncio.sleep(0.2)

    asyncio.run(serve())
    assert seen == [0] and collector.collections == 1
