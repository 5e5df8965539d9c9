"""Widgets generated from a Parameterized class's ``param`` declarations.

``ParamForm(cls)`` makes one widget per editable parameter (numbers and
integers as inputs with the parameter's bounds, selectors as drop-downs), with
the parameter's doc as the tooltip. It holds values only: nothing is built
until the user applies them, so an invalid combination is reported once, by
the run model, instead of half-building a model on every keystroke.
"""

from __future__ import annotations

import panel as pn
import param

#: Parameters shown elsewhere in the sidebar (not per target/sampler): the run's chains and seed,
#: and ``record_neighbours``, which the run sets from its OPAD options.
SHARED = {"name", "n_chains", "seed", "record_neighbours"}


def _widget(name: str, spec: param.Parameter, value):
    label = name.replace("_", " ")
    doc = " ".join((spec.doc or "").split())
    if isinstance(spec, param.Boolean):
        return pn.widgets.Checkbox(label=label, value=bool(value))
    if isinstance(spec, param.Selector):
        return pn.widgets.Select(label=label, options=list(spec.objects), value=value, description=doc)
    if isinstance(spec, param.Integer):
        lo, hi = spec.bounds or (None, None)
        return pn.widgets.IntInput(label=label, value=value, start=lo, end=hi, description=doc)
    if isinstance(spec, param.Number):
        lo, hi = spec.bounds or (None, None)
        return pn.widgets.FloatInput(label=label, value=value, start=lo, end=hi, description=doc)
    return None


class ParamForm:
    """Editable values for the widget-friendly parameters of a Parameterized class."""

    def __init__(self, cls: type[param.Parameterized]):
        self.cls = cls
        self.widgets = {}
        for name, spec in cls.param.objects("existing").items():
            if name in SHARED:
                continue
            widget = _widget(name, spec, spec.default)
            if widget is not None:
                self.widgets[name] = widget
        self.panel = pn.Column(*self.widgets.values(), sizing_mode="stretch_width", margin=0)

    def values(self) -> dict:
        return {name: widget.value for name, widget in self.widgets.items()}

    def set_values(self, values: dict) -> None:
        for name, value in values.items():
            if name in self.widgets:
                self.widgets[name].value = value
