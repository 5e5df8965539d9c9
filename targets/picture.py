"""How a target's state is drawn: a lattice as an image, or named variables and blocks (``Picture``).

A target that is a lattice gives ``image_shape`` (and, when its bits do not
fill the picture row by row, ``image_positions``); one whose bits are named
variables (a DAG's edges, a regression's predictors, an RBM's pixels and
hidden units) gives ``image_axes``: the rows' and columns' names, or the
titled blocks (``ImagePart``) the picture is made of, laid out by
``side_by_side``. The dashboard's state view reads these; nothing else does.
"""

from __future__ import annotations

import dataclasses

import numpy as np


@dataclasses.dataclass(frozen=True)
class ImagePart:
    """A titled block of a state's picture drawing the bits ``first_bit`` … ``first_bit + size − 1`` row-major:
    an RBM's visible image or its hidden units. ``grid``: its bits are named by (row, column), else by number."""

    title: str
    unit: str  # what one of its bits is ("pixel", "hidden unit")
    first_bit: int
    size: int
    shape: tuple[int, int]  # (rows, columns) of the block
    grid: bool = True
    left: int = 0  # the block's first column in the picture


@dataclasses.dataclass(frozen=True)
class ImageAxes:
    """Names of the rows and columns of a state's picture (``Target.image_axes``), and what each axis lists; or
    the named blocks (``parts``) the picture is made of."""

    rows: tuple[str, ...] = ()
    columns: tuple[str, ...] = ()
    rows_title: str = ""
    columns_title: str = ""
    parts: tuple[ImagePart, ...] = ()


def side_by_side(*parts: ImagePart) -> tuple[tuple[int, int], np.ndarray, ImageAxes]:
    """The picture of ``parts`` drawn left to right, one empty column apart (their ``left`` is set here): its
    ``image_shape``, ``image_positions`` and ``image_axes``."""
    placed, left = [], 0
    for part in parts:
        placed.append(dataclasses.replace(part, left=left))
        left += part.shape[1] + 1
    width = left - 1
    positions = [part.left + np.arange(part.size) // part.shape[1] * width + np.arange(part.size) % part.shape[1]
                 for part in placed]
    return (max(part.shape[0] for part in parts), width), np.concatenate(positions), ImageAxes(parts=tuple(placed))


class Picture:
    """A target's picture (module docstring); by default none: the state is drawn as a row of bits."""

    @property
    def image_shape(self) -> tuple[int, ...] | None:
        """Shape to draw a state as an image (lattices), or ``None``."""
        return None

    @property
    def image_positions(self) -> np.ndarray | None:
        """Where each bit sits in the flattened picture of ``image_shape`` (``None``: bit i in cell i)."""
        return None

    @property
    def image_axes(self) -> ImageAxes | None:
        """Names of the picture's rows and columns when its cells are named variables (``None``: a lattice)."""
        return None
