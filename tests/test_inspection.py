"""The proposal inspector's numbers come from the sampler's own kernel: they match its exact transition row."""

from __future__ import annotations

import numpy as np
import pytest

import samplers
import targets
from samplers.diagnostics.inspection import inspect_move
from samplers.local.block_gibbs import all_blocks
from tests.tiny import TINY_TARGETS


def last_move(name: str, target, chain: int = 1, **params):
    sampler = samplers.make(name, target, n_chains=3, seed=5, **params)
    for _ in range(4):
        sampler.step()
    before = sampler.states[chain].copy()
    record = sampler.step()
    return sampler, before, inspect_move(sampler, before, record, chain)


@pytest.mark.parametrize("name, params", [("metropolis", {}), ("gibbs", {}), ("locally_balanced", {}), ("gwg", {}),
                                          ("lsb", {"parametrization": "lsb2", "burn_in": 0})])
def test_single_flip_moves_match_the_exact_kernel(name, params):
    target = TINY_TARGETS["frustrated_boltzmann"]()
    sampler, before, inspection = last_move(name, target, **params)
    assert inspection.kind == "single flip" and inspection.proposed_sites.size == 1
    np.testing.assert_allclose(np.exp(inspection.log_q).sum(), 1.0, atol=1e-12)  # a distribution over the flips
    site = inspection.proposed_sites[0]
    states, probs = sampler.transition_row(before)
    flipped = before.copy()
    flipped[site] ^= 1
    chance = probs[(states == flipped).all(axis=1)].sum()  # the exact chance of this move: q · α
    np.testing.assert_allclose(np.exp(inspection.log_q_forward) * inspection.acceptance, chance, rtol=1e-10)
    np.testing.assert_allclose(inspection.log_ratio, target.delta_log_prob(before[None])[0])
    assert (inspection.estimated_log_ratio is not None) == (name == "gwg")


def test_independent_flips_match_the_exact_kernel():
    target = TINY_TARGETS["ising1d"]()
    sampler, before, inspection = last_move("dlmc", target, burn_in=0, step_size=0.7)
    assert inspection.kind == "independent flips" and np.all(inspection.log_q <= 0)
    states, probs = sampler.transition_row(before)
    proposal = before.copy()
    proposal[inspection.proposed_sites] ^= 1
    if inspection.proposed_sites.size:
        chance = probs[(states == proposal).all(axis=1)].sum()
        np.testing.assert_allclose(np.exp(inspection.log_q_forward) * inspection.acceptance, chance, rtol=1e-10)


def test_other_moves_report_what_changed_and_the_outcome():
    target = targets.make("ising_lattice", size=4, beta=0.4)
    sampler, before, inspection = last_move("swendsen_wang", target)
    assert inspection.kind == "other" and inspection.log_q is None and inspection.accepted
    np.testing.assert_array_equal(np.flatnonzero(sampler.states[1] != before), inspection.proposed_sites)


@pytest.mark.parametrize("name, params", [("block_gibbs", {"block_size": 2}),
                                          ("hamming_ball", {"block_size": 3, "radius": 1})])
def test_a_block_move_and_its_probability_match_the_exact_kernel(name, params):
    target = TINY_TARGETS["ising1d"]()
    sampler, before, inspection = last_move(name, target, **params)
    assert inspection.kind == "block" and inspection.path.size == params["block_size"] and inspection.acceptance == 1
    assert set(inspection.proposed_sites) <= set(inspection.path)
    np.testing.assert_allclose(np.exp(inspection.log_block_choice), 1 / len(all_blocks(6, params["block_size"])))
    # the chance of each state y in the exact row is Σ over blocks B of P(B) · P(y_B | x, B), the inspector's numbers
    states, probs = sampler.transition_row(before)
    blocks = all_blocks(before.size, params["block_size"])
    for y in np.unique(states, axis=0):
        moves = [sampler.block_move_probability(before, block, y[block]) for block in blocks
                 if np.array_equal(np.delete(y, block), np.delete(before, block))]
        np.testing.assert_allclose(np.sum(moves) / len(blocks), probs[(states == y).all(axis=1)].sum(), rtol=1e-10)


