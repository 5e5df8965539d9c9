"""The optimisers of LSB's learner: torch.optim's SGD with momentum and Adam, on numpy arrays.

Algorithm 1 (``samplers.lsb``) takes plain gradient steps; the paper's runs use
SGD with momentum (Appendix D). With g the gradient:

* ``Sgd``: torch.optim.SGD with momentum μ, no dampening, no Nesterov, no weight
  decay: b ← μ·b + g (b = g at the first step), p ← p − lr·b.
* ``Adam``: torch.optim.Adam without AMSGrad or weight decay: m ← m + (1 − β₁)(g − m),
  v ← β₂·v + (1 − β₂)·g², p ← p − lr/(1 − β₁ᵗ) · m / (√v / √(1 − β₂ᵗ) + ε).

Both follow torch's formulas term for term; the results agree with
torch.optim's to rounding (``tests/test_self_balancing.py`` checks them step by
step). An optimiser keeps its moments, not the parameters: ``step`` is given the
arrays to update each time, in the same order. The learner passes numpy views
of its torch parameters, so writing a view updates the parameter.

Cost: the learner's parameters are few (LSB1: four logits and log η; LSB2: a few
dozen floats) and their gradient comes from compiled kernels, so a torch.optim
step's fixed overhead (Python and tensor dispatch) would outweigh its
arithmetic; hence these numpy steps.
"""

from __future__ import annotations

import numpy as np


class Sgd:
    """SGD with momentum."""

    def __init__(self, learning_rate: float, momentum: float = 0.9):
        self.learning_rate, self.momentum = learning_rate, momentum
        self.reset()

    def reset(self) -> None:
        """Forget the momentum (the next step starts afresh)."""
        self._buffers: list[np.ndarray] | None = None

    def step(self, parameters: list[np.ndarray], gradients: list[np.ndarray]) -> None:
        """Update ``parameters`` in place given their ``gradients``."""
        if self._buffers is None:
            self._buffers = [np.array(gradient, dtype=np.float64) for gradient in gradients]
        else:
            for buffer, gradient in zip(self._buffers, gradients):
                buffer *= self.momentum
                buffer += gradient
        for parameter, buffer in zip(parameters, self._buffers):
            parameter -= self.learning_rate * buffer


class Adam:
    """Adam."""

    def __init__(self, learning_rate: float, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8):
        self.learning_rate, self.betas, self.eps = learning_rate, betas, eps
        self.reset()

    def reset(self) -> None:
        """Forget both moments and the step count."""
        self._steps = 0
        self._moments: list[tuple[np.ndarray, np.ndarray]] | None = None

    def step(self, parameters: list[np.ndarray], gradients: list[np.ndarray]) -> None:
        """Update ``parameters`` in place given their ``gradients``."""
        beta1, beta2 = self.betas
        if self._moments is None:
            self._moments = [(np.zeros(np.shape(p)), np.zeros(np.shape(p))) for p in parameters]
        self._steps += 1
        step_size = self.learning_rate / (1.0 - beta1**self._steps)
        root_correction = (1.0 - beta2**self._steps) ** 0.5
        for parameter, gradient, (first, second) in zip(parameters, gradients, self._moments):
            first += (1.0 - beta1) * (gradient - first)
            second *= beta2
            second += (1.0 - beta2) * (gradient * gradient)
            parameter -= step_size * (first / (np.sqrt(second) / root_correction + self.eps))


OPTIMIZERS = {"sgd": Sgd, "adam": Adam}
