"""A run as ArviZ data: its chains × draws, the traced statistics, and what the sampler did at each draw.

ArviZ's tools (``arviz_stats.ess``, ``rhat``, ``summary``; ``arviz_plots``'
trace, rank and ESS plots) read an ``xarray.DataTree`` whose groups label every
value by ``chain`` and ``draw`` (arviz-base's conventions; the tree is built
with xarray alone: arviz-base imports Bokeh when it is installed, and the
engine never does). Here:

* the **posterior** group holds log p̃ and the run's statistic (the dashboard's
  summary statistic, named as in the configuration: ``magnetisation``,
  ``log_prob``…) for every chain at every draw;
* the **sample_stats** group holds ``accepted``, whether each chain's move at
  that step was accepted, when the run recorded it per chain (a headless
  ``samplers.run``); a stored sweep run keeps only its acceptance rate, which
  goes into the attributes;
* every group carries along ``draw`` the coordinates ``step`` (the sampler's
  step), ``n_evals`` (the target evaluations the chain's batch had made by
  then) and ``seconds`` (the batch's compute seconds by then), so a plot or an
  estimate can be put on the axis a comparison needs (moves, target evaluations
  or CPU time); when the chains come from several runs, ``n_evals`` and
  ``seconds`` are per chain and draw (each chain carries its own run's);
* the attributes hold the run's configuration as JSON (``config``; replay it
  with ``engine.config.RunConfig.from_dict``), its sampler and target names and
  its seed.

Draws are the states after each step: the initial state (step 0), which no
move of the kernel produced, is left out. A dashboard run's history and a
stored sweep run are thinned evenly (every k-th step, the same k all along), so
their draws are a thinned chain, as ArviZ's estimators assume.

``from_trace`` converts a headless run, ``from_history`` a dashboard or
notebook run's decimated history (``RunClient.history``), ``from_result`` one
stored run of a sweep (``sweeps.perform``'s result), and ``from_results``
stored runs of one kernel at several seeds, their chains side by side
(``sweeps.arviz_export`` groups a sweep's and a bake-off's runs this way).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

import numpy as np
import xarray as xr

#: Per-draw cost coordinates: the name each takes in the data, and what it counts (its ``description``).
COST_COORDINATES = {"step": "the sampler's step", "n_evals": "target evaluations of all chains by then",
                    "seconds": "compute seconds by then"}


def datatree(draws: Mapping[str, np.ndarray], costs: Mapping[str, np.ndarray], accepted: np.ndarray | None = None,
             attrs: Mapping | None = None) -> xr.DataTree:
    """The ArviZ data of chains whose traced values are ``draws`` (name → ``(n_draws, n_chains)``), with the
    ``costs`` (``COST_COORDINATES`` → ``(n_draws,)``, or ``(n_draws, n_chains)`` when they differ by chain) as
    coordinates along ``draw`` and, when given, the per-chain acceptance flags ``accepted``
    (``(n_draws, n_chains)``) as sample stats."""
    groups = {"posterior": {name: np.asarray(values, dtype=np.float64).T for name, values in draws.items()}}
    if accepted is not None:
        groups["sample_stats"] = {"accepted": np.asarray(accepted, dtype=bool).T}
    n_chains, n_draws = next(iter(groups["posterior"].values())).shape
    coordinates = {"chain": np.arange(n_chains), "draw": np.arange(n_draws)}
    for name, description in COST_COORDINATES.items():
        values = np.asarray(costs[name])
        dims, values = (("draw",), values) if values.ndim == 1 else (("chain", "draw"), values.T)
        coordinates[name] = xr.Variable(dims, values, {"description": description})
    tree = xr.DataTree.from_dict({group: xr.Dataset({name: (("chain", "draw"), values) for name, values in
                                                     variables.items()}, coords=coordinates)
                                  for group, variables in groups.items()})
    tree.attrs.update(attrs or {})
    return tree


def attributes(config, **more) -> dict:
    """The attributes of a run's data: its configuration as JSON, its sampler, target and seed (when known)."""
    if config is None:
        return {key: value for key, value in more.items() if value is not None}
    record = config if isinstance(config, Mapping) else config.to_dict()
    return {"config": json.dumps(record, sort_keys=True), "sampler": record.get("sampler", ""),
            "target": record.get("target", ""), "seed": int(record.get("seed", 0)),
            **{key: value for key, value in more.items() if value is not None}}


