"""Base of the views drawn from a run's ``OpadSnapshot``: cleared on a new run, redrawn when it changes.

``refresh()`` is cheap to call at every flush: it redraws at most every
``LIVE_SECONDS``, and only when the tracker has published a new snapshot.
Subclasses build their Bokeh figures once per session and implement
``applies`` (does the view mean anything for this run?), ``clear()`` and
``draw(snapshot)``, which only set ``ColumnDataSource`` data.
"""

from __future__ import annotations

import panel as pn
import param

from ..model.opad_tracker import OpadSnapshot
from ..model.run_model import RunModel
from .throttle import Throttle

LIVE_SECONDS = 0.5


class SnapshotView(pn.viewable.Viewer):
    """Throttled redraws from the model's latest OPAD snapshot."""

    model = param.ClassSelector(class_=RunModel)

    def __init__(self, **params):
        super().__init__(**params)
        self._drawn: OpadSnapshot | None = None
        self.throttle = Throttle(LIVE_SECONDS)

    def watch_config(self) -> None:
        """Clear and redraw on every new run (call at the end of the subclass's ``__init__``)."""
        self.model.param.watch(self._reconfigure, "config")
        self._reconfigure()

    @property
    def applies(self) -> bool:
        raise TypeError(f"{type(self).__name__} must define applies")

    def clear(self) -> None:
        raise TypeError(f"{type(self).__name__} must implement clear")

    def draw(self, snapshot: OpadSnapshot) -> None:
        raise TypeError(f"{type(self).__name__} must implement draw")

    def _reconfigure(self, *events) -> None:
        with pn.io.hold():
            self.clear()
        self._drawn = None
        self.throttle.reset()
        self.refresh()

    def refresh(self) -> None:
        """Redraw from the latest snapshot if it is new and ``LIVE_SECONDS`` have passed."""
        snapshot = self.model.opad_snapshot()
        if not self.applies or snapshot is None or snapshot is self._drawn or not self.throttle.due():
            return
        self._drawn = snapshot
        self.draw(snapshot)
