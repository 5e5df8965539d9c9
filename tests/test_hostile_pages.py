"""Hostile configurations, links and files seen from the page: what reaches a visitor's screen, and what stays true.

Every door — a configuration file, a ``?run=`` link, an uploaded model file,
a file the browser refused, Apply settings — must show its refusal in the
page as plain text (never as Markdown or HTML: no image fetched, no link
planted), refuse the same configuration with the same message, and never
leave the page saying a refused file is in use.
"""

from __future__ import annotations

import asyncio
import base64
import html
import io
import json
import threading
import zlib
from html.parser import HTMLParser
from types import SimpleNamespace

import numpy as np
import param
import pytest

from dashboard.explorer import open_link
from engine.config import RunConfig
from engine.links import link_query
from tests.explorer_driver import TIMEOUT, built, make_explorer, settle, upload
from tests.tiny import TINY_UAI

#: Markdown and HTML that would fetch an address or plant a link if a pane read it as markup.
HOSTILE = [
    "![i](http://127.0.0.1:9/p.png)",
    "[fix: click](http://ev.il/x)",
    "<img src=//127.0.0.1:9/q.png>",
    "<a href=//e.il>x</a>*b*_i_`c`",  # at most 30 characters: messages quote keys that long
]
#: Tags that user text would bring into the page if it were read as markup.
PLANTED = {"img", "a", "script", "iframe", "svg", "code", "strong", "em"}
#: The configuration of an over-budget run (about 6.4 GB estimated; one run may use 2 GB).
OVER_BUDGET = dict(target="ising_lattice", target_params={"ndim": 3, "size": 125}, n_chains=256)


class _Rendered(HTMLParser):
    """The tags and the text of an HTML fragment."""

    def __init__(self, markup: str):
        super().__init__()
        self.tags: set[str] = set()
        self.parts: list[str] = []
        self.feed(markup)
        self.close()

    def handle_starttag(self, tag, attrs) -> None:
        self.tags.add(tag)

    def handle_data(self, data) -> None:
        self.parts.append(data)

    @property
    def text(self) -> str:
        return "".join(self.parts)


def rendered(pane) -> _Rendered:
    """What a browser makes of a pane: the HTML its Bokeh model carries (escaped once more for transport)."""
    return _Rendered(html.unescape(pane.get_root().text))


def assert_shown_as_text(pane, hostile: str) -> None:
    """``hostile`` is in the pane, verbatim, and brought no markup into it."""
    shown = rendered(pane)
    assert hostile in shown.text, shown.text
    assert not shown.tags & PLANTED, (shown.tags, shown.text)


def packed(config: dict) -> str:
    """A ``?run=`` query carrying ``config`` as it is, packed as the app packs links."""
    return base64.urlsafe_b64encode(zlib.compress(json.dumps(config).encode(), 9)).decode().rstrip("=")


def small_config(**overrides) -> RunConfig:
    values = dict(target="ising_segmentation", target_params={"size": 10}, sampler="metropolis", n_chains=2, seed=1)
    return RunConfig(**{**values, **overrides})


@pytest.fixture
def explorer():
    app = make_explorer(small_config())
    yield app
    app.close()


def alert_shows(app, text: str) -> None:
    settle(app, lambda: app.controls.runs.alert.visible and text in rendered(app.controls.runs.alert).text)


# -- 1. no user text is ever markup ------------------------------------------------------------------------
@pytest.mark.parametrize("hostile", HOSTILE)
def test_configuration_keys_and_values_are_shown_as_text(explorer, hostile):
    alert = explorer.controls.runs.alert
    for config in ({hostile: 1}, {"target_params": {hostile: 1}}, {"sampler_params": {hostile: 1}}):
        upload(explorer.controls.sharing.import_config, "run.json", json.dumps(config).encode())
        alert_shows(explorer, hostile)
        assert_shown_as_text(alert, hostile)
    upload(explorer.controls.sharing.import_config, "run.json",
           json.dumps({"statistic": hostile}).encode())  # the worker's
    alert_shows(explorer, hostile)  # refusal quotes the value
    assert_shown_as_text(alert, hostile)


