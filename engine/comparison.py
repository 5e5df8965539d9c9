"""A second sampler run beside the main one for an equal share of one axis, and how the two compare (model code).

When a run has a comparison sampler (``RunConfig.compare_sampler``),
``CompanionRun.advance(amount)`` steps it, after each chunk of the main
sampler, until its own count on the shared axis (``RunConfig.compare_axis``)
has grown by as much as the main sampler's did:

* ``"seconds"``: compute time inside ``step()`` — intracluster moves against
  Kawasaki swaps "as a function of computational time, not iteration"
  (Hamze & de Freitas, Figs. 2–4);
* ``"steps"``: the LSB paper's iterations (with ``learning_moves=2`` an LSB
  step is the authors' iteration of two moves);
* ``"evaluations"``: target evaluations, the fair axis for the LSB claims.

``compare()`` turns both trace buffers into a ``ComparisonState``: the chains'
mean of the run's statistic (the energy E = −log p̃ when the statistic is
log p̃) against the shared axis, its autocorrelation against the lag on that
axis (second half of each trace, averaged over chains), and a line of text
per sampler with the integrated autocorrelation time in the axis's unit.
When either sampler is a cluster sampler, whose moves flip the sign of the
magnetisation, both are compared on |m| (``folds``), as its traces show it.
Numbers in the text are written out by ``numbers.number`` (a ratio of 1330,
never "1.33e+03").

The ratio of the two autocorrelation times — "which mixes faster" — is
stated only when both traces can carry it (``unreadable``): each sampler
accepts at least ``BARELY_MOVES`` of its moves (a flat trace has a short,
meaningless autocorrelation), its chains agree over the second half of the
trace (split-R̂ at most ``SETTLED_RHAT``: a falling energy, or chains held in
different modes, have no stationary autocorrelation), and its autocorrelation
time is resolved (at most ``RESOLVED_FRACTION`` of the span). Otherwise the
card says which condition fails, so its text never claims what its plot
contradicts. One sampler is called faster only when the log-ratio exceeds
twice its standard error, from the Madras–Sokal variance of an integrated
time, var(τ̂)/τ² ≈ 4τ/T for a window of about τ over a trace of length T,
divided by the chains the autocorrelation is averaged over (``tau_log_sd``).
"""

from __future__ import annotations

import time

import numpy as np

from samplers.diagnostics.ess import autocorrelation_in_time, integrated_time, rhat

from .buffer import TraceBuffer, chunk_of, trace_row
from .numbers import number
from .snapshot import AXES, BARELY_MOVES, ComparisonState
from .statistics import folds

#: Points of the grid on the shared axis that the autocorrelation is computed on.
GRID_POINTS = 400
#: Largest split-R̂ over the second half of a trace at which its chains count as settled.
SETTLED_RHAT = 1.05
#: Decimals the verdict's sentences print split-R̂ with (and acceptance, in per cent).
SHOWN_DIGITS = 2
#: Largest autocorrelation time, as a fraction of the compared span, that the run resolves.
RESOLVED_FRACTION = 0.05


class CompanionRun:
    """The comparison sampler, advanced for as much of the shared axis as the main sampler got, into its own buffer."""

    #: Most companion steps per chunk (a companion much faster than the main sampler).
    MAX_STEPS = 20_000

    def __init__(self, sampler, statistic, axis: str = "seconds"):
        if axis not in AXES:
            raise ValueError(f"axis must be one of {list(AXES)}; got {axis!r}")
        self.sampler = sampler
        self.axis = axis
        self._statistic = statistic
        self.seconds = 0.0
        self._owed = 0.0
        self.buffer = TraceBuffer(sampler.n_chains)
        self.buffer.push(chunk_of([self._row()]), sampler.states)

    def _row(self) -> tuple:
        return trace_row(self.sampler, self.seconds, self._statistic)

    def _count(self) -> float:
        """The companion's count on the shared axis so far."""
        return {"seconds": self.seconds, "steps": self.sampler.n_steps, "evaluations": self.sampler.n_evals}[self.axis]

    def advance(self, amount: float) -> None:
        """Step until the companion's count on the axis has grown by ``amount`` more (carrying over any
        shortfall or excess)."""
        self._owed += amount
        rows = []
        while self._owed > 0 and len(rows) < self.MAX_STEPS:
            before = self._count()
            started = time.perf_counter()
            self.sampler.step(record=False)
            self.seconds += time.perf_counter() - started
            self._owed -= self._count() - before
            rows.append(self._row())
        if rows:
            self.buffer.push(chunk_of(rows), self.sampler.states)


def compared_values(history: dict, statistic: str, fold: bool) -> np.ndarray:
    """Each chain's value at each row of a trace history (rows × chains): the energy −log p̃ when the statistic is
    log p̃, else the statistic, as its absolute value when ``fold``."""
    if statistic == "log_prob":
        return -history["log_prob"]
    return np.abs(history["statistic"]) if fold else history["statistic"]


def trace_columns(history: dict, axis: str, values: np.ndarray) -> dict:
    """The shared axis and the chains' mean of ``values`` (``compared_values``) from a trace history."""
    return {"x": history[AXES[axis][0]], "y": values.mean(axis=1)}


