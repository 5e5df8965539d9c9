"""The claims record can be judged again from its numbers, and the vocabulary separates demonstrated from consistent.

Every column verdict of ``assets/paper_claims.json`` is derived from judgements
stored with their numbers at full precision (per-seed ratios, a table's means
and sds, per-seed flags); these tests derive every verdict again from the
record alone, and show that the derivation notices a changed number.
"""

from __future__ import annotations

import copy
import json
import math

import pytest

from benchmarks.claims.claim import Claim, Evidence, judge_again
from engine.presets import CLAIMS_RECORD
from samplers.diagnostics.verdicts import (DIRECTION, INCONCLUSIVE, MIN_SEEDS, NOT_REPRODUCED, REPRODUCED, VERDICTS,
                                           WEAKER, Always, Judgement, Much, Ratio, RatioEvidence, Significant,
                                           SummaryRatio, judgement_from_dict, ratio_evidence)

#: The columns a row may have, by record key.
COLUMNS = ("papers_number", "authors", "ours")


def evidence(low: float, high: float) -> RatioEvidence:
    """Decisive evidence with the interval [low, high] (five seeds)."""
    return RatioEvidence((1.0,) * MIN_SEEDS, math.sqrt(low * high), low, high)


# -- the vocabulary ------------------------------------------------------------------------------------------
def test_reproduced_needs_the_claimed_size_demonstrated_not_only_within_reach():
    tenfold = Ratio(10.0)  # reach 8
    assert tenfold.judge(evidence(8.0, 12.0)) == REPRODUCED
    assert tenfold.judge(evidence(5.2, 8.1)) == DIRECTION  # OPAD Fig. 4(a)'s 6.47: consistent, not demonstrated
    assert tenfold.judge(evidence(1.01, 7.99)) == WEAKER
    assert tenfold.judge(evidence(0.9, 20.0)) == INCONCLUSIVE
    assert tenfold.judge(evidence(0.2, 0.99)) == NOT_REPRODUCED
    much = Much()  # 1.5, reach 1.2: the Table 2 caption's old 1.26 [1.21, 1.32] is demonstrated, [1.19, 1.32] not
    assert much.judge(evidence(1.21, 1.32)) == REPRODUCED and much.judge(evidence(1.19, 1.32)) == DIRECTION
    assert Ratio(1.0).judge(evidence(1.001, 1.1)) == REPRODUCED  # a direction with no size: lo > 1 demonstrates it
    assert VERDICTS.index(REPRODUCED) < VERDICTS.index(DIRECTION) < VERDICTS.index(WEAKER) < VERDICTS.index(
        INCONCLUSIVE) < VERDICTS.index(NOT_REPRODUCED)
    assert "lo ≥ 8" in tenfold.rule() and "direction reproduced, size not shown if 1 < lo < 8 ≤ hi" in tenfold.rule()


def test_a_significance_claim_is_a_direction_against_each_comparator():
    significant = Significant(against="each other function")
    assert significant.judge(evidence(1.01, 1.02)) == REPRODUCED
    assert significant.judge(evidence(0.95, 3.0)) == INCONCLUSIVE
    assert "significance against each other function" in significant.rule()


def test_a_papers_table_is_judged_from_its_means_and_sds_over_its_chains():
    # LSB Table 2, case 2: LSB2 2.30 ± 0.29 against t/(1+t) 3.30 ± 0.36 over 30 chains.
    table = SummaryRatio((2.30, 0.29), (3.30, 0.36), 30)
    assert table.centre == pytest.approx(2.30 / 3.30)
    error = math.sqrt((0.29 / 2.30) ** 2 / 30 + (0.36 / 3.30) ** 2 / 30)
    assert table.low == pytest.approx(table.centre * math.exp(-2.0 * error), rel=0.01)  # t ≈ 2 at ~57 dof
    assert Ratio(1.0).judge(table) == NOT_REPRODUCED
    assert Ratio(1.0).judge(SummaryRatio((2.44, 0.96), (2.39, 0.98), 30)) == INCONCLUSIVE  # case 3
    assert not SummaryRatio((2.0, 0.1), (1.0, 0.1), MIN_SEEDS - 1).decisive


