"""The learned balancing functions g_θ as torch modules: LSB1, LSB2 and the monotone network.

Their definitions (LSB paper §3.1, Propositions 3.1–3.2, Appendix G) and how a
sampler evaluates them (tabulated at knots, or LSB1's mixture exactly) are
``samplers.lsb.balancing``'s; their sizes, known before torch builds them, are
``balancing.learned_size``. This is the only module of the samplers that imports
torch: a learning sampler loads it when it builds its g_θ.

Cost: one network pass over the 513 knots per learning step (``compiled_parameters``);
LSB1's gradient is in closed form (no autograd pass).
"""

from __future__ import annotations

import numpy as np
import torch

from samplers.lsb.balancing import (BALANCING, HALF_KNOTS, MIRROR_SHIFT, MIXTURE, PARAMETRIZATIONS, TABLE,
                                    BalancingTable, CompiledBalancing, MixtureWeights, mirror_half)


class LearnedBalancing(torch.nn.Module):
    """A balancing function g_θ with parameters θ; ``log_g`` is exact for any log t.

    Samplers use it through ``compiled_parameters``: a differentiable vector v(θ)
    that, with a code, is a ``CompiledBalancing``. A learner computes ∂L/∂v in
    compiled code and back-propagates it into θ through v(θ) alone. By default v
    is log g_θ at ``KNOTS`` (a ``BalancingTable``).
    """

    code = TABLE

    def log_g(self, log_t: torch.Tensor) -> torch.Tensor:
        raise TypeError(f"{type(self).__name__} must implement log_g")

    def compiled_parameters(self) -> torch.Tensor:
        """v(θ) for ``code``: here log g_θ at ``KNOTS``, balancing exactly by mirroring (differentiable in θ)."""
        return mirror_half(self.log_g(torch.as_tensor(HALF_KNOTS)), torch.as_tensor(MIRROR_SHIFT))

    def compiled(self) -> CompiledBalancing:
        """The function as compiled kernels use it (``BalancingTable`` by default)."""
        with torch.no_grad():
            return self.compiled_from(self.compiled_parameters().numpy())

    def compiled_from(self, values: np.ndarray) -> CompiledBalancing:
        return BalancingTable(values)

    def parameter_gradients(self, values: torch.Tensor, grad_values: np.ndarray) -> list[np.ndarray]:
        """∂L/∂θ of each parameter (``parameters()`` order) from ∂L/∂v, back-propagated through ``values`` = v(θ)
        (``compiled_parameters``)."""
        gradients = torch.autograd.grad(values, list(self.parameters()), torch.as_tensor(grad_values))
        return [gradient.numpy() for gradient in gradients]

    def load_theta(self, theta: dict) -> None:
        """Set θ from ``theta`` (name → nested lists, as a sampler's ``balancing_state`` gives it)."""
        current = self.state_dict()
        if set(theta) != set(current):
            raise ValueError(f"theta needs the keys {sorted(current)}; got {sorted(theta)}")
        tensors = {name: torch.as_tensor(np.asarray(value, dtype=np.float64)) for name, value in theta.items()}
        for name, tensor in tensors.items():
            if tensor.shape != current[name].shape or not torch.isfinite(tensor).all():
                raise ValueError(f"theta[{name!r}] must be finite with shape {tuple(current[name].shape)}")
        self.load_state_dict(tensors)

    def describe(self, values: np.ndarray | None = None) -> dict[str, float]:
        """Named scalars worth tracing while learning (LSB1: its weights), from v(θ) if given (``compiled_parameters``
        as numbers, cheaper than evaluating it again)."""
        return {}


def _uniform(shape, bound: float, generator: torch.Generator) -> torch.nn.Parameter:
    values = torch.empty(shape, dtype=torch.float64).uniform_(-bound, bound, generator=generator)
    return torch.nn.Parameter(values)


