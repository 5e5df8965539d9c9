"""The catalogue lists every registered target and sampler (no server needed)."""

from __future__ import annotations

import re

import panel as pn
import pytest

import samplers
import targets
from dashboard.catalogue import Catalogue, describe_parameters, first_doc_line, for_projector


@pytest.fixture(scope="module")
def catalogue() -> Catalogue:
    return Catalogue()


def _tables(catalogue: Catalogue) -> list[pn.widgets.Tabulator]:
    return list(pn.panel(catalogue).select(pn.widgets.Tabulator))


def test_shows_two_tables(catalogue):
    assert len(_tables(catalogue)) == 2


def test_every_target_is_listed(catalogue):
    shown = set(catalogue.targets_table.value["target"])
    assert targets.available(), "no target registered"
    assert shown == set(targets.available())
    assert any(t.value is catalogue.targets for t in _tables(catalogue))


def test_every_sampler_is_listed(catalogue):
    shown = set(catalogue.samplers_table.value["sampler"])
    assert samplers.available(), "no sampler registered"
    assert shown == set(samplers.available())
    assert any(t.value is catalogue.samplers for t in _tables(catalogue))


@pytest.mark.parametrize("name", targets.available())
def test_target_row_has_description_and_parameters(catalogue, name):
    cls = targets.target_class(name)
    row = catalogue.targets.set_index("target").loc[name]
    assert row["description"] == first_doc_line(cls)
    assert row["parameters"] == describe_parameters(cls)
    for pname in cls.param:
        if pname == "name":
            continue
        assert f"{pname} = " in row["parameters"]
        bounds = getattr(cls.param[pname], "bounds", None)
        if bounds is not None:
            assert "[" in row["parameters"] or "(" in row["parameters"]


@pytest.mark.parametrize("name", samplers.available())
def test_sampler_row_has_description(catalogue, name):
    cls = samplers.sampler_class(name)
    row = catalogue.samplers.set_index("sampler").loc[name]
    assert row["description"] == first_doc_line(cls)


#: Raw TeX as the browser's legibility check finds it (``tests/browser/test_legibility.py``'s ``RAW_TEX``).
RAW_TEX = r"\\[A-Za-z]+|[_^]\{"


def test_mathematics_reads_without_tex(catalogue):
    """Docstrings write e^{−2βJ} for the code's reader; the catalogue shows what a projector reads."""
    texts = [text for frame in (catalogue.targets, catalogue.samplers)
             for column in ("description", "parameters") for text in frame[column]]
    assert not [text for text in texts if re.search(RAW_TEX, text)]
    described = dict(zip(catalogue.samplers["sampler"], catalogue.samplers["description"]))
    assert "1 − exp(−2βJ)" in described["swendsen_wang"]


@pytest.mark.parametrize("tex, shown", [("1 − e^{−2βJ}", "1 − exp(−2βJ)"), ("e^{x_{ij}}", "exp(x_(ij))"),
                                        ("|W|^{(a_w−n−1)/2}", "|W|^((a_w−n−1)/2)"), (r"\beta J", "β J"),
                                        ("x^{2}", "x^2")])
def test_for_projector(tex, shown):
    assert for_projector(tex) == shown
