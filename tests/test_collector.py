"""The served app's garbage collection: what lives when a page is built is frozen; closed sessions' garbage is
collected after a few closed (``dashboard.collector``)."""

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


def test_a_built_session_is_frozen_and_its_cyclic_garbage_is_collected_after_enough_sessions_closed(unfrozen):
    collector = SessionCollector(closed_before_collect=2)
    node = Node()
    alive = weakref.ref(node)
    collector.session_built()
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
    collector.session_built()
    del node
    collector.session_closed(open_sessions=0)
    assert alive() is None and collector.collections == 1
