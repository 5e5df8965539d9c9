"""How a number reads in the page's sentences and tables, the worker's and the views' alike.

``number(value)`` is the one formatter for a number inside text: a ratio of
1330 reads "1330", an autocorrelation time of 8430 steps "8430", never
"1.33e+03" or "8.43e+03" (exponent notation does not read at a glance on a
projector; tick labels avoid it too, ``dashboard.views.conventions``). It is
model code, free of Panel, so that the worker's sentences (the comparison's
verdict) and the views' use the same rule. A quantity that spans hundreds of
orders of magnitude — a probability ratio p̃(y)/p̃(x), a path's probability —
is given by its logarithm to ``exp_number``, which writes it as ``number``
does within 10⁻⁴…10⁶ and as a power of ten beyond (3.2 × 10⁻³⁸).
"""

from __future__ import annotations

import math

import numpy as np

#: Beyond these powers of ten, ``exp_number`` writes a power of ten.
WRITTEN_OUT = (-4, 6)
_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def number(value: float) -> str:
    """``value`` for a sentence or a table: from 1000 on a whole number (with thousands separators from 10,000),
    below it four significant digits written out; never exponent notation (it reads back with
    ``float(text.replace(",", ""))``)."""
    if abs(value) >= 1000:
        return f"{value:,.0f}" if abs(value) >= 10_000 else f"{value:.0f}"
    return np.format_float_positional(value, precision=4, fractional=False, trim="-")


def exp_number(log_value: float) -> str:
    """e^``log_value`` for a sentence (module docstring): "0.0123", "8430", "3.2 × 10⁻³⁸", "10⁴⁰⁰"; "0" and "∞" for
    −∞ and +∞ (NaN as ``number`` writes it)."""
    if not math.isfinite(log_value):
        return "0" if log_value == -math.inf else "∞" if log_value == math.inf else number(log_value)
    decimal = log_value / math.log(10)
    if WRITTEN_OUT[0] <= decimal < WRITTEN_OUT[1]:
        return number(math.exp(log_value))
    exponent = math.floor(decimal)
    mantissa = round(10 ** (decimal - exponent), 1)
    if mantissa >= 10:
        mantissa, exponent = 1.0, exponent + 1
    power = "10" + str(exponent).translate(_SUPERSCRIPT)
    return power if mantissa == 1 else f"{mantissa:g} × {power}"


def wide_number(value: float) -> str:
    """``value`` (an acceptance probability, a γ, an error that may be tiny) as ``exp_number`` writes it: out to
    four significant digits within 10⁻⁴…10⁶, a power of ten beyond; never hundreds of zeros nor "1e-300"."""
    if value == 0 or math.isnan(value):
        return number(value)
    return ("−" if value < 0 else "") + exp_number(math.log(abs(value)))
