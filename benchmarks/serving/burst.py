"""The classroom's burst phase: a class opening the link in the same second, old code beside new (issue 44).

For each code base (``--burst-base``, a git revision checked out in a
temporary worktree, then this tree) a fresh ``panel serve app.py`` is started
as ``make serve`` starts it (warm, Bokeh's session lifetimes; a worker for
every page of the largest burst), and for each N
of ``--burst-sizes`` (10, 30, 60), N light clients request the page at once
(``page_speed.light_burst``: each one's request, websocket and pulled
document, which is what a browser needs to draw the first screen, from a
process of their own), while ``CHROMIUM_PAGES`` Chromium pages open at the
same moment and time, in the page, their Start button and their first
lattice (``page_speed.PAGE_SPEED_JS``). Between two bursts the server ends
the sessions of the last (``page_speed.SESSION_CHECK_SECONDS``, twice).

Printed per code base and N: seconds from request to document (median,
worst), the Chromium pages' Start button and first lattice (median, worst),
and the server's share per page: its process's CPU seconds from the burst's
start until every light client held its document (the goal's measure), and
until every Chromium page drew its first lattice too, over the N +
``CHROMIUM_PAGES`` pages (the pages' drafts, runs and views handled meanwhile
are in it, and the periodic flushes of every session open). Then the
issue's goals, for this tree.
"""

from __future__ import annotations

import math
import multiprocessing
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from benchmarks.serving.clients import TIMEOUT
from benchmarks.serving.hostile import old_and_new
from benchmarks.serving.measurements import median
from benchmarks.serving.page_speed import (SESSION_CHECK_SECONDS, cpu_seconds, light_burst, open_timed, shown,
                                           spent)
from benchmarks.serving.server import Server

#: Chromium pages opened during each burst (drawn on the server's own cores, as the classroom's are).
CHROMIUM_PAGES = 4
#: Issue 44's goals on a quiet 2-core machine: the worst light client's seconds to its document, by N; the
#: server's CPU seconds per page; a Chromium page's Start button and first lattice during the burst of 30 (s).
DOCUMENT_GOALS = {30: 5.0, 60: 10.0}
PAGE_CPU_GOAL = 0.1
CHROMIUM_GOALS = {"Start": 5.0, "lattice": 8.0}
CHROMIUM_GOAL_N = 30


def _ready() -> None:
    """Nothing: run once so that the light clients' process has started before the first burst is timed."""


def burst_phase(args, browser, log_dir: Path, root: Path, label: str) -> dict[int, dict]:
    """Every burst size against a fresh server of the code at ``root``; per N the light clients' seconds, the
    Chromium pages' (Start, lattice) seconds and the server's CPU seconds per page."""
    sessions = max(burst_sizes(args)) + CHROMIUM_PAGES  # every page of the largest burst gets its run's worker
    server = Server(args.port, ["--max-workers", str(sessions), "--run-memory", "2GB"], None,
                    log_dir / f"burst-{label}.log", root=root)
    results: dict[int, dict] = {}
    try:
        server.wait_ready()
        with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
            pool.submit(_ready).result(TIMEOUT)
            for n in burst_sizes(args):
                try:
                    results[n] = _burst(pool, browser, server, n)
                except Exception as error:  # noqa: BLE001 — one burst's failure is reported, the others still run
                    results[n] = {"error": f"{type(error).__name__}: {str(error)[:160]}"}
                print(f"  [{label}] {n} at once: {_row(results[n])}", flush=True)
                time.sleep(2 * SESSION_CHECK_SECONDS)  # the burst's sessions end before the next
    finally:
        server.stop()
        server.kill_leftovers()
    return results


def _burst(pool, browser, server: Server, n: int) -> dict:
    before = cpu_seconds({"server": server.tree()[:1]})
    lights = pool.submit(light_burst, server.url, n)
    opened_pages = [open_timed(browser, server.url) for _ in range(CHROMIUM_PAGES)]
    deadline = time.monotonic() + 2 * TIMEOUT
    try:
        documents = lights.result(2 * TIMEOUT)
        at_documents = spent(before, cpu_seconds({"server": server.tree()[:1]}))["server"]
        pages = [shown(page, opened, deadline) for _, page, opened in opened_pages]
        at_lattices = spent(before, cpu_seconds({"server": server.tree()[:1]}))["server"]
    finally:
        for context, _, _ in opened_pages:
            context.close()
    return {"documents": documents, "pages": pages, "cpu_per_page": at_documents / (n + CHROMIUM_PAGES),
            "cpu_per_page_to_lattices": at_lattices / (n + CHROMIUM_PAGES)}


def burst_sizes(args) -> list[int]:
    return [int(size) for size in args.burst_sizes.split(",") if size.strip()]


def _worst(values) -> float:
    """The largest of ``values``; infinite when one was never reached (nan)."""
    values = list(values)
    return math.inf if any(math.isnan(value) for value in values) else max(values, default=math.inf)


def _spread(values: list[float]) -> str:
    values = [value for value in values if not math.isnan(value)]
    return f"{median(values):.2f} / {max(values, default=math.nan):.2f} s"


def _row(result: dict) -> str:
    if "error" in result:
        return f"failed: {result['error']}"
    starts, lattices = zip(*result["pages"]) if result["pages"] else ((), ())
    missing = sum(math.isnan(value) for value in [*result["documents"], *lattices])
    return (f"document {_spread(result['documents'])} (median / worst); Chromium Start {_spread(list(starts))}, "
            f"lattice {_spread(list(lattices))}; server CPU s per page {result['cpu_per_page']:.3f} until the "
            f"last light document, {result['cpu_per_page_to_lattices']:.3f} until the last lattice"
            + (f"; {missing} never shown" if missing else ""))


def _goals(results: dict[int, dict]) -> list[str]:
    """The issue's goals met or missed by ``results`` (the sizes measured only)."""
    lines = []
    results = {n: result for n, result in results.items() if "error" not in result}
    for n, goal in DOCUMENT_GOALS.items():
        if n in results:
            worst = _worst(results[n]["documents"])
            lines.append(f"{n} at once, worst document ≤ {goal:g} s: {worst:.2f} s "
                         + ("ok" if worst <= goal else "MISSED"))
    for n, result in results.items():
        cpu = result["cpu_per_page"]
        lines.append(f"{n} at once, server CPU per page ≤ {PAGE_CPU_GOAL:g} s: {cpu:.3f} s "
                     + ("ok" if cpu <= PAGE_CPU_GOAL else "MISSED"))
    if CHROMIUM_GOAL_N in results:
        for (what, goal), values in zip(CHROMIUM_GOALS.items(), zip(*results[CHROMIUM_GOAL_N]["pages"])):
            worst = _worst(values)
            lines.append(f"Chromium page during {CHROMIUM_GOAL_N} at once, {what} ≤ {goal:g} s: {worst:.2f} s "
                         + ("ok" if worst <= goal else "MISSED"))
    return lines


def burst(args, browser, log_dir: Path) -> None:
    """The phase for the old code (``--burst-base``) and for this tree, then the comparison and the goals."""
    by_code = old_and_new(args.burst_base, lambda root, label: burst_phase(args, browser, log_dir, root, label))
    print(f"\npages requested at once by light clients, with {CHROMIUM_PAGES} Chromium pages opened meanwhile")
    for n in burst_sizes(args):
        print(f"\n{n} at once")
        for code, results in by_code.items():
            print(f"  {code:<24} {_row(results[n])}")
    print("\ngoals (this tree, quiet 2-core machine):")
    for line in _goals(by_code["new (this tree)"]):
        print(f"  {line}")
