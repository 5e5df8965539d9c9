"""The intracluster-moves paper's audit (``benchmarks.claims.intracluster``): its criteria on synthetic stored trials
(a chain that never moves is censored at the window, never dropped; a failed trial makes the row inconclusive, never
a crash), its quotes held to the paper's words, its replays to the presets."""

from __future__ import annotations

import re
from types import SimpleNamespace

import numpy as np

from benchmarks.claims import intracluster as audit
from benchmarks.claims.claim import NO_AUTHORS_CODE
from benchmarks.papers.intracluster_paper import Trace, Trial, summarise
from samplers.diagnostics.verdicts import INCONCLUSIVE, NOT_REPRODUCED, REPRODUCED, ratio_evidence

from .stored import DictStore

SEEDS, IM_MOVES, KAWASAKI_MOVES, SECONDS = 5, 400, 4000, 1.0


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
    """A stored trial: each setting's energies after every move, spread evenly over ``SECONDS`` of CPU time (a move
    is accepted when the energy changes)."""
    out = {"spec": "{}", "budget": SECONDS}
    for j, energy in enumerate(energies):
        moves = len(energy) - 1
        out |= {f"times_{j}": np.linspace(0.0, SECONDS, moves + 1), f"energy_{j}": energy,
                f"acceptance_{j}": float(np.mean(np.diff(energy) != 0)),
                f"evaluations_{j}": np.arange(moves + 1) * (10 if j < 2 else 1)}  # IM: 10 per move, Kawasaki 1
    return out


ARGS = SimpleNamespace(im_scale=0.03, im_moves=IM_MOVES, seeds=SEEDS)


def store_of(make_energies, skip: int = 0) -> DictStore:
    """Every trial of ``ARGS`` stored with ``make_energies(rng)`` (IM, IM at γ = 1/2, Kawasaki), but the last
    ``skip`` seeds of each figure (failed)."""
    rng = np.random.default_rng(0)
    return DictStore({trial.run_id: result(make_energies(rng)) for trials in audit.figure_trials(ARGS)
                  for trial in trials[: len(trials) - skip]})


def im_mixes(rng):
    """IM: white noise low down; Kawasaki: a sluggish chain higher up — what the paper describes."""
    return [white(rng, IM_MOVES, -100.0), white(rng, IM_MOVES, -100.0), sluggish(rng, KAWASAKI_MOVES, -90.0)]


def im_stuck(rng):
    """IM never moves from a high start; Kawasaki, white noise, is far lower — what the paper's γ gives here."""
    return [np.full(IM_MOVES + 1, -10.0), white(rng, IM_MOVES, -100.0), white(rng, KAWASAKI_MOVES, -100.0)]


def by_where(claims) -> dict:
    return {claim.where: claim for claim in claims}


def test_every_headline_is_audited_with_its_criterion_and_no_authors_code():
    claims = audit.claims(ARGS, store_of(im_mixes))
    assert [claim.where for claim in claims] == [
        "§4, Fig. 2 (ferromagnet)", "§4, Fig. 3 (spin glass)", "§4, Fig. 3 (spin glass): the ensembles",
        "§4, Fig. 4 (Gabor RBM)", "§4, Fig. 4 (Gabor RBM): the ensembles", "§4, Fig. 4 (Gabor RBM): the ACF"]
    for claim in claims:
        assert claim.authors.text == NO_AUTHORS_CODE and claim.authors.verdict is None
        assert "CPU" in claim.axis and claim.rule and claim.reason and claim.replay
    assert all("1.5" in claim.rule for claim in claims if "mixes" in claim.claim)  # Much: lo ≥ 1.5


def test_the_claims_hold_on_data_that_shows_them_but_the_stand_in_keeps_the_rows_inconclusive():
    claims = audit.claims(ARGS, store_of(im_mixes))
    assert {claim.ours.verdict for claim in claims} == {REPRODUCED}
    assert all(claim.stand_in and claim.verdict == INCONCLUSIVE for claim in claims)  # --im-scale 0.03
    assert "5 of 5 seeds" in claims[0].ours.text and "per move" in claims[0].fair