@pytest.mark.parametrize("hostile", HOSTILE)
def test_file_names_are_shown_as_text(explorer, hostile):
    controls = explorer.controls
    controls.target.value, controls.sampler.value = "markov_network", "gibbs"
    upload(controls.upload, f"{hostile}.uai", b"MARKOV\n2\n2 2\n1\n1 7\n")
    alert_shows(explorer, hostile)
    assert_shown_as_text(controls.runs.alert, hostile)
    controls.upload.refused = {"name": hostile, "size": 15_000_000, "serial": 1}
    assert_shown_as_text(controls.runs.alert, hostile)
    upload(controls.upload, f"{hostile}.uai", TINY_UAI.encode())
    settle(explorer, lambda: explorer.client.info.dim == 6 and hostile in rendered(controls.upload_note).text)
    assert_shown_as_text(controls.upload_note, hostile)


@pytest.mark.parametrize("hostile", HOSTILE)
def test_link_contents_are_shown_as_text(hostile):
    app = open_link(packed({hostile: 1}))
    try:
        alert_shows(app, hostile)
        assert_shown_as_text(app.controls.runs.alert, hostile)
    finally:
        app.close()


# -- 2. every door gives the same refusal ------------------------------------------------------------------
def test_a_link_over_budget_shows_the_files_refusal_and_runs_the_default(explorer):
    over = small_config(**OVER_BUDGET)
    upload(explorer.controls.sharing.import_config, "big.json", over.to_json().encode())
    alert_shows(explorer, "one run may use 2 GB")
    refusal = rendered(explorer.controls.runs.alert).text
    explorer.client.error = ""
    assert not explorer.controls.apply(over)  # Apply settings
    assert rendered(explorer.controls.runs.alert).text == refusal
    app = open_link(link_query(over))
    try:
        settle(app, lambda: built(app.client))
        assert app.controls.runs.alert.visible and refusal in rendered(app.controls.runs.alert).text
        assert app.client.config.to_dict() == RunConfig().to_dict() and not app.waiting.visible
    finally:
        app.close()


# -- 5. a refused file is not in use -----------------------------------------------------------------------
def npz(**arrays) -> bytes:
    archive = io.BytesIO()
    np.savez(archive, **arrays)
    return archive.getvalue()


@pytest.mark.parametrize("name, J, reason", [
    ("nan.npz", [[0.0, np.nan, 1.0], [np.nan, 0.0, 1.0], [1.0, 1.0, 0.0]], "finite"),
    ("skew.npz", [[0.0, 1.0, 2.0], [-1.0, 0.0, 1.0], [2.0, 1.0, 0.0]], "symmetric"),
])
def test_a_refused_file_is_never_reported_in_use_nor_sent_again(explorer, name, J, reason):
    controls, client = explorer.controls, explorer.client
    good = np.array([[0.0, 1.0, -1.0], [1.0, 0.0, 0.5], [-1.0, 0.5, 0.0]])
    controls.target.value = "boltzmann"
    upload(controls.upload, "good.npz", npz(J=good))
    settle(explorer, lambda: built(client) and client.info.dim == 3 and "good.npz" in rendered(controls.upload_note).text)
    upload(controls.upload, name, npz(J=np.array(J)))
    alert_shows(explorer, reason)
    settle(explorer, lambda: not client.building)
    assert name not in rendered(controls.upload_note).text and "good.npz" in rendered(controls.upload_note).text
    np.testing.assert_array_equal(client.config.target_params["J"], good)
    assert controls.apply()  # Apply settings sends the file in use, not the refused one
    settle(explorer, lambda: built(client) and not controls.runs.alert.visible)
    np.testing.assert_array_equal(client.config.target_params["J"], good)


