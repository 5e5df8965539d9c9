"""A classroom against ``panel serve app.py``: N concurrent sessions, each running a different preset.

For every N in ``--sessions`` (default 1, 8 and 30) a fresh ``panel serve
app.py`` is started as a subprocess on 127.0.0.1 (its budget after ``--args``,
see ``--budget-args``) and N sessions are opened against it:

* ``--pages`` (4) sessions are real headless Chromium pages (one browser, one
  context per page, viewport 1000×800);
* the others are *light clients*: websocket clients of the real app, all in
  one separate process (one asyncio loop). Each one GETs ``/app`` (the server
  builds the session's whole document, as for a browser), opens the Bokeh
  websocket with the session's token, pulls the document, sends
  ``document_ready`` (as BokehJS does; Panel starts the session's periodic
  flush only then), and drives the widgets with the same protocol messages a
  browser sends: the Preset select's ``value`` (a ``ModelChanged`` patch, then
  it waits for the server's redraw of the preset description), then
  ``button_click`` events for "Load preset" and "Start". It reads every
  ``PATCH-DOC`` the server pushes and follows the status line ("running ·
  steps 1,234 · …") from them. The server does for them exactly what it does
  for a page (every view is updated and serialised); only the rendering is
  missing.

Each session loads a different preset: the presets of ``assets/presets.json``
whose estimated run fits in 100 MB, taken round-robin over their targets so
that a small class already mixes models (the six ER(5, k) DAG presets and the
m = 20 variable-selection preset are left out: each enumerates 2^20 states for
OPAD, ~0.6 GB per session, so 30 of them exceed the server's default 16 GB
total budget; beyond the 32 presets that remain, names repeat).

Measured per N (all sessions running):

* click-to-effect in the Chromium pages, ``--clicks`` times per page: the
  Start (resp. Pause) button is clicked in the page (a DOM click) and the time
  is taken, in the page, until the status line's model shows "running" with
  more steps (resp. "paused"); median and 95th percentile;
* page load: from ``goto`` to the first drawn lattice (the "current state"
  image source holding finite values; the default run), with the other
  sessions already running;
* total steps/s of all sessions (each read from its status line over
  ``--window-seconds``) against the same presets run headless in as many
  processes (``multiprocessing``, one ``RunSession`` per process advanced in a
  loop with its OPAD tracking, exactly what a worker steps, no server, no
  snapshots), started after the server has stopped; and the CPU each group
  used during the served window (server, workers, Chromium and playwright,
  light clients, and everything else on the machine). The benchmark's own
  clients (Chromium, playwright, the light clients) share the server's two
  cores, which a class's browsers never do, so the ratio is also given
  against the CPU they leave: served steps/s over headless steps per CPU
  second times the CPU not taken by the clients and other programs;
* over budget: one extra Chromium page loads a configuration file (3-D
  ``ising_lattice`` of side 125, 256 chains: ~6.4 GB estimated) through the
  page's JSON input; the time until its alert shows, and the other sessions'
  total steps/s over a window before and a window after (the run is refused
  by its estimate before anything is allocated, so this exercises that path,
  not a worker hitting its hard memory limit);
* memory: the server's RSS and its workers' RSS and PSS (sum), sampled every
  ``--sample-seconds`` during a soak of ``--soak-seconds`` (at the largest N
  only), first / last / max and the change;
* processes left: the sessions' worker processes (children of the server's
  forkserver) alive 10 s after every page and client closed (the server runs
  with ``--check-unused-sessions 1000 --unused-session-lifetime 2000``;
  ``make serve`` keeps Bokeh's 17 s / 15 s, see ``--session-lifetime-ms``),
  then any process of the server's tree alive after the server was stopped
  with SIGTERM;
* errors: ERROR lines and tracebacks in the server's log, JavaScript errors in
  the pages, sessions that never loaded, built their preset or ran.

Before the classrooms, a page-speed phase (``--sessions 0``: only it) starts
one more fresh server and times, in the pages (when the Start button is
first laid out and enabled, when the first lattice is drawn): the first page,
opened as soon as the server answers, from the server's start and from the
page's opening; then ``--speed-pages`` (5) pages opened one after the other
and ``--speed-burst`` (10) opened at once, median and worst, beside the
goals (the first page's Start button within 5 s, every later page's within
3 s).

With ``--hostile-base REV``, a hostile phase comes first (``benchmarks.serving.hostile``): one page clicks
Pause and Start while another session feeds the server a large download, a configuration file and a ``.uai``
at the size limits, a 2 MB link, a worker stopped with SIGSTOP and a link the worker refuses; the worst click
per input, for the code of ``REV`` and for this tree, one after the other in one run. With ``--burst-base REV``,
a burst phase follows (``benchmarks.serving.burst``): ``--burst-sizes`` (10, 30, 60) pages requested at once by
light clients while four Chromium pages open, the seconds to each document and the server's CPU per page, for
the code of ``REV`` and for this tree.

A goals table follows (the issue's goals at the largest N measured); a missed
goal is printed as missed. The benchmark's own clients run on the same
machine as the server (Chromium renders 4-5 pages), which a classroom would
not do: the CPU table shows how much they took.

Run:  python -m benchmarks classroom [--sessions 1,8,30] [--pages 4] [--clicks 5] [--soak-seconds 600]
      [--window-seconds 20] [--port 0] [--speed-pages 5] [--speed-burst 10] [--hostile-base REV]
      [--burst-base REV] [--burst-sizes 10,30,60]
      (Chromium at ``--chromium``, /usr/bin/chromium by default)
"""

