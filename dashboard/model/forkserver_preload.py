"""What the dashboard's forkserver loads once, so that every worker forked from it starts warm.

Imports the worker (samplers, targets, torch) and compiles the samplers' numba
kernels (``samplers.warmup``); a worker forked afterwards inherits both. Named
in ``engine.PRELOAD``; not imported by the server process itself.
"""

from samplers.warmup import warm_up

from . import worker  # noqa: F401  (the import is the point: the forkserver keeps it loaded)

warm_up()
