"""States as images: the 2-D picture a lattice view draws of one state (model code, no Panel).

2-D lattices are drawn as the lattice, a 3-D lattice as one slice (its
``depth``), other targets as a near-square grid of their bits, row-major,
with NaN padding cells.
"""

from __future__ import annotations

import math

import numpy as np


def grid_shape(image_shape: tuple[int, ...] | None, dim: int) -> tuple[int, int]:
    """The (rows, columns) a state of ``dim`` bits is drawn in."""
    if image_shape is not None and len(image_shape) >= 2:
        return tuple(image_shape[-2:])
    cols = math.ceil(math.sqrt(dim))
    return math.ceil(dim / cols), cols


def as_image(vector: np.ndarray, image_shape: tuple[int, ...] | None, depth: int = 0) -> np.ndarray:
    """A state (or mean state) as a 2-D float image; padding cells are NaN; a 3-D lattice gives slice ``depth``."""
    if image_shape is not None and len(image_shape) == 3:
        return vector.reshape(image_shape)[min(depth, image_shape[0] - 1)].astype(np.float32)
    rows, cols = grid_shape(image_shape, vector.size)
    image = np.full(rows * cols, np.nan, dtype=np.float32)
    image[: vector.size] = vector
    return image.reshape(rows, cols)
