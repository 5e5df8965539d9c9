"""Local Self-Balancing samplers: LSB (Algorithm 1) and FLSB (Algorithm 2) of the LSB paper.

Both propose one flip from Q_θ(x^(j)|x) = g_θ(t_j(x))/Z_θ(x) (Eq. 2) and accept
it with the Metropolis–Hastings probability A (after Eq. 1), while g_θ is
learned by minimising the bound L_θ (Eq. 5) on the mutual information of
consecutive states (Eq. 3); all of it is stated in ``samplers.lsb``.

* ``lsb`` uses the exact flip ratios t_j (``LocallyBalanced``).
* ``flsb`` proposes from the Taylor estimate log t̃_j = (1 − 2x_j) ∂ log p̃/∂x_j
  (§3.3; ``GibbsWithGradients``) and accepts with the exact p̃. With
  ``parametrization="fixed"`` and ``balancing="sqrt"`` it is exactly
  Gibbs-with-Gradients.

A learning move follows Algorithm 1: x ~ Q₁ (the chain's state or, with
probability π, a uniform state, in which case the chain stays put),
x' ~ Q_θ₀(·|x), x* uniform among the flips; one optimiser step on L̂
(``mi_objective``) for the batch of chains; x' accepted or rejected with the MH
ratio of the proposal Q_θ₀ that drew it; θ₀ ← θ. g_θ is learned for
``burn_in`` steps (``learning_moves`` moves per step, 1 by default, 2 in the LSB
authors' schedule for LSB2) and then frozen: from then on the chain is an
ordinary locally balanced sampler with a fixed g and leaves the target exactly
invariant. ``keep_adapting=True`` never freezes by itself (only ``freeze()``
does): the chain is then adaptive MCMC, whose invariance is not guaranteed.
Learning and freezing follow ``samplers.common.adaptive``: once frozen,
``frozen_params()`` is ``{"theta": θ, "burn_in": 0, "keep_adapting": False}``,
and a sampler made with those merged over the requested parameters starts
frozen with the learned θ (parameter ``theta``).

Cost, in target evaluations per chain: ``lsb`` needs the ratios at x, at x'
(for Z(x')) and at x* (for Z(x*)), 2·(1 + deg) per learning move on a sparse
model and 2d on a black box; once frozen, 1 + deg (or d) per step with the
sum-tree. ``flsb`` needs two (value and gradient at x' and x*) per learning
move and one once frozen.
"""

from __future__ import annotations

import numpy as np
import param

from samplers.balanced.locally_balanced import GibbsWithGradients, LocallyBalanced, flip_log_acceptance
from samplers.balanced.sumtree import LogSumTree
from samplers.base import ExactCase, SamplerFacts, metropolis_accept, taylor_flip_log_ratios
from samplers.common.adaptive import Adaptive
from samplers.lsb.balancing import BALANCING, MIXTURE, PARAMETRIZATIONS, learned_size
from samplers.lsb.learning import (COMPONENTS, commit_mixture_flips, dense_learning_terms, dense_proposals,
                                   mixture_component_log_g, mixture_tree_learning_terms,
                                   mixture_tree_pairwise_learning_moves, mixture_tree_proposals)
from samplers.lsb.mi_objective import BalancingLearner
from targets.base import flip


