"""The audit of the papers' claims: the verdict rules at their edges, the claim's row, the quick audit end to end,
the recorded audit held to the code and to the papers' words, and the dashboard's card."""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

import targets
from benchmarks.claims import paper_claims
from benchmarks.claims.claim import NO_AUTHORS_CODE, RECORD_COMMAND, Claim, Evidence, judge_again
from benchmarks.claims.intracluster import exact_acceptance, measured_acceptance, stationary_states
from samplers.diagnostics.convergence import interval
from samplers.diagnostics.verdicts import (DIRECTION, INCONCLUSIVE, MIN_SEEDS, NOT_REPRODUCED, REPRODUCED, VERDICTS,
                                           WEAKER, Always, Much, NotWorse, Ratio, RatioEvidence, Similar, censored,
                                           censored_ratios, paired_ratios, ratio_evidence, weakest)

PAPERS = Path(__file__).resolve().parents[2] / "shared" / "papers"
#: Every headline the audit must judge: (paper, text in its location, text in its claim).
HEADLINES = [
    *(("LSB", f"Figure 2, case {case}", "LSB2") for case in (1, 2, 3, 4)),
    *(("LSB", f"Table 2, case {case}", "LSB2") for case in (1, 2, 3, 4)),
    ("LSB", "Table 2 (caption)", "max{1,t}"), ("LSB", "Figure 2", "LSB1 always selects an unbounded"),
    ("LSB", "Fig. 4", "FLSB2 converges"), ("LSB", "Fig. 4", "FLSB1 performs like GWG"),
    ("LSB", "Fig. 4", "FLSB2's ESS is"), ("LSB", "Fig. 4", "FLSB2's ESS per second"),
    ("LSB", "Appendix F", "Gibbs-2 and HB-10-1"), ("LSB", "Fig. 5", "LSB"), ("LSB", "Table 3", "similar"),
    *(("Intracluster", f"Fig. {k}", "markedly faster") for k in (2, 3, 4)),
    ("Intracluster", "Fig. 3 (spin glass): the ensembles", "not converged"),
    ("Intracluster", "Fig. 4 (Gabor RBM): the ensembles", "not converged"),
    ("Intracluster", "Fig. 4 (Gabor RBM): the ACF", "to 0"),
    *(("OPAD", f"Fig. {panel}", "1/10–1/1000")
      for panel in ("1(a)", "1(b)", "2(a–b)", "3(a)", "3(b)", "3(c)", "4(a)", "4(b)", "4(c)")),
    ("OPAD", "Figs. 1–4", "OPAD+ consistently beats OPAD"), ("OPAD", "Figs. 1–4", "stable or grows"),
    ("OPAD", "§3.1", "no extra target evaluation"), ("OPAD", "§3.1", "no significant CPU time"),
    # the headlines a referee found missing
    ("LSB", "Abstract", "recent local samplers"), ("LSB", "Figure 3", "ground truth"),
    ("LSB", "Table 2, case 4", "LSB1 ends case 4's burn-in away from max{1,t}"), ("LSB", "§5.2 (RBM)", "overhead"),
    ("LSB", "Appendix F", "Gibbs-4"), ("Intracluster", "§5 (conclusion): outperforms", "significant margin"),
    ("Intracluster", "the trade-off", "IM function"), ("Intracluster", "the acceptance rates", "good acceptance rates"),
    ("OPAD", "Abstract", "consistently and often substantially"), ("OPAD", "Figs. 1(a)–(b)", "larger at 10⁶"),
    ("OPAD", "§5", "several orders of magnitude"), ("OPAD", "Inequalities (7) and (9)", "for every chain")]


def evidence(low: float, high: float) -> RatioEvidence:
    """Decisive evidence with the interval [low, high] (five seeds)."""
    return RatioEvidence((1.0,) * MIN_SEEDS, math.sqrt(low * high), low, high)


