"""Rate limiting of a view's redraws: at most one per period, however often the flush calls."""

from __future__ import annotations

import time


class Throttle:
    """``due()`` is True at most once every ``seconds`` (and at once after ``reset()``)."""

    def __init__(self, seconds: float):
        self.seconds = seconds
        self._last = float("-inf")

    def reset(self) -> None:
        self._last = float("-inf")

    def due(self) -> bool:
        now = time.perf_counter()
        if now - self._last < self.seconds:
            return False
        self._last = now
        return True
