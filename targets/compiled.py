"""How the compiled helpers of the targets and samplers are compiled.

A kernel's inner loop calls small helpers per chain, per site or per key
(a hash lookup, a sum-tree path, a count). Numba counts references to every
array argument as such a call enters and leaves it: two atomic operations per
array, which cost more than many helpers' own arithmetic, and which neither
numba's inlining nor its reference-count pruning removes from a loop.
``helper`` compiles a function without numba's reference counting: it may
not allocate or return an array (numba refuses to compile one that does), and
it is only ever called from compiled code that holds its arrays alive.
"""

from __future__ import annotations

from numba import njit

#: Decorator of an allocation-free helper called from compiled inner loops (cached on disk like every kernel).
helper = njit(cache=True, _nrt=False)
