"""A general pairwise binary model (Boltzmann machine) from the user's couplings.

    log p̃(x) = β ( ½ sᵀ J s + hᵀ s ),   s = 2x − 1,

with J symmetric with zero diagonal (dense numpy or scipy sparse) and h a
vector. ½ sᵀJs = Σ_{i<j} J_ij s_i s_j, so this is ``PairwiseBinaryModel`` with
one edge per non-zero J_ij, i < j.
"""

from __future__ import annotations

import numpy as np
import param
from scipy import sparse

from .base import TargetSize, array_shape, stored_bytes
from .pairwise import PairwiseBinaryModel, model_bytes

#: Spins of the default model.
DEFAULT_DIM = 8


def _frustrated_default(dim: int = DEFAULT_DIM, seed: int = 0):
    """A small random frustrated model: Gaussian couplings of both signs, non-zero fields."""
    rng = np.random.default_rng(seed)
    upper = np.triu(rng.normal(scale=0.4, size=(dim, dim)), k=1)
    return upper + upper.T, rng.normal(scale=0.3, size=dim)


def _validated_couplings(J) -> sparse.coo_matrix:
    if J is None:
        raise ValueError("J: a coupling matrix is required")
    matrix = sparse.coo_matrix(J if sparse.issparse(J) else np.asarray(J, dtype=np.float64))
    if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1] or matrix.shape[0] < 1:
        raise ValueError(f"J must be a square matrix; got shape {matrix.shape}")
    if not np.all(np.isfinite(matrix.data)):
        raise ValueError("J must contain only finite values")
    if np.any(matrix.diagonal() != 0):
        raise ValueError("J must have a zero diagonal")
    asym = abs(matrix - matrix.T)
    if asym.nnz and asym.max() > 1e-12 * max(1.0, abs(matrix).max()):
        raise ValueError("J must be symmetric (J == J.T)")
    return matrix


def _row_nonzeros(J) -> list[int]:
    """Non-zero entries of each row of J (dense, nested list or sparse), in O(d) extra memory."""
    if sparse.issparse(J):
        return J.count_nonzero(axis=1).tolist()
    return [int(np.count_nonzero(row)) for row in J]


class Boltzmann(PairwiseBinaryModel):
    """Pairwise binary model from a user's symmetric coupling matrix J, field h and β."""

    registry_name = "boltzmann"
    J = param.Parameter(default=None, doc="Symmetric coupling matrix with zero diagonal (dense or scipy sparse); "
                        "default: a random frustrated 8-spin model.")
    h = param.Parameter(default=None, doc="Field vector of length d (default zeros, or the default model's field).")
    beta = param.Number(1.0, bounds=(0.0, 100.0), doc="Inverse temperature β.")

    def _build(self):
        J, h = self.J, self.h
        if J is None:
            J, default_h = _frustrated_default()
            h = default_h if h is None else h
        matrix = _validated_couplings(J)
        dim = matrix.shape[0]
        field = np.zeros(dim) if h is None else np.asarray(h, dtype=np.float64)
        if field.shape != (dim,):
            raise ValueError(f"h must have shape ({dim},) to match J; got {field.shape}")
        if not np.all(np.isfinite(field)):
            raise ValueError("h must contain only finite values")
        upper = sparse.triu(matrix, k=1).tocoo()
        keep = upper.data != 0
        edges = np.stack([upper.row[keep], upper.col[keep]], axis=1)
        self._set_model(edges, upper.data[keep], field, self.beta)

    @classmethod
    def estimate_size(cls, params):
        """d = J's side; one edge per non-zero pair J_ij = J_ji, the neighbour table as wide as J's
        fullest row; plus the stored copies of J and h. Reads J once (no d × d temporary)."""
        p = cls._estimate_params(params)
        J = p["J"]
        if J is None:
            dim, nonzero = DEFAULT_DIM, [DEFAULT_DIM - 1] * DEFAULT_DIM
        else:
            shape = array_shape(J)
            if len(shape) != 2 or shape[0] != shape[1]:
                raise ValueError(f"J must be a square matrix; got shape {shape}")
            dim, nonzero = shape[0], _row_nonzeros(J)
        size = model_bytes(dim, sum(nonzero) // 2, max(nonzero, default=0))
        return TargetSize(dim, size + stored_bytes(J) + stored_bytes(p["h"]))
