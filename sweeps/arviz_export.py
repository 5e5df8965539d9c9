"""A sweep's runs and a bake-off as ArviZ data (``engine.arviz_data``): one ``DataTree`` per kernel.

``from_store(store)`` reads every run a ``ResultStore`` holds and groups them
by label (a run's own, else its sampler's name): the runs of one label are one
kernel at different seeds, so their chains go side by side in one ``DataTree``
(``engine.arviz_data.from_results``). A label whose runs traced different steps
(a budget of evaluations or seconds gives each seed its own length, as in every
bake-off) gives one ``DataTree`` per run instead, keyed
``"<label> · replicate <r>"``, r = 0, 1, … in the order of the runs' replicate
numbers (a bake-off's) or seeds (a sweep's).

``from_bakeoff(result)`` does the same for the runs a bake-off measured (its
table's rows, by their labels; its tuning pilots are not stored runs), with
each run's Hamming distance to the reference state beside its statistic, so
``arviz_stats.ess`` or ``arviz_plots.plot_ess`` can be set beside its ranking.
"""

from __future__ import annotations

import json
from collections import defaultdict

import numpy as np
import xarray as xr

from engine.arviz_data import described, from_results

from .bake_off.task import label as bakeoff_label
from .store import ResultStore


def _described(result: dict) -> tuple[str, int, str, dict]:
    """A stored run's label, its replicate's number (a sweep run's seed), its statistic and its attributes, from
    its description (a ``RunSpec``'s or a bake-off run's)."""
    spec = json.loads(result["spec"])
    if "config" in spec:  # a sweep's run
        label, config, statistic, attrs = described(result)
        return label, config["seed"], statistic, attrs
    kernel = {"sampler": spec["sampler"], "sampler_params": json.loads(result.get("kernel", "{}")),
              "variant": spec["variant"], "axis": spec["axis"], "budget": spec["budget"], "chains": spec["chains"]}
    return (bakeoff_label(spec["sampler"], spec["variant"]), int(spec["replicate"]), spec["statistic"],
            {"kernel": json.dumps(kernel, sort_keys=True), "sampler": spec["sampler"]})


def grouped(results: list[dict], labels=None) -> dict[str, xr.DataTree]:
    """Stored runs grouped by label (module docstring); only those of ``labels`` when given."""
    by_label = defaultdict(list)
    for result in results:
        label, order, statistic, attrs = _described(result)
        if labels is None or label in labels:
            by_label[label].append((order, result, statistic, attrs))
    trees = {}
    for label, runs in sorted(by_label.items()):
        runs.sort(key=lambda run: run[0])
        stored = [result for _, result, _, _ in runs]
        statistic, attrs = runs[0][2], {**runs[0][3], "label": label}
        if all(np.array_equal(stored[0]["trace_step"], result["trace_step"]) for result in stored[1:]):
            trees[label] = from_results(stored, statistic, {
                **attrs, "acceptance": float(np.mean([result["acceptance"] for result in stored])),
                "runs": len(stored)})
        else:
            trees |= {f"{label} · replicate {r}": from_results(
                [result], statistic, {**attrs, "acceptance": float(result["acceptance"])})
                for r, result in enumerate(stored)}
    return trees


def from_store(store: ResultStore) -> dict[str, xr.DataTree]:
    """Every run a sweep stored, grouped by label (module docstring)."""
    return grouped([store.read(run_id) for run_id in sorted(store.run_ids())])


def from_bakeoff(result) -> dict[str, xr.DataTree]:
    """The runs a bake-off (``sweeps.bakeoff``'s ``BakeoffResult``) measured, keyed by its table's labels."""
    return grouped([result.store.read(run_id) for run_id in sorted(result.store.run_ids())], labels=result.runs)