# -- the rules at their edges ------------------------------------------------------------------------------
def test_a_claimed_ratio_is_judged_by_the_five_rules_at_their_edges():
    twice = Ratio(2.0)  # reach: 2 / 1.25 = 1.6
    assert twice.judge(evidence(0.46, 0.53)) == NOT_REPRODUCED  # LSB Fig. 2 on evaluations, ours
    assert twice.judge(evidence(0.5, 1.0)) == NOT_REPRODUCED  # hi ≤ 1
    assert twice.judge(evidence(0.97, 1.82)) == INCONCLUSIVE  # the authors' code on iterations
    assert twice.judge(evidence(1.0, 3.0)) == INCONCLUSIVE  # lo ≤ 1 < hi
    assert twice.judge(evidence(1.1, 1.3)) == WEAKER  # an effect, clearly smaller than 2×
    assert twice.judge(evidence(1.1, 1.6 - 1e-9)) == WEAKER
    assert twice.judge(evidence(1.1, 1.6)) == DIRECTION  # the claimed size within reach, not demonstrated
    assert twice.judge(evidence(1.6 - 1e-9, 2.5)) == DIRECTION
    assert twice.judge(evidence(1.6, 2.5)) == REPRODUCED  # the claimed size demonstrated (give or take 1.25)
    assert twice.judge(evidence(1.81, 2.1)) == REPRODUCED
    assert Ratio(1.0).judge(evidence(1.01, 1.02)) == REPRODUCED  # a direction with no size: lo > 1 suffices


def test_evidence_that_is_not_decisive_is_inconclusive_whatever_it_shows():
    for values in ([1.5, np.inf, np.nan, 2.0, 2.0], [3.0, 3.1, 2.9, 3.0], [2.0, 2.0, 0.0, 2.0, 2.0], []):
        found = ratio_evidence(values)
        assert not found.decisive and math.isnan(found.low) and "not decisive" in str(found)
        for criterion in (Ratio(2.0), Ratio(1.0), Much(), Similar(), NotWorse()):
            assert criterion.judge(found) == INCONCLUSIVE
    assert "a seed gave no finite, positive ratio" in str(ratio_evidence([2.0, 2.0, 0.0, 2.0, 2.0]))  # 0 is finite
    assert "4 of the 5 seeds" in str(ratio_evidence([3.0, 3.1, 2.9, 3.0]))
    assert "∞" in str(ratio_evidence([1.5, np.inf, np.nan, 2.0, 2.0]))


def test_the_interval_is_a_t_interval_on_log_ratios():
    values = np.array([1.8, 2.1, 1.9, 2.4, 2.0])
    found = ratio_evidence(values)
    logs = np.log(values)
    half = 2.7764451051977987 * logs.std(ddof=1) / np.sqrt(5)  # t_{0.975, 4}
    assert found.centre == pytest.approx(np.exp(logs.mean()))
    assert (found.low, found.high) == pytest.approx((np.exp(logs.mean() - half), np.exp(logs.mean() + half)))
    inverse = ratio_evidence(1 / values)  # 2× and 1/2× are equally far from 1
    assert (inverse.low, inverse.high) == pytest.approx((1 / found.high, 1 / found.low))
    assert found.as_dict()["values"] == list(values) and json.dumps(ratio_evidence([1, np.inf]).as_dict())


def test_a_run_that_never_reaches_the_criterion_counts_at_its_length():
    times = censored([120.0, np.nan, np.inf, 80.0], length=2000.0)
    assert times.tolist() == [120.0, 2000.0, 2000.0, 80.0]
    assert paired_ratios(censored([np.nan] * 5, 2000.0), [1000.0] * 5).tolist() == [2.0] * 5
    assert censored([np.inf, 3.0], [10.0, 20.0]).tolist() == [10.0, 3.0]  # each run at its own length


def test_two_runs_that_never_reached_the_criterion_give_no_ratio():
    reached = np.array([True, False, True, False])
    ratios = censored_ratios([100.0, 2000.0, 2000.0, 2000.0], [50.0, 100.0, 2000.0, 2000.0],
                             reached, [True, True, False, False])
    assert ratios[:3].tolist() == [2.0, 20.0, 1.0] and math.isnan(ratios[3])  # not 2000 / 2000 = 1
    assert not ratio_evidence([2.0, 2.1, 1.9, 2.2, ratios[3]]).decisive
    assert math.isinf(paired_ratios([1.0], [0.0])[0]) and math.isnan(paired_ratios([0.0], [0.0])[0])


def test_a_claim_with_a_strong_word_and_no_number_is_a_claimed_ratio_of_one_and_a_half():
    much = Much()
    assert much.judge(evidence(1.05, 1.2)) == DIRECTION  # hi reaches 1.5 / 1.25, lo does not
    assert much.judge(evidence(1.2, 1.3)) == REPRODUCED  # lo does
    assert much.judge(evidence(1.05, 1.19)) == WEAKER
    assert much.judge(evidence(1.0, 9.0)) == INCONCLUSIVE
    assert much.judge(evidence(0.2, 1.0)) == NOT_REPRODUCED
    assert much.rule().startswith("no number, a strong word, read as 1.5×") and "lo ≥ 1.2" in much.rule()


