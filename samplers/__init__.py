"""Samplers: batches of Markov chains on binary spaces (see ``samplers.base``).

``make(name, target, n_chains=..., seed=..., **params)`` builds one,
``available()`` lists the names, ``run(sampler, n_steps)`` runs headless.
Samplers that adapt their kernel during a burn-in (LSB, FLSB, intracluster
with adapt) are ``Adaptive`` (``samplers.adaptive``): ``adapting``,
``frozen_at``, ``freeze()``, ``frozen_params()``.
"""

from __future__ import annotations

from targets.base import Target

from .adaptive import Adaptive
from .balancing import BALANCING, log_balancing
from .base import Sampler, StepRecord
from .clusters import SwendsenWang, Wolff
from .factorised import DLMC, DMALA
from .gibbs import BlockGibbs
from .hamming_ball import HammingBall
from .intracluster import Intracluster
from .kawasaki import Kawasaki
from .locally_balanced import GibbsWithGradients, LocallyBalanced
from .partition_mcmc import PartitionMCMC
from .path_auxiliary import PathAuxiliary
from .single_site import Gibbs, Metropolis
from .run import Trace, run
from .self_balancing import FastLocalSelfBalancing, LocalSelfBalancing
from .structure_mcmc import StructureMCMC
from .tempering import ParallelTempering

_REGISTRY: dict[str, type[Sampler]] = {
    cls.registry_name: cls
    for cls in (Metropolis, Gibbs, BlockGibbs, HammingBall, LocallyBalanced, GibbsWithGradients,
                LocalSelfBalancing, FastLocalSelfBalancing, StructureMCMC, PartitionMCMC, Intracluster,
                Kawasaki, DMALA, DLMC, PathAuxiliary, ParallelTempering, SwendsenWang, Wolff)
}


def available() -> list[str]:
    """Registry names of all samplers."""
    return list(_REGISTRY)


def sampler_class(name: str) -> type[Sampler]:
    """The class registered under ``name``."""
    try:
        return _REGISTRY[name]
    except KeyError:
        raise ValueError(f"unknown sampler {name!r}; available: {', '.join(_REGISTRY)}") from None


def make(name: str, target: Target, **params) -> Sampler:
    """Build the sampler ``name`` on ``target`` (keywords: n_chains, seed, balancing, parametrization, burn_in, …)."""
    return sampler_class(name)(target, **params)


__all__ = [
    "Adaptive", "BALANCING", "log_balancing", "Sampler", "StepRecord", "Trace", "run", "available", "make",
    "sampler_class", "Metropolis", "Gibbs", "BlockGibbs", "HammingBall", "LocallyBalanced",
    "GibbsWithGradients", "LocalSelfBalancing", "FastLocalSelfBalancing", "StructureMCMC", "PartitionMCMC",
    "Intracluster", "Kawasaki", "DMALA", "DLMC", "PathAuxiliary", "ParallelTempering", "SwendsenWang", "Wolff",
]
