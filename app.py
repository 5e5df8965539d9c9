"""The dashboard's entry point: `make serve` (panel serve app.py) shows it at /app."""

import panel as pn

from dashboard import create_app

pn.extension("tabulator", notifications=True)

create_app().template().servable()
