"""The page-speed phase: how soon a fresh server's pages show their Start button and their first lattice.

A fresh ``panel serve app.py`` is started and, as soon as it answers, a first
page opens; then ``--speed-pages`` pages open one after the other and
``--speed-burst`` at once. Each page records, in the page, when its Start
button is first laid out and enabled and when its first lattice is drawn
(``PAGE_SPEED_JS``); the goals are in ``PAGE_SPEED_GOALS``.

A burst's pages are drawn by Chromium on the server's own cores, which a
class's browsers are not; so as many light websocket clients are opened at
once too (``clients.LightClient``: the request, the websocket and the pulled
document, which is what a browser needs to draw the Start button), which
measures the server's share alone; and the CPU seconds the server, its
workers and Chromium spent on the pages' burst say where its time went.
"""

from __future__ import annotations

import asyncio
import math
import multiprocessing
import shlex
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import psutil

from benchmarks.serving.clients import TIMEOUT, LightClient
from benchmarks.serving.dashboard_live import IMAGE_READY
from benchmarks.serving.server import Server

#: Run in every page before its own scripts: records in ``window.__pageSpeed`` when (``Date.now()``, ms) the Start
#: button is first shown (laid out, enabled; Panel's buttons sit in shadow roots) and the first lattice is drawn.
PAGE_SPEED_JS = """
(() => {
  const imageReady = %s;
  const speed = window.__pageSpeed = {start: null, plot: null};
  const startShown = (root) => {
    for (const el of root.querySelectorAll("*")) {
      if (el.tagName === "BUTTON" && !el.disabled && el.textContent.trim() === "Start") {
        const box = el.getBoundingClientRect();
        if (box.width > 0 && box.height > 0) return true;
      }
      if (el.shadowRoot && startShown(el.shadowRoot)) return true;
    }
    return false;
  };
  const check = () => {
    if (speed.start === null && startShown(document)) speed.start = Date.now();
    if (speed.plot === null && imageReady()) speed.plot = Date.now();
    if (speed.start === null || speed.plot === null) setTimeout(check, 25);
  };
  check();
})();
""" % IMAGE_READY.strip()
#: How often Bokeh's server looks for sessions whose page has gone (its default ``--check-unused-sessions``, s).
SESSION_CHECK_SECONDS = 17.0
#: The page-speed goals of issue 31: the first page after the server starts shows its Start button within 5 s,
#: every later page within 3 s (seconds).
PAGE_SPEED_GOALS = {"first": 5.0, "later": 3.0}


