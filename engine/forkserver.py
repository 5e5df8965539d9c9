"""The forkserver every session's worker is forked from: what it preloads, and its start.

A worker process is forked from a ``multiprocessing`` forkserver that has
imported the samplers and targets and loaded their compiled kernels once
(``forkserver_preload``), so a worker starts in tens of milliseconds. The
forkserver itself takes a few seconds to get there (longer if a kernel must
be compiled, after an edit), and a session that asks for a worker meanwhile
waits for it. ``start_forkserver()`` starts it early: the engine calls it
when it is created, and a served dashboard as the very first thing of its
warm-up (``dashboard.serving.warm_up``), so that the forkserver preloads on
one core while the server imports the dashboard on the other.

This module stays light (no sampler, no numeric library is imported) for
that reason: importing it costs nothing before the forkserver is under way.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.forkserver

#: Modules a forkserver imports once, so that every worker forked from it starts warm
#: (``forkserver_preload`` also compiles the samplers' kernels, ``samplers.common.warmup``).
PRELOAD = ["engine.forkserver_preload"]


def start_forkserver() -> multiprocessing.context.BaseContext:
    """Start this process's forkserver with ``PRELOAD`` unless it runs already; returns its context.

    Returns at once: the forkserver is a process of its own, which preloads
    while this one goes on (the first worker forked from it waits until it has).
    """
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(PRELOAD)
    multiprocessing.forkserver.ensure_running()
    return context
