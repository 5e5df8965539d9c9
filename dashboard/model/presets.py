"""Named, documented run configurations for classroom demos, stored as data.

Presets live in ``assets/presets.json``: a list of objects with ``name``,
``description`` and ``config`` (a ``RunConfig`` dictionary), and for a preset
whose settings are meant to show a failure, ``shows_failure``: the sentence the
page shows beside its description and in the status line while that preset
runs. Later features add theirs by adding entries; no code changes are needed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from .config import RunConfig

PRESETS_FILE = Path(__file__).resolve().parents[2] / "assets" / "presets.json"


@dataclass(frozen=True)
class Preset:
    name: str
    description: str
    config: dict
    shows_failure: str = ""

    def run_config(self) -> RunConfig:
        return RunConfig.from_dict(self.config)


def load_presets(path: Path = PRESETS_FILE) -> dict[str, Preset]:
    """All presets by name, in file order."""
    entries = json.loads(path.read_text(encoding="utf-8"))
    return {entry["name"]: Preset(**entry) for entry in entries}
