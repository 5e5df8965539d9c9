"""Nothing proportional to a user's data on the server's event loop (issue 41, items 1 and 2).

A run's link is refused from its arrays' shapes, without turning them into
lists; a configuration holding a large array downloads as a configuration
archive (its arrays as ``.npy`` entries) that the page's import replays; a
served session's import parses in a reader process, not in a thread that
would hold the GIL the event loop needs. All structural: nothing is timed.
"""

from __future__ import annotations

import asyncio
import io
import os

import numpy as np
import pytest

import engine.config
from dashboard import file_reading
from engine.config import CONFIG_KEYS, RunConfig
from engine.config_archive import CONFIGURATION_ENTRY, MAX_INLINE_ELEMENTS, config_from_archive
from engine.export import ARCHIVE_FILENAME, JSON_FILENAME, run_record_file
from engine.links import MAX_LINK_JSON_BYTES, MIN_JSON_BYTES_PER_NUMBER, link_query
from engine.reading import read_configuration
from tests.explorer_driver import built, make_explorer, settle, upload


#: Most elements an array may hold and still be written into a link.
LINK_ELEMENTS = MAX_LINK_JSON_BYTES // MIN_JSON_BYTES_PER_NUMBER


def couplings(d: int) -> np.ndarray:
    J = np.triu(np.random.default_rng(1).normal(size=(d, d)), 1)
    return J + J.T


def same_run(a: RunConfig, b: RunConfig) -> bool:
    """Whether two configurations replay the same run (compared without writing their arrays out)."""
    params = [(config.target_params, {key: getattr(config, key) for key in CONFIG_KEYS if key != "target_params"})
              for config in (a, b)]
    (a_params, a_rest), (b_params, b_rest) = params
    return a_rest == b_rest and a_params.keys() == b_params.keys() and all(
        np.array_equal(a_params[key], b_params[key]) for key in a_params)


def large_config(d: int = 400) -> RunConfig:
    return RunConfig(target="boltzmann", target_params={"J": couplings(d)}, sampler="metropolis", n_chains=2, seed=5)


@pytest.fixture
def no_large_lists(monkeypatch):
    """Turning an array too large for a link into a list fails the test (a smaller one is, to write a link)."""
    to_jsonable = engine.config.to_jsonable

    def refusing(value):
        assert getattr(value, "size", 0) <= LINK_ELEMENTS, "a large array was turned into a list"
        return to_jsonable(value)

    monkeypatch.setattr(engine.config, "to_jsonable", refusing)


def test_a_link_is_refused_from_the_arrays_shapes_alone(no_large_lists):
    assert link_query(RunConfig(target="boltzmann", target_params={"J": np.zeros((3000, 3000))})) is None
    assert link_query(RunConfig(target="boltzmann", target_params={"J": couplings(8)})) is not None


def test_a_large_configuration_downloads_as_an_archive_the_page_replays(no_large_lists):
    config = large_config()
    app = make_explorer(config)
    try:
        sharing = app.controls.sharing
        assert sharing.export_config.filename == ARCHIVE_FILENAME and "archive" in sharing.export_config.label
        data = asyncio.run(sharing._config_file()).getvalue()
        with np.load(io.BytesIO(data)) as archive:  # a .npz: the JSON, and J as an array
            assert sorted(archive.files) == [CONFIGURATION_ENTRY, "target_params/J"]
            assert np.array_equal(archive["target_params/J"], config.target_params["J"])
        app.client.apply(RunConfig(target="ising1d", sampler="metropolis"))
        settle(app, lambda: built(app.client) and app.client.config.target == "ising1d")
        assert sharing.export_config.filename == JSON_FILENAME and "JSON" in sharing.export_config.label
        upload(sharing.import_config, ARCHIVE_FILENAME, data)
        settle(app, lambda: built(app.client) and app.client.config.target == "boltzmann")
        assert same_run(app.client.config, config)
    finally:
        app.close()


def test_small_configurations_still_download_as_json():
    config = RunConfig(target="boltzmann", target_params={"J": couplings(10)}, sampler="metropolis")
    assert RunConfig.from_json(run_record_file(config, None)).to_json() == config.to_json()


@pytest.mark.parametrize("edit, reason", [
    (lambda entries: {**entries, "target_params/J.npy": b"\x93NUMPY garbage"}, "J"),
    (lambda entries: {**entries, "elsewhere/J.npy": entries["target_params/J.npy"]}, "entry 'elsewhere/J.npy'"),
    (lambda entries: {**entries, "target_params/nope.npy": entries["target_params/J.npy"]}, "nope"),
])
def test_an_altered_archive_is_refused_with_a_reason(edit, reason):
    import zipfile

    with zipfile.ZipFile(io.BytesIO(run_record_file(large_config(), None))) as archive:
        entries = {info.filename: archive.read(info) for info in archive.infolist()}
    altered = io.BytesIO()
    with zipfile.ZipFile(altered, "w") as archive:
        for name, content in edit(entries).items():
            archive.writestr(name, content)
    with pytest.raises(ValueError, match=reason):
        read_configuration(altered.getvalue())


def test_an_archive_over_the_decompressed_budget_is_refused_before_it_is_read():
    from engine.uploads import UploadLimits

    data = run_record_file(large_config(), None)
    with pytest.raises(ValueError, match="would take 1.28 MB decompressed; the limit is 1 MB"):
        config_from_archive(data, UploadLimits(decompressed_bytes=1_000_000))


def test_a_served_session_parses_an_imported_configuration_in_a_reader_process(monkeypatch):
    """The sampler runs in a thread here; the engine is flagged as served, so files are read as served."""
    submitted = []
    submit = file_reading._submitted
    monkeypatch.setattr(file_reading, "_submitted", lambda function, *args: submitted.append(function.__name__)
                        or submit(function, *args))
    assert asyncio.run(file_reading.off_the_loop(os.getpid, process=True)) != os.getpid()
    config = large_config(2 * round(MAX_INLINE_ELEMENTS ** 0.5))
    app = make_explorer(RunConfig(target="ising1d", sampler="metropolis"))
    try:
        app.client.engine.in_process = False
        upload(app.controls.sharing.import_config, "run-config.json", config.to_json().encode())
        settle(app, lambda: built(app.client) and app.client.config.target == "boltzmann")
        assert submitted == ["getpid", "read_configuration"]
        assert isinstance(app.client.config.target_params["J"], np.ndarray)  # pickled back as one buffer
        assert app.client.config.to_json() == config.to_json()
    finally:
        app.close()
