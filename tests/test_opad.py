"""OPAD / OPAD+ particle store: Theorem 1, exact incremental KL, expectations, bounds."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import samplers
import targets
from samplers.common.exact import stationary_distribution
from samplers.opad.particle_index import ParticleIndex, find_or_insert, pack_state
from samplers.opad.store import KINDS, PENDING_BYTES, ParticleStore
from tests.tiny import TINY_TARGETS


def kl(p: np.ndarray, pi: np.ndarray) -> float:
    """KL(P‖π) over the support of P."""
    mask = p > 0
    return float(np.sum(p[mask] * np.log(p[mask] / pi[mask])))


@settings(max_examples=200, deadline=None)
@given(log_p=st.lists(st.floats(-20, 20), min_size=2, max_size=12), data=st.data())
def test_theorem_1_weights_proportional_to_p_are_optimal_on_any_support(log_p, data):
    log_p = np.asarray(log_p)
    pi = np.exp(log_p - np.logaddexp.reduce(log_p))
    n = len(pi)
    support = np.array(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)))
    if not support.any():
        support[0] = True
    optimal = np.where(support, pi, 0.0) / pi[support].sum()
    assert kl(optimal, pi) == pytest.approx(-np.log(pi[support].sum()), abs=1e-9)
    raw = np.array(data.draw(st.lists(st.floats(1e-3, 1.0), min_size=n, max_size=n)))
    competitor = np.where(support, raw, 0.0) / raw[support].sum()
    gap = kl(competitor, pi) - kl(optimal, pi)
    assert gap >= -1e-9
    # equality only when the competitor is ∝ p̃ on the support (the gap is KL(competitor ‖ optimal))
    assert gap == pytest.approx(kl(competitor, optimal), abs=1e-9)


def run_with_store(target, name, steps, n_chains=4, seed=0, flush_every=1, **params):
    sampler = samplers.make(name, target, n_chains=n_chains, seed=seed, **params)
    store = ParticleStore(target, flush_every=flush_every)
    curve = []
    for _ in range(steps):
        store.update(sampler.step())
        curve.append(store.kl())
    return sampler, store, curve


def from_scratch(store, target, chain=None):
    """KL of the three approximations recomputed from the stored counts and supports."""
    states, log_p = target.enumerate()
    pi = stationary_distribution(target)
    codes = targets.state_codes(states)
    position = {int(c): i for i, c in enumerate(codes)}
    def positions(index):
        return [position[int(c)] for c in targets.state_codes(store.states(index))]

    index, counts = store.counts(chain)
    mcmc = np.zeros(len(pi))
    mcmc[positions(index)] = counts
    mcmc /= mcmc.sum()
    out = {"mcmc": kl(mcmc, pi)}
    for kind in ("opad", "opad_plus"):
        mask = np.zeros(len(pi), dtype=bool)
        mask[positions(store.support(kind, chain))] = True
        out[kind] = kl(np.where(mask, pi, 0.0) / pi[mask].sum(), pi)
    return out


@pytest.mark.parametrize("name, params", [
    ("metropolis", {}), ("gibbs", {}), ("block_gibbs", {"block_size": 2}),
    ("locally_balanced", {"balancing": "barker"}), ("lsb", {"parametrization": "lsb1", "burn_in": 20}),
])
def test_kl_ordering_and_incremental_equals_from_scratch(name, params):
    target = TINY_TARGETS["frustrated_boltzmann"]()
    sampler, store, curve = run_with_store(target, name, 150, **params)
    for values in curve:
        assert values["mcmc"] >= values["opad"] - 1e-12 >= values["opad_plus"] - 2e-12
    for chain in (None, 0, 3):
        ours, scratch = store.kl(chain), from_scratch(store, target, chain)
        for kind in ("mcmc", "opad", "opad_plus"):
            assert ours[kind] == pytest.approx(scratch[kind], abs=1e-10), (chain, kind)
    # the OPAD supports only grow, so their KL never increases
    opad = np.array([values["opad"] for values in curve])
    assert np.all(np.diff(opad) <= 1e-12)


def test_k_steps_hold_k_plus_one_samples_per_chain():
    target = TINY_TARGETS["ising1d"]()
    sampler, store, _ = run_with_store(target, "metropolis", 25, n_chains=3)
    assert [store.n_samples(i) for i in range(3)] == [26, 26, 26] and store.n_samples() == 78
    start = samplers.make("metropolis", target, n_chains=3, seed=0).states
    for i in range(3):
        visited = targets.state_codes(store.states(store.support("opad", i)))
        assert targets.state_codes(start[i:i + 1])[0] in visited


def test_batched_flushes_give_the_same_kl_as_flushing_every_step():
    target = TINY_TARGETS["frustrated_boltzmann"]()
    every_step = run_with_store(target, "metropolis", 300, flush_every=1)[1]
    batched = run_with_store(target, "metropolis", 300, flush_every=64)[1]
    for chain in (None, 1):
        for kind, value in every_step.kl(chain).items():
            assert batched.kl(chain)[kind] == pytest.approx(value, abs=1e-12)


def test_expectations_tv_and_log_mass():
    target = TINY_TARGETS["ising1d"]()  # 2^6 states: a long run visits them all
    sampler, store, _ = run_with_store(target, "gibbs", 3000, n_chains=4)
    pi = stationary_distribution(target)
    states, _ = target.enumerate()
    exact = pi @ states
    marginals = store.expectation()
    visited = np.isin(targets.state_codes(states), targets.state_codes(store.states(store.support("opad"))))
    on_support = (pi * visited) @ states / pi[visited].sum()
    np.testing.assert_allclose(marginals["opad"], on_support, atol=1e-12)  # π restricted to the visited states
    assert np.abs(marginals["opad"] - exact).max() <= 1 - pi[visited].sum() + 1e-12
    assert np.abs(marginals["mcmc"] - exact).max() < 0.05
    tv = store.tv()
    assert tv["opad"] == pytest.approx(1 - pi[visited].sum(), abs=1e-12) and tv["mcmc"] > tv["opad"]
    assert store.kl()["opad"] == pytest.approx(-np.log(pi[visited].sum()), abs=1e-12)
    short = run_with_store(target, "metropolis", 5, n_chains=1)[1]
    mass = short.log_mass()
    pi_support = np.exp(mass["opad"] - short.log_z)
    assert short.tv()["opad"] == pytest.approx(1 - pi_support, abs=1e-12)
    assert mass["opad_plus"] >= mass["opad"]


def test_particle_cap_stops_the_store_with_a_message():
    target = TINY_TARGETS["frustrated_boltzmann"]()
    sampler = samplers.make("metropolis", target, n_chains=4, seed=1)
    store = ParticleStore(target, max_particles=10, flush_every=1)
    for _ in range(200):
        store.update(sampler.step())
    assert "max_particles=10" in store.full and store.n_particles <= 10
    frozen = store.kl()
    store.update(sampler.step())
    assert store.kl() == frozen


def test_bad_use_is_refused_clearly():
    target = TINY_TARGETS["ising1d"]()
    store = ParticleStore(target, flush_every=1)
    with pytest.raises(ValueError, match="empty"):
        store.kl()
    store.update(samplers.make("gibbs", target, n_chains=2, seed=0).step())
    with pytest.raises(ValueError, match="chains"):
        store.update(samplers.make("gibbs", target, n_chains=3, seed=0).step())
    with pytest.raises(ValueError, match="chain must be"):
        store.kl(chain=5)
    big = targets.make("ising_segmentation", size=6)
    big_store = ParticleStore(big)
    big_store.update(samplers.make("gibbs", big, n_chains=2, seed=0).step())
    with pytest.raises(ValueError, match="enumerate"):
        big_store.kl()
    assert np.isfinite(big_store.log_mass()["opad"])
    with pytest.raises(ValueError, match="max_particles"):
        ParticleStore(target, max_particles=0)
    with pytest.raises(ValueError, match="kind"):
        store.support("mode")


def naive_tables(target, records):
    """Per chain: visit counts and the proposed-or-visited set, recounted state by state with dicts."""
    n_chains = records[0].states.shape[0]
    counts = [dict() for _ in range(n_chains)]
    plus = [set() for _ in range(n_chains)]
    streams = [records[0].start_states] + [r.states for r in records]
    for states in streams:
        for c, key in enumerate(targets.state_codes(states)):
            counts[c][int(key)] = counts[c].get(int(key), 0) + 1
            plus[c].add(int(key))
    for r in records:
        for c, key in enumerate(targets.state_codes(r.proposed)):
            plus[c].add(int(key))
    return counts, plus


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_store_equals_a_naive_recount_on_arbitrary_record_streams(data):
    """Records from any sampler: proposals changing 1 to d sites, runs of repeated states across flush
    boundaries, and states that change without an accepted move (as in partition MCMC, whose records
    then give the proposal's every site, so that the proposal does not depend on the old state)."""
    target = TINY_TARGETS["frustrated_boltzmann"]()
    d, n_chains = target.dim, data.draw(st.integers(1, 4))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    states = rng.integers(0, 2, size=(n_chains, d), dtype=np.uint8)
    start, records = states.copy(), []
    for step in range(data.draw(st.integers(1, 60))):
        accepted = rng.random(n_chains) < 0.4
        k = d if rng.random() < 0.3 else int(rng.integers(1, d + 1))
        sites = np.stack([rng.choice(d, size=k, replace=False) for _ in range(n_chains)])
        values = rng.integers(0, 2, size=(n_chains, k), dtype=np.uint8)
        proposal = states.copy()
        np.put_along_axis(proposal, sites, values, axis=1)
        resampled = ~accepted & (rng.random(n_chains) < 0.3) & (k == d)  # moves although the proposal was rejected
        states = np.where(accepted[:, None], proposal, states)
        states[resampled] = rng.integers(0, 2, size=(int(resampled.sum()), d), dtype=np.uint8)
        records.append(samplers.StepRecord(
            states=states.copy(), log_prob=target.log_prob(states), accepted=accepted, proposed_sites=sites,
            proposed_values=values, proposed_log_prob=target.log_prob(proposal), n_evals=0, step=step + 1,
            start_states=start if step == 0 else None, start_log_prob=target.log_prob(start) if step == 0 else None))
    store = ParticleStore(target, flush_every=data.draw(st.integers(1, 8)))
    for r in records:
        store.update(r)
    counts, plus = naive_tables(target, records)
    for c in range(n_chains):
        index, stored = store.counts(c)
        assert dict(zip(targets.state_codes(store.states(index)).tolist(), stored.tolist())) == counts[c]
        assert set(targets.state_codes(store.states(store.support("opad_plus", c))).tolist()) == plus[c]
    for chain in (None, *range(n_chains)):
        scratch = from_scratch(store, target, chain)
        for kind, value in store.kl(chain).items():
            assert value == pytest.approx(scratch[kind], abs=1e-10), (chain, kind)
    assert store.n_samples() == n_chains * (len(records) + 1)


@settings(max_examples=60, deadline=None)
@given(dim=st.sampled_from([1, 7, 64, 65, 130]), data=st.data())
def test_particle_index_numbers_states_like_a_dict(dim, data):
    """Keys of one and of several words, colliding homes, and growth between batches."""
    index, reference = ParticleIndex(dim, capacity=2), {}
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    for _ in range(data.draw(st.integers(0, 10))):
        states = rng.integers(0, 2, size=(data.draw(st.integers(0, 200)), dim), dtype=np.uint8)
        states[:, :max(0, dim - 3)] = 0  # few distinct states: many repeats within and across batches
        keys = [row.tobytes() for row in states]
        np.testing.assert_array_equal(index.find(states), [reference.get(k, -1) for k in keys])
        fresh = [j for j, k in enumerate(keys) if k not in reference and keys.index(k) == j]
        index.reserve(index.size + len(fresh))
        key = np.empty((1, index.words.shape[1]), dtype=np.uint64)
        for j in fresh:
            pack_state(states, j, key, 0)
            assert find_or_insert(index.table, index.bits, index.words, index.size, key, 0) == (index.size, True)
            index.size += 1
            reference[keys[j]] = len(reference)
        for j in range(len(keys)):
            pack_state(states, j, key, 0)
            found = find_or_insert(index.table, index.bits, index.words, index.size, key, 0)
            assert found == (reference[keys[j]], False)
    held = np.arange(index.size)
    assert [row.tobytes() for row in index.states(held)] == list(reference)
    np.testing.assert_array_equal(index.find(index.states(held)), held)


def test_long_states_are_keyed_by_their_bytes():
    target = targets.make("ising_segmentation", size=9)  # 81 bits: beyond integer codes
    sampler = samplers.make("metropolis", target, n_chains=3, seed=0)
    store = ParticleStore(target, flush_every=7)
    records = [sampler.step() for _ in range(50)]
    for r in records:
        store.update(r)
    visited = {row.tobytes() for r in records for row in r.states}
    assert {row.tobytes() for row in store.states(store.support("opad"))} >= visited
    assert store.n_samples() == 3 * 51


def test_scored_neighbours_enlarge_opad_plus_by_every_neighbour_of_every_visited_state():
    target = TINY_TARGETS["frustrated_boltzmann"]()
    sampler = samplers.make("locally_balanced", target, n_chains=3, seed=2, record_neighbours=True)
    store = ParticleStore(target, flush_every=5, scored_neighbours=True)
    plain = ParticleStore(target, flush_every=5)
    for _ in range(40):
        record = sampler.step()
        store.update(record)
        plain.update(record)
    d = target.dim
    for chain in (None, 0, 2):
        visited = store.states(store.support("opad", chain))
        # every neighbour of a visited state except the chain's current one has been folded in
        current = sampler.states if chain is None else sampler.states[chain:chain + 1]
        earlier = visited[~np.isin(targets.state_codes(visited), targets.state_codes(current))]
        neighbours = np.repeat(earlier, d, axis=0) ^ np.tile(np.eye(d, dtype=np.uint8), (len(earlier), 1))
        held = targets.state_codes(store.states(store.support("opad_plus", chain)))
        assert np.isin(targets.state_codes(neighbours), held).all()
        ours, scratch = store.kl(chain), from_scratch(store, target, chain)
        for kind in KINDS:
            assert ours[kind] == pytest.approx(scratch[kind], abs=1e-10)
        assert ours["opad_plus"] <= plain.kl(chain)["opad_plus"] + 1e-12
        assert ours["mcmc"] == pytest.approx(plain.kl(chain)["mcmc"], abs=1e-12)
    # the neighbours' log p̃ came from the records, not from new target evaluations
    stored = store.states(np.arange(store.n_particles))
    np.testing.assert_allclose(store._log_p[:store.n_particles], target.log_prob(stored), atol=1e-10)
    with pytest.raises(ValueError, match="record_neighbours=True"):
        ParticleStore(target, scored_neighbours=True).update(samplers.make("metropolis", target).step())


def test_a_store_joining_a_running_chain_adds_only_neighbourhoods_known_to_be_new():
    target = TINY_TARGETS["frustrated_boltzmann"]()
    sampler = samplers.make("locally_balanced", target, n_chains=2, seed=5, record_neighbours=True)
    records = [sampler.step() for _ in range(30)]
    full, joined = (ParticleStore(target, flush_every=4, scored_neighbours=True) for _ in range(2))
    for r in records:
        full.update(r)
    for r in records[10:]:
        joined.update(r)
    held = set(targets.state_codes(joined.states(joined.support("opad_plus"))).tolist())
    assert held <= set(targets.state_codes(full.states(full.support("opad_plus"))).tolist())
    # the neighbourhood of a state a chain moved to after the join is in; the first record's is not needed
    for k in range(11, 29):
        for chain in np.flatnonzero(records[k - 1].accepted):
            centre = records[k - 1].states[chain]
            neighbours = np.repeat(centre[None], target.dim, axis=0) ^ np.eye(target.dim, dtype=np.uint8)
            assert set(targets.state_codes(neighbours).tolist()) <= held, (k, chain)


@pytest.mark.parametrize("n_chains", [1, 6])
def test_the_run_budget_bounds_a_particle_store_s_memory(n_chains):
    """The dashboard's budget counts ``_particle_bytes`` per distinct state; the store, grown by doubling, holds less."""
    from engine.budget import _particle_bytes

    target = targets.make("ising1d", m=14, beta=0.3, J=1.0, h=0.1, mu=1.0)
    sampler = samplers.make("metropolis", target, n_chains=n_chains, seed=3)
    store = ParticleStore(target, flush_every=64)
    for _ in range(3000):
        store.update(sampler.step())
    assert store.n_particles > 1500  # past several doublings of the index and the tables
    assert store.nbytes <= store.n_particles * _particle_bytes(n_chains, target.dim)


def test_every_record_stream_folds_with_one_compiled_signature():
    """Records of fixed-size proposals (partition MCMC's sites come in Fortran order) and of variable-size ones
    (PAS), scored neighbourhoods and hot replicas all reach the compiled fold with the same argument types: another
    signature would compile in the middle of a served run (a browser test timed out on it, on a loaded machine),
    since the warm-up compiles only the one."""
    from samplers.opad.store import _fold_steps
    from tests.test_dag_samplers import dag_target

    tiny, dag = TINY_TARGETS["frustrated_boltzmann"](), dag_target(4)
    runs = [(tiny, samplers.make("metropolis", tiny, n_chains=3, seed=0), False),
            (tiny, samplers.make("pas", tiny, n_chains=3, seed=0), False),
            (tiny, samplers.make("locally_balanced", tiny, n_chains=3, seed=0, record_neighbours=True), True),
            (tiny, samplers.make("parallel_tempering", tiny, n_chains=3, seed=0, record_replicas=True), False),
            (dag, samplers.make("partition_mcmc", dag, n_chains=3, seed=0), False)]
    assert len({runs[1][1].step().proposed_sites.shape for _ in range(30)}) > 1  # PAS: proposals of 1, 2, 3 sites
    for target, sampler, scored in runs:
        store = ParticleStore(target, flush_every=4, scored_neighbours=scored)
        for _ in range(12):
            store.update(sampler.step())
        store.flush()
        assert store.n_particles > 0
    assert len(_fold_steps.signatures) == 1


def test_scored_neighbourhoods_are_folded_in_before_they_pass_the_pending_bytes():
    """With scored neighbours a flush unfolds d neighbours of every chain's state: the store folds its queue in
    before they (and their scores) pass ``PENDING_BYTES``, however large d is (at d = 1,024 and 64 chains the
    old rule, which counted the states alone, queued 256 steps whose neighbourhoods took 17 GB)."""
    target = targets.make("ising_segmentation", size=16, seed=0)  # d = 256: 1 MB of neighbourhoods per step
    sampler = samplers.make("locally_balanced", target, n_chains=16, seed=0, record_neighbours=True)
    store = ParticleStore(target, scored_neighbours=True)
    step_bytes = 16 * target.dim * (target.dim + 8)  # one step's neighbour states and scores, as a flush has them
    most_queued = 0
    for _ in range(60):
        store.update(sampler.step())
        most_queued = max(most_queued, len(store._pending))
    assert 0 < most_queued * step_bytes <= PENDING_BYTES
    assert store.n_particles > 60 * 16  # the neighbourhoods were folded in
