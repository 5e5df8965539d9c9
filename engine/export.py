"""Export a run: its configuration as JSON, with the frozen kernel once adaptation stopped, and its traces as CSV."""

from __future__ import annotations

import io
import json

import numpy as np

from .config import RECORD_KEY, RunConfig


def run_record_json(config: RunConfig, frozen: dict | None) -> str:
    """The configuration that replays the run step for step and, once an adaptive sampler froze, the kernel it
    froze to (``{"at_step": n, "sampler_params": {...}}`` under ``"frozen"``: informative, read past on import).

    Replaying the configuration repeats the adaptation and the freeze step for step; the frozen parameters,
    merged over ``sampler_params``, build the frozen kernel from step 0 (``samplers.Adaptive.frozen_params``).
    """
    record = config.to_dict()
    if frozen:
        record[RECORD_KEY] = frozen
    return json.dumps(record, indent=2)


def trace_csv(history: dict) -> str:
    """The run's (decimated) history as CSV: step, evaluations, seconds, log p̃ and statistic per chain."""
    n_chains = history["log_prob"].shape[1]
    header = ["step", "n_evals", "seconds"]
    header += [f"log_prob_{i}" for i in range(n_chains)] + [f"statistic_{i}" for i in range(n_chains)]
    table = np.column_stack([history["step"], history["n_evals"], history["seconds"],
                             history["log_prob"], history["statistic"]])
    out = io.StringIO()
    np.savetxt(out, table, delimiter=",", header=",".join(header), comments="", fmt="%.10g")
    return out.getvalue()
