"""What a page shows, as data: the Bokeh models of a Panel object, compared between two sessions.

``PageModels(viewable)`` renders a Panel object into a Bokeh document once, as
a served page does (Panel then keeps the models in step with the Python
objects), and ``describe()`` gives, at any later moment, a canonical
description of every model reachable from its root: the model's type and each
property it holds, models referred to by the order in which they are first met
(so two sessions' descriptions compare although their ids differ), floats
rounded to 10 significant digits, arrays as lists. ``first_difference(a, b)``
names where two descriptions part, as a path of property names.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import panel as pn
from bokeh.document import Document
from bokeh.model import Model

#: Properties that name a model rather than describe what it shows.
IDENTITY = {"id", "name", "subscribed_events", "js_property_callbacks", "js_event_callbacks", "tags"}


class PageModels:
    """A Panel object rendered into a Bokeh document of its own, described on demand (module docstring)."""

    def __init__(self, viewable):
        self.document = Document()
        self.root = pn.panel(viewable).get_root(self.document)
        self.document.add_root(self.root)

    def describe(self) -> object:
        numbering: dict[str, int] = {}
        return _describe(self.root, numbering)


def _describe(value, numbering: dict[str, int]) -> object:
    if isinstance(value, Model):
        if value.id in numbering:
            return ("ref", numbering[value.id])
        numbering[value.id] = len(numbering)
        properties = value.properties_with_values(include_defaults=True)
        return (type(value).__name__, {key: _describe(properties[key], numbering)
                                       for key in sorted(properties) if key not in IDENTITY})
    if dataclasses.is_dataclass(value) and not isinstance(value, type):  # Bokeh's Field, Value, …
        return (type(value).__name__, {field.name: _describe(getattr(value, field.name), numbering)
                                       for field in dataclasses.fields(value)})
    if isinstance(value, dict):
        return {str(key): _describe(value[key], numbering) for key in sorted(value, key=str)}
    if isinstance(value, (list, tuple)):
        return [_describe(item, numbering) for item in value]
    if isinstance(value, np.ndarray):
        return _describe(value.tolist(), numbering)
    if isinstance(value, (float, np.floating)):
        value = float(value)
        return repr(value) if not math.isfinite(value) else float(f"{value:.10g}")
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, (str, int, bool)) or value is None:
        return value
    return repr(value)


def first_difference(a, b, path: str = "") -> str | None:
    """Where descriptions ``a`` and ``b`` first differ (a path and both values), or None when they are equal."""
    if type(a) is not type(b):
        return f"{path}: {_short(a)} ≠ {_short(b)}"
    if isinstance(a, dict):
        for key in sorted(set(a) | set(b)):
            if key not in a or key not in b:
                return f"{path}.{key}: {'missing' if key not in a else _short(a[key])} ≠ " \
                       f"{'missing' if key not in b else _short(b[key])}"
            found = first_difference(a[key], b[key], f"{path}.{key}")
            if found:
                return found
        return None
    if isinstance(a, (list, tuple)):
        if isinstance(a, tuple) and len(a) == 2 and isinstance(a[0], str) and a[0] != "ref":  # (type, properties)
            if a[0] != b[0]:
                return f"{path}: {a[0]} ≠ {b[0]}"
            return first_difference(a[1], b[1], f"{path}<{a[0]}>")
        if len(a) != len(b):
            return f"{path}: {len(a)} items ≠ {len(b)} items ({_short(a)} ≠ {_short(b)})"
        for index, (x, y) in enumerate(zip(a, b)):
            found = first_difference(x, y, f"{path}[{index}]")
            if found:
                return found
        return None
    return None if a == b else f"{path}: {_short(a)} ≠ {_short(b)}"


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 300 else text[:300] + "…"
