"""Export a run: its configuration as JSON (``RunConfig.to_json``) and its traces as CSV."""

from __future__ import annotations

import io

import numpy as np


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