# -- 7. an error is news until a later action succeeds ------------------------------------------------------
@pytest.mark.parametrize("action", ["start", "step"])
def test_an_error_clears_when_a_later_start_or_step_succeeds(explorer, action):
    client = explorer.client
    upload(explorer.controls.sharing.import_config, "broken.json", b"{broken")
    assert explorer.controls.runs.alert.visible
    getattr(client, action)()
    settle(explorer, lambda: client.status.n_steps > 0)
    assert not explorer.controls.runs.alert.visible and client.error == ""


# -- every reader's failure reaches the page --------------------------------------------------------------
def stored_run_archive(**entries) -> bytes:
    """A compressed .npz archive shaped as a stored sweep run (``spec`` and ``sampler_seed`` entries)."""
    archive = io.BytesIO()
    np.savez_compressed(archive, spec=np.array(json.dumps({"config": small_config().to_dict()})), **entries)
    return archive.getvalue()


def corrupted(archive: bytes) -> bytes:
    """``archive`` (written compressed) with the deflate stream of its first entry broken (zlib.error)."""
    broken = bytearray(archive)
    start = 30 + int.from_bytes(archive[26:28], "little") + int.from_bytes(archive[28:30], "little")
    broken[start:start + 8] = b"\xff" * 8
    return bytes(broken)


@pytest.mark.parametrize("data, reason", [
    (stored_run_archive(sampler_seed=np.array(np.inf)), "this stored run's seed (inf) is not a whole number"),
    (stored_run_archive(sampler_seed=np.array("x")), "this stored run's seed (x) is not a whole number"),
    (corrupted(stored_run_archive(sampler_seed=np.array(3))), "not a readable stored run (zlib.error)"),
])
def test_a_hostile_stored_run_is_refused_in_the_page(explorer, data, reason):
    upload(explorer.controls.sharing.import_config, "run.npz", data)
    alert_shows(explorer, reason)
    assert explorer.client.config.to_dict() == small_config().to_dict()


def test_a_reader_failing_in_a_way_nobody_listed_is_refused_in_the_page(explorer, monkeypatch):
    def broken(data):
        raise ZeroDivisionError("a reader's own bug")

    monkeypatch.setattr("engine.reading.config_from_stored_run", broken)
    upload(explorer.controls.sharing.import_config, "run.npz", stored_run_archive(sampler_seed=np.array(3)))
    alert_shows(explorer, "the file could not be read (ZeroDivisionError: a reader's own bug)")


def test_a_model_file_read_for_a_target_since_changed_is_not_run_under_the_new_one(explorer, monkeypatch):
    """The target is switched while a model file is read off the loop: the file is refused, not run as a model of
    the new target. (Served, the reader runs while the page goes on; here the handler runs on a loop of its own,
    in a thread, so that the test can change the target meanwhile.)"""
    from engine.uploads import parse_upload

    reading, release = threading.Event(), threading.Event()

    def slow(*args):
        reading.set()
        assert release.wait(TIMEOUT)
        return parse_upload(*args)

    monkeypatch.setattr("engine.reading.parse_upload", slow)
    controls, client = explorer.controls, explorer.client
    controls.target.value, controls.sampler.value = "markov_network", "gibbs"
    before = client.config
    chosen = {"name": "tiny.uai", "data": base64.b64encode(TINY_UAI.encode()).decode(), "serial": 1}
    with param.discard_events(controls.upload):
        controls.upload.upload = chosen
    handler = threading.Thread(target=asyncio.run, args=(
        controls._on_upload(SimpleNamespace(new=chosen, obj=controls.upload)),))
    handler.start()
    assert reading.wait(TIMEOUT)
    controls.target.value = "boltzmann"  # while the file is being read
    release.set()
    handler.join(TIMEOUT)
    alert_shows(explorer, "was read as a model of markov_network, and the target is now boltzmann")
    assert client.config is before and not client.building