def test_a_path_move_matches_the_exact_kernel():
    target = TINY_TARGETS["frustrated_boltzmann"]()
    for length in (1, 3):
        sampler, before, inspection = last_move("pas", target, burn_in=0, path_length=length, random_length=False)
        assert inspection.kind == "path" and inspection.path.size == length
        np.testing.assert_allclose(np.exp(inspection.log_q).sum(), 1.0, atol=1e-12)  # the first flip's distribution
        y = before.copy()
        y[inspection.path] ^= 1
        assert set(inspection.proposed_sites) == set(inspection.path)
        states, probs = sampler.transition_row(before)
        chance = probs[(states == y).all(axis=1)].sum()  # summed over the path's orders
        move = np.exp(inspection.log_q_forward) * inspection.acceptance
        assert move == pytest.approx(chance, rel=1e-10) if length == 1 else 0 < move < chance
        np.testing.assert_allclose(np.log(inspection.acceptance), min(0.0, inspection.log_target_ratio
                                   + inspection.log_q_reverse - inspection.log_q_forward), atol=1e-12)


def test_a_walk_move_shows_both_walks_and_eq6s_acceptance():
    target = targets.make("ising_lattice", size=4, beta=0.4)
    sampler, before, inspection = last_move("intracluster", target, n_active=8, walk_length=3, gamma=0.3)
    assert inspection.kind == "walk" and inspection.path.size == 6  # two walks of k = 3 flips
    flips = np.zeros(before.size, dtype=np.uint8)
    np.add.at(flips, inspection.path, 1)
    np.testing.assert_array_equal(np.flatnonzero(flips % 2), inspection.proposed_sites)  # the walks reach y
    np.testing.assert_allclose(np.log(inspection.acceptance), min(0.0, inspection.log_target_ratio
                               + inspection.log_q_reverse - inspection.log_q_forward), atol=1e-9)


@pytest.mark.parametrize("name, params", [("block_gibbs", {"block_size": 2}),
                                          ("hamming_ball", {"block_size": 5, "radius": 1})])
def test_a_block_move_is_said_to_be_kept_with_its_block_ringed_and_its_flips_filled(name, params):
    """Block Gibbs and the Hamming ball always accept: the text names the block, the bits flipped (maybe none) and
    the outcome, never "rejected", and the marks agree with it — the block's sites ringed, the flipped ones filled."""
    from dashboard.views.inspector import RING_COLOUR, describe, marks
    from engine.images import site_name
    from engine.snapshot import RunInfo

    target = targets.make("ising_lattice", size=4, beta=0.4)
    info = RunInfo(run=0, request=0, sampler=name, target_name="ising_lattice", dim=16, n_chains=3,
                   image_shape=(4, 4), image_positions=None, image_axes=None, capabilities=None,
                   statistic="log_prob", opad_problem="")
    sampler = samplers.make(name, target, n_chains=3, seed=5, **params)
    flips_seen = set()
    for _ in range(40):
        before = sampler.states[0].copy()
        inspection = inspect_move(sampler, before, sampler.step(), 0)
        block, flipped = np.sort(inspection.path), np.sort(inspection.proposed_sites)
        text = describe(inspection, lambda site: site_name(site, (4, 4)), name)
        names = [site_name(site, (4, 4)) for site in block]
        assert "rejected" not in text and "<b style='color:#2a9d8f'>accepted</b>: a Gibbs block move is always kept" \
            in text
        assert f"Block {{{', '.join(names)}}} ({block.size} sites, ringed)" in text
        if flipped.size:
            flips = ", ".join(site_name(site, (4, 4)) for site in flipped)
            assert f"flipped {flipped.size} of them (filled): {flips}" in text
        else:
            assert "flipped no bit" in text and not inspection.accepted  # the record's "accepted": a bit changed
        flips_seen.add(flipped.size)
        drawn = marks(inspection, info)
        rings = {(x, y) for x, y, alpha in zip(drawn["x"], drawn["y"], drawn["fill_alpha"]) if alpha == 0.0}
        filled = {(x, y) for x, y, alpha in zip(drawn["x"], drawn["y"], drawn["fill_alpha"]) if alpha == 1.0}
        assert filled == set(zip(*(c.tolist() for c in info.cells(flipped, 0))))
        assert rings == set(zip(*(c.tolist() for c in info.cells(np.setdiff1d(block, flipped), 0))))
        assert set(drawn["colour"]) <= {RING_COLOUR} and len(drawn["x"]) == block.size
    assert 0 in flips_seen and len(flips_seen) > 1  # moves that kept every value and moves that flipped some
