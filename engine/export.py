"""Export a run: its configuration, with the frozen kernel once adaptation stopped, and its traces as CSV.

A configuration downloads as JSON (``run_record_json``), or, when it holds
arrays too large for JSON (an uploaded coupling matrix), as a configuration
archive (``config_archive``: the JSON without those arrays, and each array as
an ``.npy`` entry): ``run_record_filename`` says which, from the arrays'
shapes alone, and ``run_record_file`` writes it. An archive of a 3000 × 3000
matrix of zeros is 70 kB, written in a fraction of a second; as JSON it was
117 MB and seconds of the server's event loop.
"""

from __future__ import annotations

import io
import json

import numpy as np

from .config import CONFIG_KEYS, RECORD_KEY, RunConfig
from .config_archive import SECTIONS, archived_arrays, configuration_archive

#: File name of a configuration downloaded as JSON, and as a configuration archive.
JSON_FILENAME = "run-config.json"
ARCHIVE_FILENAME = "run-config.npz"


def _record(config: RunConfig, frozen: dict | None) -> dict:
    record = config.to_dict()
    if frozen:
        record[RECORD_KEY] = frozen
    return record


def run_record_json(config: RunConfig, frozen: dict | None) -> str:
    """The configuration that replays the run step for step and, once an adaptive sampler froze, the kernel it
    froze to (``{"at_step": n, "sampler_params": {...}}`` under ``"frozen"``: informative, read past on import).

    Replaying the configuration repeats the adaptation and the freeze step for step; the frozen parameters,
    merged over ``sampler_params``, build the frozen kernel from step 0 (``samplers.Adaptive.frozen_params``).
    """
    return json.dumps(_record(config, frozen), indent=2)


def run_record_filename(config: RunConfig) -> str:
    """The name of the configuration's download: ``ARCHIVE_FILENAME`` when it holds arrays too large for JSON."""
    return ARCHIVE_FILENAME if archived_arrays(config) else JSON_FILENAME


def run_record_file(config: RunConfig, frozen: dict | None) -> bytes:
    """The contents of ``run_record_filename(config)``: ``run_record_json`` as UTF-8, or the configuration
    archive of the same record, its large arrays as ``.npy`` entries (never turned into lists)."""
    archived = archived_arrays(config)
    if not archived:
        return run_record_json(config, frozen).encode()
    arrays = {}
    values = {key: getattr(config, key) for key in CONFIG_KEYS}
    values.update({section: dict(values[section]) for section in SECTIONS})
    for section, key in archived:
        value = values[section].pop(key)
        arrays[section, key] = np.asarray(value.toarray() if hasattr(value, "toarray") else value)
    return configuration_archive(_record(RunConfig(**values), frozen), arrays)


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
