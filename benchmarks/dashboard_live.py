"""The served dashboard under load: sampler speed, flush cost, first paint, click latency.

Prints, measured in this one run (headless Chromium against an in-process
Panel server on 127.0.0.1):

* the sampler's steps/s headless (``RunModel`` thread alone) versus while a
  served session with a connected browser displays it — the ratio (goal ≥ 0.8);
* the mean and worst time of one plot flush (the periodic callback);
* the time from page load to the first drawn lattice in the browser;
* click-to-effect latency (Pause → status shows "paused") with 4 concurrent
  browser sessions running.

Run:  python -m benchmarks dashboard_live [--preset NAME]   (needs /usr/bin/chromium)

``--preset`` runs a named preset instead of the default locally balanced
segmentation run (e.g. an LSB preset, whose balancing view redraws live).
"""

from __future__ import annotations

import socket
import statistics
import time
import urllib.request

import panel as pn
from playwright.sync_api import sync_playwright

from dashboard import create_app
from dashboard.model.config import RunConfig
from dashboard.explorer import prefer_responsiveness
from dashboard.model.presets import load_presets
from dashboard.model.run_model import RunModel

from . import arguments

CONFIG = dict(target="ising_segmentation", target_params={"size": 30, "lam": 1.0, "mu": 1.0, "sigma": 3.0},
              sampler="locally_balanced", sampler_params={"balancing": "barker"}, n_chains=30, seed=0,
              statistic="agreement")
SECONDS = 5.0
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


def headless_rate(config: RunConfig) -> float:
    model = RunModel(config)
    model.start()
    time.sleep(SECONDS)
    steps = model.poll().n_steps
    model.close()
    return steps / SECONDS


def serve(explorers: list, config: RunConfig):
    def factory():
        explorer = create_app(config)
        explorers.append(explorer)
        return explorer.template()

    port = free_port()
    server = pn.serve({"app": factory}, port=port, address="127.0.0.1", threaded=True, show=False, start=True,
                      liveness=True, check_unused_sessions=500, unused_session_lifetime=500)
    deadline = time.time() + 30
    while time.time() < deadline:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/liveness", timeout=1)
            break
        except OSError:
            time.sleep(0.2)
    return server, f"http://127.0.0.1:{port}/app"


def main(argv: list[str] | None = None) -> None:
    args = arguments("dashboard_live", argv, preset="")
    config = load_presets()[args.preset].run_config() if args.preset else RunConfig(**CONFIG)
    prefer_responsiveness()  # as app.py does
    base = headless_rate(config)
    explorers: list = []
    server, url = serve(explorers, config)
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1400, "height": 1100})
            started = time.perf_counter()
            page.goto(url)
            page.wait_for_function(IMAGE_READY, timeout=60_000)
            first_paint = time.perf_counter() - started
            explorer = explorers[-1]
            page.get_by_role("button", name="Start", exact=True).click()
            time.sleep(1.0)
            steps0, t0 = explorer.model.poll().n_steps, time.perf_counter()
            explorer.flush_seconds.clear()
            time.sleep(SECONDS)
            served = (explorer.model.poll().n_steps - steps0) / (time.perf_counter() - t0)
            flushes = list(explorer.flush_seconds)
            page.get_by_role("button", name="Pause", exact=True).click()

            pages = [browser.new_context().new_page() for _ in range(4)]
            for other in pages:
                other.goto(url)
                other.wait_for_function(IMAGE_READY, timeout=60_000)
                other.get_by_role("button", name="Start", exact=True).click()
            time.sleep(2.0)
            latencies = []
            for other in pages:
                clicked = time.perf_counter()
                other.get_by_role("button", name="Pause", exact=True).click()
                other.get_by_text("paused", exact=True).first.wait_for(timeout=120_000)
                latencies.append(time.perf_counter() - clicked)
            browser.close()
    finally:
        for explorer in explorers:
            explorer.close()
        server.stop()

    print(f"configuration: {config.sampler} ({config.sampler_params}) on {config.target} {config.target_params}, "
          f"{config.n_chains} chains, refresh every 100 ms")
    print(f"steps/s headless                      {base:10.0f}")
    print(f"steps/s served, browser connected     {served:10.0f}")
    print(f"ratio served / headless               {served / base:10.2f}   (goal >= 0.8)")
    print(f"plot flush: mean / worst (ms)         {1e3 * statistics.mean(flushes):10.1f} / {1e3 * max(flushes):.1f}"
          f"   over {len(flushes)} flushes")
    print(f"page load -> first drawn lattice (s)  {first_paint:10.2f}")
    print(f"click -> effect, 4 sessions (s)       {statistics.mean(latencies):10.2f} mean, {max(latencies):.2f} worst")


if __name__ == "__main__":
    main()
