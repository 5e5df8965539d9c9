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


def parse_int_or_range(text: str) -> int | tuple[int, int]:
    """``"5"`` → 5 and ``"1-20"`` (or ``"1–20"``, ``"1, 20"``) → (1, 20); ValueError otherwise."""
    parts = [p for p in text.replace("–", "-").replace(",", "-").split("-") if p.strip()]
    try:
        numbers = [int(p) for p in parts]
    except ValueError:
        numbers = []
    if len(numbers) == 1:
        return numbers[0]
    if len(numbers) == 2:
        return tuple(numbers)
    raise ValueError(f"expected a whole number k or a range like 1-20; got {text!r}")


def _is_int_or_range(value) -> bool:
    return isinstance(value, int) or (isinstance(value, tuple) and len(value) == 2
                                      and all(isinstance(v, int) for v in value))


def _format_int_or_range(value) -> str:
    return f"{value[0]}-{value[1]}" if isinstance(value, tuple) else str(value)


def _widget(name: str, spec: param.Parameter, value):
    label = name.replace("_", " ")
    doc = " ".join((spec.doc or "").split())
    if type(spec) is param.Parameter and _is_int_or_range(value):  # e.g. a walk length: fixed k or a range
        return pn.widgets.TextInput(label=f"{label} (k or kmin-kmax)", value=_format_int_or_range(value),
                                    description=doc)
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
        """The widgets' values (ValueError for an unreadable range)."""
        out = {}
        for name, widget in self.widgets.items():
            value = widget.value
            if isinstance(widget, pn.widgets.TextInput):
                try:
                    value = parse_int_or_range(value)
                except ValueError as error:
                    raise ValueError(f"{name}: {error}") from None
            out[name] = value
        return out

    def set_values(self, values: dict) -> None:
        for name, value in values.items():
            if name in self.widgets:
                widget = self.widgets[name]
                is_text = isinstance(widget, pn.widgets.TextInput)
                widget.value = _format_int_or_range(tuple(value) if isinstance(value, list) else value) \
                    if is_text else value
