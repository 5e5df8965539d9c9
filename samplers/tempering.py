"""Parallel tempering (replica exchange) around any fixed-kernel sampler (Swendsen & Wang, "Replica Monte
Carlo simulation of spin-glasses", Phys. Rev. Lett. 57, 2607, 1986; Geyer, "Markov chain Monte Carlo maximum
likelihood", Computing Science and Statistics: Proc. 23rd Symposium on the Interface, 1991).

Each chain is a system of K replicas x₁, …, x_K at inverse temperatures
1 = β₁ > β₂ > … > β_K (a geometric ladder down to ``min_beta``), replica k
targeting p̃_{β_k} = p̃^{β_k} (``targets.tempered``). The joint target is the
product Π_k p̃(x_k)^{β_k}. A step moves every replica with the base sampler's
kernel at its own temperature (each leaves its factor invariant) and then,
every ``swap_every`` steps, proposes exchanging the states of neighbouring
replicas, first all pairs (1, 2), (3, 4), …, then all pairs (2, 3), (4, 5), ….
The exchange proposal is symmetric, so swapping x_k and x_{k+1} is accepted
with the Metropolis ratio of the product,

    α = min{1, exp((β_k − β_{k+1}) (log p̃(x_{k+1}) − log p̃(x_k)))},

which leaves the product invariant; so does the whole step. The cold replica
x₁ is therefore a chain on p̃ itself: it is what the views and diagnostics show
(``states``, ``log_p``) and what OPAD takes as samples, while hot replicas
cross the barriers that a local sampler cannot. Every replica's kernel must be
fixed for this to hold: adaptive bases run with ``burn_in=0``.

With ``record_replicas`` the step records also carry the hot replicas' states
and their log p̃, which OPAD+ reweights ∝ p̃ like any scored state.
``swap_acceptance`` is the mean acceptance probability of each pair so far.
``transition_row`` works on the joint state (K·d bits, replica 1 first) and
is assembled from the replicas' own ``transition_row`` and the swap acceptance
the step uses; π of the joint is the product of the tempered targets.

Cost: K times the base sampler's, plus the swaps: an accepted swap rebuilds
the per-chain caches of the two samplers it touches (their evaluations
counted). ``record_replicas`` adds K − 1 states per chain and step to the
records, with no extra evaluation.
"""

from __future__ import annotations

import itertools

import numpy as np
import param

from samplers.base import ExactCase, Move, Sampler, SamplerFacts, acceptance_probability, metropolis_accept
from samplers.registry import SAMPLERS
from targets.tempered import Tempered

def swap_log_acceptance(beta_hot, beta_cold, log_p_hot, log_p_cold):
    """log α (before the min) of exchanging the states of replicas at β_cold > β_hot with untempered log p̃
    ``log_p_cold`` and ``log_p_hot``: (β_cold − β_hot)(log p̃(x_hot) − log p̃(x_cold))."""
    return (beta_cold - beta_hot) * (log_p_hot - log_p_cold)


