"""States as images: the 2-D picture a lattice view draws of one state (model code, no Panel).

2-D lattices are drawn as the lattice, a 3-D lattice as one slice (its
``depth``), a target whose bits sit elsewhere in its picture (a DAG's
adjacency matrix, an RBM's visible image beside its hidden units) by its
``image_positions``, other targets as a near-square grid of their bits,
row-major; cells holding no bit are NaN. ``site_name`` names a bit as the
picture shows it (a lattice site by its (row, column)), ``step_labels``
numbers the sites of a path or walk in the order they were flipped.
"""

from __future__ import annotations

import math

import numpy as np

from targets.picture import ImageAxes


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
        sites = sites[in_slice(sites, image_shape, depth)] - depth * rows * cols
    flat = sites if positions is None else np.asarray(positions)[sites]
    return flat % cols + 0.5, flat // cols + 0.5


def in_slice(sites: np.ndarray, image_shape: tuple[int, ...] | None, depth: int) -> np.ndarray:
    """Which of ``sites`` the picture shows: those of slice ``depth`` of a 3-D lattice, every site otherwise."""
    sites = np.asarray(sites, dtype=np.int64)
    if image_shape is None or len(image_shape) != 3:
        return np.ones(sites.shape, dtype=bool)
    return sites // (image_shape[1] * image_shape[2]) == depth


def site_name(site: int, image_shape: tuple[int, ...] | None, positions: np.ndarray | None = None,
              axes: ImageAxes | None = None) -> str:
    """Bit ``site`` named as its picture shows it: "pixel (2, 5)" or "hidden unit 17" in an RBM's blocks, "edge
    A → B" of a DAG, a predictor's name, "site (2, 5)" (or "(slice, row, column)") on a lattice, "spin 4" of a
    ring drawn as a row, "bit 12" of a grid of bits."""
    site = int(site)
    part = next((part for part in axes.parts if 0 <= site - part.first_bit < part.size), None) if axes else None
    if part is not None:
        index = site - part.first_bit
        return f"{part.unit} {divmod(index, part.shape[1])}" if part.grid else f"{part.unit} {index}"
    if image_shape is None:
        return f"bit {site}"
    cell = site if positions is None else int(positions[site])
    row, column = divmod(cell, image_shape[-1])
    if axes is not None and axes.rows and axes.columns:
        return f"edge {axes.rows[row]} → {axes.columns[column]}"
    if axes is not None and axes.columns:
        return axes.columns[column]
    if len(image_shape) == 3:
        return "site ({}, {}, {})".format(*(int(i) for i in np.unravel_index(site, image_shape)))
    return f"spin {column}" if image_shape[0] == 1 else f"site ({row}, {column})"


def step_labels(sites: np.ndarray, first_step: int = 1) -> tuple[np.ndarray, list[str]]:
    """The distinct ``sites`` of a path flipped in this order, each with its step numbers from ``first_step``:
    "3", or "3, 7" for a site flipped twice."""
    sites = np.asarray(sites, dtype=np.int64)
    distinct, first = np.unique(sites, return_index=True)
    distinct = distinct[np.argsort(first)]
    steps = np.arange(first_step, first_step + sites.size)
    return distinct, [", ".join(str(step) for step in steps[sites == site]) for site in distinct]
