"""One verdict vocabulary for claims about samplers, with strict rules over independent seeds.

A claim such as "LSB2 converges twice as fast as √t" is a claimed ratio r of
two samplers' costs (or benefits), oriented so that r > 1 favours the claim.
Each independent seed (a separate run: its own target draw, starts and random
stream — never the chains of one run, which share a learned function or a
target) gives one measured ratio ρ_s. The evidence is the geometric mean of
the ρ_s with a 95 % Student-t interval on log ρ (a ratio lives on a log scale:
2× and 1/2× are equally far from 1, and the interval never crosses 0):

    [lo, hi] = exp( mean(log ρ) ∓ t_{0.975, n−1} · sd(log ρ) / √n ).

The evidence is *decisive* only with at least ``MIN_SEEDS`` seeds, every ρ_s
finite and positive. A seed whose run never reached the criterion is counted
at the run's length (``censored``), never dropped; a seed where neither run
reached it gives no ratio (two lengths are no measurement: ``censored_ratios``),
and a seed that cannot give a ratio (0/0, 0, ∞, NaN) makes the evidence not
decisive rather than being left out.

The verdicts, strongest first (``VERDICTS``), for a claimed ratio r
(``Ratio``):

* *not reproduced*: hi ≤ 1 — no effect, or the reverse;
* *inconclusive*: lo ≤ 1 < hi, or the evidence is not decisive;
* *weaker than claimed*: lo > 1 and hi < r / ``SHORTFALL`` — an effect in the
  claimed direction, clearly smaller than the paper says;
* *reproduced*: lo > 1 and hi ≥ r / ``SHORTFALL`` — the effect is there and
  the claimed size is within the data's reach.

A claim with no number but a strong word ("much fewer", "markedly faster":
``Much``) is read as the claimed ratio ``MUCH`` and judged by the same rule, so
it is never held to more than a claim that names a larger number; "faster",
"outperforms" with no size is ``Ratio(1)``. Claims
of another shape get their own written criterion: ``Similar`` (within a
factor), ``NotWorse`` (stable or improving) and ``Always`` (a property every
seed must show). Every criterion says its rule in words (``rule``), printed
next to the claim.

Several verdicts on one claim combine to the weakest (``weakest``): a claim
made "consistently" must hold at every checkpoint, and a claim the authors'
own code contradicts can never read *reproduced*.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass

import numpy as np
from scipy import stats

#: The verdicts, strongest first.
VERDICTS = ("reproduced", "weaker than claimed", "inconclusive", "not reproduced")
REPRODUCED, WEAKER, INCONCLUSIVE, NOT_REPRODUCED = VERDICTS
#: Independent seeds a decisive interval needs at least.
MIN_SEEDS = 5
#: A claimed size r is within the data's reach when hi ≥ r / SHORTFALL.
SHORTFALL = 1.25
#: The lower end a claim with no number but a strong word ("much", "markedly") needs.
MUCH = 1.5
#: Confidence level of every interval.
LEVEL = 0.95


@dataclass(frozen=True)
class RatioEvidence:
    """Per-seed ratios ρ_s (> 1 favours the claim), their geometric mean and the 95 % interval on log ρ.

    ``centre``, ``low`` and ``high`` are NaN when the evidence is not decisive (fewer than ``MIN_SEEDS`` seeds, or a
    ratio that is not finite and positive).
    """

    values: tuple[float, ...]
    centre: float
    low: float
    high: float

    @property
    def n(self) -> int:
        return len(self.values)

    @property
    def decisive(self) -> bool:
        return self.n >= MIN_SEEDS and all(math.isfinite(v) and v > 0 for v in self.values)

    def __str__(self) -> str:
        if self.decisive:
            return f"{_number(self.centre)} [{_number(self.low)}, {_number(self.high)}] ({self.n} seeds)"
        shown = ", ".join(_number(v) for v in self.values) or "no seed"
        why = (f"{self.n} of the {MIN_SEEDS} seeds needed" if self.n < MIN_SEEDS
               else "a seed gave no finite, positive ratio")
        return f"not decisive ({why}: {shown})"

    def as_dict(self) -> dict:
        """The record's form: the per-seed ratios and the interval (None where not decisive)."""
        finite = self.decisive
        return {"values": [_json_number(v) for v in self.values], "centre": self.centre if finite else None,
                "low": self.low if finite else None, "high": self.high if finite else None}


