"""A user's black-box log-probability function as a target.

``from_log_prob(fn, dim)`` wraps ``fn: (n, dim) uint8 → (n,) float``. Nothing is
known about its structure, so every flip ratio is a fresh evaluation: a full
``delta_log_prob`` of one state costs ``dim`` evaluations (the LSB paper's O(d)
per step for locally balanced samplers on black-box targets).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import param

from .base import Target, TargetSize


class BlackBox(Target):
    """A user-supplied function x ↦ log p̃(x) (numpy in, numpy out)."""

    registry_name = "from_log_prob"
    fn = param.Callable(default=None, doc="Function mapping an (n, dim) uint8 batch to (n,) log p̃ values; "
                        "default: independent bits with log-odds 1, −1, 0.5, …")
    n_dim = param.Integer(6, bounds=(1, 100_000), doc="Number of binary variables.")

    def _build(self):
        #: Log-odds of the default model (independent bits), None when fn is given.
        self._logits = np.array([1.0, -1.0, 0.5])[np.arange(self.n_dim) % 3] if self.fn is None else None

    @classmethod
    def estimate_size(cls, params):
        """d = n_dim; the default model holds its d log-odds, a user's fn nothing known."""
        p = cls._estimate_params(params)
        return TargetSize(p["n_dim"], 8 * p["n_dim"] if p["fn"] is None else 0)

    @property
    def dim(self) -> int:
        return self.n_dim

    def _log_prob(self, x):
        values = np.asarray(self.fn(x) if self._logits is None else x @ self._logits, dtype=np.float64)
        if values.shape != (x.shape[0],):
            raise ValueError(f"fn must return shape ({x.shape[0]},) for a batch of {x.shape[0]} states; "
                             f"got {values.shape}")
        if np.any(np.isnan(values)) or np.any(values == np.inf):
            raise ValueError("fn returned NaN or +inf; log p̃ must be finite or −inf")
        return values


def from_log_prob(fn: Callable[[np.ndarray], np.ndarray], dim: int) -> BlackBox:
    """Wrap a black-box ``fn`` over ``dim`` binary variables as a target."""
    if not callable(fn):
        raise ValueError("fn must be callable")
    return BlackBox(fn=fn, n_dim=dim)