class ParallelTempering(Sampler):
    """Replicas of a base sampler on a ladder of temperatures with replica exchange; the cold replica is the chain."""

    registry_name = "parallel_tempering"
    facts = SamplerFacts(
        example={"base": "locally_balanced", "n_replicas": 3},
        # the joint chain of the replicas: 2^(K·d) states, so a smaller ring
        exact=(ExactCase({"base": "metropolis", "n_replicas": 2, "min_beta": 0.35}, "ising1d",
                         {"m": 4, "beta": 0.9, "J": 1.0, "h": 0.3}),),
        reversible=False, tempering_base=False)
    #: For forms: ``base_params`` holds the parameters of the sampler ``base`` names.
    nested_parameters = {"base_params": "base"}
    #: The registered samplers whose ``facts.tempering_base`` holds (every sampler of binary vectors: the DAG
    #: samplers need a DAG target's structure, not a tempered one), set once the registry is filled
    #: (``samplers/__init__.py``); adaptive ones run with their kernel fixed from step 0 (burn_in = 0: LSB/FLSB
    #: with the given or initial θ).
    base = param.Selector(default="metropolis", objects=["metropolis"], doc="The sampler every replica runs.")
    base_params = param.Dict(default={}, doc="Parameters of the base sampler (not n_chains or seed).")
    n_replicas = param.Integer(4, bounds=(2, 32), doc="Replicas K (temperatures) per chain, the cold one included.")
    min_beta = param.Number(0.3, bounds=(1e-3, 1.0), inclusive_bounds=(True, False),
                            doc="Inverse temperature β_K of the hottest replica (the ladder is geometric from 1).")
    swap_every = param.Integer(1, bounds=(1, 100_000), doc="Steps between rounds of replica exchanges.")
    record_replicas = param.Boolean(False, doc="Put the hot replicas' states, with their log p̃, in every step "
                                               "record: OPAD+ then reweights them ∝ p̃ with the cold chain's "
                                               "(K − 1 more states per chain and step, no extra evaluation).")

    @property
    def betas(self) -> np.ndarray:
        """The ladder β₁ = 1 > … > β_K = ``min_beta``, geometric."""
        return self.min_beta ** (np.arange(self.n_replicas) / (self.n_replicas - 1))

    @classmethod
    def estimated_bytes(cls, n_chains, dim, params=None):
        """K replicas of the base sampler, plus each record's full copy of the cold proposals (and, with
        ``record_replicas``, of the hot replicas' states and log p̃)."""
        base = SAMPLERS.cls(cls._requested(params, "base"))
        n_replicas = cls._requested(params, "n_replicas")
        replicas = n_replicas * base.estimated_bytes(
            n_chains, dim, cls._base_params(base, cls._requested(params, "base_params")))
        recorded = (n_replicas - 1) * n_chains * (dim + 8) if cls._requested(params, "record_replicas") else 0
        return int(replicas + super().estimated_bytes(n_chains, dim, params) + n_chains * dim + recorded)

    @staticmethod
    def _base_params(base: type[Sampler], requested: dict) -> dict:
        """The base's parameters: ``base_params`` with ``burn_in=0`` (a fixed kernel) unless given."""
        reserved = sorted({"n_chains", "seed", "init"} & set(requested))
        if reserved:
            raise ValueError(f"parallel_tempering sets {', '.join(reserved)} of its replicas itself; "
                             f"remove them from base_params")
        return ({"burn_in": 0} if "burn_in" in base.param else {}) | dict(requested)

    def reset(self, init=None) -> None:
        """As ``Sampler.reset``; without ``init`` each replica draws its own start (a fixed-distance sampler's)."""
        self._init = init
        super().reset(init)

    def _prepare(self):
        base = SAMPLERS.cls(self.base)
        params = self._base_params(base, self.base_params)
        seeds = np.random.SeedSequence(self.seed).generate_state(self.n_replicas, dtype=np.uint64) >> np.uint64(1)
        self.replicas = [base(self.target, n_chains=self.n_chains, seed=int(seeds[0]), init=self._init, **params)]
        self.replicas += [base(Tempered(base=self.target, beta=beta), n_chains=self.n_chains, seed=int(seed), **params)
                          for beta, seed in zip(self.betas[1:], seeds[1:])]
        self.n_evals += sum(replica.n_evals for replica in self.replicas[1:])
        adapting = [replica for replica in self.replicas if getattr(replica, "adapting", False)]
        if adapting:
            raise ValueError("parallel_tempering needs a fixed kernel in every replica: set burn_in=0 in base_params")
        self._swap_attempts = np.zeros(self.n_replicas - 1)
        self._swap_acceptance_sum = np.zeros(self.n_replicas - 1)
        self.states, self.log_p = self.replicas[0].states, self.replicas[0].log_p

    @property
    def swap_acceptance(self) -> np.ndarray:
        """Mean acceptance probability of exchanges between replicas k and k+1 so far (NaN before any)."""
        with np.errstate(invalid="ignore"):
            return self._swap_acceptance_sum / self._swap_attempts

    def _hot_evaluations(self) -> int:
        return sum(replica.target.n_evals for replica in self.replicas[1:])

    def _step(self):
        before = self._hot_evaluations()
        cold = self.replicas[0].step()
        for replica in self.replicas[1:]:
            replica.step(record=False)
        if (self.n_steps + 1) % self.swap_every == 0:
            self._exchange()
        self.n_evals += self._hot_evaluations() - before
        self.states, self.log_p = self.replicas[0].states, self.replicas[0].log_p
        extra = {}
        if self.record_replicas:
            hot = self.replicas[1:]
            extra = dict(extra_states=np.stack([replica.states for replica in hot], axis=1),
                         extra_log_prob=np.stack([replica.log_p / beta for replica, beta in zip(hot, self.betas[1:])],
                                                 axis=1))
        return Move(accepted=cold.accepted, proposed_sites=np.broadcast_to(np.arange(self.target.dim),
                                                                            cold.states.shape),
                    proposed_values=cold.proposed, proposed_log_prob=cold.proposed_log_prob, **extra)

    def _exchange(self) -> None:
        """One round of exchanges: all pairs (k, k+1) with k even, then all with k odd."""
        betas = self.betas
        for first in (0, 1):
            for k in range(first, self.n_replicas - 1, 2):
                cold, hot = self.replicas[k], self.replicas[k + 1]
                log_p_cold, log_p_hot = cold.log_p / betas[k], hot.log_p / betas[k + 1]
                log_alpha = swap_log_acceptance(betas[k + 1], betas[k], log_p_hot, log_p_cold)
                self._swap_attempts[k] += log_alpha.size
                self._swap_acceptance_sum[k] += acceptance_probability(log_alpha).sum()
                rows = np.flatnonzero(metropolis_accept(log_alpha, self.rng))
                if rows.size:
                    cold_states, hot_states = cold.states[rows].copy(), hot.states[rows].copy()
                    cold.replace_chains(rows, hot_states, betas[k] * log_p_hot[rows])
                    hot.replace_chains(rows, cold_states, betas[k + 1] * log_p_cold[rows])

    def exact_support(self) -> tuple[np.ndarray, np.ndarray]:
        """The joint states (K·d bits, the cold replica's first) whose replicas each lie in their base sampler's
        support, and their log Π_k p̃(x_k)^{β_k}: the joint chain's stationary law."""
        supports = [replica.exact_support()[0] for replica in self.replicas]
        joint = np.array([np.concatenate(parts) for parts in itertools.product(*supports)], dtype=np.uint8)
        return joint, self.joint_stationary_log_prob(joint)

    def joint_stationary_log_prob(self, joint_states: np.ndarray) -> np.ndarray:
        """log Π_k p̃(x_k)^{β_k} of joint states ``(m, K·d)`` (uncounted), for the exactness harness."""
        d = self.target.dim
        return sum(beta * self.target._log_prob(joint_states[:, k * d:(k + 1) * d])
                   for k, beta in enumerate(self.betas))

    def transition_row(self, x):
        """Next joint states from a joint state x (K·d bits): the replicas' rows combined, then the exchanges."""
        d, betas = self.target.dim, self.betas
        rows = [replica.transition_row(x[k * d:(k + 1) * d]) for k, replica in enumerate(self.replicas)]
        states, probs = [], []
        for combination in itertools.product(*(range(len(row[1])) for row in rows)):
            states.append(np.concatenate([rows[k][0][i] for k, i in enumerate(combination)]))
            probs.append(np.prod([rows[k][1][i] for k, i in enumerate(combination)]))
        states, probs = np.array(states, dtype=np.uint8), np.array(probs)
        if (self.n_steps + 1) % self.swap_every != 0:
            return states, probs
        for first in (0, 1):
            for k in range(first, self.n_replicas - 1, 2):
                cold, hot = states[:, k * d:(k + 1) * d], states[:, (k + 1) * d:(k + 2) * d]
                accept = acceptance_probability(swap_log_acceptance(
                    betas[k + 1], betas[k], self.target._log_prob(hot), self.target._log_prob(cold)))
                swapped = states.copy()
                swapped[:, k * d:(k + 1) * d], swapped[:, (k + 1) * d:(k + 2) * d] = hot, cold
                states, probs = np.vstack([states, swapped]), np.concatenate([probs * (1 - accept), probs * accept])
        return states, probs
