"""The dashboard's entry point: `make serve` (panel serve app.py) shows it at /app."""

import panel as pn

from dashboard import Catalogue

pn.extension("tabulator")

pn.template.FastListTemplate(
    title="Discrete-sampler explorer",
    main=[Catalogue()],
).servable()
