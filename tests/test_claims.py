"""The audit of the papers' claims: the verdict rule, the intracluster acceptance check, the benchmark end to end."""

from __future__ import annotations

import json
from types import SimpleNamespace

import numpy as np
import pytest

import targets
from benchmarks import paper_claims
from benchmarks.claims import VERDICTS, judge, verdict
from benchmarks.claims_intracluster import exact_acceptance, measured_acceptance, stationary_states
from benchmarks.lsb_reference import available
from samplers.convergence import Interval, interval


def test_the_verdict_follows_both_accountings():
    assert verdict(True, True) == "reproduced"
    assert verdict(True, False) == "reproduced only under the paper's accounting"
    assert verdict(False, True) == verdict(False, None) == "not reproduced"
    assert verdict(None, True) == verdict(True, None) == "inconclusive"
    assert set(VERDICTS) == {verdict(a, b) for a in (True, False, None) for b in (True, False, None)}


def test_a_speedup_is_judged_from_its_interval():
    assert judge(Interval(1.97, 1.91, 2.03, 5), claimed=2.0) is True
    assert judge(Interval(1.0, 0.97, 1.03, 5), claimed=2.0) is False  # level: the claimed 2× is excluded
    assert judge(Interval(1.0, 0.5, 2.5, 5), claimed=2.0) is None
    assert judge(Interval(0.3, -0.1, 0.7, 5)) is False and judge(Interval(1.5, 0.4, 2.6, 3)) is None
    assert judge(interval([])) is None


def test_the_sampler_accepts_intracluster_moves_at_the_exact_kernels_rate():
    """From π_n, the sampler's acceptance is E_π[acceptance] of the enumerated kernel (Eq. 6, every walk)."""
    target = targets.make("ising_lattice", size=4, beta=1 / 2.27)
    drawn = stationary_states(target, 8, 300, np.random.default_rng(1))
    for k, gamma in ((1, 1.0), (2, 0.5)):
        exact = interval(exact_acceptance(target, 8, k, gamma, drawn[:120]))
        sampled = interval(measured_acceptance(target, 8, k, gamma, False, 30, chains=300, init=drawn, settle=0))
        assert abs(exact.mean - sampled.mean) < 2 * ((exact.high - exact.mean) + (sampled.high - sampled.mean))


def test_paper_claims_write_a_verdict_table_its_record_and_the_investigation(tmp_path, monkeypatch, capsys):
    from benchmarks import lsb_reference

    monkeypatch.setattr(lsb_reference, "REFERENCE_DIR", tmp_path / "absent")  # the benchmark runs without it
    argv = ["--seeds", "2", "--iterations", "40", "--sampling-iterations", "200", "--chains", "4",
            "--reference-steps", "2000", "--authors-seeds", "1", "--models-iterations", "30", "--im-scale", "0.03",
            "--im-trials", "2", "--im-moves", "15", "--im-acceptance-moves", "3", "--opad-chains", "2",
            "--opad-steps", "200", "--opad-long-steps", "400", "--results", str(tmp_path)]
    paper_claims.main(argv + ["--workers", "2"])
    text = (tmp_path / "paper_claims.md").read_text()
    record = json.loads((tmp_path / "paper_claims.json").read_text())
    rows = record["claims"]
    assert [row["where"] for row in rows] == [
        "Fig. 2, case 3", "Table 2, case 4", "Fig. 4 (RBM)", "Fig. 5 (Markov network)", "Table 3 (Markov networks)",
        "Fig. 2 (ferromagnet)",
        "Fig. 3 (spin glass)", "Fig. 4 (Gabor RBM)", *(f"Fig. {k}, {title}" for k, title in (
            (1, "1-D Ising chain, m = 15"), (2, "Bayesian variable selection, synthetic m = 20, n = 200"),
            (3, "DAGs on 5 nodes, ER(5, 2)"), (4, "DAGs on 5 nodes, ER(5, 2)")))]
    assert all(row["verdict"] in VERDICTS for row in rows)
    assert record["settings"]["im_moves"] == 15 and record["commit"]
    assert "| paper | where | claim | paper's number |" in text
    assert "why the paper's settings accept almost nothing" in text and "| k | γ | exact | sampler |" in text
    assert "Equilibrium reference (mean spin):" in text and text.count("The authors' code was not run") == 2
    assert (tmp_path / "paper_claims.html").stat().st_size > 10_000
    out, err = capsys.readouterr()
    # our runs: Fig. 2 (2 references + 2 × 2 seeds × 2), Table 2 (2), Fig. 4 and 5 (2 × 2 each and a reference),
    # Table 3 (3 networks × 2 × 2), the intracluster trials (3 × 2) and the OPAD runs (2 + 1 + 1 + 1)
    runs = (2 + 8) + 2 + (4 + 4 + 1) + 12 + 6 + 5
    assert "written:" in out and f"{runs} runs computed, 0 already stored, 0 failed" in err
    paper_claims.main(argv + ["--workers", "0"])  # the stored runs give the same verdicts
    assert f"0 runs computed, {runs} already stored" in capsys.readouterr().err
    assert [row["verdict"] for row in json.loads((tmp_path / "paper_claims.json").read_text())["claims"]] == [
        row["verdict"] for row in rows]


