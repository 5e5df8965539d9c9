"""Targets: unnormalised distributions over binary vectors (see ``targets.base``).

``make(name, **params)`` builds a target by its registry name, ``available()``
lists the names, and ``from_log_prob(fn, dim)`` wraps a user's black-box function.
Targets are immutable once built (``target.with_params(**changes)`` makes a new
one), and ``target_class(name).estimate_size(params)`` tells a target's size
without building it.
"""

from __future__ import annotations

from .kernel_cache import use_source_keyed_cache

use_source_keyed_cache()  # before any module below decorates a compiled kernel

from .base import MAX_ENUMERATE_DIM, Target, TargetSize, all_states, flip, state_codes
from .blackbox import BlackBox, from_log_prob
from .boltzmann import Boltzmann
from .bvs import BayesianVariableSelection
from .dag import DagStructure
from .gabor import GaborBoltzmann
from .markov_network import MarkovNetwork
from .pairwise import DiscsIsing, IsingChain, IsingLattice, PairwiseBinaryModel, SpinGlass3D
from .rbm import RBM
from .segmentation import IsingSegmentation

_REGISTRY: dict[str, type[Target]] = {
    cls.registry_name: cls
    for cls in (IsingChain, IsingSegmentation, IsingLattice, DiscsIsing, SpinGlass3D, Boltzmann, RBM, GaborBoltzmann,
                MarkovNetwork, BlackBox, BayesianVariableSelection, DagStructure)
}


def available() -> list[str]:
    """Registry names of all targets."""
    return list(_REGISTRY)


def target_class(name: str) -> type[Target]:
    """The class registered under ``name``."""
    try:
        return _REGISTRY[name]
    except KeyError:
        raise ValueError(f"unknown target {name!r}; available: {', '.join(_REGISTRY)}") from None


def make(name: str, **params) -> Target:
    """Build the target registered under ``name`` with the given parameters."""
    return target_class(name)(**params)


__all__ = [
    "MAX_ENUMERATE_DIM", "Target", "TargetSize", "PairwiseBinaryModel", "all_states", "flip", "state_codes",
    "available", "make", "target_class", "from_log_prob", "BlackBox", "Boltzmann", "IsingChain", "IsingLattice",
    "DiscsIsing", "IsingSegmentation", "MarkovNetwork", "RBM", "SpinGlass3D", "BayesianVariableSelection",
    "DagStructure", "GaborBoltzmann",
]
