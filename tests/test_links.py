"""A run as a link (``engine.links``): round trip; every malformed or hostile link refused with a reason."""

from __future__ import annotations

import base64
import zlib

import numpy as np
import pytest

from engine.config import RunConfig
from engine.links import MAX_LINK_CHARS, MAX_LINK_JSON_BYTES, config_from_link, link_query
from engine.presets import load_presets, preset_of


def packed(data: bytes) -> str:
    return base64.urlsafe_b64encode(zlib.compress(data, 9)).decode().rstrip("=")


def test_a_link_carries_the_whole_run():
    config = RunConfig(target="ising_lattice", target_params={"size": 12, "beta": 0.6}, sampler="parallel_tempering",
                       sampler_params={"base": "dmala", "base_params": {"step_size": 0.8}}, n_chains=3, seed=9,
                       statistic="hamming", beta_changes=[[10, 0.5], [40, 0.7]], compare_sampler="metropolis")
    query = link_query(config)
    assert query is not None and len(query) < 600 and set(query) <= set(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
    assert config_from_link(query).to_dict() == config.to_dict()
    assert config_from_link(query.encode()).to_dict() == config.to_dict()


def test_a_run_too_large_for_a_link_has_none():
    couplings = np.random.default_rng(0).normal(size=(60, 60))
    config = RunConfig(target="boltzmann", target_params={"J": (couplings + couplings.T) * (1 - np.eye(60))})
    assert link_query(config) is None


@pytest.mark.parametrize("text, reason", [
    ("", "cut short"),
    ("garbage!!", "not a packed configuration"),
    (packed(b'{"sampler": "metropolis"}')[:-6], "cut short|not a packed"),
    ("A" * (MAX_LINK_CHARS + 1), "at most"),
    (packed(b"[" + b" " * 1_000_000 + b"]"), "inflates past"),  # a small query that inflates to a megabyte
    (packed(b'{"sampler": "no_such_sampler"}'), "no_such_sampler|sampler"),
    (packed(b'{"n_chains": 100000000}'), "n_chains"),
    (packed(b'[1, 2]'), "JSON object"),
    (packed("\u00ff".encode("latin-1")), "UTF-8"),
])
def test_malformed_and_hostile_links_are_refused_with_a_reason(text, reason):
    with pytest.raises(ValueError, match=reason):
        config_from_link(text)


def test_a_configuration_too_large_for_a_link_is_never_written_out_in_full(monkeypatch):
    """Finding that a configuration has no link costs what a link holds, not the whole configuration (seconds at
    14 MB): here couplings written as nested lists, whose size is known only by writing them (an array's is known
    from its shape: ``test_off_the_loop``)."""
    config = RunConfig(target="boltzmann", target_params={"J": np.zeros((700, 700)).tolist()})
    whole = len(config.to_json())
    written: list[int] = []
    pieces = RunConfig.json_pieces
    monkeypatch.setattr(RunConfig, "json_pieces", lambda self: (written.append(len(p)) or p for p in pieces(self)))
    assert link_query(config) is None
    assert 0 < sum(written) <= MAX_LINK_JSON_BYTES + 100 < whole / 10


def test_a_link_names_its_own_preset_and_a_custom_run_none():
    presets = load_presets()
    case_3 = "Segmentation case 3 (dependent, noisy) · g = √t"
    config = config_from_link(link_query(presets[case_3].run_config()))
    assert preset_of(config, presets) == case_3  # not case 1, which differs only in λ
    config.steps_per_second = 20.0  # the speed cap changes how fast the run goes, not what it draws
    assert preset_of(config, presets) == case_3
    config.seed += 1
    assert preset_of(config, presets) == ""
    assert preset_of(None, presets) == ""