def test_a_strong_word_is_never_held_to_more_than_a_claimed_number_above_it():
    ends = [0.5, 0.9, 1.01, 1.1, 1.3, 1.5, 1.7, 2.5, 4.0]
    for low in ends:
        for high in (h for h in ends if h > low):
            found = evidence(low, high)
            assert VERDICTS.index(Much().judge(found)) <= VERDICTS.index(Ratio(2.0).judge(found)), (low, high)


def test_similar_stable_and_always_have_their_written_criteria():
    similar = Similar(2.0)
    assert similar.judge(evidence(0.5, 2.0)) == REPRODUCED
    assert similar.judge(evidence(0.49, 1.2)) == INCONCLUSIVE
    assert similar.judge(evidence(2.01, 3.0)) == similar.judge(evidence(0.1, 0.49)) == NOT_REPRODUCED
    stable = NotWorse(1.25)
    assert stable.judge(evidence(0.8, 1.1)) == REPRODUCED and stable.judge(evidence(0.79, 1.1)) == INCONCLUSIVE
    assert stable.judge(evidence(0.3, 0.79)) == NOT_REPRODUCED
    always = Always("the learned weight ends on an unbounded function")
    assert always.judge([True] * 5) == REPRODUCED and always.judge([True] * 4) == INCONCLUSIVE
    assert always.judge([True, True, False, True, True]) == NOT_REPRODUCED and always.judge([]) == INCONCLUSIVE
    assert always.judge([True] * 5 + [math.nan]) == INCONCLUSIVE  # a seed that could not be told is no pass
    assert always.judge([True, False, math.nan, True, True]) == NOT_REPRODUCED
    for criterion in (Ratio(2.0), Ratio(1.0), Much(), similar, stable, always):
        assert "5 seeds" in criterion.rule()
    assert "1.6" in Ratio(2.0).rule() and "weaker than claimed" not in Ratio(1.0).rule()


def test_the_weakest_verdict_decides_and_only_verdicts_are_verdicts():
    assert weakest(REPRODUCED, WEAKER) == WEAKER and weakest(WEAKER, INCONCLUSIVE) == INCONCLUSIVE
    assert weakest(*VERDICTS) == NOT_REPRODUCED and weakest() == INCONCLUSIVE
    with pytest.raises(ValueError, match="not a verdict"):
        weakest(REPRODUCED, "reproduced only under the paper's accounting")


def _claim(**changes) -> Claim:
    fields = dict(paper="LSB", where="§5.1, Fig. 2", quote="LSB 2 converges twice time faster", claim="2× faster",
                  axis="target evaluations", rule=Ratio(2.0).rule(), papers_number="2×",
                  authors=judged("0.7 [0.5, 0.9]", 0.5, 0.9), ours=judged("1.2 [1.1, 1.3]", 1.1, 1.3),
                  fair="moves 1.0")
    return Claim(**(fields | changes))


def judged(text: str, low: float, high: float, claimed: float = 2.0) -> Evidence:
    """A column judged by ``Ratio(claimed)`` on evidence with the interval [low, high]."""
    return Evidence.judging(text, Ratio(claimed), evidence(low, high))


#: Ours with an interval that demonstrates a claimed 2×.
TWICE = judged("…", 1.9, 2.2)


def test_a_claim_the_authors_code_contradicts_never_reads_reproduced():
    claim = _claim()
    assert claim.verdict == NOT_REPRODUCED
    assert claim.verdict_text == "not reproduced (authors' code: not reproduced; ours: weaker than claimed)"
    assert _claim(authors=judged("0.9 [0.6, 1.4]", 0.6, 1.4), ours=TWICE).verdict == INCONCLUSIVE
    alone = _claim(authors=Evidence(NO_AUTHORS_CODE), ours=TWICE)
    assert alone.verdict == REPRODUCED and alone.verdict_text == "reproduced (ours: reproduced)"
    stand_in = _claim(authors=Evidence(NO_AUTHORS_CODE), ours=TWICE, stand_in="a 64×16 RBM")
    assert stand_in.verdict == INCONCLUSIVE and "on a stand-in" in stand_in.verdict_text
    assert "caps the row at inconclusive" in stand_in.verdict_text
    assert _claim(stand_in="x", equivalent="the same model", ours=TWICE,
                  authors=Evidence(NO_AUTHORS_CODE)).verdict == REPRODUCED
    assert set(claim.row()) >= {"quote", "where", "axis", "rule", "authors_verdict", "ours_verdict", "verdict",
                                "judged"}
    with pytest.raises(TypeError, match="derived from judgements"):
        Evidence("1.97", "reproduced only under the paper's accounting")