from __future__ import annotations

import os
import shlex
import sys
import time
from collections import defaultdict
from pathlib import Path

from benchmarks import arguments
from benchmarks.serving.burst import burst
from benchmarks.serving.clients import CHROMIUM_ARGS, TIMEOUT, LightClients, PageSession, page_state, renice_chromium
from benchmarks.serving.headless import measure_headless
from benchmarks.serving.hostile import hostile
from benchmarks.serving.measurements import (CpuMeter, MemorySampler, Sessions, count_leftover_workers,
                                             measure_clicks, measure_over_budget, measure_soak, measure_window,
                                             percentile, stop_server, summarise)
from benchmarks.serving.page_speed import page_speed
from benchmarks.serving.report import fmt, print_all, print_page_speed, print_table
from benchmarks.serving.server import Server

#: Presets whose estimated run is larger are left out of the classroom (bytes).
HEAVY_BYTES = 100e6


def classroom_presets(budget) -> list[str]:
    """Preset names that run at classroom size, round-robin over their targets (file order within a target)."""
    from engine.budget import estimate
    from engine.presets import load_presets

    by_target: dict[str, list[str]] = defaultdict(list)
    for name, preset in load_presets().items():
        config = preset.run_config()
        if estimate(config, budget).total <= HEAVY_BYTES:
            by_target[config.target].append(name)
    names, queues = [], [list(group) for group in by_target.values()]
    while any(queues):
        for queue in queues:
            if queue:
                names.append(queue.pop(0))
    return names


# -- one classroom -----------------------------------------------------------------------------------------
def classroom(n: int, args, browser, names: list[str], descriptions: dict[str, str], default_name: str,
              log_dir: Path, soak: float) -> dict:
    """Open ``n`` sessions against a fresh server and measure; a dict of results.

    The light clients come up first, then the Chromium pages one after the other; then, with every session
    running: the clicks, the throughput window, the over-budget request and (``soak`` > 0) the soak; then every
    session closes, the leftover workers are counted, the server stops, and the same presets run headless."""
    from engine.budget import budget_from_arguments

    budget_args = shlex.split(args.budget_args)
    run_bytes = budget_from_arguments(budget_args).run_bytes
    presets = [names[i % len(names)] for i in range(n)]
    n_pages = min(args.pages, n)
    result: dict = {"n": n, "pages": n_pages, "lights": n - n_pages, "presets": presets, "notes": [],
                    "click_timeout": args.click_timeout}
    server = Server(args.port, budget_args, args.session_lifetime_ms, log_dir / f"server-{n}.log")
    memory = MemorySampler(server, args.sample_seconds)
    pages: list[PageSession] = []
    lights: LightClients | None = None
    print(f"-- N = {n}: {n_pages} Chromium page(s), {n - n_pages} light client(s); server log {server.log_path}",
          flush=True)
    try:
        result["server_start"] = server.wait_ready()
        memory.start()
        default_description = descriptions[default_name]
        if n > n_pages:
            jobs = [(i, presets[i], descriptions[presets[i]]) for i in range(n_pages, n)]
            opened = time.monotonic()
            lights = LightClients(server.url, jobs, default_description, args.light_concurrency)
            _lights_settle(lights, opened, result)
        _open_pages(browser, server.url, presets[:n_pages], descriptions, default_description, args.chromium_nice,
                    pages, result)
        sessions = Sessions([p for p in pages if p.state == "running"], lights)
        time.sleep(2.0)
        measure_clicks(sessions.pages, args, result)
        print(f"   clicks: start p95 {fmt(percentile(result['start'], 95))} s, "
              f"pause p95 {fmt(percentile(result['pause'], 95))} s", flush=True)
        time.sleep(1.0)
        meter = CpuMeter(server, lights.process.pid if lights else None)
        measure_window(sessions, meter, args.window_seconds, result)
        result["session_presets"] = {f"page {i}": p.preset for i, p in enumerate(sessions.pages)}
        if lights is not None:
            result["session_presets"].update({f"light {i}": presets[i] for i in range(n_pages, n)})
        print(f"   served: {sum(r for r in result['served'].values() if r == r):,.0f} steps/s in "
              f"{result['running']} sessions", flush=True)
        measure_over_budget(browser, server.url, sessions, meter, args, pages, result)
        if soak > 0:
            print(f"   soak {soak:.0f} s …", flush=True)
            result["soak"] = measure_soak(sessions, memory, soak, args.sample_seconds)
        result["memory_now"] = memory.sample()
        result["js_errors"] = [f"page {i}: {e}" for i, p in enumerate(pages) for e in p.js_errors]
        result["workers_before_close"] = len(server.workers())
        _close_sessions(pages, lights)
        pages, lights = [], None
        count_leftover_workers(server, time.monotonic(), result)
    finally:
        _clean_up(pages, lights, memory, result["notes"])
        stop_server(server, result)
    print(f"   headless: {n} process(es) …", flush=True)
    measure_headless(presets, run_bytes, args.window_seconds, result)
    return result


