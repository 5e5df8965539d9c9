"""How a number reads in the page's sentences and tables, the worker's and the views' alike.

``number(value)`` is the one formatter for a number inside text: a ratio of
1330 reads "1330", an autocorrelation time of 8430 steps "8430", never
"1.33e+03" or "8.43e+03" (exponent notation does not read at a glance on a
projector; tick labels avoid it too, ``dashboard.views.conventions``). It is
model code, free of Panel, so that the worker's sentences (the comparison's
verdict) and the views' use the same rule.
"""

from __future__ import annotations

import numpy as np


def number(value: float) -> str:
    """``value`` for a sentence or a table: from 1000 on a whole number (with thousands separators from 10,000),
    below it four significant digits written out; never exponent notation (it reads back with
    ``float(text.replace(",", ""))``)."""
    if abs(value) >= 1000:
        return f"{value:,.0f}" if abs(value) >= 10_000 else f"{value:.0f}"
    return np.format_float_positional(value, precision=4, fractional=False, trim="-")
