"""The intracluster-moves paper's audit (``benchmarks.claims.intracluster``): its criteria on synthetic stored trials
(a chain that never mixes is censored at the window, never dropped; a chain that accepts no move gives no ratio, and
never reads as one; a failed trial makes the row inconclusive, never a crash), every verdict derived from judgements
that carry their numbers, the §5 claims' rules at their edges, its quotes held to the paper's words, its replays to
the presets."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from benchmarks.claims import intracluster as audit
from benchmarks.claims.claim import NO_AUTHORS_CODE
from benchmarks.papers.intracluster_paper import Trace, Trial, ferromagnet, spin_glass, summarise
from samplers.diagnostics.verdicts import INCONCLUSIVE, NOT_REPRODUCED, REPRODUCED, judgement_from_dict, weakest

from .stored import DictStore
from .test_claims import PAPERS, _words

SEEDS, IM_MOVES, KAWASAKI_MOVES, SECONDS = 5, 400, 4000, 1.0
#: Every chain of a trial starts from the same state, far above the typical energies (as the paper's uniform start).
START = 0.0
FIGURE_ROWS = ["§4, Fig. 2 (ferromagnet)", "§4, Fig. 3 (spin glass)", "§4, Fig. 3 (spin glass): the ensembles",
               "§4, Fig. 4 (Gabor RBM)", "§4, Fig. 4 (Gabor RBM): the ensembles", "§4, Fig. 4 (Gabor RBM): the ACF"]
MIXING_ROWS = FIGURE_ROWS[0], FIGURE_ROWS[1], FIGURE_ROWS[3]
TRADE_OFF, OUTPERFORMS, TUNED = ("§4, Fig. 3 (spin glass): the trade-off", "§5 (conclusion): outperforms",
                                 "§5 (conclusion): the acceptance rates")


def white(rng, moves: int, mean: float) -> np.ndarray:
    return mean + rng.normal(size=moves + 1)


def sluggish(rng, moves: int, mean: float, memory: float = 0.999) -> np.ndarray:
    """An AR(1) energy trace whose correlation lasts ~1/(1 − memory) moves."""
    noise = rng.normal(size=moves + 1) * np.sqrt(1 - memory**2)
    out = np.empty(moves + 1)
    out[0] = noise[0] / np.sqrt(1 - memory**2)
    for t in range(1, moves + 1):
        out[t] = memory * out[t - 1] + noise[t]
    return mean + out


def result(energies: list[np.ndarray]) -> dict:
    """A stored trial: each setting's energies after every move from the common ``START``, spread evenly over
    ``SECONDS`` of CPU time (a move is accepted when the energy changes)."""
    out = {"spec": "{}", "budget": SECONDS}
    for j, energy in enumerate(energies):
        energy, moves = np.concatenate([[START], energy[1:]]), len(energy) - 1
        out |= {f"times_{j}": np.linspace(0.0, SECONDS, moves + 1), f"energy_{j}": energy,
                f"acceptance_{j}": float(np.mean(np.diff(energy) != 0)),
                f"evaluations_{j}": np.arange(moves + 1) * (10 if j < 2 else 1)}  # IM: 10 per move, Kawasaki 1
    return out


ARGS = SimpleNamespace(im_scale=0.03, im_moves=IM_MOVES, seeds=SEEDS)


def store_of(*makers, skip: int = 0) -> DictStore:
    """Every trial of ``ARGS`` stored with ``maker(rng)`` (IM, IM at γ = 1/2, Kawasaki): one maker for every figure
    or one per figure; the last ``skip`` seeds of each figure failed."""
    rng = np.random.default_rng(0)
    return DictStore({trial.run_id: result(makers[index % len(makers)](rng))
                      for index, trials in enumerate(audit.figure_trials(ARGS))
                      for trial in trials[: len(trials) - skip]})


def im_mixes(rng):
    """IM: white noise low down; Kawasaki: a sluggish chain higher up — what the paper describes."""
    return [white(rng, IM_MOVES, -100.0), white(rng, IM_MOVES, -100.0), sluggish(rng, KAWASAKI_MOVES, -90.0)]


def im_stuck(rng):
    """IM never moves from its high start; Kawasaki, white noise, is far lower — what the paper's γ gives here."""
    return [np.full(IM_MOVES + 1, START), white(rng, IM_MOVES, -100.0), white(rng, KAWASAKI_MOVES, -100.0)]


