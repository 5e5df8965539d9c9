"""A sweep's stored results held in memory, for tests of code that reads a ``sweeps.ResultStore``."""

from __future__ import annotations


class DictStore:
    """The reading side of ``sweeps.ResultStore`` (``has``, ``read``) over a dictionary run id → result."""

    def __init__(self, results: dict):
        self.results = results

    def has(self, run_id: str) -> bool:
        return run_id in self.results

    def read(self, run_id: str) -> dict:
        return self.results[run_id]