def _lights_settle(lights: LightClients, opened: float, result: dict) -> None:
    """Wait until every light client (started at ``opened``, monotonic) runs its preset or failed: how long they
    took, how long each took to open, and which failed."""
    reports = lights.wait_settled(TIMEOUT * 2 + 10 * lights.count)
    result["lights_seconds"] = time.monotonic() - opened
    result["light_open"] = [r["opened_seconds"] for r in reports]
    result["light_failed"] = [f"light {r['index']} ({r['preset']}): {r['state']}: {r['error']}"
                              for r in reports if r["state"] != "running"]
    print(f"   light clients: {sum(r['state'] == 'running' for r in reports)}/{len(reports)} running after "
          f"{result['lights_seconds']:.0f} s", flush=True)


def _open_pages(browser, url: str, presets: list[str], descriptions: dict[str, str], default_description: str,
                nice: int, pages: list[PageSession], result: dict) -> None:
    """One Chromium page per preset in ``presets``, one after the other (each added to ``pages`` as it opens): load
    (timed: ``result["page_load"]``), its preset, start; a page that fails is reported and the others go on."""
    result["page_load"], result["page_failed"] = [], []
    for i, preset in enumerate(presets):
        try:
            page = PageSession(browser, preset)
            renice_chromium(nice)
            pages.append(page)
            page.open(url)
            result["page_load"].append(page.load_seconds)
            page.load_preset(descriptions[preset], default_description)
            page.start()
        except Exception as error:  # noqa: BLE001 — reported, the others go on
            result["page_failed"].append(f"page {i} ({preset}): {type(error).__name__}: {error}"[:300]
                                         + page_state(pages[i] if len(pages) > i else None))
    print(f"   pages: loads {', '.join(f'{s:.1f}' for s in result['page_load'])} s; "
          f"{sum(p.state == 'running' for p in pages)}/{len(presets)} running", flush=True)


def _close_sessions(pages: list[PageSession], lights: LightClients | None) -> None:
    """Close every page and the light clients (the server then closes their sessions)."""
    for page in pages:
        page.close()
    if lights is not None:
        lights.close()


def _clean_up(pages: list[PageSession], lights: LightClients | None, memory: MemorySampler, notes: list[str]) -> None:
    """Whatever happened: close what is still open and stop the memory samples; what fails is noted in ``notes``,
    for the server must be stopped after this whatever happened."""
    for page in pages:
        page.close()
    for cleanup in ((lights.close,) if lights is not None else ()) + (memory.stop,):
        try:
            cleanup()
        except Exception as error:  # noqa: BLE001 — the server must be stopped whatever happened
            notes.append(f"cleanup: {type(error).__name__}: {error}")