# -- the audit end to end, quick ---------------------------------------------------------------------------
def test_the_quick_audit_runs_every_claim_end_to_end_and_resumes(tmp_path, capsys):
    argv = ["--quick", "1", "--results", str(tmp_path), "--record", "1"]
    paper_claims.main(argv + ["--workers", "2"])
    record = json.loads((tmp_path / "paper_claims.json").read_text())
    rows = record["claims"]
    assert record["settings"]["quick"] == 1 and "results" not in record["settings"]
    assert {row["module"]: row["sources"] for row in rows} == paper_claims.current_sources(record["settings"])
    assert_every_headline(rows)
    for row in rows:
        assert row["verdict"] in VERDICTS and row["ours_verdict"] in VERDICTS, row
        assert row["quote"] and row["where"] and row["axis"] and row["rule"], row
    text = (tmp_path / "paper_claims.md").read_text()
    assert "| paper | where | claim | axis | paper's number | authors' code | ours |" in text
    out, err = capsys.readouterr()
    assert "not recorded for the dashboard: a quick audit decides nothing" in err
    computed = int(re.search(r"(\d+) runs computed, 0 already stored, 0 failed", err).group(1))
    paper_claims.main(argv + ["--workers", "0"])  # the stored runs give the same verdicts
    assert f"0 runs computed, {computed} already stored" in capsys.readouterr().err
    again = json.loads((tmp_path / "paper_claims.json").read_text())["claims"]
    assert [row["verdict_text"] for row in again] == [row["verdict_text"] for row in rows]


def assert_every_headline(rows: list[dict]) -> None:
    for paper, where, claim in HEADLINES:
        assert any(row["paper"] == paper and where in row["where"] and claim in row["claim"] for row in rows), (
            f"{paper}, {where}: no row claims {claim!r}")


def test_paper_claims_refuse_an_unknown_paper():
    with pytest.raises(SystemExit, match="unknown paper"):
        paper_claims.main(["--papers", "lsb,zanella"])


# -- the recorded audit ------------------------------------------------------------------------------------
def _recorded() -> dict:
    from engine.presets import CLAIMS_RECORD

    return json.loads(CLAIMS_RECORD.read_text(encoding="utf-8"))


def test_the_recorded_audit_was_measured_on_the_code_as_it_is():
    record = _recorded()
    now = paper_claims.current_sources(record["settings"])
    stale = Counter(row.get("module", "(no module)") for row in record["claims"]
                    if "sources" not in row or row["sources"] != now.get(row.get("module")))
    assert not stale, ("claims whose sources changed since they were measured (or were recorded without their "
                       f"digest): {dict(stale)}; run `{RECORD_COMMAND}` (it measures only those again)")


def test_the_recorded_audit_is_complete_and_decided_by_the_rules():
    record = _recorded()
    assert record["settings"]["papers"] == "lsb,intracluster,opad" and not record["settings"]["quick"]
    assert record["settings"]["seeds"] >= MIN_SEEDS
    assert_every_headline(record["claims"])
    for row in record["claims"]:
        again = judge_again(row)  # from the stored numbers alone (tests/test_claims_record.py holds them to it)
        assert {key: row[key] for key in again} == again, row["where"]
        assert row["authors_verdict"] is not None or row["authors"], row


@pytest.mark.skipif(not PAPERS.is_dir(), reason="the papers are not in ../shared/papers")
def test_every_recorded_quote_is_the_papers_own_words():
    papers = {"LSB": "lsb-local-self-balancing.txt", "Intracluster": "intracluster-moves.txt",
              "OPAD": "opad-optimal-particle-approximation.txt"}
    texts = {paper: _words(_symbols((PAPERS / name).read_text(encoding="utf-8"))) for paper, name in papers.items()}
    for row in _recorded()["claims"]:
        for fragment in filter(None, (_words(part) for part in row["quote"].split("…"))):
            assert fragment in texts[row["paper"]], (row["where"], fragment)


#: The plain-text papers' renderings of their mathematics (glyphs, then the LaTeX) → the symbols quotes use.
MATH = {"t𝑡\\sqrt{t}": "√t", "max{1,t}1𝑡\\max\\{1,t\\}": "max{1,t}"}


def _symbols(text: str) -> str:
    for rendered, symbol in MATH.items():
        text = text.replace(rendered, symbol)
    return text


def test_every_recorded_replay_is_a_preset():
    from engine.presets import load_presets

    named = {row["replay"] for row in _recorded()["claims"] if row["replay"]}
    assert named and named <= set(load_presets())


