"""The dashboard's entry point: `make serve` (panel serve app.py) shows it at /app.

Every session's sampler runs in a worker process of its own, within the
server's budget. Set the budget after ``--args``, e.g.
``panel serve app.py --args --max-workers 30 --run-memory 2GB``:

--max-workers N      sessions that may run a sampler at once (default 40)
--run-memory SIZE    memory one run may use, estimated before it is built and enforced in its worker (2GB)
--total-memory SIZE  memory all runs together may use (16GB)
--upload-limit SIZE  largest uploaded file (10MB; files are refused in the browser above it; the server's
                     --websocket-max-message-size must exceed 4/3 of it, and `make serve` sets 100 MB)
--idle-seconds S     a worker that hears nothing from its session for S seconds ends (120)

Before the options, ``--setup serve_setup.py`` (as `make serve` has it) lets links too long for the app reach it,
which refuses them with its own message instead of a blank page (``dashboard.serving``).
"""

import panel as pn

from dashboard import create_app
from engine.budget import budget_from_arguments
from engine.engine import shared_engine

pn.extension("tabulator")

engine = shared_engine(budget_from_arguments())
create_app(engine=engine).template().servable()
