"""A target raised to an inverse temperature: p̃_β(x) = p̃(x)^β, for parallel tempering.

``Tempered(base=target, beta=β)`` has log p̃_β = β·log p̃ and, with it, every
local quantity scaled by β: flip log-ratios, block log-ratios, the gradient of
the differentiable extension, and (for a pairwise model, log p̃ = β₀(Σ J s s +
Σ h s)) the compiled samplers' flip tables and the Edwards–Sokal couplings at
β·β₀. So any sampler built for ``base`` runs unchanged on p̃_β, with the same
fast paths. Evaluations are counted on the tempered target only (one
evaluation of p̃_β is one of p̃), never on the base, so replicas at several
temperatures share one base target and its arrays.
"""

from __future__ import annotations

import param

from .base import Target, TargetSize


class Tempered(Target):
    """p̃(x)^β of a base target (0 < β ≤ 1 in parallel tempering; any β > 0 is allowed)."""

    registry_name = "tempered"
    base = param.ClassSelector(class_=Target, doc="The target p̃ being tempered.")
    beta = param.Number(1.0, bounds=(0.0, None), inclusive_bounds=(False, True), doc="Inverse temperature β.")

    def _build(self):
        if self.base is None:
            raise ValueError("Tempered needs a base target")

    @classmethod
    def estimate_size(cls, params):
        """The base's dimension; its arrays are shared (its own size is the base's ``nbytes``)."""
        base = params["base"]
        return TargetSize(base.dim, base.nbytes)

    @property
    def dim(self) -> int:
        return self.base.dim

    @property
    def image_shape(self):
        return self.base.image_shape

    @property
    def image_positions(self):
        return self.base.image_positions

    @property
    def image_axes(self):
        return self.base.image_axes

    @property
    def differentiable(self) -> bool:
        return self.base.differentiable

    def random_states(self, n, rng):
        return self.base.random_states(n, rng)

    @property
    def flip_tables(self):
        tables = self.base.flip_tables
        return None if tables is None else (*tables[:3], self.beta * tables[3])

    def pairwise_model(self):
        """(edges, couplings, field, β·β₀) of a pairwise base (see ``PairwiseBinaryModel.pairwise_model``)."""
        edges, couplings, field, beta = self.base.pairwise_model()
        return edges, couplings, field, self.beta * beta

    def _log_prob(self, x):
        return self.beta * self.base._log_prob(x)

    def _flip_log_ratio(self, x, idx, log_p):
        return self.beta * self.base._flip_log_ratio(x, idx, log_p / self.beta)

    def _base_log_p(self, log_p):
        """The base's log p̃ of states whose log p̃ here is ``log_p`` (β·log p̃_base), or None."""
        return None if log_p is None else log_p / self.beta

    def _delta_log_prob(self, x, log_p=None):
        return self.beta * self.base._delta_log_prob(x, self._base_log_p(log_p))

    def delta_after_flip(self, x, delta, idx, log_p=None):
        """The base's changed ratios at β·(its Δ), counted here and not on the base (whose counter is restored)."""
        before = self.base.n_evals
        sites, values = self.base.delta_after_flip(x, delta / self.beta, idx, self._base_log_p(log_p))
        self._count(self.base.n_evals - before)
        self.base.n_evals = before
        return sites, self.beta * values

    def _block_log_ratio(self, x, sites, values, log_p=None):
        return self.beta * self.base._block_log_ratio(x, sites, values, self._base_log_p(log_p))

    def _value_and_grad(self, x):
        value, grad = self.base._value_and_grad(x)
        return self.beta * value, self.beta * grad
