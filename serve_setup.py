"""Run once before the dashboard's server starts: ``panel serve app.py --setup serve_setup.py`` (``make serve``).

It lets links longer than the app reads reach the app, which refuses them with its own message, and warms the
server up (the workers' forkserver, the dashboard's imports, one explorer built offline), so that the first page
after a start is as quick as any later one (``dashboard.serving``).
"""

from dashboard.serving import allow_long_links, warm_up

allow_long_links()
print("dashboard warm-up: the server answers once it is warm (a few seconds; a minute when the samplers' kernels "
      "must be compiled, after an edit)", flush=True)
print("dashboard warm-up: " + ", ".join(f"{phase} {seconds:.1f} s" for phase, seconds in warm_up().items()),
      flush=True)