class _SelfBalancing(Adaptive, param.Parameterized):
    """Parameters and the learning step shared by LSB and FLSB (adaptive as ``samplers.common.adaptive`` says)."""

    parametrization = param.Selector(
        default="lsb1", objects=[*PARAMETRIZATIONS, "fixed"],
        doc="Learned g: lsb1 (softmax mixture of the four), lsb2 (neural h), monotone (min–max h, "
            "for near-deterministic targets), or fixed (the `balancing` function, nothing learned).")
    balancing = param.Selector(default="sqrt", objects=list(BALANCING),
                               doc="With parametrization='fixed': the balancing function g used (nothing is learned).")
    hidden_units = param.Integer(10, bounds=(1, 256), doc="Hidden units of LSB2's network h_θ.")
    monotone_blocks = param.Integer(20, bounds=(1, 64), doc="Monotone network: blocks × units per block.")
    positive_at_zero = param.Boolean(True, doc="Monotone network: g(0) > 0, so zero-ratio moves keep weight.")
    optimizer = param.Selector(default="sgd", objects=["sgd", "adam"], doc="SGD with momentum 0.9 (paper) or Adam.")
    learning_rate = param.Number(1e-2, bounds=(0.0, 10.0), inclusive_bounds=(False, True),
                                 doc="Learning rate of θ and η.")
    burn_in = param.Integer(2000, bounds=(0, None), doc="Steps K during which g_θ is learned; then it is frozen.")
    learning_moves = param.Integer(
        1, bounds=(1, 16), doc="Learning moves per step while g_θ is learned (a step's record is its last move's). "
                               "The LSB authors' runner.py makes two LSB2 moves per iteration of their Fig. 2 and one "
                               "of every fixed sampler: 2 replays that schedule, a step being their iteration.")
    keep_adapting = param.Boolean(
        False, doc="Never freeze g_θ. Warning: the chain is then adaptive MCMC and need not leave the target "
                   "invariant.")
    uniform_mixture = param.Number(1e-8, bounds=(0.0, 1.0), inclusive_bounds=(True, False),
                                   doc="π: probability that Q₁ draws a uniform state instead of the chain's.")
    theta = param.Dict(None, allow_None=True,
                       doc="θ of the learned g at step 0, as balancing_state() gives it (None: the seeded "
                           "initialisation); with burn_in=0 the chain is the frozen kernel with this θ.")

    @classmethod
    def _learned_function(cls, params: dict, seed: int = 0):
        """The g_θ that ``params`` ask for (class defaults for the rest; not "fixed"), initialised from ``seed``
        (a torch module, ``samplers.lsb.networks``, imported here: only a learning run loads torch)."""
        from samplers.lsb.networks import make_parametrization

        return make_parametrization(cls._requested(params, "parametrization"),
                                    hidden_units=cls._requested(params, "hidden_units"),
                                    blocks=cls._requested(params, "monotone_blocks"),
                                    positive_at_zero=cls._requested(params, "positive_at_zero"), seed=seed)

    @classmethod
    def estimated_bytes(cls, n_chains, dim, params=None):
        """The kernel's bytes plus, for a learned g, the learner's (``BalancingLearner.estimated_bytes``)."""
        kernel = super().estimated_bytes(n_chains, dim, params)
        if cls._requested(params, "parametrization") == "fixed":
            return kernel
        size = learned_size(cls._requested(params, "parametrization"),
                            hidden_units=cls._requested(params, "hidden_units"),
                            blocks=cls._requested(params, "monotone_blocks"))
        return kernel + BalancingLearner.estimated_bytes(size)

    def _prepare(self):
        self._init_learning()
        super()._prepare()

    def _init_learning(self) -> None:
        self.last_loss = float("nan")
        if self.parametrization == "fixed":
            if self.theta is not None:
                raise ValueError("parametrization='fixed' has no parameters θ to set; theta must be None")
            self.learner = None
        else:
            function = self._learned_function(self.param.values(), self.seed)
            if self.theta is not None:
                function.load_theta(self.theta)
            self.learner = BalancingLearner(function, self.optimizer, self.learning_rate)
        self._start_adaptation(self.learner is not None)

    def log_g(self, log_t):
        """log g(t) of the current (learned, possibly still learning) balancing function."""
        if self.learner is None:
            return super().log_g(log_t)
        return self.learner.kernel.log_g(log_t)

    def _g_kernel(self):
        """The learned g (while learning and frozen) as ``log_g_scalar`` takes it, else the fixed one."""
        if self.learner is None:
            return super()._g_kernel()
        return self.learner.kernel.arguments

    def balancing_state(self) -> dict[str, list]:
        """θ of the learned balancing function now, as nested lists ({} for a fixed g); ``theta`` takes it."""
        if self.learner is None:
            return {}
        return {name: value.detach().tolist() for name, value in self.learner.function.state_dict().items()}

    # -- the Adaptive hooks -------------------------------------------------------------------------------
    def _adaptation_steps(self):
        return None if self.keep_adapting else self.burn_in

    def _fix_kernel(self) -> None:
        """Rebuild the caches that learning did not maintain (none by default: g is read from the learner's kernel)."""

    def _kernel_params(self) -> dict:
        return {"theta": self.balancing_state(), "burn_in": 0, "keep_adapting": False}

    def _step(self):
        if self._adapts_this_step():
            for _ in range(self.learning_moves - 1):
                self._learning_step()
            return self._learning_step()
        return super()._step()

    # -- hooks for the two ratio estimates -------------------------------------------------------------
    def _current_ratios(self) -> np.ndarray:
        """The flip log-ratios (exact or estimated) at the chains' states, ``(n, d)``."""
        raise TypeError(f"{type(self).__name__} must implement _current_ratios")

    def _ratios_at(self, x: np.ndarray):
        """(flip log-ratios, log p̃, cache) of fresh states."""
        raise TypeError(f"{type(self).__name__} must implement _ratios_at")

    def _patch_after_flip(self, x, log_p, ratios, idx):
        """(sites, new ratios there, log p̃, cache) at x^(idx): the flip log-ratios that change, row by row."""
        raise TypeError(f"{type(self).__name__} must implement _patch_after_flip")

    def _keep(self, rows: np.ndarray, sites: np.ndarray, values: np.ndarray, cache) -> None:
        """Store the accepted proposals' patches (and caches) for chains ``rows``."""
        raise TypeError(f"{type(self).__name__} must implement _keep")

    # -- the compiled learning terms (``samplers.lsb.learning``); the mixture trees override these two ------------
    def _propose(self, ratios: np.ndarray, explore: np.ndarray):
        """(x' ~ Q_θ₀(·|x) for every chain — the flipped sites —, what ``_learning_terms`` reads of this step)."""
        return dense_proposals(ratios, *self.learner.kernel.arguments, self.rng)

    def _learning_terms(self, drawn, ratios, proposed, proposal, probe, probe_patch, log_t, log_t_probe, log_q, grad):
        return dense_learning_terms(ratios, *drawn, *self.learner.kernel.arguments, proposed, *proposal, probe,
                                    *probe_patch, log_t, log_t_probe, self.learner.log_eta.item(), log_q, grad)

    # -- Algorithm 1 / 2 ---------------------------------------------------------------------------------
    def _learning_step(self):
        return self._learning_move(self.rng.random(self.states.shape[0]) < self.uniform_mixture)

    def _learning_move(self, explore: np.ndarray):
        """A learning move whose chains ``explore`` draw x uniformly (Q₁'s uniform part) and stay put."""
        n, d = self.states.shape
        rows = np.arange(n)
        x, log_p, ratios = self.states, self.log_p, self._current_ratios()
        if explore.any():
            x, log_p, ratios = x.copy(), log_p.copy(), ratios.copy()
            x[explore] = self.rng.integers(0, 2, size=(int(explore.sum()), d), dtype=np.uint8)
            ratios[explore], log_p[explore], _ = self._ratios_at(x[explore])
        proposed, drawn = self._propose(ratios, explore)
        probe = self.rng.integers(0, d, size=n)
        *proposal, proposal_log_p, cache = self._patch_after_flip(x, log_p, ratios, proposed)
        *probe_patch, probe_log_p, _ = self._patch_after_flip(x, log_p, ratios, probe)
        log_t = proposal_log_p - log_p
        log_q, grad = np.empty((n, 2)), np.zeros(self.learner.kernel.values.size)
        loss, grad_eta = self._learning_terms(drawn, ratios, proposed, proposal, probe, probe_patch, log_t,
                                              probe_log_p - log_p, log_q, grad)
        self.last_loss = self.learner.update(loss / n, grad / n, grad_eta / n, self.n_steps)

        accepted = metropolis_accept(flip_log_acceptance(log_t, log_q[:, 0], log_q[:, 1]), self.rng) & ~explore
        self._keep(rows[accepted], *proposal, cache)
        old_bits = self.states[rows, proposed]
        self._apply_flips(proposed, accepted, log_t)
        record = self._single_flip_record(proposed, old_bits, accepted, proposal_log_p)
        if explore.any():  # the chain stayed; its proposal this step is itself
            record.proposed_values[explore, 0] = old_bits[explore]
            record.proposed_log_prob[explore] = self.log_p[explore]
        return record