def test_a_chain_that_never_moves_is_censored_at_the_window_and_the_claims_fail():
    claims = by_where(audit.claims(ARGS, store_of(im_stuck)))
    for where in ("§4, Fig. 2 (ferromagnet)", "§4, Fig. 3 (spin glass)", "§4, Fig. 4 (Gabor RBM)"):
        assert claims[where].ours.verdict == NOT_REPRODUCED, claims[where].ours.text
        assert "IM accepted 0.0%" in claims[where].reason  # computed from the stored numbers
        assert f"accepted none of its {SEEDS * IM_MOVES:,} moves" in "\n".join(claims[where].details)
    assert claims["§4, Fig. 3 (spin glass): the ensembles"].ours.verdict == NOT_REPRODUCED
    assert "below it in 5" in claims["§4, Fig. 3 (spin glass): the ensembles"].reason
    assert claims["§4, Fig. 4 (Gabor RBM): the ACF"].ours.verdict == NOT_REPRODUCED


def test_tau_of_a_frozen_chain_is_the_window_not_dropped():
    grid = np.linspace(0.0, SECONDS, IM_MOVES + 1)
    frozen = [Trace(grid, np.full(IM_MOVES + 1, 3.0), 0.0, np.arange(IM_MOVES + 1)) for _ in range(SEEDS)]
    summary = summarise("frozen", frozen, grid, audit.BURN_IN)
    window = grid[-1] - grid[int(audit.BURN_IN * len(grid))]
    assert np.allclose(summary.tau, window) and np.all(np.isnan(summary.acf))
    held, first, _ = audit.reaches_zero(summary, len(grid) - int(audit.BURN_IN * len(grid)))
    assert held == [False] * SEEDS and np.all(np.isnan(first))  # no ACF: never reaches 0, counted as a failure
    both = ratio_evidence(audit.mixing_ratios(summary, summary)["CPU seconds"])
    assert both.n == SEEDS and not both.decisive and np.all(np.isnan(both.values))  # two windows are no ratio, not 1
    noise = np.random.default_rng(2).normal(size=(SEEDS, IM_MOVES + 1))
    mixing = summarise("mixing", [Trace(grid, row, 0.5, np.arange(IM_MOVES + 1)) for row in noise], grid,
                       audit.BURN_IN)
    one = ratio_evidence(audit.mixing_ratios(summary, mixing)["CPU seconds"])  # Kawasaki frozen, IM mixing
    assert one.decisive and one.low > 1 and np.allclose(one.values, window / mixing.tau)  # counted at the window


def test_a_failed_trial_leaves_fewer_seeds_and_an_inconclusive_row_and_none_gives_not_measured():
    claims = audit.claims(ARGS, store_of(im_mixes, skip=1))
    assert all(claim.ours.verdict == INCONCLUSIVE for claim in claims)  # 4 seeds: not decisive, not reproduced
    assert "4 of 5 seeds" in claims[0].ours.text
    old_form = store_of(im_mixes)
    for stored in old_form.results.values():
        del stored["evaluations_0"]  # a result stored before evaluations were recorded
    for broken in (DictStore({}), old_form):
        rows = audit.claims(ARGS, broken)
        assert len(rows) == 6 and all(claim.ours.verdict == INCONCLUSIVE and claim.ours.text.startswith("not measured")
                                      for claim in rows)


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


def test_the_trials_are_one_per_seed_and_record_cpu_time_and_evaluations():
    trials = audit.figure_trials(SimpleNamespace(im_scale=0.02, im_moves=15, seeds=2))
    assert [len(t) for t in trials] == [2, 2, 2] and len({t.run_id for ts in trials for t in ts}) == 6
    stored = Trial(0.02, 1, 0, 0.0, 15, "").perform(0)
    assert len(stored["times_0"]) == 16 and np.all(np.diff(stored["times_0"]) >= 0)
    kawasaki = stored["evaluations_2"]
    assert kawasaki[-1] - kawasaki[0] == len(kawasaki) - 1  # one evaluation per Kawasaki swap
    assert stored["evaluations_0"][-1] > stored["evaluations_0"][0]


def _normalised(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()

