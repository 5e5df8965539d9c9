"""The catalogue lists every registered target and sampler (no server needed)."""

from __future__ import annotations

import panel as pn
import pytest

import samplers
import targets
from dashboard.catalogue import Catalogue, describe_parameters, first_doc_line


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
