"""A second sampler run beside the main one for equal compute time, and how the two compare (model code).

When a run has a comparison sampler (``RunConfig.compare_sampler``, e.g.
intracluster moves against Kawasaki swaps), ``CompanionRun.advance(seconds)``
steps it, after each chunk of the main sampler, until its own compute time
(time inside ``step()``) has grown by as much as the main sampler's did, so
both traces cover equal compute and can be compared against compute time
(Hamze & de Freitas, Figs. 2–4: "as a function of computational time, not
iteration"). ``compare()`` turns both trace buffers into a ``ComparisonState``:
the energy E = −log p̃ of chain 0 of each against compute seconds, the energy
autocorrelation against compute-time lag (second half of each trace, averaged
over chains), and a line of text per sampler with the integrated
autocorrelation time in seconds, and their ratio.
"""

from __future__ import annotations

import time

import numpy as np

from samplers.diagnostics import autocorrelation_in_time, integrated_time

from .buffer import TraceBuffer, chunk_of, trace_row
from .snapshot import ComparisonState

#: Points of the compute-time grid the autocorrelation is computed on.
GRID_POINTS = 400


class CompanionRun:
    """The comparison sampler, advanced for the compute time the main sampler spent, into its own buffer."""

    #: Most companion steps per chunk (a companion much faster than the main sampler).
    MAX_STEPS = 20_000

    def __init__(self, sampler, statistic):
        self.sampler = sampler
        self._statistic = statistic
        self.seconds = 0.0
        self._owed = 0.0
        self.buffer = TraceBuffer(sampler.n_chains)
        self.buffer.push(chunk_of([self._row()]), sampler.states)

    def _row(self) -> tuple:
        return trace_row(self.sampler, self.seconds, self._statistic)

    def advance(self, seconds: float) -> None:
        """Step until the companion has spent ``seconds`` more (carrying over any shortfall or excess)."""
        self._owed += seconds
        rows = []
        while self._owed > 0 and len(rows) < self.MAX_STEPS:
            started = time.perf_counter()
            self.sampler.step(record=False)
            stepped = time.perf_counter() - started
            self.seconds += stepped
            self._owed -= stepped
            rows.append(self._row())
        if rows:
            self.buffer.push(chunk_of(rows), self.sampler.states)


def energy_columns(history: dict) -> dict:
    """Compute seconds and chain 0's energy −log p̃ from a trace history."""
    return {"seconds": history["seconds"], "energy": -history["log_prob"][:, 0]}


def time_acf(history: dict, grid_step: float) -> tuple[np.ndarray, np.ndarray]:
    """Energy autocorrelation against compute-time lag over the second half of the trace."""
    seconds = history["seconds"]
    half = seconds.size // 2
    if grid_step <= 0 or seconds.size < 16 or seconds[-1] <= seconds[half]:
        return np.zeros(0), np.zeros(0)
    return autocorrelation_in_time(seconds[half:], -history["log_prob"][half:], grid_step)


def summary(name: str, history: dict, lags: np.ndarray, acf: np.ndarray, acceptance: float) -> tuple[str, float]:
    """One sampler's line of text, and its integrated autocorrelation time in seconds."""
    seconds = float(history["seconds"][-1]) if history["seconds"].size else 0.0
    steps = int(history["step"][-1]) if history["step"].size else 0
    tau = integrated_time(lags, acf)
    rate = f"{steps / seconds:,.0f}" if seconds > 0 else "–"
    tau_text = f"{tau:.3g} s" if np.isfinite(tau) else "not yet resolved"
    return (f"<b>{name}</b>: {steps:,} steps in {seconds:.2f} s of compute ({rate}/s), acceptance {acceptance:.3g}, "
            f"energy autocorrelation time {tau_text}", tau)


def compare(names: tuple[str, str], buffers: tuple[TraceBuffer, TraceBuffer]) -> ComparisonState:
    """Energy traces, compute-time autocorrelations and summary lines of the two samplers."""
    histories = [buffer.history() for buffer in buffers]
    span = min(float(history["seconds"][-1]) for history in histories)
    grid_step = span / 2 / GRID_POINTS if span > 0 else 0.0
    energies, acfs, lines, taus = [], [], [], []
    for name, buffer, history in zip(names, buffers, histories):
        lags, acf = time_acf(history, grid_step)
        line, tau = summary(name, history, lags, acf, buffer.recent_acceptance())
        energies.append(energy_columns(history))
        acfs.append({"lag": lags, "acf": acf})
        lines.append(line)
        taus.append(tau)
    if all(np.isfinite(taus)):
        lines.append(f"autocorrelation-time ratio {names[1]} / {names[0]}: {taus[1] / taus[0]:.3g}× "
                     f"(above 1: {names[0]} mixes faster per compute second)")
    return ComparisonState(energy=tuple(energies), acf=tuple(acfs), lines=tuple(lines))
