"""The classroom's hostile phase: what one session's input costs every other session, old code beside new.

For each code base (``--hostile-base``, a git revision checked out in a
temporary worktree, then this tree) a fresh ``panel serve app.py`` is started
(``server.Server``) and one headless Chromium page, the *clicker*, runs the
default run and clicks Pause and Start in turn, each click timed in the page
until the status line shows its effect (``PageSession.click``). Meanwhile a
second session feeds the server one input at a time:

* **download**: a Boltzmann machine uploaded as an ``.npz`` holding
  ``J = zeros(3000, 3000)`` (70 kB), then *Download configuration* clicked —
  the old code wrote J as a 117 MB JSON list on the event loop;
* **configuration 13 MB**: a configuration file just under the size limit
  (``dashboard_live.limit_size_configuration``) through the page's import;
* **.uai 4.5 MB**: a Markov network of unary factors (about 350k) uploaded;
* **link 2 MB**: a page requested with a 2 MB ``?run=`` query (an HTTP
  request, as a browser's first one: the server builds its document);
* **hung worker**: a page whose worker is stopped with SIGSTOP: the seconds
  until its page says so (the page text names the worker), then the clicks
  while that page is closed and the server ends its session (the server runs
  with ``--session-lifetime-ms``, 2 s, as the classroom does);
* **refused link**: a link whose configuration parses but the worker refuses
  (``{"target": "ising1d", "statistic": "nope"}``): whether the page then draws
  the default run.

Printed per input and code base: the clicks taken while the input was being
handled, their worst and median (goal: every click ≤ 1 s on a quiet 2-core
machine), and what the input's page showed.

Run:  python -m benchmarks classroom --sessions 0 --speed-pages 0 --speed-burst 0 --hostile-base REV
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

import numpy as np

from benchmarks.serving.clients import IMAGE_READY, PageSession
from benchmarks.serving.measurements import median
from benchmarks.serving.server import ROOT, Server

#: Most seconds one input is given before its phase ends (the clicks go on meanwhile).
INPUT_SECONDS = 90.0
#: Seconds a stopped worker is given to be reported in its page.
HUNG_SECONDS = 30.0
#: What a page says when it shows the default run instead of its link's.
DEFAULT_RUN_WORDS = re.compile("Here is the default run instead")
#: Seconds of clicks after a page closes: the server ends its session within ``--session-lifetime-ms`` (2 s).
CLOSING_SECONDS = 8.0
#: The clicks' goal: no click waits longer (seconds).
GOAL_SECONDS = 1.0
#: What a page says of a worker that stopped answering (the new code's words; the old code says nothing).
HUNG_WORDS = re.compile(r"worker[^.]*(not answer|stopped answering|does not answer|hung)", re.IGNORECASE)


def _select(page, value: str) -> None:
    """Choose ``value`` in the page's select that offers it (the sidebar's target)."""
    page.locator(f"select:has(option[value='{value}'])").first.select_option(value)


def _target_shown(page, value: str) -> bool:
    return page.locator(f"select:has(option[value='{value}'])").first.input_value() == value


class Clicker:
    """The other session: Pause and Start in turn, each click's seconds kept (``"timeout"`` when it had none)."""

    def __init__(self, browser, url: str, timeout: float):
        self.session = PageSession(browser, "default")
        self.session.open(url)
        self.session.start()
        self.timeout = timeout
        self._pause_next = True

    def clicks_until(self, done, seconds: float) -> list[float]:
        """Click until ``done()`` is true or ``seconds`` pass; the clicks' seconds (a timeout counts as its limit)."""
        taken, end = [], time.monotonic() + seconds
        while time.monotonic() < end:
            name, want = ("Pause", "paused") if self._pause_next else ("Start", "running")
            result = self.session.click(name, want, self.timeout)
            self._pause_next = not self._pause_next
            if isinstance(result, float):
                taken.append(result)
            elif result == "timeout":
                taken.append(self.timeout)
            if done():
                break
        return taken


def _npz_of_zeros(folder: Path, d: int = 3000) -> Path:
    path = folder / f"zeros-{d}.npz"
    np.savez_compressed(path, J=np.zeros((d, d)))
    return path


def _uai_of_unary_factors(folder: Path, limit: int = 4_500_000, n_vars: int = 2000) -> tuple[Path, int]:
    """A valid .uai of unary factors over ``n_vars`` binary variables, as many as fit in ``limit`` bytes."""
    per_factor = len("1 1000\n") + len("2\n1 2\n")
    n_factors = (limit - 4 * n_vars) // per_factor
    scopes = "".join(f"1 {i % n_vars}\n" for i in range(n_factors))
    text = f"MARKOV\n{n_vars}\n{' '.join(['2'] * n_vars)}\n{n_factors}\n{scopes}\n" + "2\n1 2\n" * n_factors
    path = folder / "unary.uai"
    path.write_text(text)
    return path, n_factors