def im_slow(rng):
    """IM sluggish, Kawasaki white noise, both in the same ensemble: Kawasaki gives the more independent samples."""
    return [sluggish(rng, IM_MOVES, -100.0, 0.99), white(rng, IM_MOVES, -100.0), white(rng, KAWASAKI_MOVES, -100.0)]


def with_acceptance(store: DictStore, rates: dict[int, float]) -> DictStore:
    """``store`` with IM's acceptance at the paper's settings set to ``rates[figure]`` in every trial."""
    for index, trials in enumerate(audit.figure_trials(ARGS)):
        for trial in trials:
            store.results[trial.run_id]["acceptance_0"] = rates.get(index, store.results[trial.run_id]["acceptance_0"])
    return store


def by_where(claims) -> dict:
    return {claim.where: claim for claim in claims}


def test_every_headline_is_audited_with_its_criterion_and_no_authors_code():
    claims = by_where(audit.claims(ARGS, store_of(im_mixes)))
    assert list(claims) == FIGURE_ROWS + [TRADE_OFF, OUTPERFORMS, TUNED]
    for claim in claims.values():
        assert claim.authors.text == NO_AUTHORS_CODE and claim.authors.verdict is None
        assert claim.rule and claim.reason and claim.ours.judged
    for where in FIGURE_ROWS + [TRADE_OFF]:  # one figure: its replay preset, and what that preset runs
        assert claims[where].replay and "the replay preset is a larger version" in claims[where].reason
    assert not claims[OUTPERFORMS].replay and not claims[TUNED].replay  # three figures: no one preset
    assert all("CPU" in claims[where].axis for where in FIGURE_ROWS + [OUTPERFORMS])
    assert "acceptance" in claims[TRADE_OFF].axis and claims[TRADE_OFF].rule == audit.GOOD_RATES.rule()
    for where in MIXING_ROWS:  # the strong word read as 1.5×: reproduced once lo ≥ 1.5 / 1.25, the criterion's rule
        assert audit.MIXING.rule() in claims[where].rule and "reproduced if lo ≥ 1.2 " in claims[where].rule
        assert audit.MOVES.rule() in claims[where].rule
    assert audit.OUTPERFORMS.rule() in claims[OUTPERFORMS].rule and "reproduced if lo > 1" in claims[OUTPERFORMS].rule


@pytest.mark.parametrize("maker", [im_mixes, im_stuck, im_slow])
def test_every_verdict_is_derived_from_judgements_that_the_record_can_judge_again(maker):
    for claim in audit.claims(ARGS, store_of(maker)):
        judged = claim.ours.judged
        assert claim.ours.verdict == weakest(*(judgement.verdict for judgement in judged))
        assert len({judgement.label for judgement in judged}) == len(judged)  # one label per axis and figure
        for judgement in judged:
            assert judgement_from_dict(judgement.as_dict()).verdict == judgement.verdict, (claim.where, judgement)


def test_the_claims_hold_on_data_that_shows_them_but_the_stand_in_keeps_the_rows_inconclusive():
    claims = audit.claims(ARGS, store_of(im_mixes))
    assert {claim.ours.verdict for claim in claims} == {REPRODUCED}
    assert all(claim.stand_in and claim.verdict == INCONCLUSIVE for claim in claims)  # --im-scale 0.03
    assert "5 of 5 seeds" in claims[0].ours.text and "per move" in claims[0].fair


def test_a_chain_that_never_moves_gives_no_ratio_and_the_claims_fail():
    claims = by_where(audit.claims(ARGS, store_of(im_stuck)))
    for where in MIXING_ROWS:
        claim = claims[where]
        assert claim.ours.verdict == NOT_REPRODUCED, claim.ours.text
        assert {judgement.label: judgement.verdict for judgement in claim.ours.judged} == {
            "τ_int(Kawasaki) / τ_int(IM), CPU seconds": INCONCLUSIVE, "IM moves": NOT_REPRODUCED}  # not the ratio
        assert "IM accepted 0%" in claim.reason  # computed from the stored numbers
        assert f"accepted none of its {SEEDS * IM_MOVES:,} moves" in "\n".join(claim.details)
    assert claims["§4, Fig. 3 (spin glass): the ensembles"].ours.verdict == NOT_REPRODUCED
    assert "below it in 5" in claims["§4, Fig. 3 (spin glass): the ensembles"].reason
    assert claims["§4, Fig. 4 (Gabor RBM): the ACF"].ours.verdict == NOT_REPRODUCED
    assert claims[OUTPERFORMS].ours.verdict == NOT_REPRODUCED


