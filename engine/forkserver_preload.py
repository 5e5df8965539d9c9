"""What the dashboard's forkserver loads once, so that every worker forked from it starts warm.

Imports the worker first — it limits the numeric libraries to one thread
each, which must happen before numpy or torch is first imported in this
process: a forkserver whose torch started a thread pool forks workers whose
first parallel torch operation never returns (a learning LSB run hung while
it was built) — then compiles the samplers' numba kernels
(``samplers.common.warmup``); a worker forked afterwards inherits both. Named in
``forkserver.PRELOAD``; not imported by the server process itself.
"""

from . import worker  # noqa: F401 — first (module docstring); the forkserver keeps it loaded

from samplers.common.warmup import warm_up

warm_up()
