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
(``Ratio``), with the reach r / ``SHORTFALL``:

* *not reproduced*: hi ≤ 1 — no effect, or the reverse;
* *inconclusive*: lo ≤ 1 < hi, or the evidence is not decisive;
* *weaker than claimed*: lo > 1 and hi < r / ``SHORTFALL`` — an effect in the
  claimed direction, clearly smaller than the paper says;
* *direction reproduced, size not shown*: lo > 1 and lo < r / ``SHORTFALL`` ≤
  hi — the effect is there and the claimed size is consistent with the data,
  but not demonstrated by it;
* *reproduced*: lo ≥ r / ``SHORTFALL`` (and lo > 1) — the claimed size, give or
  take ``SHORTFALL``, is demonstrated.

A claim with no number but a strong word ("much fewer", "markedly faster":
``Much``) is read as the claimed ratio ``MUCH`` and judged by the same rule, so
it is never held to more than a claim that names a larger number; "faster",
"outperforms" with no size is ``Ratio(1)``. A claim of significance
("significantly worse in statistical terms than the other functions":
``Significant``) is a direction claimed against each comparator the sentence
names, each judged as ``Ratio(1)``, the weakest deciding. Claims
of another shape get their own written criterion: ``Similar`` (within a
factor), ``NotWorse`` (stable or improving) and ``Always`` (a property every
seed must show). Every criterion says its rule in words (``rule``), printed
next to the claim, and is stored with its evidence's numbers (``Judgement``:
``as_dict`` / ``judgement_from_dict``) so that a record can be judged again.