def test_a_ratio_of_a_chain_that_accepted_no_move_is_never_printed_or_judged_as_a_ratio():
    store = store_of(im_mixes)
    frozen = [trials[0].run_id for trials in audit.figure_trials(ARGS)]  # seed 0 of each figure: IM frozen
    for run_id in frozen:
        store.results[run_id] |= {"energy_0": np.full(IM_MOVES + 1, START), "acceptance_0": 0.0}
    claims = by_where(audit.claims(ARGS, store))
    for where in MIXING_ROWS:
        claim = claims[where]
        text = "censored: no move accepted in 1 of 5 seeds; the other seeds' ratios: "
        assert text in claim.ours.text and f"per move: {text}" in claim.fair
        details = "\n".join(claim.details)
        assert "| IM (paper)" in details and "τ_int Kawasaki / τ_int |" not in details  # no ratio of mean τ_int
        assert all("censored: no move accepted in 1 of 5 seeds" in line for line in details.splitlines()
                   if line.startswith("| IM (paper)") and "CPU seconds" not in line and "±" not in line)
        ratio, moves = claim.ours.judged
        assert np.isnan(ratio.evidence.values[0]) and np.all(np.isfinite(ratio.evidence.values[1:]))
        assert ratio.verdict == INCONCLUSIVE and moves.evidence == [False] + [True] * 4
        assert claim.ours.verdict == NOT_REPRODUCED
    outperforms = claims[OUTPERFORMS].ours
    assert all(np.isnan(j.evidence.values[0]) for j in outperforms.judged if j.label.endswith(("convergence",
                                                                                              "samples")))
    assert outperforms.text.count("censored: no move accepted in 1 of 5 seeds") == 6
    shown = audit.SeedRatios(np.full(5, 9.54), np.full(5, True))  # a censored bound that would favour IM
    assert str(shown) == "censored: no move accepted in 5 of 5 seeds" and not shown.evidence.decisive


def test_tau_of_a_chain_that_moves_but_never_mixes_is_the_window_not_dropped():
    grid = np.linspace(0.0, SECONDS, IM_MOVES + 1)
    window = grid[-1] - grid[int(audit.BURN_IN * len(grid))]

    def constant(acceptance):  # a chain whose energy never changes: it never moved, or moved among equal energies
        return summarise("constant", [Trace(grid, np.full(IM_MOVES + 1, 3.0), acceptance, np.arange(IM_MOVES + 1))
                                      for _ in range(SEEDS)], grid, audit.BURN_IN)

    stuck, level = constant(0.0), constant(0.01)
    assert np.allclose(level.tau, window) and np.all(np.isnan(level.acf))
    held, first, _ = audit.reaches_zero(level, len(grid) - int(audit.BURN_IN * len(grid)))
    assert held == [False] * SEEDS and np.all(np.isnan(first))  # no ACF: never reaches 0, counted as a failure
    both = audit.mixing_ratios(level, level)["CPU seconds"].evidence
    assert both.n == SEEDS and not both.decisive and np.all(np.isnan(both.values))  # two windows are no ratio, not 1
    noise = np.random.default_rng(2).normal(size=(SEEDS, IM_MOVES + 1))
    mixing = summarise("mixing", [Trace(grid, row, 0.5, np.arange(IM_MOVES + 1)) for row in noise], grid,
                       audit.BURN_IN)
    one = audit.mixing_ratios(level, mixing)["CPU seconds"].evidence  # Kawasaki never mixed, IM mixing
    assert one.decisive and one.low > 1 and np.allclose(one.values, window / mixing.tau)  # counted at the window
    assert np.all(np.isnan(audit.mixing_ratios(stuck, mixing)["CPU seconds"].evidence.values))  # accepted none


def descending(grid: np.ndarray, reached: int, plateau: float, acceptance: float = 0.5) -> Trace:
    """An energy falling linearly from ``START`` to ``plateau``, reached at grid index ``reached``, then flat."""
    energy = np.maximum(START + (plateau - START) * np.arange(len(grid)) / reached, plateau)
    return Trace(grid, energy, acceptance, np.arange(len(grid)))


