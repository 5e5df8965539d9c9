"""Where a sweep's runs are kept: one file per run, written atomically, so a sweep can stop and resume anywhere.

``ResultStore(directory)`` holds ``<run id>.npz`` for each finished run (its
result arrays, the run's description and versions, see ``sweeps.perform``) and
``<run id>.failed.json`` for a run whose last attempt raised (the error and its
traceback). A file is written under a temporary name in the same directory and
then renamed (``os.replace``), so a reader — or a sweep resumed after a crash —
sees a whole result or none. A run that succeeds later loses its failure file.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import numpy as np


#: Permissions of a stored file (mkstemp's own would be 0o600).
FILE_MODE = 0o644


class ResultStore:
    """The results directory of one sweep (see the module docstring)."""

    def __init__(self, directory: str | os.PathLike):
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)

    def path(self, run_id: str) -> Path:
        return self.directory / f"{run_id}.npz"

    def failure_path(self, run_id: str) -> Path:
        return self.directory / f"{run_id}.failed.json"

    def has(self, run_id: str) -> bool:
        return self.path(run_id).exists()

    def run_ids(self) -> set[str]:
        """The runs stored (not a file still being written, whose name starts with a dot)."""
        return {path.stem for path in self.directory.glob("*.npz") if not path.name.startswith(".")}

    def _atomically(self, target: Path, write) -> None:
        handle, temporary = tempfile.mkstemp(dir=self.directory, prefix=".writing-", suffix=target.suffix)
        try:
            with os.fdopen(handle, "wb") as stream:
                write(stream)
            os.chmod(temporary, FILE_MODE)  # mkstemp's files are private; results are for anyone who may read
            os.replace(temporary, target)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise

    def write(self, run_id: str, result: dict) -> None:
        """Store a run's result (atomically, compressed: traces of every step are mostly repeats) and forget an
        earlier failure of it."""
        self._atomically(self.path(run_id), lambda stream: np.savez_compressed(stream, **result))
        self.failure_path(run_id).unlink(missing_ok=True)

    def write_failure(self, run_id: str, error: str, trace: str) -> None:
        self._write_json(self.failure_path(run_id), {"run_id": run_id, "error": error, "traceback": trace})

    def write_description(self, sweep: dict) -> None:
        """Keep the sweep's description (``Sweep.to_dict()``) beside its runs, as ``sweep.json``."""
        self._write_json(self.directory / "sweep.json", sweep)

    def _write_json(self, target: Path, value) -> None:
        text = json.dumps(value, indent=1).encode()
        self._atomically(target, lambda stream: stream.write(text))

    def read(self, run_id: str) -> dict:
        """A stored result: arrays, and plain numbers and strings for its scalars."""
        with np.load(self.path(run_id), allow_pickle=False) as data:
            return {key: data[key].item() if data[key].ndim == 0 else data[key] for key in data.files}

    def failures(self) -> dict[str, str]:
        """Run id → error of the runs whose last attempt failed."""
        return {path.name.removesuffix(".failed.json"): json.loads(path.read_text())["error"]
                for path in self.directory.glob("*.failed.json")}