def _raw_link(config: dict) -> str:
    """A ``?run=`` value packing ``config`` as it is, unchecked (a link the worker, not the parser, refuses)."""
    import base64
    import zlib

    return base64.urlsafe_b64encode(zlib.compress(json.dumps(config).encode(), 9)).decode().rstrip("=")


def _fetch_in_background(url: str) -> threading.Event:
    """GET ``url`` in a thread (a browser's first request: the server builds the session's document)."""
    finished = threading.Event()

    def fetch() -> None:
        try:
            with urllib.request.urlopen(url, timeout=INPUT_SECONDS) as response:
                response.read()
        except OSError:
            pass
        finished.set()

    threading.Thread(target=fetch, daemon=True).start()
    return finished


def _hostile_page(browser, url: str) -> PageSession:
    page = PageSession(browser, "hostile")
    page.open(url)
    return page


def _download(browser, url: str, clicker: Clicker, folder: Path) -> dict:
    page = _hostile_page(browser, url)
    _select(page.page, "boltzmann")
    page.page.wait_for_selector('input[type="file"][accept=".npz,.csv"]', state="attached")
    page.page.set_input_files('input[type="file"][accept=".npz,.csv"]', str(_npz_of_zeros(folder)))
    page.page.get_by_text("Using uploaded").first.wait_for(timeout=INPUT_SECONDS * 1000)
    downloads: list = []
    page.page.on("download", lambda download: downloads.append(download))
    started = time.monotonic()
    page.page.get_by_role("button", name=re.compile("Download configuration")).click()
    clicks = clicker.clicks_until(lambda: bool(downloads), INPUT_SECONDS)
    said = "no file"
    if downloads:
        file = downloads[0]
        path = file.path()
        size = os.path.getsize(path) if path else 0
        said = f"{file.suggested_filename}, {size / 1e6:.2f} MB, after {time.monotonic() - started:.1f} s"
    page.close()
    return {"clicks": clicks, "said": said}


def _configuration(browser, url: str, clicker: Clicker, folder: Path) -> dict:
    from benchmarks.serving.dashboard_live import limit_size_configuration
    from dashboard.sharing import CONFIG_FILES

    page = _hostile_page(browser, url)
    path = folder / "limit.json"
    path.write_bytes(limit_size_configuration())
    started = time.monotonic()
    page.page.set_input_files(f'input[type="file"][accept="{CONFIG_FILES}"]', str(path))
    clicks = clicker.clicks_until(lambda: _target_shown(page.page, "boltzmann"), INPUT_SECONDS)
    built = _target_shown(page.page, "boltzmann")
    said = f"{path.stat().st_size / 1e6:.1f} MB " + (f"loaded after {time.monotonic() - started:.1f} s" if built
                                                      else "not loaded")
    page.close()
    return {"clicks": clicks, "said": said}


def _uai(browser, url: str, clicker: Clicker, folder: Path) -> dict:
    page = _hostile_page(browser, url)
    _select(page.page, "markov_network")
    page.page.wait_for_selector('input[type="file"][accept=".uai"]', state="attached")
    path, n_factors = _uai_of_unary_factors(folder)
    started = time.monotonic()
    page.page.set_input_files('input[type="file"][accept=".uai"]', str(path))

    def answered() -> bool:
        return page.page.get_by_text("Using uploaded").count() > 0 or page.page.locator(".run-error").is_visible()

    clicks = clicker.clicks_until(answered, INPUT_SECONDS)
    said = (f"{path.stat().st_size / 1e6:.1f} MB, {n_factors:,} factors: "
            + (f"answered after {time.monotonic() - started:.1f} s" if answered() else "no answer"))
    page.close()
    return {"clicks": clicks, "said": said}


def _long_link(url: str, clicker: Clicker) -> dict:
    finished = _fetch_in_background(f"{url}?run={'A' * 2_000_000}")
    started = time.monotonic()
    clicks = clicker.clicks_until(finished.is_set, INPUT_SECONDS)
    said = f"document served after {time.monotonic() - started:.1f} s" if finished.is_set() else "not served"
    return {"clicks": clicks, "said": said}


def _hung_worker(browser, url: str, server: Server, clicker: Clicker) -> dict:
    before = {process.pid for process in server.workers()}
    page = _hostile_page(browser, url)
    page.start()
    workers = [process for process in server.workers() if process.pid not in before]
    if not workers:
        page.close()
        return {"clicks": [], "said": "its worker was not found"}
    worker = workers[0]
    os.kill(worker.pid, signal.SIGSTOP)
    stopped = time.monotonic()
    reported = None
    while time.monotonic() - stopped < HUNG_SECONDS:
        if page.page.get_by_text(HUNG_WORDS).count():  # a locator: the page's text is in shadow roots
            reported = time.monotonic() - stopped
            break
        time.sleep(0.2)
    page.close()
    clicks = clicker.clicks_until(lambda: False, CLOSING_SECONDS)
    for sig in (signal.SIGCONT, signal.SIGKILL):
        try:
            os.kill(worker.pid, sig)
        except OSError:
            pass
    said = (f"reported after {reported:.1f} s" if reported is not None
            else f"not reported within {HUNG_SECONDS:.0f} s") + "; clicks taken while its page closed"
    return {"clicks": clicks, "said": said}


