"""The samplers' registry (``samplers.make`` and ``samplers.sampler_class`` read it).

It is filled by ``samplers/__init__.py`` once every family is imported; a sampler
that builds on others by name (parallel tempering's base) looks them up here
when it runs, so no family module imports the package that lists the families.
"""

from __future__ import annotations

from targets.registry import Registry

SAMPLERS = Registry("sampler")
