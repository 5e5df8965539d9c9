"""OPAD and OPAD+ (OPAD paper): the store of distinct visited (and proposed) states reweighted ∝ p̃
(``store``) and the hash index that finds a state among them (``particle_index``).

``from samplers.opad import ParticleStore`` is the store; ``KINDS`` names its three approximations.
"""

from samplers.opad.store import KINDS, ParticleStore

__all__ = ["KINDS", "ParticleStore"]
