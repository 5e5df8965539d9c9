"""A catalogue of every registered target and sampler.

Read straight from the registries (``targets.available()``,
``samplers.available()``) and from the classes themselves: the first line of a
class's docstring, and its ``param`` parameters with their defaults, bounds and
docs. Nothing is instantiated, so building the catalogue is cheap. Docstrings
write their mathematics for a reader of the code, in TeX's braces
("1 − e^{−2βJ}"); the catalogue shows it as a projector reads it
(``for_projector``: "1 − exp(−2βJ)").
"""

from __future__ import annotations

import inspect
import math
import re
from typing import Any

import pandas as pd
import panel as pn
import param

import samplers
import targets


#: TeX's commands that docstrings use, as the characters a page shows.
_TEX_COMMANDS = {"beta": "β", "lambda": "λ", "mu": "μ", "sigma": "σ", "theta": "θ", "tau": "τ", "alpha": "α",
                 "le": "≤", "ge": "≥", "cdot": "·", "times": "×", "propto": "∝", "sum": "Σ"}
_EXPONENTIAL = re.compile(r"\be\^\{([^{}]*)\}")
_BRACED = re.compile(r"([_^])\{([^{}]*)\}")
_COMMAND = re.compile(r"\\([A-Za-z]+)")


def for_projector(text: str) -> str:
    """``text`` without TeX's markup: e^{x} as exp(x), a braced sub- or superscript in parentheses (x^{(a−1)/2}
    as x^((a−1)/2), x_{ij} as x_(ij)), a command as its character (\\beta as β); nested braces from the inside
    out."""
    unbraced = None
    while unbraced != text:
        unbraced = text
        text = _EXPONENTIAL.sub(r"exp(\1)", text)
        text = _BRACED.sub(lambda m: m.group(1) + (m.group(2) if re.fullmatch(r"\w", m.group(2))
                                                   else f"({m.group(2)})"), text)
    return _COMMAND.sub(lambda m: _TEX_COMMANDS.get(m.group(1), m.group(1)), text)


def first_doc_line(cls: type) -> str:
    """The first non-empty line of ``cls``'s own docstring ('' if it has none), as a projector reads it."""
    doc = inspect.cleandoc(cls.__doc__ or "")
    return for_projector(next((line.strip() for line in doc.splitlines() if line.strip()), ""))


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        if math.isinf(value):
            return "∞" if value > 0 else "−∞"
        return f"{value:.6g}"
    return repr(value)


def _range(p: param.Parameter) -> str:
    """Bounds of a numeric parameter or choices of a selector, '' if neither."""
    bounds = getattr(p, "bounds", None)
    if bounds is not None:
        lo, hi = bounds
        inclusive = getattr(p, "inclusive_bounds", (True, True))
        left = "[" if lo is not None and inclusive[0] else "("
        right = "]" if hi is not None and inclusive[1] else ")"
        return f"{left}{'−∞' if lo is None else _fmt(lo)}, {'∞' if hi is None else _fmt(hi)}{right}"
    objects = getattr(p, "objects", None)
    if isinstance(p, param.Selector) and objects:
        values = objects.values() if isinstance(objects, dict) else objects
        return "{" + ", ".join(_fmt(v) for v in values) + "}"
    return ""


def parameter_rows(cls: type) -> list[dict[str, str]]:
    """One dict per ``param`` parameter of ``cls`` (except ``name``): name, kind, default, range, doc."""
    if not (isinstance(cls, type) and issubclass(cls, param.Parameterized)):
        return []
    rows = []
    for pname in cls.param:
        if pname == "name":
            continue
        p = cls.param[pname]
        rows.append({
            "name": pname,
            "kind": type(p).__name__,
            "default": _fmt(p.default),
            "range": _range(p),
            "doc": for_projector(" ".join((p.doc or "").split())),
        })
    return rows


def describe_parameters(cls: type) -> str:
    """The parameters of ``cls`` as text, one per line: ``beta = 0.5 in [0, 100]: Inverse temperature β.``"""
    lines = []
    for row in parameter_rows(cls):
        text = f"{row['name']} = {row['default']}"
        if row["range"]:
            text += f" in {row['range']}"
        if row["doc"]:
            text += f": {row['doc']}"
        lines.append(text)
    return "\n".join(lines)


def registry_frame(kind: str, names: list[str], lookup) -> pd.DataFrame:
    """One row per registered name: name (column ``kind``), class, description, parameters."""
    columns = [kind, "class", "description", "parameters"]
    rows = [
        (name, cls.__name__, first_doc_line(cls), describe_parameters(cls))
        for name, cls in ((name, lookup(name)) for name in names)
    ]
    return pd.DataFrame(rows, columns=columns)


def targets_frame() -> pd.DataFrame:
    """One row per registered target."""
    return registry_frame("target", targets.available(), targets.target_class)


def samplers_frame() -> pd.DataFrame:
    """One row per registered sampler."""
    return registry_frame("sampler", samplers.available(), samplers.sampler_class)


def _table(frame: pd.DataFrame) -> pn.widgets.Tabulator:
    return pn.widgets.Tabulator(
        frame,
        disabled=True,
        show_index=False,
        layout="fit_data_fill",
        sizing_mode="stretch_width",
        formatters={"description": {"type": "textarea"}, "parameters": {"type": "textarea"}},
        widths={"description": 320},
    )


class Catalogue(pn.viewable.Viewer):
    """Tables of every registered target and sampler, with their parameters."""

    def __init__(self, **params):
        super().__init__(**params)
        self.targets = targets_frame()
        self.samplers = samplers_frame()
        self.targets_table = _table(self.targets)
        self.samplers_table = _table(self.samplers)
        self._layout = pn.Column(
            pn.pane.Markdown(f"## Targets ({len(self.targets)})"),
            self.targets_table,
            pn.pane.Markdown(f"## Samplers ({len(self.samplers)})"),
            self.samplers_table,
            sizing_mode="stretch_width",
        )

    def __panel__(self) -> pn.viewable.Viewable:
        return self._layout