def ratio_evidence(ratios, level: float = LEVEL) -> RatioEvidence:
    """The evidence of per-seed ratios (one per independent seed; NaN and ∞ are kept and make it not decisive)."""
    values = tuple(float(v) for v in np.ravel(np.asarray(ratios, dtype=float)))
    if len(values) < MIN_SEEDS or not all(math.isfinite(v) and v > 0 for v in values):
        return RatioEvidence(values, math.nan, math.nan, math.nan)
    logs = np.log(values)
    mean, spread = float(logs.mean()), float(logs.std(ddof=1))
    half = float(stats.t.ppf(0.5 + level / 2, len(values) - 1)) * spread / math.sqrt(len(values))
    return RatioEvidence(values, math.exp(mean), math.exp(mean - half), math.exp(mean + half))


def censored(values, length) -> np.ndarray:
    """Times to a criterion with each run that never reached it (NaN or ∞) counted at the run's ``length`` (one
    length, or one per value)."""
    values = np.asarray(values, dtype=float)
    return np.where(np.isfinite(values), values, np.broadcast_to(np.asarray(length, dtype=float), values.shape))


def paired_ratios(numerators, denominators) -> np.ndarray:
    """Per seed numerator / denominator (a zero denominator gives ∞ or NaN, which ``ratio_evidence`` keeps)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.asarray(numerators, dtype=float) / np.asarray(denominators, dtype=float)


def censored_ratios(numerators, denominators, numerators_reached, denominators_reached) -> np.ndarray:
    """Per seed numerator / denominator of two censored times (``censored``), NaN where neither run reached the
    criterion: the two runs' lengths are then all that was measured, and their ratio says nothing of the claim."""
    ratios = paired_ratios(numerators, denominators)
    neither = ~np.asarray(numerators_reached, dtype=bool) & ~np.asarray(denominators_reached, dtype=bool)
    return np.where(neither, np.nan, ratios)


def _without_effect(evidence: RatioEvidence) -> str | None:
    """The verdict of evidence that shows no effect in the claimed direction — inconclusive when not decisive or
    lo ≤ 1 < hi, not reproduced when hi ≤ 1 — and None when it does (lo > 1): then the claim's size decides."""
    if not evidence.decisive or evidence.low <= 1 < evidence.high:
        return INCONCLUSIVE
    return NOT_REPRODUCED if evidence.high <= 1 else None


class Criterion(ABC):
    """How a claim of one shape is judged from its evidence, and that rule in words."""

    @abstractmethod
    def judge(self, evidence) -> str:
        """One of ``VERDICTS``."""

    @abstractmethod
    def rule(self) -> str:
        """The criterion in words, printed next to the claim."""


@dataclass(frozen=True)
class Ratio(Criterion):
    """A claimed ratio ``claimed`` (1: a direction with no size, "faster", "outperforms")."""

    claimed: float = 1.0

    def judge(self, evidence: RatioEvidence) -> str:
        return _without_effect(evidence) or (REPRODUCED if evidence.high >= self.claimed / SHORTFALL else WEAKER)

    def rule(self) -> str:
        seeds = f"95 % interval [lo, hi] of the ratio over ≥ {MIN_SEEDS} seeds (> 1 favours the claim)"
        if self.claimed / SHORTFALL <= 1:
            return f"{seeds}: reproduced if lo > 1; inconclusive if lo ≤ 1 < hi; not reproduced if hi ≤ 1"
        reach = _number(self.claimed / SHORTFALL)
        return (f"claimed {_number(self.claimed)}×; {seeds}: reproduced if lo > 1 and hi ≥ {reach} (the claim / "
                f"{SHORTFALL:g}); weaker than claimed if lo > 1 and hi < {reach}; inconclusive if lo ≤ 1 < hi; not "
                "reproduced if hi ≤ 1")