def test_convergence_is_how_much_sooner_im_reaches_the_lower_ensemble():
    grid = np.linspace(0.0, SECONDS, IM_MOVES + 1)

    def summary(reached, plateau=-100.0, acceptance=0.5):
        return summarise("s", [descending(grid, reached, plateau, acceptance)] * SEEDS, grid, audit.BURN_IN)

    fast, slow = summary(40), summary(160)
    assert np.allclose(audit.convergence_ratios(slow, fast, grid).values, grid[160] / grid[40])  # T(K) / T(IM) = 4
    assert np.allclose(audit.convergence_ratios(fast, slow, grid).values, 0.25)
    assert audit.OUTPERFORMS.judge(audit.convergence_ratios(slow, fast, grid).evidence) == REPRODUCED
    assert audit.OUTPERFORMS.judge(audit.convergence_ratios(fast, slow, grid).evidence) == NOT_REPRODUCED
    higher = summary(40, plateau=-90.0)  # Kawasaki never reaches IM's ensemble: censored at the run's end
    assert np.allclose(audit.convergence_ratios(higher, fast, grid).values, grid[-1] / grid[40])
    frozen = audit.convergence_ratios(slow, summary(40, acceptance=0.0), grid)
    assert np.all(frozen.frozen) and not frozen.evidence.decisive


def test_outperforming_needs_both_axes_on_every_figure():
    claims = by_where(audit.claims(ARGS, store_of(im_mixes, im_mixes, im_slow)))  # Fig. 4: Kawasaki mixes faster
    verdicts = {judgement.label: judgement.verdict for judgement in claims[OUTPERFORMS].ours.judged}
    assert verdicts["Fig. 2 (ferromagnet): independent samples"] == REPRODUCED
    assert verdicts["Fig. 2 (ferromagnet): convergence"] == REPRODUCED
    assert verdicts["Fig. 4 (Gabor RBM): independent samples"] == NOT_REPRODUCED
    assert claims[OUTPERFORMS].ours.verdict == NOT_REPRODUCED  # the weakest decides
    assert len(verdicts) == 9  # convergence, independent samples and IM moving, on each of three figures


@pytest.mark.parametrize("rate, verdict", [(0.0, NOT_REPRODUCED), (0.033, NOT_REPRODUCED),
                                           (0.0999, NOT_REPRODUCED), (0.10, REPRODUCED), (0.9, REPRODUCED)])
def test_good_acceptance_is_at_least_ten_per_cent_in_every_seed(rate, verdict):
    claims = by_where(audit.claims(ARGS, with_acceptance(store_of(im_mixes), {0: 0.5, 1: rate, 2: 0.5})))
    assert claims[TRADE_OFF].ours.verdict == verdict  # the spin glass's sentence: its figure alone
    assert claims[TUNED].ours.verdict == verdict  # §5: every figure, the weakest deciding
    assert len(claims[TUNED].ours.judged) == 3 and len(claims[TRADE_OFF].ours.judged) == 1
    assert f"{100 * rate:.3g}, " * 4 in claims[TRADE_OFF].ours.text


def test_the_acceptance_criterion_states_its_threshold_and_why():
    assert audit.GOOD_ACCEPTANCE == 0.10 and audit.GOOD_RATES.judge([True] * 4 + [False]) == NOT_REPRODUCED
    rule = audit.GOOD_RATES.rule()
    assert "at least 10% of its moves" in rule and "23.4%" in rule and "Roberts, Gelman & Gilks" in rule
    claims = by_where(audit.claims(ARGS, with_acceptance(store_of(im_mixes), {0: 0.0})))
    assert claims[TRADE_OFF].ours.verdict == REPRODUCED and claims[TUNED].ours.verdict == NOT_REPRODUCED


def test_a_failed_trial_leaves_fewer_seeds_and_an_inconclusive_row_and_none_gives_not_measured():
    claims = audit.claims(ARGS, store_of(im_mixes, skip=1))
    assert all(claim.ours.verdict == INCONCLUSIVE for claim in claims)  # 4 seeds: not decisive, not reproduced
    assert "4 of 5 seeds" in claims[0].ours.text
    old_form = store_of(im_mixes)
    for stored in old_form.results.values():
        del stored["evaluations_0"]  # a result stored before evaluations were recorded
    for broken in (DictStore({}), old_form):
        rows = audit.claims(ARGS, broken)
        assert len(rows) == 9 and all(claim.ours.verdict == INCONCLUSIVE and claim.ours.text.startswith("not measured")
                                      and claim.ours.missing and not claim.ours.judged for claim in rows)


