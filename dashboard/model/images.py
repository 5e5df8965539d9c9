"""States as images: the 2-D picture a lattice view draws of one state (model code, no Panel).

2-D lattices are drawn as the lattice, a 3-D lattice as one slice (its
``depth``), a target whose bits sit elsewhere in its picture (a DAG's
adjacency matrix) by its ``image_positions``, other targets as a near-square
grid of their bits, row-major; cells holding no bit are NaN.
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


def as_image(vector: np.ndarray, image_shape: tuple[int, ...] | None, depth: int = 0,
             positions: np.ndarray | None = None) -> np.ndarray:
    """A state (or mean state) as a 2-D float image; a 3-D lattice gives slice ``depth``; bit i goes to the flat
    cell ``positions[i]`` (default i)."""
    if image_shape is not None and len(image_shape) == 3:
        return vector.reshape(image_shape)[min(depth, image_shape[0] - 1)].astype(np.float32)
    rows, cols = grid_shape(image_shape, vector.size)
    image = np.full(rows * cols, np.nan, dtype=np.float32)
    image[slice(vector.size) if positions is None else positions] = vector
    return image.reshape(rows, cols)


def cell_centres(sites: np.ndarray, image_shape: tuple[int, ...] | None, dim: int, depth: int = 0,
                 positions: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(x, y) centres of the cells drawing bits ``sites`` in the picture ``as_image`` makes (a 3-D lattice:
    only the bits of the shown slice ``depth``)."""
    rows, cols = grid_shape(image_shape, dim)
    sites = np.asarray(sites, dtype=np.int64)
    if image_shape is not None and len(image_shape) == 3:
        sites = sites[sites // (rows * cols) == depth] - depth * rows * cols
    flat = sites if positions is None else np.asarray(positions)[sites]
    return flat % cols + 0.5, flat // cols + 0.5
