"""Balancing functions g with g(t) = t·g(1/t) (Zanella 2020; LSB paper, Eq. 2), in log space.

Each function maps log t to log g(t), so that ratios p̃(x')/p̃(x) spanning
hundreds of orders of magnitude never overflow:

* ``barker``  g(t) = t/(1+t)   log g = log σ(log t)
* ``sqrt``    g(t) = √t        log g = ½ log t
* ``min``     g(t) = min(1, t) log g = min(0, log t)
* ``max``     g(t) = max(1, t) log g = max(0, log t)

Learned balancing functions (LSB1, LSB2) extend this registry.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy.special import log_expit

LogBalancing = Callable[[np.ndarray], np.ndarray]

BALANCING: dict[str, LogBalancing] = {
    "barker": log_expit,
    "sqrt": lambda log_t: 0.5 * np.asarray(log_t, dtype=np.float64),
    "min": lambda log_t: np.minimum(0.0, log_t),
    "max": lambda log_t: np.maximum(0.0, log_t),
}

FORMULAS = {"barker": "t/(1+t)", "sqrt": "√t", "min": "min(1, t)", "max": "max(1, t)"}


def log_balancing(name: str) -> LogBalancing:
    """log g for the balancing function called ``name``."""
    try:
        return BALANCING[name]
    except KeyError:
        raise ValueError(f"balancing must be one of {sorted(BALANCING)}; got {name!r}") from None
