"""The dashboard's headless model: runs, their workers and snapshots, configurations, budget, uploads.

Nothing here imports Panel or Bokeh (``tests/test_engine.py`` checks it): a
``RunClient`` (``client``) sends commands to the session's worker
(``worker``, started by the ``engine`` as a process of its own or a thread),
where a ``RunSession`` (``session``) owns the target and the sampler; what
comes back are immutable ``RunInfo`` and ``Snapshot`` objects (``snapshot``).
"""