def test_paper_claims_refuse_an_unknown_paper():
    with pytest.raises(SystemExit, match="unknown paper"):
        paper_claims.main(["--papers", "lsb,zanella"])


@pytest.mark.skipif(not available(), reason="the LSB authors' code is not in ../shared/reference/lsb")
def test_the_authors_code_runs_their_fig_2_schedule():
    from benchmarks.claims_lsb import _authors_figure_2

    lines, ratios = _authors_figure_2(SimpleNamespace(authors_seeds=1, iterations=6, chains=3))
    assert set(ratios) == {"iterations", "moves"} and "#### The authors' code" in lines[0]


def _record(tmp_path, rows):
    path = tmp_path / "claims.json"
    path.write_text(json.dumps({"settings": {"seeds": 5}, "commit": "abc1234", "measured": "2026-11-24T07:00:00",
                                "claims": rows}), encoding="utf-8")
    return path


def test_the_claims_card_shows_the_recorded_verdicts_escaped_and_coloured(tmp_path):
    import panel as pn

    from dashboard.claims import COLOURS, ClaimsCard

    rows = [{"paper": "LSB", "where": "Fig. 2", "claim": "LSB2 <b>twice</b> as fast", "papers_number": "2×",
             "ours_papers_axis": "1.97", "ours_fair": "moves 1.0", "verdict": "reproduced only under the paper's "
             "accounting", "reason": "two moves per iteration"},
            {"paper": "OPAD", "where": "Fig. 1", "claim": "KL / 10", "papers_number": "10×", "ours_papers_axis": "41",
             "ours_fair": "5.3", "verdict": "not reproduced", "reason": ""}]
    panes = pn.panel(ClaimsCard(path=_record(tmp_path, rows))).select(pn.pane.HTML)
    table = next(pane.object for pane in panes if "<table" in (pane.object or ""))
    assert table.count("<tr>") == 3 and "&lt;b&gt;twice&lt;/b&gt;" in table and "<b>twice" not in table
    assert COLOURS["not reproduced"] in table and COLOURS["reproduced only under the paper's accounting"] in table
    text = " ".join(str(pane.object) for pane in pn.panel(ClaimsCard(path=_record(tmp_path, rows))).select(
        pn.pane.Markdown))
    assert "abc1234" in text and "2026-11-24" in text and "--record 1" in text


def test_the_claims_card_says_how_to_make_a_record_when_there_is_none(tmp_path):
    import panel as pn

    from dashboard.claims import ClaimsCard

    for path in (tmp_path / "absent.json", _record(tmp_path, None).with_name("broken.json")):
        if path.name == "broken.json":
            path.write_text("{not json", encoding="utf-8")
        alerts = pn.panel(ClaimsCard(path=path)).select(pn.pane.Alert)
        assert alerts and "python -m benchmarks paper_claims --record 1" in alerts[0].object


def test_the_recorded_audit_in_assets_is_complete():
    from dashboard.claims import COLUMNS, RECORD

    record = json.loads(RECORD.read_text(encoding="utf-8"))
    assert record["commit"] and record["measured"] and record["settings"]["papers"] == "lsb,intracluster,opad"
    assert len(record["claims"]) >= 12
    assert all(set(COLUMNS) <= set(row) and row["verdict"] in VERDICTS for row in record["claims"])
