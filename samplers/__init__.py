"""Samplers: batches of Markov chains on binary spaces (see ``samplers.base``).

``make(name, target, n_chains=..., seed=..., **params)`` builds one,
``available()`` lists the names, ``run(sampler, n_steps)`` runs headless.
Samplers that adapt their kernel during a burn-in (LSB, FLSB, intracluster
with adapt) are ``Adaptive`` (``samplers.common.adaptive``): ``adapting``,
``frozen_at``, ``freeze()``, ``frozen_params()``.
"""

from __future__ import annotations

from samplers.balanced.locally_balanced import GibbsWithGradients, LocallyBalanced
from samplers.base import Sampler, StepRecord
from samplers.clusters import SwendsenWang, Wolff
from samplers.common.adaptive import Adaptive
from samplers.dag.partition_mcmc import PartitionMCMC
from samplers.dag.structure_mcmc import StructureMCMC
from samplers.gradient.factorised import DLMC, DMALA
from samplers.gradient.path_auxiliary import PathAuxiliary
from samplers.intracluster.kawasaki import Kawasaki
from samplers.intracluster.walks import Intracluster
from samplers.local.block_gibbs import BlockGibbs
from samplers.local.hamming_ball import HammingBall
from samplers.local.single_site import Gibbs, Metropolis
from samplers.lsb.balancing import BALANCING, log_balancing
from samplers.lsb.self_balancing import FastLocalSelfBalancing, LocalSelfBalancing
from samplers.registry import SAMPLERS
from samplers.run import Trace, run
from samplers.tempering import ParallelTempering
from targets.base import Target

SAMPLERS.add(Metropolis, Gibbs, BlockGibbs, HammingBall, LocallyBalanced, GibbsWithGradients, LocalSelfBalancing,
             FastLocalSelfBalancing, StructureMCMC, PartitionMCMC, Intracluster, Kawasaki, DMALA, DLMC, PathAuxiliary,
             ParallelTempering, SwendsenWang, Wolff)
ParallelTempering.param.base.objects = [name for name in SAMPLERS.names() if SAMPLERS.cls(name).facts.tempering_base]
#: Registry names of all samplers.
available = SAMPLERS.names
#: The sampler class registered under a name.
sampler_class = SAMPLERS.cls


def make(name: str, target: Target, **params) -> Sampler:
    """Build the sampler ``name`` on ``target`` (keywords: n_chains, seed, balancing, parametrization, burn_in, …)."""
    return sampler_class(name)(target, **params)


__all__ = [
    "Adaptive", "BALANCING", "log_balancing", "Sampler", "StepRecord", "Trace", "run", "available", "make",
    "sampler_class", "Metropolis", "Gibbs", "BlockGibbs", "HammingBall", "LocallyBalanced",
    "GibbsWithGradients", "LocalSelfBalancing", "FastLocalSelfBalancing", "StructureMCMC", "PartitionMCMC",
    "Intracluster", "Kawasaki", "DMALA", "DLMC", "PathAuxiliary", "ParallelTempering", "SwendsenWang", "Wolff",
]
