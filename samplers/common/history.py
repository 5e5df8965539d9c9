"""A bounded, lock-free history of scalars against the step, for live plots of a sampler's tuning."""

from __future__ import annotations

import numpy as np

#: Rows a history holds at most.
CAPACITY = 4096


class BoundedHistory:
    """Bounded trace of a step column and scalar ``columns``: when full, every other row is dropped.

    Used for the LSB learner (L̂, η, LSB1's weights) and the intracluster walk adaptation (γ, κ, acceptance),
    so that a history of any length fits in ``capacity`` rows spread evenly over the steps.

    Written by the sampler's thread and read by others without a lock: the
    rows array and the row count change together as one tuple, so a reader
    never sees rows that are not written yet.
    """

    def __init__(self, columns: list[str], capacity: int = CAPACITY):
        self.columns = ["step", *columns]
        self._state = (np.empty((capacity, len(self.columns))), 0)
        self._stride = 1

    @staticmethod
    def estimated_bytes(n_columns: int, capacity: int = CAPACITY) -> int:
        """Bytes of a history of ``n_columns`` scalars (plus the step): its float64 rows, allocated in full."""
        return 8 * capacity * (n_columns + 1)

    def records(self, step: int) -> bool:
        """Whether ``append`` at ``step`` keeps a row (a caller can skip computing the values otherwise)."""
        return step % self._stride == 0

    def append(self, step: int, values: list[float]) -> None:
        if step % self._stride:
            return
        rows, size = self._state
        if size == rows.shape[0]:
            kept = rows[0::2]  # the rows at multiples of the doubled stride
            rows = np.concatenate([kept, np.empty_like(kept)])
            size = kept.shape[0]
            self._stride *= 2
            self._state = (rows, size)
            if step % self._stride:
                return
        rows[size] = [step, *values]
        self._state = (rows, size + 1)

    def snapshot(self) -> dict[str, np.ndarray]:
        rows, size = self._state
        table = rows[:size].copy()
        return {name: table[:, i] for i, name in enumerate(self.columns)}
