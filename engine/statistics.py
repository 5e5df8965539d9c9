"""Summary statistics a run can trace for every chain, chosen by what the target offers.

Each statistic maps a batch of states and their log p̃ to one number per chain:

* ``log_prob``      log p̃(x) (always);
* ``ones``          the fraction of bits equal to 1 (always);
* ``magnetisation`` the mean spin (2x − 1) (pairwise spin models);
* ``agreement``     the fraction of pixels matching the ground truth (segmentation);
* ``hamming``       the Hamming distance to a fixed random reference state (always; the
                    DISCS benchmark's statistic, ``samplers.diagnostics.ess.hamming_distance``).

A cluster sampler (``CLUSTER_SAMPLERS``) flips whole domains at once, so its
magnetisation jumps between +m and −m: its traces, and a comparison it takes
part in, read |m| instead (``folds_sign``).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from samplers.diagnostics.ess import hamming_distance, hamming_reference
from targets.base import Target

Statistic = Callable[[np.ndarray, np.ndarray], np.ndarray]

LABELS = {
    "log_prob": "log p̃(x)",
    "ones": "fraction of ones",
    "magnetisation": "magnetisation",
    "agreement": "agreement with truth",
    "hamming": "Hamming distance to a random reference state",
}
#: Samplers that flip whole domains at once: their magnetisation jumps between +m and −m.
CLUSTER_SAMPLERS = frozenset({"swendsen_wang", "wolff"})


def available_statistics(target: Target) -> dict[str, Statistic]:
    """The statistics that apply to ``target``, by name."""
    stats: dict[str, Statistic] = {
        "log_prob": lambda states, log_p: log_p,
        "ones": lambda states, log_p: states.mean(axis=1),
    }
    if hasattr(target, "magnetisation"):
        stats["magnetisation"] = lambda states, log_p: target.magnetisation(states)
    if hasattr(target, "agreement"):
        stats["agreement"] = lambda states, log_p: target.agreement(states)
    stats["hamming"] = lambda states, log_p: hamming_distance(states, hamming_reference(states.shape[1])).astype(
        np.float64)
    return stats


def statistic_names(target: Target | type[Target]) -> list[str]:
    """Names of the statistics for a target or a target class (they depend only on its methods)."""
    return list(available_statistics(target))


def folds_sign(sampler: str, statistic: str) -> bool:
    """Whether ``sampler``'s ``statistic`` is read as its absolute value: the magnetisation of a cluster sampler."""
    return statistic == "magnetisation" and sampler in CLUSTER_SAMPLERS


def folds(names: tuple[str, str], statistic: str) -> bool:
    """Whether the two samplers ``names`` are compared on the statistic's absolute value: when either one's traces
    show it so (``folds_sign``, |m| for a cluster sampler), both are, so that they compare one quantity."""
    return any(folds_sign(name, statistic) for name in names)
