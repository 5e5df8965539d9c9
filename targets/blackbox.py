"""A user's black-box log-probability function as a target.

``from_log_prob(fn, dim)`` wraps ``fn: (n, dim) uint8 → (n,) float``. Nothing is
known about its structure, so every flip ratio is a fresh evaluation: a full
``delta_log_prob`` of one state costs ``dim`` evaluations (the LSB paper's O(d)
per step for locally balanced samplers on black-box targets).

Gradient samplers (GWG, FLSB, DMALA, DLMCf, PAS) need ∇ₓ log p̃ of a
differentiable extension of log p̃ to real x. Give it in one of two ways:

* ``grad=``: a function mapping an ``(n, dim)`` float64 batch of binary states to
  the ``(n, dim)`` gradient;
* ``autograd=True``: ``fn`` is written in torch (an ``(n, dim)`` float64 tensor
  in, ``(n,)`` out) and torch.autograd differentiates it; ``fn`` then also
  gives the values, evaluated without building a graph.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import param

from .base import Target, TargetSize


class BlackBox(Target):
    """A user-supplied function x ↦ log p̃(x) (numpy in, numpy out), optionally with its gradient."""

    registry_name = "from_log_prob"
    fn = param.Callable(default=None, doc="Function mapping an (n, dim) uint8 batch to (n,) log p̃ values; "
                        "default: independent bits with log-odds 1, −1, 0.5, …")
    n_dim = param.Integer(6, bounds=(1, 100_000), doc="Number of binary variables.")
    grad = param.Callable(default=None, doc="Gradient of a differentiable extension of fn: (n, dim) float64 "
                          "states → (n, dim) ∇ₓ log p̃.")
    autograd = param.Boolean(False, doc="fn is a torch function (float64 tensor in, tensor out), differentiated "
                             "by torch.autograd.")

    def _build(self):
        if self.autograd and self.grad is not None:
            raise ValueError("give either grad= or autograd=True, not both")
        if self.autograd and self.fn is None:
            raise ValueError("autograd=True needs fn, a torch function")
        #: Log-odds of the default model (independent bits), None when fn is given.
        self._logits = np.array([1.0, -1.0, 0.5])[np.arange(self.n_dim) % 3] if self.fn is None else None

    @classmethod
    def estimate_size(cls, params):
        """d = n_dim; the default model holds its d log-odds, a user's fn nothing known."""
        p = cls._estimate_params(params)
        return TargetSize(p["n_dim"], 8 * p["n_dim"] if p["fn"] is None else 0)

    @property
    def dim(self) -> int:
        return self.n_dim

    @property
    def differentiable(self) -> bool:
        """The default model (linear in x) and a fn given with grad= or autograd=True have a gradient."""
        return self._logits is not None or self.grad is not None or self.autograd

    def _checked_values(self, values, n: int) -> np.ndarray:
        values = np.asarray(values, dtype=np.float64)
        if values.shape != (n,):
            raise ValueError(f"fn must return shape ({n},) for a batch of {n} states; got {values.shape}")
        if np.any(np.isnan(values)) or np.any(values == np.inf):
            raise ValueError("fn returned NaN or +inf; log p̃ must be finite or −inf")
        return values

    def _log_prob(self, x):
        if self._logits is not None:
            return x @ self._logits
        if self.autograd:
            import torch

            with torch.no_grad():
                return self._checked_values(self.fn(torch.as_tensor(x, dtype=torch.float64)).numpy(), x.shape[0])
        return self._checked_values(self.fn(x), x.shape[0])

    def _value_and_grad(self, x):
        if self._logits is not None:
            return x @ self._logits, np.broadcast_to(self._logits, x.shape).copy()
        if self.autograd:
            import torch

            points = torch.as_tensor(x, dtype=torch.float64).requires_grad_(True)
            values = self.fn(points)
            (gradient,) = torch.autograd.grad(values.sum(), points)
            return (self._checked_values(values.detach().numpy(), x.shape[0]),
                    self._checked_gradient(gradient.numpy(), x))
        return self._log_prob(x), self._checked_gradient(self.grad(x.astype(np.float64)), x)

    @staticmethod
    def _checked_gradient(gradient, x) -> np.ndarray:
        gradient = np.asarray(gradient, dtype=np.float64)
        if gradient.shape != x.shape:
            raise ValueError(f"the gradient must have the states' shape {x.shape}; got {gradient.shape}")
        if not np.all(np.isfinite(gradient)):
            raise ValueError("the gradient has NaN or infinite entries")
        return gradient


def from_log_prob(fn: Callable, dim: int, grad: Callable | None = None, autograd: bool = False) -> BlackBox:
    """Wrap a black-box ``fn`` over ``dim`` binary variables as a target.

    ``grad`` (the gradient of a differentiable extension) or ``autograd=True``
    (``fn`` written in torch) make gradient samplers usable on it.
    """
    if not callable(fn):
        raise ValueError("fn must be callable")
    if grad is not None and not callable(grad):
        raise ValueError("grad must be callable")
    return BlackBox(fn=fn, n_dim=dim, grad=grad, autograd=autograd)