def test_the_ensemble_criterion_is_directional_and_weighs_the_noise():
    grid = np.linspace(0.0, SECONDS, 201)
    noise = np.random.default_rng(1).normal(size=(3, 201))  # the same noise in every summary: z is deterministic

    def summary(mean):
        return summarise("s", [Trace(grid, mean + row, 0.5, np.arange(201)) for row in noise], grid, audit.BURN_IN)

    high, low = summary(-90.0), summary(-100.0)
    assert audit.above(audit.energy_gap(high, low)) == [True] * 3
    assert audit.above(audit.energy_gap(low, high)) == [False] * 3  # Kawasaki below IM: not the claim
    gaps = audit.energy_gap(summary(-99.95), low)  # 0.05 apart, with a standard error of ~0.1 each
    assert np.all((0 < gaps) & (gaps < audit.Z_95)) and audit.above(gaps) == [False] * 3
    assert np.isnan(audit.above([np.nan])[0])  # z not measured: not told, neither pass nor fail


def test_the_acf_must_reach_the_band_quickly():
    rng = np.random.default_rng(2)
    grid = np.linspace(0.0, SECONDS, IM_MOVES + 1)
    kept = len(grid) - int(audit.BURN_IN * len(grid))
    noise = summarise("n", [Trace(grid, white(rng, IM_MOVES, 0.0), 0.5, grid) for _ in range(3)], grid,
                      audit.BURN_IN)
    slow = summarise("s", [Trace(grid, np.linspace(0.0, 50.0, IM_MOVES + 1) + white(rng, IM_MOVES, 0.0), 0.5, grid)
                           for _ in range(3)], grid, audit.BURN_IN)  # a trend: its ACF crosses 0 only late
    assert audit.reaches_zero(noise, kept)[0] == [True] * 3
    assert audit.reaches_zero(slow, kept)[0] == [False] * 3


def test_stand_ins_gabor_always_the_lattices_below_scale_one():
    lattice = SimpleNamespace(title="Ferromagnet 30×30, β = 1/2.27, n = 450 of 900 on")
    assert audit.stand_in_text(0, 1.0, lattice) == "" and audit.stand_in_text(1, 1.0, lattice) == ""
    assert "30×30" in audit.stand_in_text(0, 0.25, lattice)
    assert "Gabor" in audit.stand_in_text(audit.RBM, 1.0, lattice)


def test_the_replay_note_says_what_the_preset_runs_beside_what_was_audited():
    note = audit.replay_note(audit.FIGURES[0], ferromagnet(1.0), 10_000)  # the paper's 60×60 against the preset
    assert note.startswith("the replay preset is a smaller version of the audited model: 900 units, 450 on, k = 45")
    assert note.endswith("10,000 IM moves per seed on 3,600 units, 1,800 on, k = 90, γ = 1")
    same = audit.replay_note(audit.FIGURES[audit.SPIN_GLASS], spin_glass(0.25), 200)  # the preset's own 6×6×6
    assert same.startswith("the replay preset runs the audited model and settings (216 units, 108 on, k = U[1, 25]")


def test_the_trials_are_one_per_seed_and_record_cpu_time_and_evaluations():
    trials = audit.figure_trials(SimpleNamespace(im_scale=0.02, im_moves=15, seeds=2))
    assert [len(t) for t in trials] == [2, 2, 2] and len({t.run_id for ts in trials for t in ts}) == 6
    stored = Trial(0.02, 1, 0, 0.0, 15, "").perform(0)
    assert len(stored["times_0"]) == 16 and np.all(np.diff(stored["times_0"]) >= 0)
    kawasaki = stored["evaluations_2"]
    assert kawasaki[-1] - kawasaki[0] == len(kawasaki) - 1  # one evaluation per Kawasaki swap
    assert stored["evaluations_0"][-1] > stored["evaluations_0"][0]


@pytest.mark.skipif(not PAPERS.is_dir(), reason="the papers are not in ../shared/papers")
def test_every_quote_is_the_papers_own_words():
    paper = _words((PAPERS / "intracluster-moves.txt").read_text(encoding="utf-8"))
    for claim in audit.claims(ARGS, DictStore({})):
        for fragment in filter(None, (_words(part) for part in claim.quote.split("…"))):
            assert fragment in paper, (claim.where, fragment)