def axis_acf(history: dict, axis: str, values: np.ndarray, grid_step: float) -> tuple[np.ndarray, np.ndarray]:
    """The autocorrelation of ``values`` (``compared_values``) against the lag on the shared axis, over the second
    half of the trace."""
    x = history[AXES[axis][0]].astype(np.float64)
    half = x.size // 2
    if grid_step <= 0 or x.size < 16 or x[-1] <= x[half]:
        return np.zeros(0), np.zeros(0)
    return autocorrelation_in_time(x[half:], values[half:], grid_step)


def summary(name: str, history: dict, axis: str, lags: np.ndarray, acf: np.ndarray,
            acceptance: float) -> tuple[str, float]:
    """One sampler's line of text, and its integrated autocorrelation time in the axis's unit."""
    seconds = float(history["seconds"][-1]) if history["seconds"].size else 0.0
    steps = int(history["step"][-1]) if history["step"].size else 0
    evaluations = int(history["n_evals"][-1]) if history["n_evals"].size else 0
    tau = integrated_time(lags, acf)
    rate = f"{steps / seconds:,.0f}" if seconds > 0 else "–"
    tau_text = f"{number(tau)} {AXES[axis][1]}s" if np.isfinite(tau) else "not yet resolved"
    return (f"<b>{name}</b>: {steps:,} steps, {evaluations:,} evaluations, {seconds:.2f} s of compute ({rate} "
            f"steps/s), acceptance {number(acceptance)}, autocorrelation time {tau_text}", tau)


#: Fewest draws in a trace's second half for its split-R̂.
MIN_HALF_DRAWS = 8


def unreadable(history: dict, axis: str, values: np.ndarray, tau: float, acceptance: float) -> str | None:
    """Why one sampler's autocorrelation time of ``values`` (``compared_values``) cannot be compared (``None`` when it
    can).

    Acceptance and split-R̂ are compared with their thresholds as the sentence prints them (``SHOWN_DIGITS``), so
    that it never states a value that reads as on the other side of the threshold (R̂ 1.0503 "1.05", not settled).
    """
    accepted = round(acceptance, SHOWN_DIGITS + 2)
    if not accepted >= BARELY_MOVES:
        return (f"accepts {accepted:.{SHOWN_DIGITS}%} of its moves (under {BARELY_MOVES:.0%}), so its trace is nearly "
                "flat and says nothing about mixing")
    second_half = values[values.shape[0] // 2:].T
    if second_half.shape[1] < MIN_HALF_DRAWS:
        return (f"has {second_half.shape[1]} draws in the second half of its trace, too few to tell whether its chains "
                f"have settled (a split-R̂ needs {MIN_HALF_DRAWS})")
    settled = round(rhat(second_half), SHOWN_DIGITS)
    if not settled <= SETTLED_RHAT:
        return (f"has not settled (split-R̂ {settled:.{SHOWN_DIGITS}f} over the second half, above {SETTLED_RHAT}: "
                "still drifting, or its chains sit in different modes)")
    column = history[AXES[axis][0]]
    span = float(column[-1] - column[0])
    if not np.isfinite(tau) or tau > RESOLVED_FRACTION * span:
        return "has an autocorrelation time this run is still too short to resolve"
    return None


def tau_log_sd(history: dict, axis: str, tau: float) -> float:
    """Standard error of log τ̂ (Madras & Sokal 1988): √(4τ / (T · chains)), T the second half's span."""
    column = history[AXES[axis][0]]
    length = float(column[-1] - column[column.size // 2])
    return float(np.sqrt(4 * tau / (length * history["statistic"].shape[1])))


def compare(names: tuple[str, str], buffers: tuple[TraceBuffer, TraceBuffer], axis: str = "seconds",
            statistic: str = "log_prob") -> ComparisonState:
    """Traces, autocorrelations and summary lines of the two samplers ``names`` (registry names) on the shared
    ``axis``, of the run's ``statistic`` as ``compared_values`` reads it."""
    histories = [buffer.history() for buffer in buffers]
    fold = folds(names, statistic)
    column = AXES[axis][0]
    span = min(float(history[column][-1] - history[column][0]) for history in histories)
    grid_step = span / 2 / GRID_POINTS if span > 0 else 0.0
    traces, acfs, lines, reasons, taus = [], [], [], [], []
    for name, buffer, history in zip(names, buffers, histories):
        values = compared_values(history, statistic, fold)
        lags, acf = axis_acf(history, axis, values, grid_step)
        acceptance = buffer.recent_acceptance()
        line, tau = summary(name, history, axis, lags, acf, acceptance)
        traces.append(trace_columns(history, axis, values))
        acfs.append({"lag": lags, "acf": acf})
        lines.append(line)
        taus.append(tau)
        reason = unreadable(history, axis, values, tau, acceptance)
        if reason:
            reasons.append(f"{name} {reason}")
    if reasons:
        lines.append("no verdict on which mixes faster: " + "; ".join(reasons) + ".")
    else:
        faster, slower = (0, 1) if taus[0] <= taus[1] else (1, 0)
        ratio = taus[slower] / taus[faster]
        noise = 2 * np.hypot(*(tau_log_sd(history, axis, tau) for history, tau in zip(histories, taus)))
        verdict = (f"{names[faster]} mixes faster per {AXES[axis][1]}" if np.log(ratio) > noise else
                   f"no clear difference: within the estimates' noise, ×{number(np.exp(noise))}")
        lines.append(f"autocorrelation-time ratio {names[slower]} / {names[faster]}: {number(ratio)}× ({verdict})")
    return ComparisonState(trace=tuple(traces), acf=tuple(acfs), lines=tuple(lines))