def _words(text: str) -> str:
    """The text with its whitespace (line breaks of the plain-text papers) folded to single spaces."""
    return " ".join(text.split())


# -- the intracluster acceptance check ---------------------------------------------------------------------
def test_the_sampler_accepts_intracluster_moves_at_the_exact_kernels_rate():
    """From π_n, the sampler's acceptance is E_π[acceptance] of the enumerated kernel (Eq. 6, every walk)."""
    target = targets.make("ising_lattice", size=4, beta=1 / 2.27)
    drawn = stationary_states(target, 8, 300, np.random.default_rng(1))
    for k, gamma in ((1, 1.0), (2, 0.5)):
        exact = interval(exact_acceptance(target, 8, k, gamma, drawn[:120]))
        sampled = interval(measured_acceptance(target, 8, k, gamma, False, 30, chains=300, init=drawn, settle=0))
        assert abs(exact.mean - sampled.mean) < 2 * ((exact.high - exact.mean) + (sampled.high - sampled.mean))


# -- the dashboard's card ----------------------------------------------------------------------------------
def _record(tmp_path, rows, settings=None):
    path = tmp_path / "claims.json"
    path.write_text(json.dumps({"settings": {"seeds": 5} if settings is None else settings,
                                "digest": "0123456789abcdef", "commit": "abc1234",
                                "measured": "2026-11-24T07:00:00", "claims": rows}), encoding="utf-8")
    return path


def test_the_claims_card_shows_the_sentence_the_columns_and_the_verdicts_escaped_and_coloured(tmp_path):
    import panel as pn

    from dashboard.claims import COLOURS, ClaimsCard
    from engine.presets import load_presets

    preset = next(name for name in load_presets() if name.startswith("Segmentation case 3"))
    rows = [_claim(claim="LSB2 <b>twice</b> as fast", quote="![i](http://127.0.0.1:9/p.png)",
                   replay=preset).row(),
            _claim(authors=Evidence(NO_AUTHORS_CODE), ours=judged("41×", 40.0, 42.0, 41.0)).row()]
    card = pn.panel(ClaimsCard(path=_record(tmp_path, rows)))
    table = next(pane.object for pane in card.select(pn.pane.HTML) if "<table" in (pane.object or ""))
    assert table.count("<tr>") == 3 and "&lt;b&gt;twice&lt;/b&gt;" in table and "<b>twice" not in table
    assert "<img" not in table and "![i](http://127.0.0.1:9/p.png)" in table  # the quote shows as text
    assert COLOURS[NOT_REPRODUCED] in table and COLOURS[WEAKER] in table and COLOURS[REPRODUCED] in table
    assert "not reproduced (authors&#x27; code: not reproduced; ours: weaker than claimed)" in table
    assert table.count('href="?run=') == 1 and f"replay: {preset}" in table
    text = " ".join(str(pane.object) for pane in card.select(pn.pane.HTML) if "<table" not in (pane.object or ""))
    assert "digest of the sources" in text and "2026-11-24" in text and "--record 1" in text and "abc1234" not in text


def test_the_claims_cards_record_of_how_it_was_measured_is_text_and_a_malformed_one_is_said(tmp_path):
    import panel as pn

    from dashboard.claims import ClaimsCard

    rows = [_claim().row()]
    card = pn.panel(ClaimsCard(path=_record(tmp_path, rows, {"seeds": "[x](http://ev.il) <img src=//e.il>"})))
    text = " ".join(str(pane.object) for pane in card.select(pn.pane.HTML) if "<table" not in (pane.object or ""))
    assert "[x](http://ev.il) &lt;img src=//e.il&gt;" in text and "<img" not in text
    assert not card.select(pn.pane.Markdown)[1:]  # the intro is the only Markdown: no recorded text is read as it
    alerts = pn.panel(ClaimsCard(path=_record(tmp_path, rows, [1]))).select(pn.pane.Alert)
    assert alerts and RECORD_COMMAND in alerts[0].object  # settings that are no mapping: said, not raised


def test_the_claims_card_says_how_to_make_a_record_when_there_is_none(tmp_path):
    import panel as pn

    from dashboard.claims import ClaimsCard

    broken = tmp_path / "broken.json"
    broken.write_text("{not json", encoding="utf-8")
    for path in (tmp_path / "absent.json", broken):
        alerts = pn.panel(ClaimsCard(path=path)).select(pn.pane.Alert)
        assert alerts and RECORD_COMMAND in alerts[0].object