def main(argv: list[str] | None = None) -> None:
    """Parse the options, then run the page-speed phase and a classroom for every N, printing their tables, and
    the goals at the largest N."""
    args = arguments(
        "classroom", argv, sessions="1,8,30", pages=4, clicks=5, soak_seconds=600.0, window_seconds=20.0, port=0,
        click_timeout=30.0, click_phase_seconds=120.0, chromium_nice=0, speed_pages=5, speed_burst=10,
        sample_seconds=5.0, light_concurrency=4, session_lifetime_ms=2000,
        budget_args="--max-workers 40 --run-memory 2GB", chromium="/usr/bin/chromium", log_dir="", hostile_base="",
        burst_base="", burst_sizes="10,30,60",
        helps={"sessions": "comma-separated numbers of concurrent sessions, one classroom each (0: none, only the "
                           "page-speed phase)",
               "speed_pages": "page speed: later pages opened one after the other (0 with --speed-burst 0: no "
                              "page-speed phase)",
               "speed_burst": "page speed: later pages opened at once",
               "pages": "sessions that are real headless Chromium pages (the rest are light websocket clients)",
               "clicks": "Pause/Start click pairs per page for the click-to-effect latency",
               "soak_seconds": "how long memory is sampled with every session running (at the largest N only; "
                               "0: no soak)",
               "click_timeout": "a click without effect after this many seconds counts as failed",
               "click_phase_seconds": "the clicks of one N stop after this many seconds (bounds the run's time)",
               "chromium_nice": ("niceness of the benchmark's Chromium (0: as a user's browser; the workers "
                                 "sample at niceness 19)"),
               "window_seconds": "how long each steps/s is measured (served, headless, before/after over budget)",
               "port": "the server's port on 127.0.0.1 (0: a free one)",
               "sample_seconds": "period of the memory samples",
               "light_concurrency": "light clients opening at once",
               "session_lifetime_ms": "the server's --unused-session-lifetime (its check runs twice as often)",
               "budget_args": "the server's budget, passed after --args (see app.py)",
               "chromium": "the Chromium executable",
               "log_dir": "where the server logs go (default: a new temporary directory)",
               "hostile_base": ("the hostile phase (benchmarks.serving.hostile) against this git revision's code and "
                                "this tree's, one after the other ('': no hostile phase)"),
               "burst_base": ("the burst phase (benchmarks.serving.burst: N pages requested at once) against this "
                              "git revision's code and this tree's ('': no burst phase)"),
               "burst_sizes": "comma-separated numbers of pages requested at once in the burst phase"})
    counts = [int(x) for x in args.sessions.split(",") if x.strip() and int(x) != 0]
    if counts and min(counts) < 1:
        raise SystemExit("--sessions wants positive numbers, e.g. 1,8,30 (or 0: only the page-speed phase)")
    import tempfile

    from engine.budget import budget_from_arguments
    from engine.presets import load_presets

    log_dir = Path(args.log_dir) if args.log_dir else Path(tempfile.mkdtemp(prefix="classroom-"))
    log_dir.mkdir(parents=True, exist_ok=True)
    budget = budget_from_arguments(shlex.split(args.budget_args))
    presets = load_presets()
    names = classroom_presets(budget)
    skipped = [name for name in presets if name not in names]
    descriptions = {name: preset.description for name, preset in presets.items()}
    print(f"{len(names)} presets in the classroom (round-robin over targets); left out as heavy: {len(skipped)}")
    load = os.getloadavg()
    print(f"machine: {os.cpu_count()} cores, load average {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} at the start")
    speed, results = _run_phases(args, counts, names, descriptions, next(iter(presets)), log_dir)
    print_all(results, speed)
    print(f"\nserver logs: {log_dir}")


def _run_phases(args, counts: list[int], names: list[str], descriptions: dict[str, str], default_name: str,
                log_dir: Path) -> tuple[dict | None, list[dict]]:
    """In one Chromium: the page-speed phase (unless ``--speed-pages`` and ``--speed-burst`` are 0), then a classroom
    for every N in ``counts`` (the soak at the largest), each table printed as it ends; the page-speed results
    (None without the phase) and the classrooms' results."""
    from playwright.sync_api import sync_playwright

    speed, results = None, []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=args.chromium, args=CHROMIUM_ARGS, timeout=60_000)
        renice_chromium(args.chromium_nice)
        try:
            if args.speed_pages or args.speed_burst:
                speed = page_speed(args, browser, log_dir)
                print_page_speed(speed)
                print(flush=True)
            if args.hostile_base:
                hostile(args, browser, log_dir)
            if args.burst_base:
                burst(args, browser, log_dir)
            for n in counts:
                soak = args.soak_seconds if n == max(counts) else 0.0
                results.append(classroom(n, args, browser, names, descriptions, default_name, log_dir, soak))
                print_table(results[-1], summarise(results[-1]))
                print(flush=True)
        finally:
            browser.close()
    return speed, results


if __name__ == "__main__":
    main(sys.argv[1:])