class MixtureBalancing(LearnedBalancing):
    """LSB1: g_θ = Σ_i softmax(θ)_i g_i over the four fixed functions (Proposition 3.1), used exactly.

    Its compiled form is ``MixtureWeights`` with v(θ) = w = softmax(θ), so
    Z_θ(x) = Σ_i w_i Z_i(x) splits into the four fixed functions' normalisers,
    which a sampler can keep in sum-trees (``samplers.lsb.learning``).
    """

    code = MIXTURE

    def __init__(self, seed: int = 0):
        super().__init__()
        self.names = list(BALANCING)
        self.theta = torch.nn.Parameter(torch.zeros(len(self.names), dtype=torch.float64))

    def log_weights(self) -> torch.Tensor:
        return torch.log_softmax(self.theta, dim=0)

    def log_g(self, log_t):
        components = np.stack([f(log_t.detach().numpy()) for f in BALANCING.values()], axis=-1)
        return torch.logsumexp(self.log_weights() + torch.as_tensor(components), dim=-1)

    def compiled_parameters(self):
        return torch.softmax(self.theta, dim=0)

    def compiled_from(self, values):
        return MixtureWeights(values)

    def parameter_gradients(self, values, grad_values):
        """In closed form: v = w = softmax(θ), so ∂L/∂θ_k = w_k·(∂L/∂w_k − Σ_i w_i ∂L/∂w_i) (no autograd pass,
        which costs more than a whole learning step's arithmetic; the tests check it against autograd)."""
        weights = values.detach().numpy()
        return [weights * (grad_values - weights @ grad_values)]

    def describe(self, values=None):
        weights = self.log_weights().detach().exp().numpy() if values is None else values
        return {f"w_{name}": float(w) for name, w in zip(self.names, weights)}


class NeuralBalancing(LearnedBalancing):
    """LSB2: g_θ(t) = h_θ(t)/2 + t·h_θ(1/t)/2, log h_θ a one-hidden-layer tanh network (Proposition 3.2)."""

    def __init__(self, hidden_units: int = 10, seed: int = 0):
        super().__init__()
        generator = torch.Generator().manual_seed(seed)
        self.w1 = _uniform(hidden_units, 1.0, generator)
        self.b1 = _uniform(hidden_units, 1.0, generator)
        self.w2 = _uniform(hidden_units, hidden_units**-0.5, generator)
        self.b2 = torch.nn.Parameter(torch.zeros((), dtype=torch.float64))

    def log_h(self, log_t: torch.Tensor) -> torch.Tensor:
        hidden = torch.tanh(torch.asinh(log_t)[..., None] * self.w1 + self.b1)
        return hidden @ self.w2 + self.b2

    def log_g(self, log_t):
        return torch.logaddexp(self.log_h(log_t), log_t + self.log_h(-log_t)) - np.log(2.0)


class MonotoneBalancing(NeuralBalancing):
    """Appendix G: h_θ non-decreasing in t, a min–max network of ``blocks`` × ``blocks`` units."""

    def __init__(self, blocks: int = 20, positive_at_zero: bool = True, seed: int = 0):
        LearnedBalancing.__init__(self)
        generator = torch.Generator().manual_seed(seed)
        self.log_slopes = _uniform((blocks, blocks), 1.0, generator)
        self.intercepts = _uniform((blocks, blocks), 1.0, generator)
        self.positive_at_zero = positive_at_zero

    def log_h(self, log_t):
        s = torch.sigmoid(log_t)[..., None, None]
        log_h = (torch.exp(self.log_slopes) * s + self.intercepts).amin(dim=-1).amax(dim=-1)
        if self.positive_at_zero:
            return log_h
        return log_h + torch.nn.functional.logsigmoid(log_t)


def make_parametrization(name: str, *, hidden_units: int = 10, blocks: int = 20,
                         positive_at_zero: bool = True, seed: int = 0) -> LearnedBalancing:
    """The learned balancing function ``name`` ("lsb1", "lsb2" or "monotone"), seeded."""
    if name == "lsb1":
        return MixtureBalancing(seed=seed)
    if name == "lsb2":
        return NeuralBalancing(hidden_units=hidden_units, seed=seed)
    if name == "monotone":
        return MonotoneBalancing(blocks=blocks, positive_at_zero=positive_at_zero, seed=seed)
    raise ValueError(f"parametrization must be one of {sorted(PARAMETRIZATIONS)}; got {name!r}")