@dataclass(frozen=True)
class Much(Ratio):
    """A claim with no number but a strong word ("much fewer", "markedly faster"): the claimed ratio ``MUCH``."""

    claimed: float = MUCH

    def rule(self) -> str:
        return f"no number, a strong word, read as {_number(self.claimed)}×: " + super().rule()


@dataclass(frozen=True)
class Similar(Criterion):
    """A claim of similar size: the ratio's interval within [1/``factor``, ``factor``]."""

    factor: float = 2.0

    def judge(self, evidence: RatioEvidence) -> str:
        if not evidence.decisive:
            return INCONCLUSIVE
        if evidence.high < 1 / self.factor or evidence.low > self.factor:
            return NOT_REPRODUCED
        inside = 1 / self.factor <= evidence.low and evidence.high <= self.factor
        return REPRODUCED if inside else INCONCLUSIVE

    def rule(self) -> str:
        f = _number(self.factor)
        return (f"similar: 95 % interval over ≥ {MIN_SEEDS} seeds inside [1/{f}, {f}] to reproduce; wholly outside it: "
                "not reproduced; otherwise inconclusive")


@dataclass(frozen=True)
class NotWorse(Criterion):
    """A claim that something is not worse — stays stable, improves, "performs well" — judged on a ratio
    (``ratio`` says which, in words; > 1 better) that must not fall below 1/``tolerance``."""

    tolerance: float = SHORTFALL
    ratio: str = "later / earlier"

    def judge(self, evidence: RatioEvidence) -> str:
        if not evidence.decisive:
            return INCONCLUSIVE
        if evidence.high < 1 / self.tolerance:
            return NOT_REPRODUCED
        return REPRODUCED if evidence.low >= 1 / self.tolerance else INCONCLUSIVE

    def rule(self) -> str:
        bound = _number(1 / self.tolerance)
        return (f"not worse: ratio {self.ratio}, 95 % interval over ≥ {MIN_SEEDS} seeds; reproduced if lo ≥ {bound}; "
                f"not reproduced if hi < {bound}; otherwise inconclusive")


@dataclass(frozen=True)
class Always(Criterion):
    """A property every independent seed must show (``what`` says which, in words)."""

    what: str

    def judge(self, evidence) -> str:
        """``evidence``: per seed, whether it showed the property (NaN: it could not be told)."""
        known = [bool(v) for v in evidence if not math.isnan(float(v))]
        if not all(known):
            return NOT_REPRODUCED
        return REPRODUCED if len(known) == len(evidence) >= MIN_SEEDS else INCONCLUSIVE

    def rule(self) -> str:
        return (f"always: {self.what} in every one of ≥ {MIN_SEEDS} seeds to reproduce; not reproduced if any seed "
                "fails; inconclusive with fewer seeds, or a seed where it could not be told")


def weakest(*verdicts: str) -> str:
    """The weakest of ``verdicts`` (order ``VERDICTS``); inconclusive when there is none."""
    if not verdicts:
        return INCONCLUSIVE
    unknown = set(verdicts) - set(VERDICTS)
    if unknown:
        raise ValueError(f"not a verdict: {sorted(unknown)}; verdicts are {VERDICTS}")
    return max(verdicts, key=VERDICTS.index)


def _number(value: float) -> str:
    """A ratio for a sentence: 3 significant figures, ∞ and NaN by name, never "e+" notation below 10⁶."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "∞" if value > 0 else "−∞"
    if value != 0 and (abs(value) >= 1e6 or abs(value) < 1e-3):
        exponent = math.floor(math.log10(abs(value)))
        return f"{value / 10 ** exponent:.3g}·10^{exponent}"
    return f"{value:.3g}" if abs(value) < 1000 else f"{value:,.0f}"


def _json_number(value: float):
    """A float for JSON (which has no NaN or ∞): the float, or its name."""
    return value if math.isfinite(value) else _number(value)
