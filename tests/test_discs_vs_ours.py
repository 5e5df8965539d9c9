"""The DISCS-beside-ours benchmark: its skip path prints our side and why, and its pure parts (the energy check, our
model of DISCS's exported Ising parameters, the run plan, DISCS's runs) do what they say. No JAX, no network."""

from __future__ import annotations

import json

import numpy as np
import pytest

from benchmarks.costs import discs_vs_ours


def _rows(out: str) -> list[list[str]]:
    return [[cell.strip() for cell in line.strip("|").split(" | ")] for line in out.splitlines()
            if line.startswith("| ") and not line.startswith("| sampler")]


def test_without_discs_it_prints_our_side_and_why_discs_was_skipped(tmp_path, capsys):
    # A fixed number of steps, not a time budget: what is printed must not depend on the machine's speed.
    discs_vs_ours.main(["--models", "ising30,rbm25", "--chains", "3", "--warm-up", "2", "--timed", "2", "--steps", "6",
                        "--no-discs", "1", "--results", str(tmp_path)])
    out = capsys.readouterr().out
    assert "DISCS skipped: --no-discs 1." in out and "not judged: no DISCS measurement" in out
    assert out.count("### DISCS's Ising 30×30") == 1 and out.count("### DISCS's binary RBM 784×25") == 1
    rows = _rows(out)
    ours = list(discs_vs_ours.PAIRS)
    assert [row[0].split(" (")[0] for row in rows] == ours + ours[:-1]  # locally_balanced left out on the RBM
    assert out.count("left out: our locally_balanced (its exact flip ratios") == 1
    assert all(row[1] == "3" and row[2] == "–" and row[3] == "–" and row[5] == "–" and row[-1] == "–"
               for row in rows)
    assert all(float(row[4]) > 0 and row[8].replace(",", "").replace(".", "").isdigit() for row in rows)
    stored = json.loads((tmp_path / "discs_vs_ours" / "measurements.json").read_text())
    assert stored["discs"]["skipped"] == "--no-discs 1" and len(stored["models"]) == 2
    assert all("discs" not in row and row["ours"]["seconds_per_step"] > 0 for model in stored["models"]
               for row in model["rows"])


def test_a_missing_reference_is_the_reason_printed(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(discs_vs_ours, "REFERENCE_DIR", tmp_path / "absent")
    monkeypatch.setattr(discs_vs_ours, "DISCS_ENV", tmp_path / "discs-venv")
    discs_vs_ours.main(["--models", "ising30", "--chains", "2", "--warm-up", "2", "--timed", "1", "--steps", "4",
                        "--samplers", "metropolis", "--results", str(tmp_path)])
    out = capsys.readouterr().out
    assert f"DISCS skipped: DISCS not found at {tmp_path / 'absent'}." in out and len(_rows(out)) == 1
    assert not (tmp_path / "discs-venv").exists()


def test_energies_agree_to_float32_rounding_only():
    ours = np.array([-1234.5678, 0.001, 987.654321, -3.0])
    assert discs_vs_ours.energies_agree(ours, ours.astype(np.float32)) == (True, pytest.approx(0.0, abs=1e-7))
    near_zero = ours.copy()
    near_zero[1] += 1e-3  # 1e-3 off a value near 0 is far below the rounding of sums of this scale
    assert discs_vs_ours.energies_agree(ours, near_zero)[0]
    shifted = ours.copy()
    shifted[2] *= 1 + 1e-4
    agree, worst = discs_vs_ours.energies_agree(ours, shifted)
    assert not agree and worst == pytest.approx(987.654321e-4 / 1234.5678)
    assert discs_vs_ours.energies_agree(ours, ours[:3]) == (False, float("inf"))
    assert discs_vs_ours.energies_agree(ours, np.append(ours[:3], np.nan)) == (False, float("inf"))


def test_our_ising_from_discs_parameters_has_discs_energy():
    rng = np.random.default_rng(0)
    side = 4
    params = rng.normal(size=(3, side, side))  # couplings that differ per pair, to catch a transposed lattice
    states = rng.integers(0, 2, size=(30, side * side), dtype=np.uint8)
    s = (2.0 * states - 1).reshape(-1, side, side)
    # DISCS's Ising: log p̃ = −Σ w_h[r, c] s[r, c] s[r, c+1] − Σ w_v[r, c] s[r, c] s[r+1, c] − Σ b s, open lattice.
    expected = -((params[0][:, :-1] * s[:, :, :-1] * s[:, :, 1:]).sum(axis=(1, 2))
                 + (params[1][:-1, :] * s[:, :-1, :] * s[:, 1:, :]).sum(axis=(1, 2))
                 + (params[2] * s).sum(axis=(1, 2)))
    np.testing.assert_allclose(discs_vs_ours.ising_target(params).log_prob(states), expected, atol=1e-12)


def test_the_run_plan_and_discs_runs():
    assert discs_vs_ours.run_plan("32,1024", "100", "20,5", "200,50") == {32: (100, 20, 200), 1024: (100, 5, 50)}
    for warm_up, steps in (("2", "3"), ("2", "8,8,8"), ("1", "8")):
        with pytest.raises(SystemExit):
            discs_vs_ours.run_plan("32,1024", warm_up, "1", steps)
    runs = discs_vs_ours.discs_runs({8: (1, 2, 4), 16: (3, 4, 5)}, {8: 2e-3, 16: 1e-3})
    assert [(run["sampler"], run["chains"]) for run in runs][:6] == [
        ("gwg", 8), ("dmala", 8), ("dlmc", 8), ("path_auxiliary", 8), ("randomwalk", 8), ("locallybalanced", 8)]
    assert len(runs) == 12 and all(run["settings"].get("adaptive", False) is False for run in runs)
    dlmc = [run for run in runs if run["sampler"] == "dlmc"]
    assert [run["state"] for run in dlmc] == [{"log_tau": np.log(h), "steps": 1} for h in (2e-3, 1e-3)]
    assert dlmc[1]["warm_up"] == 3 and dlmc[1]["timed"] == 4 and dlmc[1]["traced"] == 5
