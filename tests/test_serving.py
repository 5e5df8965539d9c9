"""The served dashboard's set-up (``dashboard.serving``): a server starts warm.

``warm_up()`` runs in ``serve_setup.py`` before ``panel serve`` accepts a
connection. Checked in a fresh interpreter, as a server's process is: after
it, the workers' forkserver runs with the dashboard's preload, the
dashboard's modules are imported (torch and arviz-stats are not: only the
workers use them), nothing of the warm-up is left running, and a session's
first run needs no compilation (its worker is forked with the kernels loaded). No test depends on the machine's speed; the speed
itself is measured by ``python -m benchmarks classroom --sessions 0``.
"""

from __future__ import annotations

import json
import logging
import subprocess
import sys

from dashboard import serving

#: Run in a fresh interpreter: the warm-up, then what a server's first session would meet; prints a JSON report.
FRESH_SERVER = """
import json, sys
import psutil
from dashboard.serving import warm_up

phases = warm_up()
import gc
frozen = gc.get_freeze_count()
me = psutil.Process()
children = [p for p in me.children() if p.status() != psutil.STATUS_ZOMBIE]
forkservers = [p for p in children if "multiprocessing.forkserver" in " ".join(p.cmdline())]
warm_workers = [w for f in forkservers for w in f.children() if w.status() != psutil.STATUS_ZOMBIE]
modules = [name for name in ("dashboard.explorer", "bokeh", "samplers", "engine.worker") if name in sys.modules]

from engine.client import RunClient
from engine.config import RunConfig
from engine.engine import Engine

engine = Engine()
client = RunClient(engine, RunConfig(target="ising_segmentation", target_params={"size": 8},
                                     sampler="locally_balanced", n_chains=3, seed=4))
compiling = []
client.param.watch(lambda event: compiling.append(event.new), "compiling")
built = client.wait_for(lambda c: c.info is not None and not c.building, 120)
client.close()
# a run whose building uses torch (LSB2's network): a worker forked from a forkserver whose torch runs a thread
# pool never finishes its first parallel torch operation
learning = RunClient(engine, RunConfig(target="ising_segmentation", target_params={"size": 8}, sampler="lsb",
                                       sampler_params={"parametrization": "lsb2", "burn_in": 20}, n_chains=3,
                                       seed=4))
learnt = learning.wait_for(lambda c: c.info is not None and not c.building and c.run_steps(3, 120), 120)
learning.close()
engine.shutdown()
# the server's process configured, estimated and drew both runs: torch and arviz-stats stayed in the workers
heavy = [name for name in ("torch", "arviz_stats") if name in sys.modules]
print(json.dumps({"phases": sorted(phases), "forkservers": [" ".join(p.cmdline()) for p in forkservers],
                  "warm_workers": len(warm_workers), "modules": modules, "built": built, "error": client.error,
                  "compiling": compiling, "learnt": learnt, "learning_error": learning.error, "heavy": heavy,
                  "frozen": frozen}))
"""


def test_after_the_warm_up_the_forkserver_runs_warm_and_a_first_run_compiles_nothing():
    result = subprocess.run([sys.executable, "-c", FRESH_SERVER], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["phases"] == sorted(["forkserver started", "imports", "run and views", "page document",
                                       "objects frozen", "total"]), (
        result.stderr[-3000:])  # every phase ran: the warm-up did not fail and log a warning
    # the shared objects are out of reach of the full collection Panel runs after each session's end
    assert report["frozen"] > 100_000
    assert len(report["forkservers"]) == 1 and "engine.forkserver_preload" in report["forkservers"][0]
    assert report["warm_workers"] == 0  # the warm-up's own worker was stopped
    assert report["modules"] == ["dashboard.explorer", "bokeh", "samplers", "engine.worker"]
    assert report["built"] and report["error"] == ""
    assert report["compiling"] == []  # the worker was forked with the kernels loaded: no "compiling…" phase
    assert report["learnt"] and report["learning_error"] == ""  # torch works in a worker forked after the warm-up
    assert report["heavy"] == []  # the server answers sooner without them (a second and a half of imports)


def test_a_failed_warm_up_is_logged_and_the_server_starts_all_the_same(monkeypatch, caplog):
    from dashboard import explorer

    def broken(*args, **kwargs):
        raise RuntimeError("no explorer today")

    monkeypatch.setattr(explorer, "Explorer", broken)
    with caplog.at_level(logging.WARNING, logger=serving.__name__):
        phases = serving.warm_up()
    assert "page document" not in phases and {"objects frozen", "total"} <= set(phases)
    assert "dashboard warm-up failed" in caplog.text and "no explorer today" in caplog.text