class LocalSelfBalancing(_SelfBalancing, LocallyBalanced):
    """LSB (Algorithm 1): exact flip ratios, learned g_θ.

    With LSB1 (a mixture of the fixed functions) a learning step keeps the
    four components' normalisers in sum-trees (``samplers.lsb.learning``'s
    mixture trees) and costs O((1 + deg)·log d) per chain, like a frozen step; other
    parametrisations sum Z(x) afresh, O(d) per chain, since g changes every step.
    """

    registry_name = "lsb"
    facts = SamplerFacts(
        example={"parametrization": "lsb2", "burn_in": 20},
        exact=(ExactCase({"parametrization": "lsb1", "burn_in": 0}), ExactCase({"parametrization": "lsb2", "burn_in": 0}),
               ExactCase({"parametrization": "monotone", "burn_in": 0}, "boltzmann", {})),
        # a learning step on the mixture trees, then frozen; learning steps on a table (the dense kernels)
        warm_up=({"parametrization": "lsb1", "burn_in": 1}, {"parametrization": "lsb2", "keep_adapting": True}),
        inspection="single flip")

    @classmethod
    def estimated_bytes(cls, n_chains, dim, params=None):
        """The default plus, for LSB1 that learns, the four components' sum-trees kept while learning."""
        learns = cls._requested(params, "burn_in") > 0 or cls._requested(params, "keep_adapting")
        mixture = cls._requested(params, "parametrization") == "lsb1" and learns
        components = LogSumTree.estimated_bytes(COMPONENTS * n_chains, dim) if mixture else 0
        return super().estimated_bytes(n_chains, dim, params) + components

    def _prepare(self):
        super()._prepare()
        mixture = self.adapting and self.learner.kernel.code == MIXTURE
        self._components = LogSumTree(mixture_component_log_g(self._delta)) if mixture else None

    def _fix_kernel(self):
        self._components = None
        self._tree = LogSumTree(self.log_g(self._delta))

    def _current_ratios(self):
        return self._delta

    def _ratios_at(self, x):
        log_p = self.target.log_prob(x)
        return self.target.delta_log_prob(x, log_p), log_p, None

    def _patch_after_flip(self, x, log_p, ratios, idx):
        flipped_log_p = log_p + ratios[np.arange(idx.size), idx]
        sites, values = self.target.delta_after_flip(x, ratios, idx, flipped_log_p)
        return sites, values, flipped_log_p, None

    def _keep(self, rows, sites, values, cache):
        self._delta[rows[:, None], sites[rows]] = values[rows]
        if self._components is not None:
            commit_mixture_flips(*self._components.arrays, rows, sites, values)

    def _learning_move(self, explore):
        """On a sparse pairwise model with the mixture trees, and no chain drawing a uniform x, one compiled call
        (``mixture_tree_pairwise_learning_moves``) that draws its random numbers in the order the generic move does."""
        tables = self.target.flip_tables
        if self._components is None or tables is None or explore.any():
            return super()._learning_move(explore)
        n, d = self.states.shape
        uniforms = self.rng.random((n, self._components.depth + 1))
        probe = self.rng.integers(0, d, size=n)
        accept_uniforms = self.rng.random(n)
        proposed, accepted = np.empty(n, dtype=np.int64), np.empty(n, dtype=bool)
        proposed_log_prob, old_bits = np.empty(n), np.empty(n, dtype=np.uint8)
        log_q, grad = np.empty((n, 2)), np.zeros(COMPONENTS)
        loss, grad_eta, evaluations = mixture_tree_pairwise_learning_moves(
            self.states, self.log_p, self._delta, *self._components.arrays, self.learner.kernel.values, uniforms,
            probe, accept_uniforms, *tables, self.learner.log_eta.item(), proposed, accepted, proposed_log_prob,
            old_bits, log_q, grad)
        self.target.count_evaluations(evaluations)
        self.last_loss = self.learner.update(loss / n, grad / n, grad_eta / n, self.n_steps)
        return self._single_flip_record(proposed, old_bits, accepted, proposed_log_prob)

    def _propose(self, ratios, explore):
        if self._components is None:
            return super()._propose(ratios, explore)
        explored = np.flatnonzero(explore)
        if explored.size:  # Q₁'s uniform draws: their trees describe the drawn states for this step
            self._components.rebuild(mixture_component_log_g(ratios[explored]), self._component_rows(explored))
        proposed = np.empty(ratios.shape[0], dtype=np.int64)
        mixture_tree_proposals(*self._components.arrays, self.learner.kernel.values,
                               self.rng.random((ratios.shape[0], self._components.depth + 1)), proposed)
        return proposed, explored

    def _learning_terms(self, drawn, ratios, proposed, proposal, probe, probe_patch, log_t, log_t_probe, log_q, grad):
        if self._components is None:
            return super()._learning_terms(drawn, ratios, proposed, proposal, probe, probe_patch, log_t, log_t_probe,
                                           log_q, grad)
        terms = mixture_tree_learning_terms(*self._components.arrays, ratios, self.learner.kernel.values, proposed,
                                            *proposal, probe, *probe_patch, log_t, log_t_probe,
                                            self.learner.log_eta.item(), log_q, grad)
        if drawn.size:  # the uniform draws' trees go back to their chains' own states, which stay put this step
            self._components.rebuild(mixture_component_log_g(self._delta[drawn]), self._component_rows(drawn))
        return terms

    @staticmethod
    def _component_rows(chains):
        return (COMPONENTS * chains[:, None] + np.arange(COMPONENTS)).ravel()


