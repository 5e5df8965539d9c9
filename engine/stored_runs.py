"""A run stored by a sweep (``sweeps.ResultStore``'s ``<run id>.npz``) opened in the dashboard (model code).

``config_from_stored_run(data)`` reads the run's description and the seed its
sampler ran with from the file's bytes and returns the ``RunConfig`` that
replays it: the same configuration with that seed, so the dashboard's run
takes the stored run's steps one for one (its trace is the stored trace, drawn
live). Only the two small entries are read, each after checking its
uncompressed size in the archive (``MAX_ENTRY_BYTES``); the description then
passes the same validation as a configuration file. A run that started from
other than the target's random states (a long reference run's over-dispersed
starts) is refused: its configuration alone does not replay it.
"""

from __future__ import annotations

import io
import json
import zipfile

import numpy as np

from .config import RunConfig
from .uploads import ZIP_ERRORS, excerpt, format_bytes

#: Largest uncompressed size of the entries read from a stored run.
MAX_ENTRY_BYTES = 1_000_000


def is_stored_run(data: bytes) -> bool:
    """Whether ``data`` looks like a stored run (a zip archive, as ``.npz`` files are)."""
    return data[:4] == b"PK\x03\x04"


def _entry(archive: zipfile.ZipFile, name: str):
    try:
        info = archive.getinfo(f"{name}.npy")
    except KeyError:
        raise ValueError(f"this .npz file is not a stored sweep run: it has no {name!r} entry") from None
    if info.file_size > MAX_ENTRY_BYTES:
        raise ValueError(f"the stored run's {name!r} entry is {format_bytes(info.file_size)} once decompressed; "
                         f"the limit is {format_bytes(MAX_ENTRY_BYTES)}")
    with archive.open(info) as stream:
        return np.lib.format.read_array(stream, allow_pickle=False).item()


def config_from_stored_run(data: bytes) -> RunConfig:
    """The configuration that replays a stored sweep run (see the module docstring); ``ValueError`` if it is not
    one."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            spec, seed = json.loads(_entry(archive, "spec")), _entry(archive, "sampler_seed")
    except (*ZIP_ERRORS, json.JSONDecodeError, TypeError) as error:  # whatever a hostile archive raises
        kind = type(error)
        named = kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__name__}"
        raise ValueError(f"this file is not a readable stored run ({named})") from None
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise ValueError(f"this stored run's seed ({excerpt(str(seed), 30)}) is not a whole number")
    if not isinstance(spec, dict) or not isinstance(spec.get("config"), dict):
        raise ValueError("this stored run has no configuration")
    if spec.get("start", "random") != "random":
        raise ValueError(f"this stored run started its chains from {excerpt(str(spec['start']), 30)} states; the "
                         f"dashboard replays runs that start from the target's random states only")
    return RunConfig.from_json(json.dumps({**spec["config"], "seed": int(seed)}))
