"""The one base of every live view: what it applies to, a new run, and an update from a snapshot.

A live view draws a run from what its worker sends and nothing else: the
``RunInfo`` of each new run (``reconfigure``) and the stream of immutable
``Snapshot``s (``update``), whose ``None`` fields mean "unchanged". It never
sees a sampler or a target. Actions (freeze, slow motion, the chain shown)
go to the session's ``RunClient`` as messages. The explorer builds a view the
first time it ``applies`` to a run (so a session holds only the figures its
runs need), shows each one's card only while it applies, and calls
``update`` inside ``pn.io.hold()`` at every flush. A view lives for one run:
the explorer builds a new one for each new run (so nothing of an earlier run
survives in it) and ``close``s the old one, which lets go of what it watches
on the client (``watch_client``); within a run its Bokeh figures stay and
only their ``ColumnDataSource``s change, and a replaced view's models leave
the document with it.
"""

from __future__ import annotations

import numpy as np
import panel as pn
import param
from bokeh.models import GlyphRenderer

from engine.client import RunClient
from engine.snapshot import RunInfo, Snapshot

#: Arrays up to this many numbers are sent as JSON lists, larger ones as binary buffers.
SMALL_ARRAY = 256


def without_unused_glyphs(view) -> None:
    """Drop the glyphs Bokeh gives every renderer for selections and muting (``nonselection_glyph``,
    ``muted_glyph``) from a view's figures: no view selects or mutes, and they are a tenth of the models a page's
    browser builds."""
    for pane in pn.panel(view).select(pn.pane.Bokeh):
        for renderer in pane.object.select({"type": GlyphRenderer}):
            renderer.update(nonselection_glyph=None, muted_glyph=None)


def plain(columns: dict) -> dict:
    """Source columns with small arrays as Python lists.

    Bokeh sends every numpy array of a change as a websocket frame of its own
    (about 0.4 ms of the server each), while it encodes a list number by
    number in Python (about 5 µs each): a stream of a few new trace rows is
    cheapest as lists, a long column as one buffer. Views also join many
    short lines into one (``kl.chain_lines``) rather than send one array per line.
    """
    return {key: value.tolist() if isinstance(value, np.ndarray) and value.size <= SMALL_ARRAY else value
            for key, value in columns.items()}


def tuning_line(adapting: bool, what: str, step: int, burn_in: int, target_acceptance: float,
                frozen_at: int | None, frozen: str) -> str:
    """The status of a kernel tuned toward an acceptance rate in a burn-in (HTML): adapting ``what`` (with the
    warning that the chain is adaptive MCMC meanwhile), or frozen at a step with the values ``frozen``."""
    if adapting:
        return (f"<b>adapting</b> {what} toward {target_acceptance:.1%} acceptance: step {step:,} of the burn-in's "
                f"{burn_in:,}; meanwhile the chain is adaptive MCMC")
    return f"<b>frozen</b> at step {frozen_at:,}: {frozen}; an exact MCMC kernel from here on"


class LiveView(pn.viewable.Viewer):
    """A view of the session's run, fed by ``reconfigure(info)`` and ``update(snapshot)``."""

    client = param.ClassSelector(class_=RunClient, doc="The session's run: where the view's actions go.")
    #: Title of the card the explorer puts the view in.
    title = ""
    #: Whether its card starts collapsed (a view that costs the worker work only while open).
    starts_collapsed = False

    def __init__(self, **params):
        super().__init__(**params)
        self._client_watchers: list = []

    @classmethod
    def applies(cls, info: RunInfo) -> bool:
        """Whether the view means anything for this run (its card is hidden otherwise)."""
        return True

    @classmethod
    def leads(cls, info: RunInfo) -> bool:
        """Whether the view is what the run is about, drawn beside the state on the first screen in place of the
        traces (the first such view in the explorer's order leads); none by default."""
        return False

    def reconfigure(self, info: RunInfo) -> None:
        """Fit the view to its run (called once: every run has views of its own). A figure the run never shows
        is not made: each is some forty Bokeh models the server builds and sends, and the browser lays out."""
        raise TypeError(f"{type(self).__name__} must implement reconfigure")

    def update(self, snapshot: Snapshot) -> None:
        """Draw what the snapshot brings (its ``None`` fields are unchanged)."""
        raise TypeError(f"{type(self).__name__} must implement update")

    def watch_client(self, callback, name: str) -> None:
        """Call ``callback(event)`` when the client's ``name`` changes, until the view is closed."""
        self._client_watchers.append(self.client.param.watch(callback, name))

    def close(self) -> None:
        """The view's run is over (a new one has its own view): stop watching the client."""
        for watcher in self._client_watchers:
            self.client.param.unwatch(watcher)
        self._client_watchers = []

    def opened(self, is_open: bool) -> None:
        """Its card was expanded (True) or collapsed (False); nothing by default."""

    def tick(self) -> None:
        """Called at every flush, snapshot or not (animations); nothing by default."""
