"""What a sampler can do that a view may show: asked here, in one place, and nowhere else (model code)."""

from __future__ import annotations

from dataclasses import dataclass

from samplers.common.adaptive import Adaptive
from samplers.gradient.acceptance_tuning import AcceptanceTuned
from samplers.intracluster.walks import Intracluster
from samplers.tempering import ParallelTempering


@dataclass(frozen=True)
class Capabilities:
    """The optional abilities of a built sampler."""

    learns_balancing: bool = False  # LSB / FLSB with a learned parametrisation: a learner and a log_g
    has_balancing_function: bool = False  # a locally balanced proposal with a balancing function g
    adapts_walks: bool = False  # intracluster moves tuning γ and the walk length
    replays_moves: bool = False  # records its moves' walks (slow motion)
    records_neighbours: bool = False  # hands every scored single-flip neighbour to OPAD+
    parametrization: str = ""  # the learned g's parametrisation ('' when nothing is learned)
    adapts: bool = False  # adapts its kernel in a burn-in, then freezes it (any ``Adaptive`` that adapts)
    tempers: bool = False  # parallel tempering: replicas on a ladder of temperatures with exchange rates
    tunes: bool = False  # tunes one kernel parameter toward an acceptance rate (DMALA, DLMC, PAS)

    @classmethod
    def of(cls, sampler) -> Capabilities:
        adaptive = isinstance(sampler, Adaptive) and sampler.adapts
        learner = getattr(sampler, "learner", None)
        return cls(
            learns_balancing=adaptive and learner is not None,
            has_balancing_function=hasattr(sampler, "log_g"),
            adapts_walks=adaptive and isinstance(sampler, Intracluster),
            replays_moves=hasattr(sampler, "last_walk"),
            records_neighbours=bool(getattr(sampler, "record_neighbours", False)),
            parametrization=sampler.parametrization if adaptive and learner is not None else "",
            adapts=adaptive,
            tempers=isinstance(sampler, ParallelTempering),
            tunes=adaptive and isinstance(sampler, AcceptanceTuned),
        )
