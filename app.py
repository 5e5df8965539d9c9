"""The dashboard's entry point: `make serve` (panel serve app.py) shows it at /app."""

import panel as pn

from dashboard import create_app
from dashboard.explorer import prefer_responsiveness

pn.extension("tabulator", notifications=True)
prefer_responsiveness()

create_app().template().servable()
