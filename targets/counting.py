"""Counting target evaluations: the public, counted face of a target (``CountedEvaluations``).

``n_evals`` counts *target evaluations*: the number of states whose p̃ — or
whose exact ratio p̃(x')/p̃(x) to an already known state — a sampler obtained.
It is the "queries to the oracle" axis of the LSB paper, and it is the same
rule for every target:

* ``log_prob(x)`` of n states costs n;
* ``flip_log_ratio(x, idx)`` (one flipped site per row) costs n;
* ``block_log_ratio(x, sites, values)`` costs n·m for m value patterns;
* ``delta_log_prob(x)`` — the ratios of all d single-flip neighbours — costs n·d;
* ``delta_after_flip`` costs the number of neighbour ratios that actually
  change: d per row for a black-box target, 1 + deg(i) on a sparse pairwise
  model (this is why a locally balanced step is O(1) evaluations on a lattice
  and O(d) on a black box, as in the LSB paper, §5.1);
* ``value_and_grad(x)`` of n states costs n (one forward/backward pass).

Each public method validates, counts and calls the model's uncounted method of
the same name with a leading underscore (``targets.base.Target``); a ratio
method given the rows' known log p̃ asks a black box for the new states alone.
"""

from __future__ import annotations

import numpy as np


class CountedEvaluations:
    """The counted methods of a target (module docstring); the model supplies ``check_states`` and the uncounted
    ``_log_prob``, ``_flip_log_ratio``, ``_delta_log_prob``, ``_delta_after_flip``, ``_block_log_ratio`` and
    ``_value_and_grad``."""

    n_evals = 0

    def reset_evals(self) -> None:
        self.n_evals = 0

    def _count(self, n: int | np.integer) -> None:
        self.n_evals += int(n)

    def count_evaluations(self, n: int | np.integer) -> None:
        """Count ``n`` evaluations that a sampler's compiled kernel made from ``flip_tables``."""
        self._count(n)

    def log_prob(self, x) -> np.ndarray:
        """Unnormalised log p̃(x) for a batch; shape ``(n,)``, float64. Costs n evaluations."""
        x = self.check_states(x)
        self._count(x.shape[0])
        return np.asarray(self._log_prob(x), dtype=np.float64)

    def flip_log_ratio(self, x: np.ndarray, idx: np.ndarray, log_p: np.ndarray) -> np.ndarray:
        """log p̃(x with bit idx[c] flipped) − log p̃(x), per row; ``log_p`` = log p̃(x). Costs n."""
        self._count(x.shape[0])
        return self._flip_log_ratio(x, np.asarray(idx), log_p)

    def delta_log_prob(self, x, log_p=None) -> np.ndarray:
        """``(n, d)`` array of log p̃(x with bit i flipped) − log p̃(x). Costs n·d evaluations.

        ``log_p``: log p̃ of the rows, when the caller knows it (a sampler's cached values): the ratios are then to
        an already known state, and a black box is asked for the n·d neighbours alone (without it, for the rows
        too, which the count leaves out by the rule above)."""
        x = self.check_states(x)
        self._count(x.shape[0] * self.dim)
        return self._delta_log_prob(x, None if log_p is None else np.asarray(log_p, dtype=np.float64))

    def delta_after_flip(self, x: np.ndarray, delta: np.ndarray, idx: np.ndarray, log_p=None):
        """Flip ratios of the states ``flip(x, idx)``, given those of ``x``.

        Returns ``(sites, values)``: for each row, the sites whose flip ratio
        changes and their new values (all d sites for a black-box target).
        Costs d evaluations per row here; sparse models override it.
        ``log_p``: log p̃ of the flipped states when the caller knows it (``delta_log_prob``).
        """
        self._count(x.shape[0] * self.dim)
        return self._delta_after_flip(x, delta, idx, None if log_p is None else np.asarray(log_p, dtype=np.float64))

    def block_log_ratio(self, x: np.ndarray, sites: np.ndarray, values: np.ndarray, log_p=None) -> np.ndarray:
        """log p̃(x with x[sites] = values[:, j]) − log p̃(x) for m patterns per row.

        ``sites`` is ``(n, k)`` distinct site indices per row and ``values`` is
        ``(n, m, k)`` 0/1; returns ``(n, m)``. Costs n·m evaluations. ``log_p``:
        log p̃ of the rows when the caller knows it (``delta_log_prob``).
        """
        self._count(values.shape[0] * values.shape[1])
        return self._block_log_ratio(x, sites, values.astype(np.uint8),
                                     None if log_p is None else np.asarray(log_p, dtype=np.float64))

    def value_and_grad(self, x):
        """log p̃(x) and ∇ₓ log p̃ of its differentiable extension at binary x. Costs n."""
        x = self.check_states(x)
        if not self.differentiable:
            raise TypeError(f"target {self.registry_name!r} has no differentiable extension (no gradient)")
        self._count(x.shape[0])
        return self._value_and_grad(x)

    def grad_log_prob(self, x) -> np.ndarray:
        """∇ₓ log p̃ of the differentiable extension at binary states x; ``(n, d)``."""
        return self.value_and_grad(x)[1]
