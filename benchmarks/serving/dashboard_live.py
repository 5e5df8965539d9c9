"""The served dashboard under load: sampler speed, flush cost, first paint, click latency.

Prints, measured in this one run (headless Chromium against a Panel server in
this process on 127.0.0.1, each session's sampler in a worker process of its
own, as ``app.py`` serves it):

* the sampler's steps/s headless (a ``RunClient`` and its worker process, no
  page) versus while a served session with a connected browser displays it —
  the ratio (goal ≥ 0.8);
* the mean and worst time of one plot flush (the periodic callback);
* the time from page load to the first drawn lattice in the browser;
* click-to-effect latency (Pause → status shows "paused") with ``--sessions``
  (4) concurrent browser sessions running;
* the same sessions' click latency (Pause, Start, … in turn) while one more
  page loads a configuration file at the size limit (``MAX_CONFIG_BYTES``, a
  Boltzmann machine's couplings): reading and checking it must not stall the
  server's event loop for the others (goal: every click under 1 s).

Run:  python -m benchmarks dashboard_live [--preset NAME] [--seconds S] [--sessions N]
(needs Chromium at ``--chromium``, /usr/bin/chromium by default)

``--preset`` runs a named preset instead of the default locally balanced
segmentation run (e.g. an LSB preset, whose balancing view redraws live);
``--seconds`` is how long each throughput is measured.
"""

from __future__ import annotations

import socket
import statistics
import tempfile
import time
import urllib.request
from pathlib import Path

import numpy as np
import panel as pn
from playwright.sync_api import sync_playwright

from benchmarks import arguments
from dashboard import create_app
from dashboard.controls import CONFIG_FILES
from engine.client import RunClient
from engine.config import MAX_CONFIG_BYTES, RunConfig
from engine.engine import Engine
from engine.presets import load_presets

CONFIG = dict(target="ising_segmentation", target_params={"size": 30, "lam": 1.0, "mu": 1.0, "sigma": 3.0},
              sampler="locally_balanced", sampler_params={"balancing": "barker"}, n_chains=30, seed=0,
              statistic="agreement")
