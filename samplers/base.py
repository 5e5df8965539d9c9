"""The sampler contract: a batch of chains advanced by one vectorised ``step()``.

Every sampler holds ``n_chains`` states (an ``(n_chains, dim)`` uint8 array),
their log p̃, and a seeded ``numpy.random.Generator``. A kernel implements
``_step()``, which moves every chain in place and returns a ``Move`` (what it
proposed and what became of it); ``step()`` completes that into a
``StepRecord`` with the new states, the proposals and their log p̃ (already
computed by the move, so OPAD+ costs no extra evaluation) and the cumulative
number of target evaluations this sampler made (see ``targets.counting``).

For the exactness harness every sampler also gives ``transition_row(x)``: the
exact distribution of the next state from a single state x, computed from the
same proposal and acceptance functions that ``step()`` samples from, over the
states its chains move among (``exact_support``). A kernel describes its own
move for the inspector (``describe_move``), and states on its class what the
rest of the project needs to know of it (``facts``: ``SamplerFacts``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import NamedTuple

import numpy as np
import numpy.typing as npt
import param
from numba import njit

from targets.base import Target
from targets.compiled import helper


class StepRecord(NamedTuple):
    """What one step of a batch of chains did (immutable: a named tuple, cheaper to build than a frozen
    dataclass, which costs a noticeable share of a small Metropolis step).

    ``proposed`` (``(n_chains, dim)``) is computed when read, from the new
    states and the proposal's changed sites and values, so a step pays nothing
    for recording it.
    """

    states: np.ndarray
    log_prob: np.ndarray
    accepted: np.ndarray
    proposed_sites: np.ndarray
    proposed_values: np.ndarray
    proposed_log_prob: np.ndarray
    n_evals: int
    step: int
    #: On the first step after a reset: the chains' initial states and log p̃ (else None),
    #: so that a record stream describes each whole chain (see ``samplers.opad.store``).
    start_states: np.ndarray | None = None
    start_log_prob: np.ndarray | None = None
    #: ``(n_chains, dim)`` exact log p̃(x^(j)) − log p̃(x) of every single-flip neighbour of the
    #: state x each chain held *before* the step — scores a locally balanced proposal computed
    #: anyway — when the sampler's ``record_neighbours`` is on (else None; see ``samplers.opad.store``).
    scored_log_ratio: np.ndarray | None = None
    #: ``(n_chains, m, d)`` further states a step scored beside its proposals, with their log p̃
    #: (``(n_chains, m)``), for OPAD+ — parallel tempering's hot replicas (``record_replicas``); else None.
    extra_states: np.ndarray | None = None
    extra_log_prob: np.ndarray | None = None

    @property
    def proposed(self) -> np.ndarray:
        """The proposals, ``(n_chains, dim)`` (a new array at each read)."""
        out = self.states.copy()
        out[np.arange(out.shape[0])[:, None], self.proposed_sites] = self.proposed_values
        return out


#: A ring of six spins with a field (``targets.make("ising1d", **TINY_RING)``): small enough to enumerate, and
#: every sampler of binary vectors runs on it.
TINY_RING = MappingProxyType({"m": 6, "beta": 0.8, "J": 1.0, "h": 0.3, "mu": 1.0})


def _frozen(mapping: Mapping | None) -> Mapping:
    return MappingProxyType(dict(mapping or {}))


@dataclass(frozen=True)
class ExactCase:
    """A setting whose exact kernel the conformance suite builds (``tests/test_conformance.py``): the sampler's
    parameters on a registered target small enough to enumerate (``targets.make(target, **target_params)``)."""

    params: Mapping = field(default_factory=dict)
    target: str = "ising1d"
    target_params: Mapping = field(default_factory=lambda: TINY_RING)

    def __post_init__(self):
        object.__setattr__(self, "params", _frozen(self.params))
        object.__setattr__(self, "target_params", _frozen(self.target_params))


@dataclass(frozen=True)
class SamplerFacts:
    """What the project needs to know of a sampler class besides its kernel, in one place on the class
    (``Sampler.facts``), read through the registry by the conformance suite and every test over all samplers,
    by parallel tempering (its bases), the kernel warm-up and the dashboard's inspector.

    * ``example``: parameters of a short run on ``example_target`` (a registered target's name and parameters);
    * ``exact``: the settings whose exact kernel the conformance suite builds: π-invariant on the sampler's
      ``exact_support``, reversible when ``reversible`` (detailed balance), irreducible and aperiodic (the second
      largest eigenvalue modulus below one), and the vectorised ``step`` sampling it;
    * ``tempering_base``: whether parallel tempering may run it in every replica (it samples any tempered
      binary target);
    * ``warm_up``: parameter sets that reach its compiled kernels (``samplers.common.warmup``), stepped on the
      warm-up targets ``warm_up_on`` names (``pairwise``, ``black_box``, ``rbm``), its ``transition_row`` too when
      ``warm_up_transition_row`` (compiled as well, for the inspector);
    * ``inspection``: the kind of move the inspector shows for a step of it (``samplers.diagnostics.inspection``).
    """

    example: Mapping = field(default_factory=dict)
    example_target: tuple[str, Mapping] = ("ising_segmentation", MappingProxyType({"size": 6}))
    exact: tuple[ExactCase, ...] = (ExactCase(),)
    reversible: bool = True
    tempering_base: bool = True
    warm_up: tuple[Mapping, ...] = ()
    warm_up_on: tuple[str, ...] = ("pairwise", "black_box")
    warm_up_transition_row: bool = False
    inspection: str = "other"

    def __post_init__(self):
        object.__setattr__(self, "example", _frozen(self.example))
        object.__setattr__(self, "example_target", (self.example_target[0], _frozen(self.example_target[1])))
        object.__setattr__(self, "warm_up", tuple(_frozen(params) for params in self.warm_up))


class Move(NamedTuple):
    """What a kernel's ``_step`` returns: the move it proposed to every chain and what became of it. The kernel has
    already updated ``states`` and ``log_p`` in place (and counted its evaluations on the target); ``step()``
    completes this into the ``StepRecord``. The proposal is the state before the step with ``proposed_sites`` set
    to ``proposed_values`` (``StepRecord.proposed``)."""

    #: ``(n_chains,)``: whether each chain moved to its proposal.
    accepted: npt.NDArray[np.bool_]
    #: ``(n_chains, k)``: the sites each proposal sets (one that changes fewer repeats a site, or sets a site to
    #: its own value).
    proposed_sites: npt.NDArray[np.integer]
    #: ``(n_chains, k)``: the values it sets them to.
    proposed_values: npt.NDArray[np.uint8]
    #: ``(n_chains,)``: log p̃ of each proposal.
    proposed_log_prob: npt.NDArray[np.float64]
    #: Further states the step scored, ``(n_chains, m, d)``, and their log p̃, for OPAD+ (``StepRecord``); else None.
    extra_states: npt.NDArray[np.uint8] | None = None
    extra_log_prob: npt.NDArray[np.float64] | None = None


def sample_categorical(log_weights: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One index per row drawn with probability ∝ exp(log_weights) (inverse-CDF)."""
    return sample_weighted(np.exp(log_weights - log_weights.max(axis=1, keepdims=True)), rng)


def sample_weighted(weights: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One index per row drawn with probability ∝ weights (non-negative, inverse-CDF)."""
    cumulative = np.cumsum(weights, axis=1)
    u = rng.random(weights.shape[0]) * cumulative[:, -1]
    return np.minimum((cumulative <= u[:, None]).sum(axis=1), weights.shape[1] - 1)


def log_softmax(log_weights: np.ndarray) -> np.ndarray:
    """Normalise log-weights along the last axis (max-shifted; −inf entries allowed).

    Written out rather than via ``scipy.special.logsumexp``, whose array-API
    dispatch costs more than the arithmetic on the per-step hot path.
    """
    shift = log_weights.max(axis=-1, keepdims=True)
    return log_weights - (shift + np.log(np.exp(log_weights - shift).sum(axis=-1, keepdims=True)))


@njit(cache=True)
def log_add(a, b):
    """log(e^a + e^b) (compiled), exact for −∞ operands."""
    high, low = (a, b) if a >= b else (b, a)
    return high if low == -np.inf else high + np.log1p(np.exp(low - high))


@helper
def inverse_cdf(weights, total, u):
    """The index j with Σ_{k<j} w_k ≤ u·total < Σ_{k≤j} w_k (compiled; a zero weight is never drawn, and rounding
    past the end gives the last positive one)."""
    threshold, running, pick = u * total, 0.0, 0
    for k in range(weights.size):
        if weights[k] > 0.0:
            pick = k
            running += weights[k]
            if running > threshold:
                break
    return pick


def taylor_flip_log_ratios(x: np.ndarray, grad: np.ndarray) -> np.ndarray:
    """First-order estimate of every flip log-ratio, log t_j(x) ≈ (1 − 2x_j) ∂ log p̃/∂x_j (Grathwohl et al. 2021)."""
    return (1.0 - 2.0 * x) * grad


def metropolis_accept(log_alpha: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Accept each row with probability min(1, exp(log_alpha))."""
    return np.log(rng.random(log_alpha.shape[0])) < log_alpha


def acceptance_probability(log_alpha: np.ndarray) -> np.ndarray:
    """min(1, exp(log_alpha)), the probability ``metropolis_accept`` accepts with."""
    return np.exp(np.minimum(0.0, log_alpha))


#: Bytes per chain whatever the dimension: log p̃, the acceptance flags, and in the step record the chain's
#: log p̃, proposal log p̃, flag, and the sites and values of a single-flip move.
BYTES_PER_CHAIN = 64


class Sampler(param.Parameterized):
    """Base class: state, seeding, evaluation accounting, step records."""

    registry_name = ""
    #: What the rest of the project needs to know of this sampler (``SamplerFacts``); every registered sampler
    #: states its own.
    facts = SamplerFacts()
    #: Bytes per chain and site of the default ``estimated_bytes``: the state (uint8), and in the last step
    #: record its copy and the proposals a reader computes from it; subclasses add their per-site caches (8 per
    #: float64 cache).
    bytes_per_site = 3
    n_chains = param.Integer(1, bounds=(1, 100_000), doc="Number of chains advanced together.")
    seed = param.Integer(0, bounds=(0, 2**63 - 1), doc="Seed of the sampler's random numbers and initial states.")

    def __init__(self, target: Target, init=None, **params):
        if not isinstance(target, Target):
            raise ValueError(f"target must be a targets.Target; got {type(target).__name__}")
        super().__init__(**params)
        self.target = target
        self._validate()
        self.reset(init)

    def _validate(self) -> None:
        """Check parameters against the target (raise ValueError)."""

    # -- state ----------------------------------------------------------------------------
    def reset(self, init=None) -> None:
        """Restart from ``init`` (a state or batch) or from the target's random states; reseed."""
        self.rng = np.random.default_rng(self.seed)
        if init is None:
            states = self.target.random_states(self.n_chains, self.rng)
        else:
            states = self.target.check_states(init)
            if states.shape[0] == 1:
                states = np.repeat(states, self.n_chains, axis=0)
            if states.shape[0] != self.n_chains:
                raise ValueError(f"init must hold 1 or n_chains={self.n_chains} states; got {states.shape[0]}")
        self.n_evals = 0
        self.n_steps = 0
        self.last_accepted = np.zeros(self.n_chains, dtype=bool)
        before = self.target.n_evals
        self.states = states.copy()
        self.log_p = self.target.log_prob(self.states)
        if not np.all(np.isfinite(self.log_p)):
            raise ValueError("an initial state has zero probability (log p̃ = −inf); pass init= with valid states")
        self._prepare()
        self.n_evals += self.target.n_evals - before

    def _prepare(self) -> None:
        """Build per-chain caches after a reset (uncounted work is not allowed here)."""

    def _require_gradient(self) -> None:
        """Refuse a target without a differentiable extension, naming this sampler and what is missing."""
        if not self.target.differentiable:
            raise ValueError(
                f"{self.registry_name} needs the gradient of log p̃ (a differentiable target), and "
                f"{self.target.registry_name!r} has none: for your own function pass grad= or autograd=True "
                f"to from_log_prob, or choose a sampler that uses exact flip ratios")

    def replace_chains(self, rows: np.ndarray, states: np.ndarray, log_p: np.ndarray) -> None:
        """Put ``states`` (log p̃ under this sampler's target: ``log_p``) into chains ``rows`` and rebuild the
        per-chain caches (``_prepare``, its evaluations counted): how parallel tempering swaps replicas."""
        self.states[rows] = states
        self.log_p[rows] = log_p
        before = self.target.n_evals
        self._prepare()
        self.n_evals += self.target.n_evals - before

    # -- stepping ---------------------------------------------------------------------------
    def _step(self) -> Move:
        """Advance every chain by one move of this kernel (states and log p̃ in place) and say what it proposed."""
        raise TypeError(f"{type(self).__name__} must implement _step")

    def step(self, record: bool = True) -> StepRecord | None:
        """Advance every chain by one move and return the record of it.

        ``record=False`` skips the O(n_chains·d) snapshot of the states and
        returns ``None`` (the acceptance mask is still in ``last_accepted``):
        the move itself costs O(1) per chain on sparse models.
        """
        start = (self.states.copy(), self.log_p.copy()) if record and self.n_steps == 0 else (None, None)
        scored = self._scored_neighbourhood() if record else None
        before = self.target.n_evals
        moved = self._step()
        self.n_evals += self.target.n_evals - before
        self.n_steps += 1
        self.last_accepted = moved.accepted
        if not record:
            return None
        return StepRecord(
            states=self.states.copy(),
            log_prob=self.log_p.copy(),
            n_evals=self.n_evals,
            step=self.n_steps,
            start_states=start[0],
            start_log_prob=start[1],
            scored_log_ratio=scored,
            **moved._asdict(),
        )

    def _scored_neighbourhood(self) -> np.ndarray | None:
        """Flip log-ratios of all neighbours of the current states, if the sampler scored and records them."""
        return None

    def _single_flip_record(self, idx, old_bits, accepted, proposed_log_prob) -> Move:
        """The ``Move`` of single flips: each chain proposed flipping site ``idx`` (whose value was ``old_bits``)."""
        return Move(
            accepted=accepted,
            proposed_sites=idx[:, None],
            proposed_values=(1 - old_bits)[:, None].astype(np.uint8),
            proposed_log_prob=proposed_log_prob,
        )

    def _apply_flips(self, idx: np.ndarray, accepted: np.ndarray, log_ratio: np.ndarray) -> None:
        rows = np.flatnonzero(accepted)
        self.states[rows, idx[rows]] ^= 1
        self.log_p[rows] += log_ratio[rows]

    # -- the inspector -------------------------------------------------------------------------
    def describe_move(self, x: np.ndarray, proposal: np.ndarray, record: StepRecord, chain: int, common: dict):
        """This kernel's account of the move of ``chain`` from ``x`` to ``proposal`` recorded in ``record``, for
        the inspector (``samplers.diagnostics.inspection.inspect_move``): a ``ProposalInspection`` of its kind
        (``facts.inspection``) built on ``common`` (what every move has: step, state, sites, outcome, log-ratios),
        recomputed from the kernel's own proposal functions; None when the kernel tells no more than ``common``."""
        return None

    # -- exact kernel ---------------------------------------------------------------------------
    def exact_support(self) -> tuple[np.ndarray, np.ndarray]:
        """The states this sampler's chains move among and their log p̃, on an enumerable target: what its exact
        transition matrix is built over (``samplers.common.exact``), π ∝ p̃ there. Default: every state of the
        target with p̃ > 0."""
        states, log_p = self.target.enumerate()
        keep = np.isfinite(log_p)
        return states[keep], log_p[keep]

    def transition_row(self, x: np.ndarray):
        """Exact next-state distribution from one state ``x``: ``(states (m, d), probs (m,))``."""
        raise TypeError(f"{type(self).__name__} must implement transition_row")

    @staticmethod
    def _with_stay(x: np.ndarray, candidates: np.ndarray, probs: np.ndarray):
        """Append the current state with the probability that is left over."""
        stay = max(0.0, 1.0 - float(np.sum(probs)))
        return np.vstack([candidates, x[None, :]]), np.append(probs, stay)

    # -- memory ----------------------------------------------------------------------------------------------
    @classmethod
    def estimated_bytes(cls, n_chains: int, dim: int, params: dict | None = None) -> int:
        """Bytes a sampler of this class with ``params`` holds for ``n_chains`` chains of dimension ``dim``.

        ``params`` are requested parameters (class defaults for the others).
        Counted: the states, log p̃ and every per-chain cache (flip ratios,
        sum-trees, walk records, gradients, …), the fixed tables (block
        enumerations, score tables, learned functions with their optimiser
        state, histories and autograd graph), and the arrays of the last
        ``StepRecord``, which a caller keeps. An upper estimate: never below
        what is held, and within about 2× of it for everything that grows
        with ``n_chains``·``dim`` (``tests/test_sampler_size.py``). Not
        counted: the target's own memory, Python objects and the random
        generator (a few kB), and the temporaries of a step (a few
        ``n_chains``·``dim`` float64 arrays in the target's evaluations, and
        ``n_chains`` × the number of candidates for the block samplers).

        Default: ``n_chains``·(``dim``·``bytes_per_site`` + ``BYTES_PER_CHAIN``)
        + 8·``dim`` (a per-site table such as a reference state).
        """
        return int(n_chains * (dim * cls.bytes_per_site + BYTES_PER_CHAIN) + 8 * dim)

    @classmethod
    def _requested(cls, params: dict | None, name: str):
        """Parameter ``name`` as requested in ``params``, else the class default."""
        return (params or {}).get(name, cls.param[name].default)

    def config(self) -> dict:
        """Name and parameter values: with the target's config this replays a run exactly."""
        values = {k: v for k, v in self.param.values().items() if k != "name"}
        return {"sampler": self.registry_name, "params": values}
