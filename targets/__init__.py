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
from .registry import Registry
from .segmentation import IsingSegmentation

TARGETS = Registry("target")
TARGETS.add(IsingChain, IsingSegmentation, IsingLattice, DiscsIsing, SpinGlass3D, Boltzmann, RBM, GaborBoltzmann,
            MarkovNetwork, BlackBox, BayesianVariableSelection, DagStructure)
#: Registry names of all targets.
available = TARGETS.names
#: The target class registered under a name.
target_class = TARGETS.cls


def make(name: str, **params) -> Target:
    """Build the target registered under ``name`` with the given parameters."""
    return target_class(name)(**params)


__all__ = [
    "MAX_ENUMERATE_DIM", "Target", "TargetSize", "PairwiseBinaryModel", "all_states", "flip", "state_codes",
    "available", "make", "target_class", "from_log_prob", "BlackBox", "Boltzmann", "IsingChain", "IsingLattice",
    "DiscsIsing", "IsingSegmentation", "MarkovNetwork", "RBM", "SpinGlass3D", "BayesianVariableSelection",
    "DagStructure", "GaborBoltzmann",
]
