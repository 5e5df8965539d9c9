"""Run once before the dashboard's server starts: ``panel serve app.py --setup serve_setup.py`` (``make serve``).

It lets links longer than the app reads reach the app, which refuses them with its own message
(``dashboard.serving``).
"""

from dashboard.serving import allow_long_links

allow_long_links()