def _refused_link(browser, url: str) -> dict:
    page = PageSession(browser, "refused link")
    page.page.goto(f"{url}?run={_raw_link({'target': 'ising1d', 'statistic': 'nope'})}", wait_until="commit")
    try:
        page.page.wait_for_function(IMAGE_READY, polling=100, timeout=60_000)
        said = "the default run is drawn"
    except Exception:  # noqa: BLE001 — a page that never draws is the finding
        said = "no run drawn within 60 s"
    said += "; the page says why" if page.page.get_by_text(DEFAULT_RUN_WORDS).count() else "; the page says nothing"
    page.close()
    return {"clicks": [], "said": said}


def hostile_phase(args, browser, log_dir: Path, root: Path, label: str) -> dict:
    """Every input of the module docstring against a fresh server of the code at ``root``; per input its clicks and
    what its page showed."""
    server = Server(args.port, ["--max-workers", "40", "--run-memory", "2GB"], args.session_lifetime_ms,
                    log_dir / f"hostile-{label}.log", root=root)
    results: dict[str, dict] = {}
    try:
        server.wait_ready()
        clicker = Clicker(browser, server.url, args.click_timeout)
        with tempfile.TemporaryDirectory() as name:
            folder = Path(name)
            for title, run in (("download of a 3000² model", lambda: _download(browser, server.url, clicker, folder)),
                               ("configuration file 13 MB", lambda: _configuration(browser, server.url, clicker,
                                                                                   folder)),
                               (".uai 4.5 MB", lambda: _uai(browser, server.url, clicker, folder)),
                               ("link 2 MB", lambda: _long_link(server.url, clicker)),
                               ("hung worker", lambda: _hung_worker(browser, server.url, server, clicker)),
                               ("refused link", lambda: _refused_link(browser, server.url))):
                try:
                    results[title] = run()
                except Exception as error:  # noqa: BLE001 — one input's failure is reported, the others still run
                    results[title] = {"clicks": [], "said": f"failed: {type(error).__name__}: {str(error)[:160]}"}
                print(f"  [{label}] {title}: {_row(results[title])}", flush=True)
        clicker.session.close()
    finally:
        server.stop()
    return results


def _row(result: dict) -> str:
    clicks = result["clicks"]
    if not clicks:
        return result["said"]
    return (f"{len(clicks)} clicks, worst {max(clicks):.2f} s, median {median(clicks):.2f} s — {result['said']}")


def old_tree(revision: str, folder: Path) -> Path:
    """A worktree of ``revision`` in ``folder`` (the old code, run by this interpreter and its packages)."""
    path = folder / "old"
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(path), revision], check=True,
                   capture_output=True)
    shared = ROOT.parent / "shared"
    if shared.exists() and not (folder / "shared").exists():
        (folder / "shared").symlink_to(shared)
    return path


def remove_tree(path: Path) -> None:
    subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(path)], capture_output=True)


def old_and_new(revision: str, phase) -> dict:
    """``phase(root, label)`` for the code of ``revision`` (a temporary worktree), then for this tree; the results
    by code base ("old (REV)", "new (this tree)")."""
    by_code = {}
    with tempfile.TemporaryDirectory() as name:
        old = old_tree(revision, Path(name))
        try:
            by_code[f"old ({revision})"] = phase(old, "old")
        finally:
            remove_tree(old)
    by_code["new (this tree)"] = phase(ROOT, "new")
    return by_code


def hostile(args, browser, log_dir: Path) -> None:
    """The phase for the old code (``--hostile-base``) and for this tree, and the comparison table."""
    by_code = old_and_new(args.hostile_base, lambda root, label: hostile_phase(args, browser, log_dir, root, label))
    print(f"\nhostile inputs while another page clicks Pause/Start (goal: every click ≤ {GOAL_SECONDS:g} s, "
          "quiet 2-core machine)")
    for title in next(iter(by_code.values())):
        print(f"\n{title}")
        for code, results in by_code.items():
            result = results.get(title, {"clicks": [], "said": "not run"})
            worst = max(result["clicks"], default=float("nan"))
            verdict = "" if not result["clicks"] else (" ok" if worst <= GOAL_SECONDS else " MISSED")
            print(f"  {code:<24} {_row(result)}{verdict}")