def from_trace(trace, statistic: str = "statistic", config=None) -> xr.DataTree:
    """A headless run (``samplers.run``'s ``Trace``): every step a draw, with its acceptance per chain.

    ``statistic`` names the trace's statistic (``log_prob`` when the run traced log p̃ itself, in which case it
    appears once); ``config``: the run's ``RunConfig`` or its dictionary, kept for replay."""
    draws = {"log_prob": trace.log_prob[1:]}
    if statistic != "log_prob":
        draws[statistic] = trace.statistic[1:]
    costs = {"step": np.arange(1, trace.n_steps + 1), "n_evals": trace.n_evals[1:], "seconds": trace.wall_time[1:]}
    return datatree(draws, costs, trace.accepted, attributes(config))


def from_history(history: Mapping[str, np.ndarray], statistic: str = "statistic", config=None) -> xr.DataTree:
    """A run's evenly thinned history (``RunClient.history``, ``RunSession``'s buffer): ``step``, ``n_evals``,
    ``seconds`` and ``(n_points, n_chains)`` ``log_prob`` and ``statistic``; named and kept as ``from_trace``."""
    drawn = np.asarray(history["step"]) > 0
    draws = {"log_prob": history["log_prob"][drawn]}
    if statistic != "log_prob":
        draws[statistic] = history["statistic"][drawn]
    costs = {name: np.asarray(history[name])[drawn] for name in COST_COORDINATES}
    return datatree(draws, costs, attrs=attributes(config))


def described(result: Mapping) -> tuple[str, dict, str, dict]:
    """A stored sweep run's label (its own, else its sampler's), the configuration it ran (with the seed it ran
    with), its statistic's name and its attributes (``attributes``)."""
    spec = json.loads(result["spec"])
    config = {**spec["config"], "seed": int(result["sampler_seed"])}
    return (spec.get("label") or config["sampler"], config, config.get("statistic", "statistic"),
            attributes(config))


def from_result(result: Mapping) -> xr.DataTree:
    """One stored run of a sweep (``sweeps.perform``'s result): its statistic named as in its configuration, its
    configuration, seed, label and acceptance rate in the attributes."""
    label, _, statistic, attrs = described(result)
    return from_results([result], statistic, {**attrs, "label": label, "acceptance": float(result["acceptance"])})


#: Traced arrays of a stored run (``trace_…``) that become draws, and their names in the data (the statistic's
#: own name is the caller's).
TRACED = {"trace_log_prob": "log_prob", "trace_statistic": None, "trace_hamming": "hamming_distance"}


def from_results(results: Sequence[Mapping], statistic: str = "statistic", attrs: Mapping | None = None
                 ) -> xr.DataTree:
    """Stored runs of one kernel (a sweep's or a bake-off's, seeds apart) as one run: their chains side by side,
    numbered in the order given, with what each traced of ``TRACED`` (the statistic named ``statistic``; log p̃
    once when the statistic is log p̃). They must have traced the same steps (a ``ValueError`` says which
    differ)."""
    if not results:
        raise ValueError("no stored runs to convert")
    steps = [np.asarray(result["trace_step"]) for result in results]
    if any(not np.array_equal(steps[0], other) for other in steps[1:]):
        raise ValueError("the runs traced different steps (" + ", ".join(f"{len(s)} points to step {s[-1]}"
                                                                         for s in steps) + "): convert them apart")
    drawn = steps[0] > 0
    draws = {}
    for key, name in TRACED.items():
        name = name or statistic
        if all(key in result for result in results) and name not in draws:
            draws[name] = np.concatenate([np.asarray(result[key])[drawn] for result in results], axis=1)
    if not draws:
        raise ValueError(f"the runs traced none of {', '.join(TRACED)}")
    chains = [np.asarray(result["trace_statistic" if "trace_statistic" in result else "trace_log_prob"]).shape[1]
              for result in results]

    def per_chain(key):  # each run's cost, repeated for its chains: (n_draws, n_chains)
        return np.concatenate([np.repeat(np.asarray(result[key])[drawn][:, None], n, axis=1)
                               for result, n in zip(results, chains)], axis=1)

    costs = {"step": steps[0][drawn], "n_evals": per_chain("trace_evals"), "seconds": per_chain("trace_seconds")}
    if len(results) == 1:
        costs |= {key: values[:, 0] for key, values in costs.items() if key != "step"}
    return datatree(draws, costs, attrs=attrs)