def open_timed(browser, url: str) -> tuple:
    """A new page (its own context) navigating to ``url``, without waiting; (context, page, Date.now() at the
    navigation's start in ms)."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    context.add_init_script(PAGE_SPEED_JS)
    page = context.new_page()
    page.goto("about:blank")
    opened = page.evaluate("url => { const now = Date.now(); window.location.href = url; return now; }", url)
    return context, page, opened


def shown(page, opened: float, deadline: float) -> tuple[float, float]:
    """Seconds from ``opened`` (ms) until ``page`` showed its Start button and its first lattice (nan if not by
    ``deadline``, monotonic)."""
    while True:
        try:
            speed = page.evaluate("() => window.__pageSpeed || null")
        except Exception:  # noqa: BLE001 — the page is between documents (navigating)
            speed = None
        if speed and speed["start"] is not None and speed["plot"] is not None:
            break
        if time.monotonic() > deadline:
            speed = speed or {"start": None, "plot": None}
            break
        time.sleep(0.05)
    return tuple(math.nan if speed[key] is None else (speed[key] - opened) / 1000 for key in ("start", "plot"))


def cpu_seconds(groups: dict[str, list[psutil.Process]]) -> dict[str, dict[int, float]]:
    """Each group's processes' CPU seconds (user and system), by pid; a process gone meanwhile is left out."""
    seconds: dict[str, dict[int, float]] = {}
    for name, processes in groups.items():
        seconds[name] = {}
        for process in processes:
            try:
                times = process.cpu_times()
            except psutil.Error:
                continue
            seconds[name][process.pid] = times.user + times.system
    return seconds


def process_groups(server: Server) -> dict[str, list[psutil.Process]]:
    """The server's process, its workers and forkserver, and this benchmark's Chromium."""
    tree = server.tree()
    chromium = [p for p in psutil.Process().children(recursive=True) if "chrom" in p.name()]
    return {"server": tree[:1], "workers": tree[1:], "Chromium": chromium}


def spent(before: dict[str, dict[int, float]], after: dict[str, dict[int, float]]) -> dict[str, float]:
    """CPU seconds each group spent between two ``cpu_seconds`` (a process started meanwhile from zero)."""
    return {name: sum(seconds - before.get(name, {}).get(pid, 0.0) for pid, seconds in pids.items())
            for name, pids in after.items()}


def light_burst(url: str, pages: int) -> list[float]:
    """Seconds until each of ``pages`` light clients opened at once held its document (``LightClient.open``); run in
    a process of its own (an asyncio loop beside none of the benchmark's)."""
    async def burst() -> list[float]:
        from tornado.httpclient import AsyncHTTPClient

        AsyncHTTPClient.configure(None, max_clients=pages)  # every request at once, as a class's laptops send them
        clients = [LightClient(index, url, "", "", "") for index in range(pages)]
        try:
            await asyncio.gather(*(client.open("") for client in clients))
        finally:
            for client in clients:
                await client.close()
        return [client.opened_seconds for client in clients]

    return asyncio.run(burst())


def page_speed(args, browser, log_dir: Path) -> dict:
    """A fresh ``panel serve app.py``: seconds from its start to the first page's Start button and first lattice
    (the page opens as soon as the server answers), then ``--speed-pages`` pages opened one after the other (each
    once the previous one drew its lattice, then closed) and ``--speed-burst`` pages opened at once."""
    result: dict = {"sequential": [], "burst": [], "light_burst": []}
    started_ms = time.time() * 1000
    # Bokeh's session lifetimes, as ``make serve`` has them: with the classroom's short one, a page of a burst
    # whose websocket comes more than 2 s after its request had its session built twice
    server = Server(args.port, shlex.split(args.budget_args), None, log_dir / "server-page-speed.log")
    contexts = []
    try:
        result["answers"] = server.wait_ready()
        context, page, opened = open_timed(browser, server.url)
        contexts.append(context)
        start, plot = shown(page, opened, time.monotonic() + TIMEOUT)
        since_start = (opened - started_ms) / 1000
        result["first"] = (since_start + start, since_start + plot, start, plot)
        context.close()
        for _ in range(args.speed_pages):
            context, page, opened = open_timed(browser, server.url)
            contexts.append(context)
            result["sequential"].append(shown(page, opened, time.monotonic() + TIMEOUT))
            context.close()
        if args.speed_burst:
            with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
                result["light_burst"] = pool.submit(light_burst, server.url, args.speed_burst).result(TIMEOUT)
            time.sleep(2 * SESSION_CHECK_SECONDS)  # their sessions end before the pages' burst
        before = cpu_seconds(process_groups(server))
        opened_pages = [open_timed(browser, server.url) for _ in range(args.speed_burst)]
        contexts += [context for context, _, _ in opened_pages]
        deadline = time.monotonic() + TIMEOUT
        result["burst"] = [shown(page, opened, deadline) for _, page, opened in opened_pages]
        result["burst_cpu"] = spent(before, cpu_seconds(process_groups(server)))
    finally:
        for context in contexts:
            try:
                context.close()
            except Exception:  # noqa: BLE001 — closed already
                pass
        server.stop()
        server.kill_leftovers()
        result["log_errors"] = server.log_errors()
    return result