def test_an_interval_end_is_never_printed_as_one_when_it_is_not():
    assert "1.0003]" in str(RatioEvidence((1.0,) * 5, 0.892, 0.796, 1.0003))
    assert "[0.9997," in str(RatioEvidence((1.0,) * 5, 1.1, 0.9997, 1.3))
    assert "[2.43·10^-4, 0.001]" in str(RatioEvidence((1.0,) * 5, 5e-4, 2.43e-4, 1e-3))  # other notations pass


# -- the row's verdict -----------------------------------------------------------------------------------------
def _claim(**fields) -> Claim:
    base = dict(paper="LSB", where="§5.1", quote="q", claim="c", axis="a", rule="r", papers_number="n",
                authors=Evidence("their code"), ours=Evidence.judging("ours", Ratio(1.0), evidence(1.2, 1.5)),
                fair="—")
    return Claim(**(base | fields))


def test_the_weakest_column_wins_always_and_a_stand_in_only_caps():
    assert _claim().verdict == REPRODUCED
    contradicted = Evidence.judging("table", Ratio(1.0), SummaryRatio((2.3, 0.29), (3.3, 0.36), 30))
    assert _claim(papers=contradicted).verdict == NOT_REPRODUCED  # the paper's own table contradicts its sentence
    assert _claim(stand_in="another model").verdict == INCONCLUSIVE  # capped: never reproduced on a stand-in
    worse = Evidence.judging("theirs", Ratio(1.0), evidence(0.5, 0.9))
    assert _claim(stand_in="another model", authors=worse).verdict == NOT_REPRODUCED  # never lifted
    assert _claim(stand_in="x", equivalent="the same model").verdict == REPRODUCED
    assert "ours: reproduced on a stand-in" in _claim(stand_in="another model").verdict_text
    assert Evidence.not_measured("a run failed").verdict == INCONCLUSIVE and Evidence("none").verdict is None


def test_a_row_is_judged_again_from_its_numbers_and_a_changed_number_changes_the_verdict():
    flags = Judgement("every case", Always("it holds"), [True] * MIN_SEEDS)
    ratio = Judgement("LSB2 / √t", Ratio(2.0), ratio_evidence([2.1, 2.3, 2.2, 2.5, 2.4]))
    row = json.loads(json.dumps(_claim(ours=Evidence("ours", (flags, ratio))).row()))
    assert judge_again(row) == {"authors_verdict": None, "ours_verdict": REPRODUCED, "verdict": REPRODUCED}
    changed = copy.deepcopy(row)
    changed["judged"]["ours"]["judged"][1]["evidence"]["values"][0] = 0.3  # one seed now says otherwise
    assert judge_again(changed)["ours_verdict"] == INCONCLUSIVE
    changed = copy.deepcopy(row)
    changed["judged"]["ours"]["judged"][0]["evidence"]["values"][2] = 0.0  # one seed without the property
    assert judge_again(changed)["ours_verdict"] == NOT_REPRODUCED


# -- the record --------------------------------------------------------------------------------------------------
def _recorded_rows() -> list[dict]:
    return json.loads(CLAIMS_RECORD.read_text(encoding="utf-8"))["claims"]


def test_every_recorded_verdict_is_derived_again_from_the_stored_numbers():
    rows = _recorded_rows()
    assert len(rows) >= 45
    for row in rows:
        assert judge_again(row) == {key: row[key] for key in judge_again(row)}, row["where"]
        for key in COLUMNS:
            stored = row["judged"].get(key)
            if row.get(f"{key}_verdict") is not None:  # a verdict rests on numbers or on what is missing
                assert stored and (stored["judged"] or stored["missing"]), (row["where"], key)
            for judgement in (stored or {}).get("judged", []):
                assert judgement_from_dict(judgement).verdict == judgement["verdict"], (row["where"], key)


def test_the_records_numbers_are_numbers():
    for row in _recorded_rows():
        for stored in row["judged"].values():
            for judgement in stored["judged"]:
                found = judgement["evidence"]
                values = found.get("values", []) + found.get("a", []) + found.get("b", [])
                assert all(isinstance(v, (int, float)) or v in ("NaN", "∞", "−∞") for v in values), row["where"]
