"""Named, documented run configurations for classroom demos, stored as data.

Presets live in ``assets/presets.json``: a list of objects with ``name``,
``description`` and ``config`` (a ``RunConfig`` dictionary), and for a preset
whose settings are meant to show a failure, ``shows_failure``: the sentence the
page shows beside its description and in the status line while that preset
runs. Later features add theirs by adding entries; no code changes are needed.

``preset_of(config, presets)`` names the preset a run is (a run opened from a
link, a file or the sidebar alike), matched by configuration; '' for a custom run.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from .config import RunConfig

ASSETS = Path(__file__).resolve().parents[1] / "assets"
PRESETS_FILE = ASSETS / "presets.json"
#: The audit of the papers' claims that ``python -m benchmarks paper_claims --record 1`` writes and the claims card
#: shows.
CLAIMS_RECORD = ASSETS / "paper_claims.json"


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


def run_key(config: RunConfig) -> dict:
    """What makes a run that run: its configuration without the speed cap, which sets how fast it goes and not
    what it draws (a link replays it step for step at any cap)."""
    return {key: value for key, value in config.to_dict().items() if key != "steps_per_second"}


def preset_of(config: RunConfig | None, presets: dict[str, Preset]) -> str:
    """The name of the preset whose run ``config`` is: the first with the same ``run_key`` ('' when none is)."""
    if config is None:
        return ""
    candidates = [(name, preset.run_config()) for name, preset in presets.items()]
    candidates = [(name, other) for name, other in candidates if _alike(config, other)]
    if not candidates:  # the usual case of an edited or uploaded run: its arrays are never serialised
        return ""
    key = run_key(config)
    return next((name for name, other in candidates if run_key(other) == key), "")


def _alike(config: RunConfig, other: RunConfig) -> bool:
    """The cheap part of ``run_key``'s comparison: the same names, sizes and seed, and the same target parameters."""
    return (config.target, config.sampler, config.n_chains, config.seed, config.statistic) == \
        (other.target, other.sampler, other.n_chains, other.seed, other.statistic) and \
        config.target_params.keys() == other.target_params.keys()