Where a paper gives its own numbers as a mean ± sd over the chains of one run
(LSB's Table 2), ``SummaryRatio`` is the ratio of two such means with its 95 %
interval (the delta method on log ρ, Welch's degrees of freedom): the paper's
own numbers judged by the same criterion as ours.

Several verdicts on one claim combine to the weakest (``weakest``): a claim
made "consistently" must hold at every checkpoint, and a claim the authors'
own code contradicts can never read *reproduced*.
"""

from __future__ import annotations

import dataclasses
import math
from abc import ABC, abstractmethod
from dataclasses import dataclass

import numpy as np
from scipy import stats

#: The verdicts, strongest first.
VERDICTS = ("reproduced", "direction reproduced, size not shown", "weaker than claimed", "inconclusive",
            "not reproduced")
REPRODUCED, DIRECTION, WEAKER, INCONCLUSIVE, NOT_REPRODUCED = VERDICTS
#: Independent seeds a decisive interval needs at least.
MIN_SEEDS = 5
#: A claimed size r is demonstrated when lo ≥ r / SHORTFALL, within the data's reach when hi ≥ r / SHORTFALL.
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
            return f"{_number(self.centre)} [{_bound(self.low)}, {_bound(self.high)}] ({self.n} seeds)"
        shown = ", ".join(_number(v) for v in self.values) or "no seed"
        why = (f"{self.n} of the {MIN_SEEDS} seeds needed" if self.n < MIN_SEEDS
               else "a seed gave no finite, positive ratio")
        return f"not decisive ({why}: {shown})"

    def as_dict(self) -> dict:
        """The record's form: the per-seed ratios and the interval (None where not decisive)."""
        finite = self.decisive
        return {"kind": "seeds", "values": [_json_number(v) for v in self.values],
                "centre": self.centre if finite else None, "low": self.low if finite else None,
                "high": self.high if finite else None}


@dataclass(frozen=True)
class SummaryRatio:
    """The ratio of two means a / b each given as mean ± sd over ``n`` chains of one run (a paper's table), with its
    95 % interval: log ρ ± t_{0.975, ν} · √(v_a + v_b), v = (sd / mean)² / n (the delta method), ν Welch's degrees
    of freedom. Decisive with at least ``MIN_SEEDS`` chains, as ``RatioEvidence`` with seeds."""

    a: tuple[float, float]
    b: tuple[float, float]
    n: int
    level: float = LEVEL

    @property
    def _spread(self) -> tuple[float, float]:
        (mean_a, sd_a), (mean_b, sd_b) = self.a, self.b
        v_a, v_b = (sd_a / mean_a) ** 2 / self.n, (sd_b / mean_b) ** 2 / self.n
        freedom = (v_a + v_b) ** 2 / ((v_a ** 2 + v_b ** 2) / (self.n - 1)) if v_a + v_b > 0 else math.inf
        return math.sqrt(v_a + v_b), float(stats.t.ppf(0.5 + self.level / 2, freedom))

    @property
    def decisive(self) -> bool:
        return self.n >= MIN_SEEDS and min(self.a[0], self.b[0]) > 0

    @property
    def centre(self) -> float:
        return self.a[0] / self.b[0]

    @property
    def low(self) -> float:
        error, t = self._spread
        return self.centre * math.exp(-t * error)

    @property
    def high(self) -> float:
        error, t = self._spread
        return self.centre * math.exp(t * error)

    def __str__(self) -> str:
        return f"{_number(self.centre)} [{_bound(self.low)}, {_bound(self.high)}] (mean ± sd over {self.n} chains)"

    def as_dict(self) -> dict:
        return {"kind": "summary", "a": list(self.a), "b": list(self.b), "n": self.n, "centre": self.centre,
                "low": self.low, "high": self.high}


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

    def as_dict(self) -> dict:
        """The record's form: the criterion's kind and its parameters (``criterion_from_dict`` reads it back)."""
        return {"kind": type(self).__name__, **dataclasses.asdict(self)}

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

    def judge(self, evidence: RatioEvidence | SummaryRatio) -> str:
        reach = self.claimed / SHORTFALL
        if found := _without_effect(evidence):
            return found
        if evidence.low >= reach:
            return REPRODUCED
        return DIRECTION if evidence.high >= reach else WEAKER

    def rule(self) -> str:
        seeds = f"95 % interval [lo, hi] of the ratio over ≥ {MIN_SEEDS} seeds (> 1 favours the claim)"
        if self.claimed / SHORTFALL <= 1:
            return f"{seeds}: reproduced if lo > 1; inconclusive if lo ≤ 1 < hi; not reproduced if hi ≤ 1"
        reach = _number(self.claimed / SHORTFALL)
        return (f"claimed {_number(self.claimed)}×; {seeds}: reproduced if lo ≥ {reach} (the claim / {SHORTFALL:g}: "
                f"the size demonstrated); direction reproduced, size not shown if 1 < lo < {reach} ≤ hi; weaker "
                f"than claimed if lo > 1 and hi < {reach}; inconclusive if lo ≤ 1 < hi; not reproduced if hi ≤ 1")


@dataclass(frozen=True)
class Much(Ratio):
    """A claim with no number but a strong word ("much fewer", "markedly faster"): the claimed ratio ``MUCH``."""

    claimed: float = MUCH

    def rule(self) -> str:
        return f"no number, a strong word, read as {_number(self.claimed)}×: " + super().rule()


@dataclass(frozen=True)
class Significant(Ratio):
    """A claim of significance against each comparator a sentence names ("significantly worse in statistical terms
    than the other functions"): each comparator's ratio judged as ``Ratio(1)``, the weakest deciding."""

    claimed: float = 1.0
    against: str = "each comparator"

    def rule(self) -> str:
        return (f"significance against {self.against}, the weakest deciding; per comparator: " + super().rule())


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
        evidence = list(evidence)
        known = [bool(v) for v in evidence if not math.isnan(float(v))]
        if not all(known):
            return NOT_REPRODUCED
        return REPRODUCED if len(known) == len(evidence) >= MIN_SEEDS else INCONCLUSIVE

    def rule(self) -> str:
        return (f"always: {self.what} in every one of ≥ {MIN_SEEDS} seeds to reproduce; not reproduced if any seed "
                "fails; inconclusive with fewer seeds, or a seed where it could not be told")


#: The criteria a record may name (``criterion_from_dict``).
CRITERIA = {kind.__name__: kind for kind in (Ratio, Much, Significant, Similar, NotWorse, Always)}


@dataclass(frozen=True)
class Judgement:
    """One criterion applied to one evidence (``label`` says to what: a case, a comparator, a checkpoint). A
    column's verdict is the weakest of its judgements; the record stores each with its numbers, so the verdict can
    be derived again from the record alone."""

    label: str
    criterion: Criterion
    evidence: object  # RatioEvidence, SummaryRatio, or per seed a flag (Always)

    @property
    def verdict(self) -> str:
        return self.criterion.judge(self.evidence)

    def as_dict(self) -> dict:
        evidence = (self.evidence.as_dict() if hasattr(self.evidence, "as_dict")
                    else {"kind": "flags", "values": [_json_number(float(v)) for v in self.evidence]})
        return {"label": self.label, "criterion": self.criterion.as_dict(), "evidence": evidence,
                "verdict": self.verdict}


def weakest_judgement(judged) -> Judgement:
    """The judgement that decides a column: the weakest verdict (``weakest``), and among those the smallest ratio's
    centre (flags and evidence that is not decisive count as the smallest)."""
    def centre(judgement: Judgement) -> float:
        value = getattr(judgement.evidence, "centre", math.nan)
        return value if math.isfinite(value) else -math.inf

    return max(judged, key=lambda judgement: (VERDICTS.index(judgement.verdict), -centre(judgement)))


def judgement_from_dict(record: dict) -> Judgement:
    """A stored ``Judgement`` read back: its criterion, and its evidence computed again from the stored inputs
    (per-seed ratios, a table's means and sds, per-seed flags), never from a stored interval."""
    fields = dict(record["criterion"])
    criterion = CRITERIA[fields.pop("kind")](**fields)
    evidence = record["evidence"]
    if evidence["kind"] == "seeds":
        found = ratio_evidence([_from_json_number(v) for v in evidence["values"]])
    elif evidence["kind"] == "summary":
        found = SummaryRatio(tuple(evidence["a"]), tuple(evidence["b"]), int(evidence["n"]))
    else:
        found = [_from_json_number(v) for v in evidence["values"]]
    return Judgement(record["label"], criterion, found)


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


def _bound(value: float) -> str:
    """An interval's end for a sentence: as ``_number``, with as many more digits as it takes not to read 1 when it
    is not 1 (0.9997 is below 1, and a verdict may hang on it)."""
    text = _number(value)
    digits = 4
    while math.isfinite(value) and value != 1 and text == "1" and digits <= 12:
        text, digits = f"{value:.{digits}g}", digits + 1
    return text


def _json_number(value: float):
    """A float for JSON (which has no NaN or ∞): the float, or its name."""
    return value if math.isfinite(value) else _number(value)


def _from_json_number(value) -> float:
    """``_json_number`` read back."""
    names = {"NaN": math.nan, "∞": math.inf, "−∞": -math.inf}
    return names[value] if isinstance(value, str) else float(value)