class FastLocalSelfBalancing(_SelfBalancing, GibbsWithGradients):
    """FLSB (Algorithm 2): Taylor-estimated flip ratios from one gradient, learned g_θ, exact MH."""

    registry_name = "flsb"
    facts = SamplerFacts(
        example={"parametrization": "lsb1", "burn_in": 20},
        exact=(ExactCase({"parametrization": "lsb2", "burn_in": 0}),
               ExactCase({"parametrization": "lsb1", "burn_in": 0}, "boltzmann", {})),
        inspection="single flip")
    tree_on_pairwise = False  # its learning moves read the gradient, on every target

    def _current_ratios(self):
        return taylor_flip_log_ratios(self.states, self._grad)

    def _ratios_at(self, x):
        log_p, grad = self.target.value_and_grad(x)
        return taylor_flip_log_ratios(x, grad), log_p, grad

    def _patch_after_flip(self, x, log_p, ratios, idx):
        """Every Taylor ratio changes: the patch is all d sites."""
        new_ratios, new_log_p, grad = self._ratios_at(flip(x, idx))
        sites = np.repeat(np.arange(x.shape[1])[None, :], x.shape[0], axis=0)
        return sites, new_ratios, new_log_p, grad

    def _keep(self, rows, sites, values, cache):
        self._grad[rows] = cache[rows]
