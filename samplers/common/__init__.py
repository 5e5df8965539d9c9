"""Machinery every family shares: adaptation during burn-in (``adaptive``), going on after a change of
target (``continuation``), bounded histories, cache prefetch, exact transition matrices for the exactness
tests (``exact``) and the compiled kernels' warm-up (``warmup``).
"""
