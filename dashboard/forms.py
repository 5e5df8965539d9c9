"""Widgets generated from a Parameterized class's ``param`` declarations.

``ParamForm(cls)`` makes one widget per editable parameter (numbers and
integers as inputs with the parameter's bounds, selectors as drop-downs), with
the parameter's doc as the tooltip. A class may declare ``parameter_conditions``
(parameter → (selector, the selector's values it applies to)): the form then
shows that parameter only while it applies (BVS's ``n_samples`` only for the
synthetic data set). It holds values only: nothing is built
until the user applies them, so an invalid combination is reported once, by
the run model, instead of half-building a model on every keystroke.
"""

from __future__ import annotations

import panel as pn
import param

#: Parameters shown elsewhere in the sidebar (not per target/sampler): the run's chains and seed,
#: and ``record_neighbours``, which the run sets from its OPAD options.
SHARED = {"name", "n_chains", "seed", "record_neighbours"}
#: Least width of a form (px): that of Panel's widgets.
FORM_MIN_WIDTH = 300


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
        # Shown with at most 6 decimals (the value itself keeps full precision): β = 1/2.27 reads 0.440529.
        return pn.widgets.FloatInput(label=label, value=value, start=lo, end=hi, description=doc,
                                     format="0.[000000]")
    return None


class ParamForm:
    """Editable values for the widget-friendly parameters of a Parameterized class.

    A class that wraps another one named by a selector declares it as
    ``nested_parameters = {"base_params": "base"}`` (parallel tempering: the
    sampler ``base`` and its parameters ``base_params``); with ``resolve``
    (name → class) the form then holds a form of the selected class too, and
    puts into ``base_params`` the values that differ from that class's defaults.
    """

    def __init__(self, cls: type[param.Parameterized], resolve=None):
        self.cls = cls
        self.widgets = {}
        for name, spec in cls.param.objects("existing").items():
            if name in SHARED:
                continue
            widget = _widget(name, spec, spec.default)
            if widget is not None:
                self.widgets[name] = widget
        self.nested: tuple[str, str] | None = None
        self._nested_forms: dict[str, ParamForm] = {}
        nested = getattr(cls, "nested_parameters", {}) if resolve is not None else {}
        extra = []
        if nested:
            (key, selector), = nested.items()
            self.nested, self._resolve = (key, selector), resolve
            self._nested_panel = pn.Column(margin=0, sizing_mode="stretch_width")
            extra = [pn.pane.Markdown(f"*{selector} sampler's parameters* (its defaults unless changed)",
                                      styles={"font-size": "0.85em"}, margin=(0, 10)), self._nested_panel]
            self.widgets[selector].param.watch(lambda event: self._show_nested(), "value")
            self._show_nested()
        # As wide as a widget even when it holds none: Panel keeps a layout's least width, taken from its
        # children, when they are replaced by narrower ones, so a form without widgets would otherwise leave the
        # sidebar as wide as the form it replaced.
        self.panel = pn.Column(*self.widgets.values(), *extra, sizing_mode="stretch_width", margin=0,
                               min_width=FORM_MIN_WIDTH)
        self._conditions = {name: rule for name, rule in getattr(cls, "parameter_conditions", {}).items()
                            if name in self.widgets and rule[0] in self.widgets}
        for selector in {selector for selector, _ in self._conditions.values()}:
            self.widgets[selector].param.watch(lambda event: self._show_applicable(), "value")
        self._show_applicable()

    def _show_applicable(self) -> None:
        """Show only the parameters that apply to the selectors' current values."""
        for name, (selector, values) in self._conditions.items():
            self.widgets[name].visible = self.widgets[selector].value in values

    def _nested_form(self) -> ParamForm:
        name = self.widgets[self.nested[1]].value
        if name not in self._nested_forms:
            self._nested_forms[name] = ParamForm(self._resolve(name))
        return self._nested_forms[name]

    def _show_nested(self) -> None:
        self._nested_panel[:] = [self._nested_form().panel]

    def values(self) -> dict:
        """The widgets' values (ValueError for an unreadable range)."""
        out = self._own_values()
        if self.nested is not None:
            form = self._nested_form()
            out[self.nested[0]] = {name: value for name, value in form.values().items()
                                   if value != form.cls.param[name].default}
        return out

    def _own_values(self) -> dict:
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
        """Show ``values``, and every parameter they leave out at its default: the form then reads as a fresh one
        given ``values`` does, whatever it showed before (a preset that names no ``learning_moves`` shows 1, not
        the 2 an earlier preset set)."""
        values = {**{name: self.cls.param[name].default for name in self.widgets}, **values}
        if self.nested is not None:
            nested = values.pop(self.nested[0], None) or {}
            self.widgets[self.nested[1]].value = values[self.nested[1]]
            self._nested_form().set_values(nested)
        for name, value in values.items():
            if name in self.widgets:
                widget = self.widgets[name]
                is_text = isinstance(widget, pn.widgets.TextInput)
                widget.value = _format_int_or_range(tuple(value) if isinstance(value, list) else value) \
                    if is_text else value