SECONDS = 5.0
#: Longest wait for a run to be built or to start (seconds).
TIMEOUT = 120.0
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
IMAGE_READY = """() => {
  const docs = (window.Bokeh && window.Bokeh.documents) || [];
  if (!docs.length || !docs[0].views_manager) return false;
  const plots = docs[0].views_manager.query(view => Array.isArray(view.model.renderers) && view.model.title != null);
  for (const view of plots) {
    const title = view.model.title;
    if ((typeof title === "string" ? title : title.text) !== "current state") continue;
    for (const renderer of view.model.renderers) {
      const data = renderer.data_source && renderer.data_source.data;
      if (data && data.image && Array.from(data.image[0]).some((v) => Number.isFinite(v))) return true;
    }
  }
  return false;
}"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def headless_rate(config: RunConfig, seconds: float) -> float:
    """Steps per second of ``config`` in a worker process of its own, with no page: the client only polls."""
    engine = Engine()
    client = RunClient(engine, config)
    try:
        if not client.wait_for(lambda c: c.info is not None and not c.building, TIMEOUT):
            raise RuntimeError(f"the run was not built: {client.error}")
        client.start()
        if not client.wait_for(lambda c: c.status.running and c.status.n_steps > 0, TIMEOUT):
            raise RuntimeError(f"the run did not start: {client.error}")
        steps0, t0 = client.status.n_steps, time.perf_counter()
        client.wait_for(lambda c: False, seconds)
        return (client.status.n_steps - steps0) / (time.perf_counter() - t0)
    finally:
        client.close()
        engine.shutdown()


def serve(explorers: list, config: RunConfig, engine: Engine):
    def factory():
        explorer = create_app(config, engine)
        explorers.append(explorer)
        return explorer.template()

    port = free_port()
    server = pn.serve({"app": factory}, port=port, address="127.0.0.1", threaded=True, show=False, start=True,
                      liveness=True, check_unused_sessions=500, unused_session_lifetime=500,
                      websocket_max_message_size=104857600)  # as `make serve`
    deadline = time.time() + 30
    while time.time() < deadline:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/liveness", timeout=1)
            break
        except OSError:
            time.sleep(0.2)
    return server, f"http://127.0.0.1:{port}/app"


def limit_size_configuration() -> bytes:
    """A valid configuration file just under ``MAX_CONFIG_BYTES``: the couplings of a Boltzmann machine."""
    rng = np.random.default_rng(0)
    d = int((MAX_CONFIG_BYTES / 29) ** 0.5)  # about 29 bytes per coupling in the file
    while True:
        couplings = np.triu(rng.normal(size=(d, d)), 1)
        data = RunConfig(target="boltzmann", target_params={"J": couplings + couplings.T}, sampler="metropolis",
                         n_chains=4).to_json().encode()
        if len(data) <= MAX_CONFIG_BYTES:
            return data
        d -= 5


def clicks_during_a_load(browser, url: str, pages: list, explorers: list, data: bytes) -> tuple[list[float], float]:
    """Click latencies in ``pages`` (Pause, Start, … in turn: the click until its page shows the new phase) while
    a new page loads ``data`` as its configuration file; and the seconds that load took (until its run was built)."""
    loader = browser.new_context().new_page()
    loader.goto(url)
    loader.wait_for_function(IMAGE_READY, timeout=TIMEOUT * 1000)
    explorer = explorers[-1]
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "limit.json"
        path.write_bytes(data)
        started = time.perf_counter()
        loader.set_input_files(f'input[type="file"][accept="{CONFIG_FILES}"]', str(path))
        latencies, clicks = [], 0
        while explorer.client.info is None or explorer.client.info.target_name != "boltzmann":
            if explorer.client.error or time.perf_counter() - started > TIMEOUT:
                raise RuntimeError(f"the limit-size file was not loaded: {explorer.client.error or 'timed out'}")
            other = pages[clicks % len(pages)]
            button, phase = ("Pause", "paused") if clicks // len(pages) % 2 == 0 else ("Start", "running")
            clicked = time.perf_counter()
            other.get_by_role("button", name=button, exact=True).click()
            other.get_by_text(phase, exact=True).first.wait_for(timeout=TIMEOUT * 1000)
            latencies.append(time.perf_counter() - clicked)
            clicks += 1
        loaded = time.perf_counter() - started
    loader.close()
    return latencies, loaded


def main(argv: list[str] | None = None) -> None:
    args = arguments("dashboard_live", argv, preset="", seconds=SECONDS, sessions=4, chromium="/usr/bin/chromium",
                     helps={"preset": "a named preset instead of the default run",
                            "seconds": "how long each throughput is measured",
                            "sessions": "concurrent browser sessions for the click latency",
                            "chromium": "the Chromium executable"})
    config = load_presets()[args.preset].run_config() if args.preset else RunConfig(**CONFIG)
    base = headless_rate(config, args.seconds)
    explorers: list = []
    engine = Engine()  # one worker process per session, as app.py's shared engine
    server, url = serve(explorers, config, engine)
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=args.chromium, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1400, "height": 1100})
            started = time.perf_counter()
            page.goto(url)
            page.wait_for_function(IMAGE_READY, timeout=TIMEOUT * 1000)
            first_paint = time.perf_counter() - started
            explorer = explorers[-1]
            page.get_by_role("button", name="Start", exact=True).click()
            deadline = time.time() + TIMEOUT
            while not explorer.client.status.running and time.time() < deadline:
                time.sleep(0.05)
            time.sleep(1.0)
            steps0, t0 = explorer.client.status.n_steps, time.perf_counter()
            explorer.flush_seconds.clear()
            time.sleep(args.seconds)
            served = (explorer.client.status.n_steps - steps0) / (time.perf_counter() - t0)
            flushes = list(explorer.flush_seconds)
            page.get_by_role("button", name="Pause", exact=True).click()

            pages = [browser.new_context().new_page() for _ in range(args.sessions)]
            for other in pages:
                other.goto(url)
                other.wait_for_function(IMAGE_READY, timeout=TIMEOUT * 1000)
                other.get_by_role("button", name="Start", exact=True).click()
            time.sleep(2.0)
            latencies = []
            for other in pages:
                clicked = time.perf_counter()
                other.get_by_role("button", name="Pause", exact=True).click()
                other.get_by_text("paused", exact=True).first.wait_for(timeout=TIMEOUT * 1000)
                latencies.append(time.perf_counter() - clicked)
            limit_file = limit_size_configuration()
            during_load, load_seconds = clicks_during_a_load(browser, url, pages, explorers, limit_file)
            browser.close()
    finally:
        for explorer in explorers:
            explorer.close()
        server.stop()
        engine.shutdown()

    print(f"configuration: {config.sampler} ({config.sampler_params}) on {config.target} {config.target_params}, "
          f"{config.n_chains} chains, refresh every 100 ms")
    print(f"steps/s headless                      {base:10.0f}")
    print(f"steps/s served, browser connected     {served:10.0f}")
    print(f"ratio served / headless               {served / base:10.2f}   (goal >= 0.8)")
    if flushes:
        print(f"plot flush: mean / worst (ms)         {1e3 * statistics.mean(flushes):10.1f} / "
              f"{1e3 * max(flushes):.1f}   over {len(flushes)} flushes")
    print(f"page load -> first drawn lattice (s)  {first_paint:10.2f}")
    if latencies:
        print(f"click -> effect, {len(latencies)} sessions (s)       {statistics.mean(latencies):10.2f} mean, "
              f"{max(latencies):.2f} worst")
    print(f"one more page loads a {len(limit_file) / 1e6:.1f} MB configuration file (limit "
          f"{MAX_CONFIG_BYTES / 1e6:.0f} MB): built after {load_seconds:.1f} s")
    if during_load:
        print(f"  the others' click -> effect meanwhile (s) {statistics.mean(during_load):5.2f} mean, "
              f"{max(during_load):.2f} worst over {len(during_load)} clicks   (goal: each < 1)")


if __name__ == "__main__":
    main()
