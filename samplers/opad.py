"""OPAD and OPAD+: optimal particle approximations of a discrete target from any sampler's records.

Afshar, Francis & Cripps, Theorem 1: among all distributions P supported on a
given set S of states, KL(P‖π) is minimised by P(x) = p̃(x)/Σ_{y∈S} p̃(y), and
then KL(P‖π) = −log π(S). So the states a chain visited, reweighted ∝ p̃
(OPAD), are never further from π than the chain's frequencies (MCMC); adding
the rejected proposals, whose p̃ the sampler computed anyway, enlarges S and
can only lower the KL again (OPAD+, §3.1).

``ParticleStore(target)`` is fed every ``StepRecord`` (``store.update(record)``)
and keeps, per chain and pooled over chains,

* MCMC: the count c(x) of every visited state; after k steps a chain holds
  k + 1 samples (its initial state and the state after each step);
* OPAD: the distinct visited states;
* OPAD+: the visited states and every proposal.

Each distinct state is stored once (its packed bits and log p̃, taken from the
record: no target evaluation). The exact KL(P‖π) of all three is maintained in
O(1) per sample for enumerable targets: with n samples,

    KL(MCMC) = (1/n) Σ c log c − log n − (1/n) Σ c log p̃ + log Z,
    KL(OPAD) = log Z − log Σ_{x∈S} p̃(x),

where the sums and the running logsumexp are updated as states arrive and
log Z is computed once by enumeration. For larger targets ``log_mass()``
gives the monotone log Σ_S p̃ and ``expectation()`` the three estimates of
any statistic. Memory is capped by ``max_particles``: when the cap is
reached, the store stops updating (all three approximations stay consistent)
and ``full`` says why.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from scipy.special import logsumexp

from targets.base import Target

from .base import StepRecord

KINDS = ("mcmc", "opad", "opad_plus")


def _logaddexp(a: float, b: float) -> float:
    """log(eᵃ + eᵇ) for Python floats (numpy's ufunc costs ~1 µs per scalar call)."""
    if a < b:
        a, b = b, a
    if b == -math.inf:
        return a
    return a + math.log1p(math.exp(b - a))


class _Approximations:
    """One chain's (or the pool's) samples and supports, with the sums behind their exact KL."""

    def __init__(self):
        self.counts: dict = {}
        self.n = 0
        self.sum_c_log_c = 0.0
        self.sum_log_p = 0.0
        self.proposed: set = set()
        self.log_mass_visited = -math.inf
        self.log_mass_plus = -math.inf

    def add_sample(self, key, log_p: float) -> None:
        c = self.counts.get(key, 0)
        self.counts[key] = c + 1
        self.n += 1
        self.sum_c_log_c += (c + 1) * math.log(c + 1) - (c * math.log(c) if c else 0.0)
        self.sum_log_p += log_p
        if c == 0:
            self.log_mass_visited = _logaddexp(self.log_mass_visited, log_p)
            if key not in self.proposed:
                self.log_mass_plus = _logaddexp(self.log_mass_plus, log_p)

    def add_proposal(self, key, log_p: float) -> None:
        if key not in self.proposed:
            self.proposed.add(key)
            if key not in self.counts:
                self.log_mass_plus = _logaddexp(self.log_mass_plus, log_p)

    def kl(self, log_z: float) -> dict[str, float]:
        mcmc = self.sum_c_log_c / self.n - math.log(self.n) - self.sum_log_p / self.n + log_z
        return {"mcmc": max(mcmc, 0.0), "opad": max(log_z - self.log_mass_visited, 0.0),
                "opad_plus": max(log_z - self.log_mass_plus, 0.0)}

    def supports(self) -> dict[str, set]:
        visited = set(self.counts)
        return {"opad": visited, "opad_plus": visited | self.proposed}


class ParticleStore:
    """MCMC, OPAD and OPAD+ approximations built from a sampler's step records."""

    def __init__(self, target: Target, max_particles: int = 2_000_000):
        if not isinstance(target, Target):
            raise ValueError(f"target must be a targets.Target; got {type(target).__name__}")
        if max_particles < 1:
            raise ValueError(f"max_particles must be >= 1; got {max_particles}")
        self.target = target
        self.max_particles = max_particles
        self._index: dict = {}
        self._packed: list[np.ndarray] = []
        self._log_p: list[float] = []
        self.chains: list[_Approximations] = []
        self.pooled = _Approximations()
        self.full = ""
        self._log_z: float | None = None
        self._codes = target.dim <= 62

    # -- feeding ----------------------------------------------------------------------------------
    def _keys(self, states: np.ndarray) -> list:
        if self._codes:
            weights = np.left_shift(np.int64(1), np.arange(states.shape[1] - 1, -1, -1, dtype=np.int64))
            return (states.astype(np.int64) @ weights).tolist()
        return [row.tobytes() for row in np.packbits(states, axis=1)]

    def _register(self, keys: list, states: np.ndarray, log_p: np.ndarray) -> bool:
        """Store the states not seen before; False (and ``full`` set) if that would pass the cap."""
        new = [i for i, key in enumerate(keys) if key not in self._index]
        new = list({keys[i]: i for i in new}.values())  # one row per distinct new state
        if len(self._index) + len(new) > self.max_particles:
            self.full = (f"the particle store reached max_particles={self.max_particles:,} distinct states and "
                         f"stopped updating after {self.pooled.n:,} samples; raise max_particles to go on")
            return False
        for i in new:
            self._index[keys[i]] = len(self._log_p)
            self._packed.append(np.packbits(states[i]))
            self._log_p.append(float(log_p[i]))
        return True

    def update(self, record: StepRecord) -> None:
        """Add one step's states (samples) and proposals (OPAD+ particles) of every chain."""
        if self.full:
            return
        if not self.chains:
            self.chains = [_Approximations() for _ in range(record.states.shape[0])]
            if record.start_states is not None:
                self._add_start(record.start_states, record.start_log_prob)
        elif record.states.shape[0] != len(self.chains):
            raise ValueError(f"record has {record.states.shape[0]} chains; the store follows {len(self.chains)}")
        if self.full:
            return
        proposed = record.proposed
        keys_states, keys_proposed = self._keys(record.states), self._keys(proposed)
        both = np.concatenate([record.states, proposed])
        if not self._register(keys_states + keys_proposed, both,
                              np.concatenate([record.log_prob, record.proposed_log_prob])):
            return
        rejected = np.flatnonzero(~record.accepted).tolist()  # an accepted proposal is the new sample
        self._apply_proposals(rejected, keys_proposed, record.proposed_log_prob.tolist())
        self._apply_samples(keys_states, record.log_prob.tolist())

    def _add_start(self, states, log_p) -> None:
        keys = self._keys(states)
        if self._register(keys, states, log_p):
            self._apply_samples(keys, log_p.tolist())

    def _apply_proposals(self, rows: list[int], keys: list, log_p: list[float]) -> None:
        for row in rows:
            self.chains[row].add_proposal(keys[row], log_p[row])
            self.pooled.add_proposal(keys[row], log_p[row])

    def _apply_samples(self, keys: list, log_p: list[float]) -> None:
        for chain, key, value in zip(self.chains, keys, log_p):
            chain.add_sample(key, value)
            self.pooled.add_sample(key, value)

    # -- reading ------------------------------------------------------------------------------------
    def _approximations(self, chain: int | None) -> _Approximations:
        if not self.chains:
            raise ValueError("the store is empty: call update(record) after sampler.step()")
        if chain is None:
            return self.pooled
        if not 0 <= chain < len(self.chains):
            raise ValueError(f"chain must be in [0, {len(self.chains)}) or None; got {chain}")
        return self.chains[chain]

    @property
    def n_particles(self) -> int:
        """Distinct states stored (visited or proposed, over all chains)."""
        return len(self._log_p)

    @property
    def log_z(self) -> float:
        """log Σ_x p̃(x) by enumeration (computed once; needs an enumerable target)."""
        if self._log_z is None:
            _, log_p = self.target.enumerate()
            self._log_z = float(logsumexp(log_p))
        return self._log_z

    def kl(self, chain: int | None = None) -> dict[str, float]:
        """Exact KL(P‖π) of the MCMC, OPAD and OPAD+ distributions (one chain, or pooled)."""
        return self._approximations(chain).kl(self.log_z)

    def log_mass(self, chain: int | None = None) -> dict[str, float]:
        """log Σ_{x∈S} p̃(x) over the OPAD and OPAD+ supports: non-decreasing as sampling goes on."""
        approximations = self._approximations(chain)
        return {"opad": approximations.log_mass_visited, "opad_plus": approximations.log_mass_plus}

    def _weights(self, chain: int | None) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """Per approximation: (particle indices, normalised weights)."""
        approximations = self._approximations(chain)
        counts = approximations.counts
        out = {"mcmc": (np.array([self._index[k] for k in counts]),
                        np.array(list(counts.values()), dtype=float) / approximations.n)}
        log_p = np.asarray(self._log_p)
        for kind, support in approximations.supports().items():
            index = np.array([self._index[k] for k in support])
            weights = np.exp(log_p[index] - logsumexp(log_p[index]))
            out[kind] = (index, weights)
        return out

    def states(self, index: np.ndarray) -> np.ndarray:
        """The stored states with these particle indices, ``(len(index), d)`` uint8."""
        packed = np.stack([self._packed[i] for i in index])
        return np.unpackbits(packed, axis=1, count=self.target.dim)

    def expectation(self, statistic: Callable[[np.ndarray], np.ndarray] | None = None,
                    chain: int | None = None) -> dict[str, np.ndarray]:
        """E_P[statistic(x)] under MCMC, OPAD and OPAD+ (default statistic: the marginals x itself)."""
        statistic = statistic or (lambda states: states.astype(float))
        return {kind: np.tensordot(weights, statistic(self.states(index)), axes=1)
                for kind, (index, weights) in self._weights(chain).items()}

    def tv(self, chain: int | None = None) -> dict[str, float]:
        """Exact total-variation distance to π of the three approximations (O(particles))."""
        log_z = self.log_z
        log_p = np.asarray(self._log_p)
        out = {}
        for kind, (index, weights) in self._weights(chain).items():
            pi = np.exp(log_p[index] - log_z)
            out[kind] = 0.5 * (np.abs(weights - pi).sum() + max(0.0, 1.0 - pi.sum()))
        return out
