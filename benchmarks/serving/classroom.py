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

A goals table follows (the issue's goals at the largest N measured); a missed
goal is printed as missed. The benchmark's own clients run on the same
machine as the server (Chromium renders 4-5 pages), which a classroom would
not do: the CPU table shows how much they took.

Run:  python -m benchmarks classroom [--sessions 1,8,30] [--pages 4] [--clicks 5] [--soak-seconds 600]
      [--window-seconds 20] [--port 0] [--speed-pages 5] [--speed-burst 10]
      (Chromium at ``--chromium``, /usr/bin/chromium by default)
"""

from __future__ import annotations

import asyncio
import html
import json
import math
import multiprocessing
import os
import re
import shlex
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
from collections import defaultdict
from pathlib import Path

import psutil

from benchmarks import arguments
from benchmarks.serving.dashboard_live import IMAGE_READY

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-quic",
                 "--no-first-run", "--disable-component-update", "--disable-sync"]
#: Presets whose estimated run is larger are left out of the classroom (bytes).
HEAVY_BYTES = 100e6
#: A configuration file over the default 2 GB run budget (estimated ~6.4 GB).
OVER_BUDGET = {"target": "ising_lattice", "target_params": {"ndim": 3, "size": 125}, "sampler": "metropolis",
               "n_chains": 256, "seed": 0, "opad": True}
#: Longest wait for any one thing (a page, a run to build or start, a click's effect), seconds.
TIMEOUT = 120.0
#: Seconds to wait after the last session closed before counting leftover worker processes.
LEFTOVER_SECONDS = 10.0
#: Log lines that are noise of closed connections, not errors of the dashboard.
LOG_NOISE = ("WebSocketClosedError", "StreamClosedError", "Failed sending message as connection was closed")
GOALS = {"click_p95": 1.0, "page_load": 5.0, "ratio": 0.8, "memory": 0.10, "slowdown": 0.20}
#: The CPU groups that are the benchmark's clients or other programs, not the server and its workers.
CLIENT_GROUPS = ("benchmark + Chromium", "light clients", "everything else on the machine")

STATUS_RE = re.compile(r"<b>([^<]*)</b>\s*·\s*steps\s+([\d,]+)")

#: The status line's text as the page holds it (the model of the ``.run-status`` pane), or null.
STATUS_JS = """
() => {
  if (!window.__runStatus) {
    const docs = (window.Bokeh && window.Bokeh.documents) || [];
    if (!docs.length) return null;
    const all = docs[0]._all_models instanceof Map ? Array.from(docs[0]._all_models.values())
                                                  : Array.from(docs[0]._all_models || []);
    window.__runStatus = all.find(m => Array.isArray(m.css_classes) && m.css_classes.includes("run-status")) || null;
  }
  return window.__runStatus ? String(window.__runStatus.text) : null;
}
"""
#: Records every text the status line takes (from now on) in ``window.__statusLog``.
STATUS_LOG_JS = """
() => {
  const read = %s;
  read();
  const model = window.__runStatus;
  window.__statusLog = [String(model.text)];
  if (!window.__statusHooked) {
    window.__statusHooked = true;
    model.properties.text.change.connect(() => window.__statusLog.push(String(model.text)));
  }
}
""" % STATUS_JS.strip()
#: Click ``button`` and wait, in the page, until the status line shows ``want`` ("running" with more steps than
#: at the click, or "paused"); the milliseconds (null after ``timeout`` ms).
CLICK_JS = """
async ([button, want, timeout]) => {
  const read = %s;
  const parse = () => {
    const text = read() || "";
    const phase = /running/.test(text) ? "running" : /paused/.test(text) ? "paused"
                : /building/.test(text) ? "building" : /failed/.test(text) ? "failed" : "?";
    const match = text.match(/steps ([\\d,]+)/);
    return {phase: phase, steps: match ? parseInt(match[1].replace(/,/g, "")) : -1};
  };
  const before = parse();
  const t0 = performance.now();
  button.click();
  return await new Promise(resolve => {
    const check = () => {
      const now = parse();
      const done = want === "running" ? now.phase === "running" && now.steps > before.steps : now.phase === want;
      if (done) resolve({ms: performance.now() - t0, before: before, after: now});
      else if (performance.now() - t0 > timeout) resolve({ms: null, before: before, after: now});
      else setTimeout(check, 5);
    };
    check();
  });
}
""" % STATUS_JS.strip()
#: The text of the error alert (the model of the ``.run-error`` pane) while it is visible, or null.
ALERT_JS = """
() => {
  const docs = (window.Bokeh && window.Bokeh.documents) || [];
  if (!docs.length) return null;
  const all = docs[0]._all_models instanceof Map ? Array.from(docs[0]._all_models.values())
                                                : Array.from(docs[0]._all_models || []);
  const alert = all.find(m => Array.isArray(m.css_classes) && m.css_classes.includes("run-error"));
  return alert && alert.visible && alert.text ? String(alert.text) : null;
}
"""


# -- small helpers ---------------------------------------------------------------------------------------
def parse_status(text: str | None) -> tuple[str, int]:
    """("running", 1234) from a status line's text (HTML-escaped or not); ("", -1) when unreadable."""
    match = STATUS_RE.search(html.unescape(text or ""))
    if not match:
        return "", -1
    return match.group(1), int(match.group(2).replace(",", ""))


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (``q`` in 0..100) of ``values``; nan when empty."""
    if not values:
        return math.nan
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q / 100 * len(ordered)) - 1)]


def median(values: list[float]) -> float:
    return statistics.median(values) if values else math.nan


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def fmt(value: float, digits: int = 2, unit: str = "") -> str:
    return "–" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.{digits}f}{unit}"


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


def _die_with_parent() -> None:
    """In the server's process before it runs: end (SIGTERM) when the benchmark's process ends, however it ends."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


# -- the server ----------------------------------------------------------------------------------------------

def _living(processes) -> list[psutil.Process]:
    """The processes that still run (neither gone nor zombies)."""
    alive = []
    for process in processes:
        try:
            if process.status() != psutil.STATUS_ZOMBIE:
                alive.append(process)
        except psutil.NoSuchProcess:
            pass
    return alive


class Server:
    """``panel serve app.py`` in a subprocess on 127.0.0.1, its process tree and its log."""

    def __init__(self, port: int, budget_args: list[str], lifetime_ms: int, log_path: Path):
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}/app"
        self.log_path = log_path
        self._log = open(log_path, "w")
        command = [sys.executable, "-m", "panel", "serve", "app.py", "--port", str(self.port), "--address", "127.0.0.1",
                   "--allow-websocket-origin", f"127.0.0.1:{self.port}", "--liveness",
                   "--websocket-max-message-size", "104857600", "--setup", "serve_setup.py",
                   "--check-unused-sessions", str(max(100, lifetime_ms // 2)),
                   "--unused-session-lifetime", str(lifetime_ms), "--args", *budget_args]
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        self.process = subprocess.Popen(command, cwd=ROOT, stdout=self._log, stderr=subprocess.STDOUT, env=env,
                                        preexec_fn=_die_with_parent)
        self.pid = self.process.pid
        self.seen: set[int] = set()  # every pid of the server's tree ever seen

    def wait_ready(self, timeout: float = 360.0) -> float:
        """Seconds until the server answers (its warm-up, ``serve_setup.py``, runs first: longer when the samplers'
        kernels must be compiled)."""
        started = time.monotonic()
        while time.monotonic() - started < timeout:
            if self.process.poll() is not None:
                raise RuntimeError(f"the server exited ({self.process.returncode}); see {self.log_path}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/liveness", timeout=2) as response:
                    if response.status == 200:
                        return time.monotonic() - started
            except OSError:
                pass
            time.sleep(0.2)
        raise RuntimeError(f"the server did not answer within {timeout} s; see {self.log_path}")

    def tree(self) -> list[psutil.Process]:
        """The server and its live descendants."""
        try:
            root = psutil.Process(self.pid)
            processes = [root, *root.children(recursive=True)]
        except psutil.NoSuchProcess:
            return []
        self.seen.update(p.pid for p in processes)
        return processes

    def forkservers(self) -> list[psutil.Process]:
        result = []
        for process in self.tree()[1:]:
            try:
                if "forkserver" in " ".join(process.cmdline()):
                    if process.ppid() == self.pid:
                        result.append(process)
            except psutil.Error:
                pass
        return result

    def workers(self) -> list[psutil.Process]:
        """The sessions' worker processes: children of the server's forkserver (not zombies)."""
        found = []
        for forkserver in self.forkservers():
            try:
                found += _living(forkserver.children())
            except psutil.Error:
                pass
        return found

    def stop(self) -> str:
        """SIGTERM (Bokeh's server shuts down on it), then SIGKILL after a wait; how it ended."""
        self.tree()
        how = "it had ended by itself"
        for sig, wait in ((signal.SIGTERM, 20), (signal.SIGKILL, 5)):
            if self.process.poll() is not None:
                break
            self.process.send_signal(sig)
            how = signal.Signals(sig).name
            try:
                self.process.wait(wait)
            except subprocess.TimeoutExpired:
                continue
        self._log.close()
        return f"{how}, exit code {self.process.returncode}"

    def leftovers(self) -> list[psutil.Process]:
        """Processes of the server's tree (ever seen) still alive."""
        processes = []
        for pid in sorted(self.seen):
            try:
                processes.append(psutil.Process(pid))
            except psutil.NoSuchProcess:
                pass
        return _living(processes)

    def kill_leftovers(self) -> None:
        """Last resort for the benchmark's own processes: kill what of the server's tree is left, by pid."""
        for process in self.leftovers():
            try:
                process.kill()
            except psutil.Error:
                pass

    def log_errors(self) -> list[str]:
        """Distinct ERROR lines and exception lines of the server's log (noise of closed sockets left out)."""
        try:
            lines = self.log_path.read_text(errors="replace").splitlines()
        except OSError:
            return []
        errors, in_traceback = [], False
        for line in lines:
            if "Traceback (most recent call last)" in line:
                in_traceback = True
                continue
            if in_traceback:
                if line.startswith((" ", "\t")) or not line.strip():
                    continue
                in_traceback = False
                if not any(noise in line for noise in LOG_NOISE):
                    errors.append("traceback: " + line.strip())
                continue
            if re.search(r"\bERROR\b|Exception|Error:", line) and not any(noise in line for noise in LOG_NOISE):
                errors.append(re.sub(r"^\d{4}-\d\d-\d\d [\d:,]+ ", "", line.strip()))
        return errors


# -- light clients (a process of their own) ---------------------------------------------------------------
class LightClient:
    """One session of the app driven over the Bokeh websocket protocol, as a browser would drive it."""

    def __init__(self, index: int, url: str, preset: str, default_description: str, description: str):
        self.index, self.url, self.preset = index, url, preset
        self.same_description = default_description.strip() == description.strip()
        self.state, self.error = "new", ""
        self.phase, self.steps, self.seen_at = "", -1, 0.0
        self.phases: list[str] = []
        self.updates = self.received = 0
        self.alert = ""
        self.opened_seconds = math.nan
        self.ids: dict[str, str] = {}
        self.info_changed = False
        self.ws = None
        self._lock = asyncio.Lock()

    def report(self) -> dict:
        return {"index": self.index, "preset": self.preset, "state": self.state, "error": self.error,
                "phase": self.phase, "steps": self.steps, "seen_at": self.seen_at, "updates": self.updates,
                "received": self.received, "alert": self.alert, "opened_seconds": self.opened_seconds}

    async def _message(self):
        while True:
            fragment = await self.ws.read_message()
            if fragment is None:
                raise ConnectionError("the websocket closed")
            self.received += len(fragment)
            message = await self.receiver.consume(fragment)
            if message is not None:
                return message

    async def _send(self, msgtype: str, content: dict) -> None:
        from bokeh.util.serialization import make_id

        async with self._lock:
            await self.ws.write_message(json.dumps({"msgid": make_id(), "msgtype": msgtype}))
            await self.ws.write_message("{}")
            await self.ws.write_message(json.dumps(content))

    async def _event(self, name: str, model_id: str | None = None) -> None:
        entries = [["model", {"id": model_id}]] if model_id else []
        await self._send("PATCH-DOC", {"events": [{"kind": "MessageSent", "msg_type": "bokeh_event", "msg_data": {
            "type": "event", "name": name, "values": {"type": "map", "entries": entries}}}]})

    async def _wait(self, condition, timeout: float, what: str) -> None:
        end = time.monotonic() + timeout
        while not condition():
            if self.state == "failed":
                raise RuntimeError(self.error)
            if time.monotonic() > end:
                raise TimeoutError(f"timed out after {timeout:.0f} s waiting for {what} (status {self.phase!r}, "
                                   f"phases seen {self.phases[-6:]}, {self.updates} status updates, alert "
                                   f"{self.alert[:120]!r})")
            await asyncio.sleep(0.02)

    def _find_ids(self, document: dict) -> None:
        models = {}

        def walk(value):
            if isinstance(value, dict):
                if value.get("type") == "object" and "id" in value and "name" in value:
                    models[value["id"]] = value
                for item in value.values():
                    walk(item)
            elif isinstance(value, list):
                for item in value:
                    walk(item)

        walk(document)
        for model_id, model in models.items():
            attributes = model.get("attributes") or {}
            classes = json.dumps(attributes.get("css_classes", []))
            if model["name"].endswith("Button") and attributes.get("label") in ("Start", "Pause", "Load preset"):
                self.ids[attributes["label"]] = model_id
            elif "run-status" in classes:
                self.ids["status"] = model_id
                self.phase, self.steps = parse_status(attributes.get("text", ""))
            elif "run-error" in classes:
                self.ids["alert"] = model_id
            elif attributes.get("title") == "Preset" and "options" in attributes:
                self.ids["preset"] = model_id
        # the preset's description: the Markdown pane right after "Load preset" (found by its text)
        for model_id, model in models.items():
            text = (model.get("attributes") or {}).get("text")
            if isinstance(text, str) and "preset_info" not in self.ids and self._default_hint and \
                    self._default_hint in html.unescape(text):
                self.ids["preset_info"] = model_id
        missing = {"Start", "Pause", "Load preset", "status", "preset"} - set(self.ids)
        if missing:
            raise RuntimeError(f"the document has no {sorted(missing)}")

    async def _read(self) -> None:
        try:
            while True:
                message = await self._message()
                if message.msgtype != "PATCH-DOC":
                    continue
                for event in message.content.get("events", []):
                    if event.get("kind") != "ModelChanged":
                        continue
                    model = event.get("model", {}).get("id")
                    if model == self.ids.get("status") and event.get("attr") == "text":
                        phase, steps = parse_status(event.get("new"))
                        if phase:
                            self.phase, self.steps, self.seen_at = phase, steps, time.monotonic()
                            self.updates += 1
                            if not self.phases or self.phases[-1] != phase:
                                self.phases.append(phase)
                    elif model == self.ids.get("alert") and event.get("attr") == "text":
                        self.alert = html.unescape(str(event.get("new")))
                    elif model == self.ids.get("preset_info"):
                        self.info_changed = True
        except Exception as error:  # noqa: BLE001 — a closed or broken connection ends this client only
            if self.state != "closed":
                self.state, self.error = "failed", f"connection lost: {type(error).__name__}: {error}"

    async def open(self, default_hint: str) -> None:
        from bokeh.protocol import Protocol
        from bokeh.protocol.receiver import Receiver
        from tornado.httpclient import AsyncHTTPClient, HTTPRequest
        from tornado.websocket import websocket_connect

        self._default_hint = default_hint
        self.state = "opening"
        started = time.monotonic()
        response = await AsyncHTTPClient().fetch(self.url, request_timeout=TIMEOUT)
        token = re.search(r'"token":\s*"([^"]+)"', response.body.decode()).group(1)
        request = HTTPRequest(self.url.replace("http://", "ws://", 1) + "/ws", request_timeout=TIMEOUT)
        self.ws = await websocket_connect(request, subprotocols=["bokeh", token], max_message_size=200 * 2**20)
        self.receiver = Receiver(Protocol())
        await asyncio.wait_for(self._message(), TIMEOUT)  # ACK
        await self._send("PULL-DOC-REQ", {})
        while True:
            message = await asyncio.wait_for(self._message(), TIMEOUT)
            if message.msgtype == "PULL-DOC-REPLY":
                break
        self._find_ids(message.content.get("doc", {}))
        self.opened_seconds = time.monotonic() - started
        self.reader = asyncio.ensure_future(self._read())
        await self._event("document_ready")
        self.state = "opened"

    async def load_preset(self) -> None:
        self.state = "loading"
        self.info_changed = False
        await self._send("PATCH-DOC", {"events": [{"kind": "ModelChanged", "model": {"id": self.ids["preset"]},
                                                   "attr": "value", "new": self.preset}]})
        if self.same_description or "preset_info" not in self.ids:
            await asyncio.sleep(1.0)  # nothing on the page changes: give the server's debounce time
        else:
            await self._wait(lambda: self.info_changed, TIMEOUT, "the preset's description")
        self.phases = []
        await self._event("button_click", self.ids["Load preset"])
        await self._wait(lambda: (any(p.startswith("building") for p in self.phases)
                                  and not self.phase.startswith("building")) or bool(self.alert),
                         TIMEOUT, "the preset's run to be built")
        if self.alert:
            raise RuntimeError(f"the preset was refused: {self.alert}")
        self.state = "built"

    async def start(self) -> None:
        await self._event("button_click", self.ids["Start"])
        await self._wait(lambda: self.phase == "running" and self.steps > 0, TIMEOUT, "the run to start")
        self.state = "running"

    async def close(self) -> None:
        if self.state != "failed":
            self.state = "closed"
        if self.ws is not None:
            self.ws.close()


async def _light_main(conn, url: str, jobs: list[tuple[int, str, str]], default_description: str,
                      concurrency: int) -> None:
    hint = re.sub(r"\s+", " ", default_description)[:24]
    clients = [LightClient(index, url, name, default_description, description) for index, name, description in jobs]
    gate = asyncio.Semaphore(concurrency)

    async def bring_up(client: LightClient) -> None:
        try:
            async with gate:
                await client.open(hint)
                await client.load_preset()
            await client.start()
        except Exception as error:  # noqa: BLE001 — reported per client
            client.state, client.error = "failed", f"{type(error).__name__}: {error}"

    tasks = [asyncio.ensure_future(bring_up(client)) for client in clients]
    try:
        while True:
            while conn.poll():
                command = conn.recv()
                if command == "status":
                    conn.send([client.report() for client in clients])
                elif command == "close":
                    for task in tasks:
                        task.cancel()
                    for client in clients:
                        await client.close()
                    await asyncio.sleep(0.2)
                    conn.send("closed")
                    return
            await asyncio.sleep(0.05)
    except (EOFError, OSError):
        return


def light_main(conn, url: str, jobs: list, default_description: str, concurrency: int) -> None:
    """Entry point of the light clients' process."""
    asyncio.run(_light_main(conn, url, jobs, default_description, concurrency))


class LightClients:
    """The parent's handle on the light clients' process."""

    def __init__(self, url: str, jobs: list, default_description: str, concurrency: int):
        context = multiprocessing.get_context("spawn")
        self.conn, child = context.Pipe()
        self.process = context.Process(target=light_main, args=(child, url, jobs, default_description, concurrency),
                                       name="classroom-light-clients", daemon=True)
        self.process.start()
        child.close()
        self.count = len(jobs)

    def status(self) -> list[dict]:
        self.conn.send("status")
        if not self.conn.poll(30):
            raise RuntimeError("the light clients did not answer within 30 s")
        return self.conn.recv()

    def wait_settled(self, timeout: float) -> list[dict]:
        """Until every client runs or failed (or ``timeout``); their reports."""
        end = time.monotonic() + timeout
        while True:
            reports = self.status()
            if all(r["state"] in ("running", "failed") for r in reports) or time.monotonic() > end:
                return reports
            time.sleep(0.5)

    def close(self) -> None:
        try:
            self.conn.send("close")
            self.conn.poll(30)
        except (OSError, EOFError):
            pass
        self.process.join(10)
        if self.process.is_alive():
            self.process.terminate()
            self.process.join(5)


# -- Chromium pages ----------------------------------------------------------------------------------------
class PageSession:
    """One Chromium page (its own context) showing the app."""

    def __init__(self, browser, preset: str):
        self.preset = preset
        self.context = browser.new_context(viewport={"width": 1000, "height": 800})
        self.context.set_default_timeout(TIMEOUT * 1000)
        self.page = self.context.new_page()
        self.js_errors: list[str] = []
        self.created = time.monotonic()
        self.page.on("pageerror", lambda error: self.js_errors.append(
            f"{time.monotonic() - self.created:.1f} s after opening: {error}"))
        self.console: list[str] = []
        self.page.on("console", lambda message: self.console.append(message.text[:160]))
        self.state, self.error = "new", ""
        self.load_seconds = math.nan

    def open(self, url: str) -> None:
        """Go to the app and wait for the first drawn lattice (``load_seconds``) and the status line."""
        started = time.monotonic()
        self.page.goto(url, wait_until="commit", timeout=TIMEOUT * 1000)
        self.page.wait_for_function(IMAGE_READY, polling=50, timeout=TIMEOUT * 1000)
        self.load_seconds = time.monotonic() - started
        self.page.wait_for_function(STATUS_JS, polling=50, timeout=TIMEOUT * 1000)
        self.state = "opened"

    def status(self) -> tuple[str, int, float]:
        text = self.page.evaluate(STATUS_JS)
        phase, steps = parse_status(text)
        return phase, steps, time.monotonic()

    def button(self, name: str):
        return self.page.get_by_role("button", name=name, exact=True)

    def _wait(self, condition, timeout: float, what: str):
        end = time.monotonic() + timeout
        while True:
            value = condition()
            if value:
                return value
            if time.monotonic() > end:
                raise TimeoutError(f"timed out after {timeout:.0f} s waiting for {what}")
            time.sleep(0.05)

    def load_preset(self, description: str, default_description: str) -> None:
        self.page.get_by_label("Preset", exact=True).select_option(label=self.preset)
        if description[:40] != default_description[:40]:
            self.page.get_by_text(description[:40]).first.wait_for(state="visible", timeout=TIMEOUT * 1000)
        else:
            time.sleep(1.0)  # the description does not change: give the server's debounce time
        self.page.evaluate(STATUS_LOG_JS)
        self.button("Load preset").click()

        def built():
            log = [parse_status(text)[0] for text in self.page.evaluate("() => window.__statusLog")]
            return any(p.startswith("building") for p in log) and log and log[-1] and not log[-1].startswith(
                "building")

        self._wait(built, TIMEOUT, "the preset's run to be built")
        if self.page.locator(".alert-danger").is_visible():
            raise RuntimeError(f"the preset was refused: {self.page.locator('.alert-danger').inner_text()}")
        self.state = "built"

    def start(self) -> None:
        self.button("Start").click()
        self._wait(lambda: (lambda s: s[0] == "running" and s[1] > 0)(self.status()), TIMEOUT, "the run to start")
        self.state = "running"

    def click(self, name: str, want: str, timeout: float) -> float | str:
        """Seconds from a click on ``name`` until the status shows ``want``; "timeout" when it did not within
        ``timeout`` s, "skipped" when the run was not in the state the click changes (e.g. still not paused)."""
        before = "paused" if want == "running" else "running"
        try:
            self._wait(lambda: self.status()[0] == before, timeout, f"the run to be {before}")
        except TimeoutError:
            return "skipped"
        handle = self.button(name).element_handle()
        result = self.page.evaluate(CLICK_JS, [handle, want, timeout * 1000])
        return "timeout" if result["ms"] is None else result["ms"] / 1000

    def close(self) -> None:
        try:
            self.context.close()
        except Exception:  # noqa: BLE001 — closing a broken page must not stop the benchmark
            pass


# -- headless: the same presets in as many processes, no server ----------------------------------------------
def _headless_one(index: int, name: str, run_bytes: int, warmup: float, window: float, barrier, results) -> None:
    import engine.worker  # noqa: F401 — one thread per numeric library, as in a worker
    from engine.budget import Budget, check
    from engine.presets import load_presets
    from engine.session import RunSession

    try:
        config = load_presets()[name].run_config()
        session = RunSession(config, 1, 1, check(config, Budget(run_bytes=run_bytes)).opad_particles)
        session.start()

        def run(seconds: float) -> tuple[int, float, float]:
            steps0, started, cpu0 = session.sampler.n_steps, time.monotonic(), time.process_time()
            while time.monotonic() - started < seconds:
                wait = session.pace_wait()
                if wait > 0:
                    time.sleep(min(wait, 0.05))
                else:
                    session.advance()
            return session.sampler.n_steps - steps0, time.monotonic() - started, time.process_time() - cpu0

        run(warmup)
        barrier.wait(timeout=TIMEOUT * 3)
        steps, elapsed, cpu = run(window)
        results.put((index, steps / elapsed, cpu / elapsed, ""))
    except Exception as error:  # noqa: BLE001
        try:
            barrier.abort()
        except Exception:  # noqa: BLE001
            pass
        results.put((index, math.nan, math.nan, f"{type(error).__name__}: {error}"))


def headless_rates(names: list[str], run_bytes: int, window: float) -> tuple[list[float], list[float], list[str]]:
    """Steps/s of each preset in ``names``, all at once, one process each, over ``window`` seconds; and the
    CPU each process used (fraction of one core)."""
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["engine.worker"])
    barrier, results = context.Barrier(len(names)), context.Queue()
    processes = [context.Process(target=_headless_one, args=(i, name, run_bytes, 2.0, window, barrier, results),
                                 name=f"classroom-headless-{i}", daemon=True) for i, name in enumerate(names)]
    for process in processes:
        process.start()
    rates, cpus, errors = [math.nan] * len(names), [math.nan] * len(names), [""] * len(names)
    deadline = time.monotonic() + TIMEOUT * 4 + window
    for _ in names:
        try:
            index, rate, cpu, error = results.get(timeout=max(1.0, deadline - time.monotonic()))
        except Exception:  # noqa: BLE001 — queue.Empty
            break
        rates[index], cpus[index], errors[index] = rate, cpu, error
    for process in processes:
        process.join(10)
        if process.is_alive():
            process.terminate()
            process.join(5)
    return rates, cpus, errors


# -- measuring ---------------------------------------------------------------------------------------------
class Sessions:
    """All sessions of one N: pages and light clients, read together."""

    def __init__(self, pages: list[PageSession], lights: LightClients | None):
        self.pages, self.lights = pages, lights

    def read(self) -> dict[str, tuple[str, int, float]]:
        """key → (phase, steps, when) of every session."""
        found = {}
        for i, page in enumerate(self.pages):
            try:
                found[f"page {i}"] = page.status()
            except Exception:  # noqa: BLE001 — a broken page reads as nothing
                found[f"page {i}"] = ("", -1, time.monotonic())
        if self.lights is not None:
            for report in self.lights.status():
                found[f"light {report['index']}"] = (report["phase"], report["steps"], report["seen_at"])
        return found

    def rates(self, seconds: float, keys: set[str] | None = None) -> dict[str, float]:
        """Steps/s of each (running) session over ``seconds``."""
        first = self.read()
        time.sleep(seconds)
        last = self.read()
        rates = {}
        for key, (phase, steps, when) in last.items():
            if keys is not None and key not in keys:
                continue
            phase0, steps0, when0 = first.get(key, ("", -1, 0.0))
            if steps0 >= 0 and steps >= steps0 and when > when0:
                rates[key] = (steps - steps0) / (when - when0)
            else:
                rates[key] = math.nan
        return rates


class CpuMeter:
    """CPU seconds used by the server, its workers, the light clients, Chromium + playwright, and the rest."""

    def __init__(self, server: Server, light_pid: int | None):
        self.server, self.light_pid = server, light_pid

    def _groups(self) -> dict[int, str]:
        groups = {}
        for process in self.server.tree():
            groups[process.pid] = "server"
        for worker in self.server.workers():
            groups[worker.pid] = "workers"
        for forkserver in self.server.forkservers():
            groups[forkserver.pid] = "workers"
        me = psutil.Process()
        groups.setdefault(me.pid, "benchmark + Chromium")
        for child in me.children(recursive=True):
            if child.pid == self.light_pid:
                groups[child.pid] = "light clients"
            else:
                groups.setdefault(child.pid, "benchmark + Chromium")
        return groups

    def snapshot(self) -> tuple[float, dict[int, tuple[str, float]], float]:
        times = {}
        for pid, group in self._groups().items():
            try:
                cpu = psutil.Process(pid).cpu_times()
                times[pid] = (group, cpu.user + cpu.system)
            except psutil.Error:
                pass
        total = psutil.cpu_times()
        busy = sum(getattr(total, field) for field in ("user", "nice", "system", "irq", "softirq", "steal")
                   if hasattr(total, field))
        return time.monotonic(), times, busy

    @staticmethod
    def usage(before, after) -> dict[str, float]:
        """Per group: % of one core over the interval (200 % = both cores of this machine)."""
        t0, times0, busy0 = before
        t1, times1, busy1 = after
        wall = max(t1 - t0, 1e-9)
        used: dict[str, float] = defaultdict(float)
        for pid, (group, seconds) in times1.items():
            if pid in times0:
                used[group] += seconds - times0[pid][1]
        result = {group: 100 * seconds / wall for group, seconds in used.items()}
        result["everything else on the machine"] = max(0.0, 100 * (busy1 - busy0) / wall - sum(result.values()))
        return result


class MemorySampler(threading.Thread):
    """Samples the server's RSS and its workers' RSS and PSS every ``seconds`` (until ``stop``)."""

    def __init__(self, server: Server, seconds: float):
        super().__init__(name="classroom-memory", daemon=True)
        self.server, self.seconds = server, seconds
        self.samples: list[dict] = []
        self._halt = threading.Event()

    def sample(self, full: bool = False) -> dict:
        """RSS of the server and the workers; with ``full``, the workers' PSS too (reads smaps: costly)."""
        row = {"t": time.monotonic(), "server": math.nan, "workers_rss": 0, "workers_pss": math.nan, "workers": 0}
        try:
            row["server"] = psutil.Process(self.server.pid).memory_info().rss
        except psutil.Error:
            pass
        pss = 0
        for worker in self.server.workers():
            try:
                if full:
                    info = worker.memory_full_info()
                    pss += getattr(info, "pss", info.rss)
                else:
                    info = worker.memory_info()
                row["workers_rss"] += info.rss
                row["workers"] += 1
            except psutil.Error:
                pass
        if full:
            row["workers_pss"] = pss
        return row

    def run(self) -> None:
        while not self._halt.is_set():
            self.samples.append(self.sample())
            self._halt.wait(self.seconds)

    def stop(self) -> None:
        self._halt.set()
        self.join(10)

    def between(self, start: float, end: float) -> list[dict]:
        return [s for s in self.samples if start <= s["t"] <= end]


def memory_summary(samples: list[dict], key: str) -> dict:
    values = [s[key] for s in samples if not math.isnan(s[key])]  # (PSS: the first and last sample only)
    if not values:
        return {"first": math.nan, "last": math.nan, "max": math.nan, "change": math.nan, "spread": math.nan}
    first = values[0]
    return {"first": first, "last": values[-1], "max": max(values), "change": (values[-1] - first) / first,
            "spread": max(abs(v - first) for v in values) / first}


# -- one classroom -----------------------------------------------------------------------------------------
def classroom(n: int, args, browser, names: list[str], descriptions: dict[str, str], default_name: str,
              log_dir: Path, soak: float) -> dict:
    """Open ``n`` sessions against a fresh server and measure; a dict of results."""
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
        # 1. the light clients: open, load their preset, start
        if n > n_pages:
            jobs = [(i, presets[i], descriptions[presets[i]]) for i in range(n_pages, n)]
            opened = time.monotonic()
            lights = LightClients(server.url, jobs, default_description, args.light_concurrency)
            reports = lights.wait_settled(TIMEOUT * 2 + 10 * len(jobs))
            result["lights_seconds"] = time.monotonic() - opened
            result["light_open"] = [r["opened_seconds"] for r in reports]
            result["light_failed"] = [f"light {r['index']} ({r['preset']}): {r['state']}: {r['error']}"
                                      for r in reports if r["state"] != "running"]
            print(f"   light clients: {sum(r['state'] == 'running' for r in reports)}/{len(reports)} running after "
                  f"{result['lights_seconds']:.0f} s", flush=True)
        # 2. the Chromium pages, one after the other: load (timed), preset, start
        result["page_load"], result["page_failed"] = [], []
        for i in range(n_pages):
            try:
                page = PageSession(browser, presets[i])
                renice_chromium(args.chromium_nice)
                pages.append(page)
                page.open(server.url)
                result["page_load"].append(page.load_seconds)
                page.load_preset(descriptions[presets[i]], default_description)
                page.start()
            except Exception as error:  # noqa: BLE001 — reported, the others go on
                result["page_failed"].append(f"page {i} ({presets[i]}): {type(error).__name__}: {error}"[:300]
                                             + _page_state(pages[i] if len(pages) > i else None))
        print(f"   pages: loads {', '.join(f'{s:.1f}' for s in result['page_load'])} s; "
              f"{sum(p.state == 'running' for p in pages)}/{n_pages} running", flush=True)
        sessions = Sessions([p for p in pages if p.state == "running"], lights)
        time.sleep(2.0)
        # 3. click-to-effect in every page: Pause then Start, ``clicks`` times
        result["start"], result["pause"], result["click_timeouts"], result["click_skipped"] = [], [], 0, 0
        clicks_end = time.monotonic() + args.click_phase_seconds
        for _ in range(args.clicks):
            for page in sessions.pages:
                for name, want, key in (("Pause", "paused", "pause"), ("Start", "running", "start")):
                    if time.monotonic() > clicks_end:
                        result["clicks_capped"] = True
                        break
                    seconds = page.click(name, want, args.click_timeout)
                    if seconds == "timeout":
                        result["click_timeouts"] += 1
                    elif seconds == "skipped":
                        result["click_skipped"] += 1
                    else:
                        result[key].append(seconds)
                    time.sleep(0.3)
        print(f"   clicks: start p95 {fmt(percentile(result['start'], 95))} s, "
              f"pause p95 {fmt(percentile(result['pause'], 95))} s", flush=True)
        time.sleep(1.0)
        # 4. throughput of every session over the window, and who used the CPU meanwhile
        meter = CpuMeter(server, lights.process.pid if lights else None)
        before = meter.snapshot()
        light_before = lights.status() if lights is not None else []
        rates = sessions.rates(args.window_seconds)
        light_after = lights.status() if lights is not None else []
        result["cpu"] = CpuMeter.usage(before, meter.snapshot())
        if light_before:
            wall = args.window_seconds
            result["light_updates"] = [(b["updates"] - a["updates"]) / wall for a, b in zip(light_before, light_after)]
            result["light_bytes"] = sum(b["received"] - a["received"] for a, b in zip(light_before, light_after)) / wall
        result["served"] = rates
        result["session_presets"] = {f"page {i}": p.preset for i, p in enumerate(sessions.pages)}
        if lights is not None:
            result["session_presets"].update({f"light {i}": presets[i] for i in range(n_pages, n)})
        result["running"] = sum(1 for rate in rates.values() if rate > 0)
        print(f"   served: {sum(r for r in rates.values() if r == r):,.0f} steps/s in {result['running']} "
              f"sessions", flush=True)
        # 5. over budget: an extra page loads a configuration file over the run budget
        from dashboard.controls import CONFIG_FILES

        try:
            extra = PageSession(browser, "")
            renice_chromium(args.chromium_nice)
            pages.append(extra)
            extra.open(server.url)
            time.sleep(5.0)  # the new page settles: its load is not the over-budget request's cost
            cpu_before = meter.snapshot()
            before_rates = sessions.rates(args.window_seconds)
            payload = json.dumps(OVER_BUDGET).encode()
            result["budget_cpu_before"] = CpuMeter.usage(cpu_before, meter.snapshot())
            result["budget_upload_at"] = time.monotonic() - extra.created
            clicked = time.monotonic()
            extra.page.locator(f'input[type="file"][accept="{CONFIG_FILES}"]').set_input_files(
                files=[{"name": "too-big.json", "mimeType": "application/json", "buffer": payload}])
            text = extra.page.wait_for_function(ALERT_JS, polling=20, timeout=TIMEOUT * 1000).json_value()
            result["budget_message_seconds"] = time.monotonic() - clicked
            result["budget_message"] = re.sub(r"<[^>]+>", "", html.unescape(html.unescape(text))).strip()
            cpu_after = meter.snapshot()
            after_rates = sessions.rates(args.window_seconds)
            result["budget_cpu_after"] = CpuMeter.usage(cpu_after, meter.snapshot())
            both = [k for k in before_rates if before_rates[k] > 0 and not math.isnan(after_rates.get(k, math.nan))]
            result["budget_before"] = sum(before_rates[k] for k in both)
            result["budget_after"] = sum(after_rates[k] for k in both)
            extra.close()
            pages.remove(extra)
        except Exception as error:  # noqa: BLE001
            result["budget_error"] = f"{type(error).__name__}: {error}"[:200] + _page_state(
                extra if "extra" in locals() else None) + (
                f"; uploaded {result['budget_upload_at']:.1f} s after opening" if "budget_upload_at" in result else "")
        # 6. soak: memory (and throughput) while everything runs
        if soak > 0:
            print(f"   soak {soak:.0f} s …", flush=True)
            soak_start = time.monotonic()
            pss_first = memory.sample(full=True)
            totals = []
            while time.monotonic() - soak_start < soak:
                reads = sessions.read()
                totals.append((time.monotonic(), sum(max(s, 0) for _, s, _ in reads.values()), reads))
                time.sleep(min(args.sample_seconds, max(0.0, soak - (time.monotonic() - soak_start))))
            reads = sessions.read()
            totals.append((time.monotonic(), sum(max(s, 0) for _, s, _ in reads.values()), reads))
            soak_samples = [pss_first] + memory.between(soak_start, time.monotonic()) + [memory.sample(full=True)]
            result["soak"] = {"seconds": time.monotonic() - soak_start,
                              "server": memory_summary(soak_samples, "server"),
                              "workers_rss": memory_summary(soak_samples, "workers_rss"),
                              "workers_pss": memory_summary(soak_samples, "workers_pss"),
                              "workers": [s["workers"] for s in soak_samples]}
            quarter = max(1, len(totals) // 4)
            early, late = totals[:quarter + 1], totals[-quarter - 1:]
            result["soak"]["rate_early"] = (early[-1][1] - early[0][1]) / max(early[-1][0] - early[0][0], 1e-9)
            result["soak"]["rate_late"] = (late[-1][1] - late[0][1]) / max(late[-1][0] - late[0][0], 1e-9)

            def rate(rows, key):
                _, steps0, when0 = rows[0][2].get(key, ("", -1, 0))
                _, steps1, when1 = rows[-1][2].get(key, ("", -1, 0))
                return (steps1 - steps0) / (when1 - when0) if steps0 >= 0 and when1 > when0 else math.nan

            result["soak"]["per_session"] = {key: (rate(early, key), rate(late, key)) for key in totals[-1][2]}
        result["memory_now"] = memory.sample()
        result["js_errors"] = [f"page {i}: {e}" for i, p in enumerate(pages) for e in p.js_errors]
        # 7. close everything; count the workers left 10 s later; stop the server; anything left?
        result["workers_before_close"] = len(server.workers())
        for page in pages:
            page.close()
        if lights is not None:
            lights.close()
            lights = None
        closed = time.monotonic()
        pages = []
        while time.monotonic() - closed < LEFTOVER_SECONDS:
            time.sleep(0.5)
        left = server.workers()
        result["workers_left"] = len(left)
        result["workers_left_detail"] = [f"pid {p.pid}" for p in left]
        # when did they go? (up to 30 s more, to say how long they linger)
        if left:
            waited = LEFTOVER_SECONDS
            while server.workers() and waited < LEFTOVER_SECONDS + 30:
                time.sleep(1.0)
                waited = time.monotonic() - closed
            result["workers_gone_after"] = waited if not server.workers() else math.inf
    finally:
        for page in pages:
            page.close()
        for cleanup in ((lights.close,) if lights is not None else ()) + (memory.stop,):
            try:
                cleanup()
            except Exception as error:  # noqa: BLE001 — the server must be stopped whatever happened
                result["notes"].append(f"cleanup: {type(error).__name__}: {error}")
        server.tree()
        result["server_stop"] = server.stop()
        time.sleep(3.0)
        leftovers = server.leftovers()
        result["left_after_stop"] = [f"pid {p.pid} {' '.join(p.cmdline())[:80]}" for p in leftovers
                                     if _alive(p)]
        server.kill_leftovers()
        result["log_errors"] = server.log_errors()
    # 8. the same presets headless, in as many processes, with no server running
    print(f"   headless: {n} process(es) …", flush=True)
    rates, cpus, errors = headless_rates(presets, run_bytes, args.window_seconds)
    result["headless"], result["headless_cpu"] = rates, 100 * sum(c for c in cpus if c == c)
    result["headless_errors"] = [f"{presets[i]}: {e}" for i, e in enumerate(errors) if e]
    return result


def _page_state(page: PageSession | None) -> str:
    """What a failed page shows: its Bokeh documents, status line and last console messages."""
    if page is None:
        return "  [the page did not load]"
    try:
        documents = page.page.evaluate("() => (window.Bokeh && Bokeh.documents) ? Bokeh.documents.length : -1")
        status = page.page.evaluate(STATUS_JS)
        alert = page.page.evaluate("""() => { const d = Bokeh.documents[0];
            const all = d._all_models instanceof Map ? Array.from(d._all_models.values()) : Array.from(d._all_models);
            const a = all.find(m => Array.isArray(m.css_classes) && m.css_classes.includes("run-error"));
            return a ? (a.visible ? "visible: " : "hidden: ") + String(a.text).slice(0, 60) : "none"; }""")
    except Exception as error:  # noqa: BLE001
        documents, status, alert = "?", f"unreadable ({type(error).__name__})", "?"
    return (f"  [Bokeh documents: {documents}; status: {html.unescape(str(status))[:80]!r}; alert model "
            f"{alert!r}; JS errors: {page.js_errors[:3]}; console: {' | '.join(page.console[-4:])[:300]}]")


def renice_chromium(nice: int) -> None:
    """Give the benchmark's Chromium processes (descendants of this process) the niceness ``nice``."""
    if not nice:
        return
    for child in psutil.Process().children(recursive=True):
        try:
            if "chrom" in child.name() and child.nice() != nice:
                child.nice(nice)
        except psutil.Error:
            pass


def _alive(process: psutil.Process) -> bool:
    try:
        return process.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


# -- page speed: a fresh server's first page, then later pages ------------------------------------------------
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
#: The page-speed goals of issue 31: the first page after the server starts shows its Start button within 5 s,
#: every later page within 3 s (seconds).
PAGE_SPEED_GOALS = {"first": 5.0, "later": 3.0}


def _open_timed(browser, url: str) -> tuple:
    """A new page (its own context) navigating to ``url``, without waiting; (context, page, Date.now() at the
    navigation's start in ms)."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    context.add_init_script(PAGE_SPEED_JS)
    page = context.new_page()
    page.goto("about:blank")
    opened = page.evaluate("url => { const now = Date.now(); window.location.href = url; return now; }", url)
    return context, page, opened


def _shown(page, opened: float, deadline: float) -> tuple[float, float]:
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


def page_speed(args, browser, log_dir: Path) -> dict:
    """A fresh ``panel serve app.py``: seconds from its start to the first page's Start button and first lattice
    (the page opens as soon as the server answers), then ``--speed-pages`` pages opened one after the other (each
    once the previous one drew its lattice, then closed) and ``--speed-burst`` pages opened at once."""
    result: dict = {"sequential": [], "burst": []}
    started_ms = time.time() * 1000
    server = Server(args.port, shlex.split(args.budget_args), args.session_lifetime_ms,
                    log_dir / "server-page-speed.log")
    contexts = []
    try:
        result["answers"] = server.wait_ready()
        context, page, opened = _open_timed(browser, server.url)
        contexts.append(context)
        start, plot = _shown(page, opened, time.monotonic() + TIMEOUT)
        since_start = (opened - started_ms) / 1000
        result["first"] = (since_start + start, since_start + plot, start, plot)
        context.close()
        for _ in range(args.speed_pages):
            context, page, opened = _open_timed(browser, server.url)
            contexts.append(context)
            result["sequential"].append(_shown(page, opened, time.monotonic() + TIMEOUT))
            context.close()
        opened_pages = [_open_timed(browser, server.url) for _ in range(args.speed_burst)]
        contexts += [context for context, _, _ in opened_pages]
        deadline = time.monotonic() + TIMEOUT
        result["burst"] = [_shown(page, opened, deadline) for _, page, opened in opened_pages]
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


def print_page_speed(result: dict) -> None:
    """The page-speed phase's table, the goals beside the measurements."""
    first, later = PAGE_SPEED_GOALS["first"], PAGE_SPEED_GOALS["later"]

    def spread(rows: list[tuple[float, float]], index: int) -> str:
        values = [row[index] for row in rows]
        shown = [value for value in values if value == value]
        return (f"{fmt(median(values))} / {fmt(max(values))}" if len(shown) == len(values)
                else f"{fmt(median(shown))} / not shown in {len(values) - len(shown)} of {len(values)} pages "
                     f"within {TIMEOUT:.0f} s")

    print(f"\n== page speed (a fresh server; {PAGE_SPEED_GOALS}) ==")
    if "first" in result:
        to_start, to_plot, open_start, open_plot = result["first"]
        print(f"server start → it answers (s)                      {result['answers']:6.2f}")
        print(f"server start → first page's Start button (s)       {to_start:6.2f}   (goal < {first:.0f} s: "
              f"{'met' if to_start < first else 'NOT MET'});  from the page's opening {open_start:.2f}")
        print(f"server start → first page's first lattice (s)      {to_plot:6.2f}   "
              f"(from the page's opening {open_plot:.2f})")
    for label, rows in ((f"{len(result['sequential'])} later pages, one after the other", result["sequential"]),
                        (f"{len(result['burst'])} later pages opened at once", result["burst"])):
        if rows:
            worst = max(row[0] for row in rows)
            print(f"{label}: page opened → Start button (s), median / worst   {spread(rows, 0)}   "
                  f"(goal < {later:.0f} s: {'met' if worst < later else 'NOT MET'})")
            print(f"{' ' * len(label)}  page opened → first lattice (s), median / worst   {spread(rows, 1)}")
    if result.get("log_errors"):
        print(f"server log errors: {'; '.join(result['log_errors'][:3])}")


# -- reporting ---------------------------------------------------------------------------------------------
def summarise(result: dict) -> dict:
    n, pages = result["n"], result["pages"]
    served = result.get("served", {})
    headless = result.get("headless", [])
    index = {f"page {i}": i for i in range(pages)} | {f"light {i}": i for i in range(pages, n)}
    served_total = sum(rate for rate in served.values() if rate == rate)
    headless_total = sum(rate for rate in headless if rate == rate)
    ratios = [served[k] / headless[index[k]] for k in served
              if served[k] == served[k] and index[k] < len(headless) and headless[index[k]] > 0]
    summary = {
        "served_total": served_total, "headless_total": headless_total,
        "ratio": served_total / headless_total if headless_total else math.nan,
        "ratio_median": median(ratios),
        "ratios": ratios,
        "start_median": median(result.get("start", [])), "start_p95": percentile(result.get("start", []), 95),
        "pause_median": median(result.get("pause", [])), "pause_p95": percentile(result.get("pause", []), 95),
        "load_median": median(result.get("page_load", [])), "load_max": max(result.get("page_load", []) or [math.nan]),
    }
    worker_cpu = result.get("cpu", {}).get("workers", math.nan)
    summary["served_per_cpu"] = served_total / (worker_cpu / 100) if worker_cpu and not math.isnan(worker_cpu) \
        else math.nan
    headless_cpu = result.get("headless_cpu", math.nan)
    summary["headless_per_cpu"] = headless_total / (headless_cpu / 100) if headless_cpu else math.nan
    cpu = result.get("cpu", {})
    summary["cpu_left"] = 100 * os.cpu_count() - sum(cpu.get(group, 0.0) for group in CLIENT_GROUPS) if cpu \
        else math.nan
    on_left = summary["headless_per_cpu"] * summary["cpu_left"] / 100
    summary["ratio_left"] = served_total / on_left if on_left > 0 else math.nan
    before, after = result.get("budget_before"), result.get("budget_after")
    summary["slowdown"] = (1 - after / before) if before else math.nan
    return summary


def print_table(result: dict, summary: dict) -> None:
    n, mb = result["n"], 1e6
    rows = [
        ("sessions (Chromium pages + light clients)", f"{n} ({result['pages']} + {result['lights']})"),
        ("sessions running during the window", f"{result.get('running', 0)} / {n}"),
        ("page load → first drawn lattice (s): median / max",
         f"{fmt(summary['load_median'])} / {fmt(summary['load_max'])}   ({len(result.get('page_load', []))} pages)"),
    ]
    if result.get("light_open"):
        opened = [s for s in result["light_open"] if s == s]
        rows.append(("light client: GET + pull document (s): median / max",
                     f"{fmt(median(opened))} / {fmt(max(opened or [math.nan]))}   "
                     f"(all up and running after {result.get('lights_seconds', math.nan):.0f} s)"))
    rows += [
        ("click Start → running (s): median / p95",
         f"{fmt(summary['start_median'], 3)} / {fmt(summary['start_p95'], 3)}   "
         f"({len(result.get('start', []))} clicks)"),
        ("click Pause → paused (s): median / p95",
         f"{fmt(summary['pause_median'], 3)} / {fmt(summary['pause_p95'], 3)}   ({len(result.get('pause', []))} clicks;"
         f" all clicks: {result.get('click_timeouts', 0)} without effect in {result.get('click_timeout', '?')} s, "
         f"{result.get('click_skipped', 0)} skipped" + ("; stopped at the phase's time cap)" if result.get(
             "clicks_capped") else ")")),
        ("total steps/s served", f"{summary['served_total']:,.0f}"),
        ("total steps/s headless, same presets, N processes", f"{summary['headless_total']:,.0f}"),
        ("ratio served / headless (total)", fmt(summary["ratio"])),
        ("ratio served / headless, median over sessions", fmt(summary["ratio_median"])),
        ("ratio served / headless on the CPU the clients leave",
         f"{fmt(summary['ratio_left'])}   (headless steps per CPU-second × the {summary['cpu_left']:.0f} % of a core "
         "not used by Chromium, the light clients and other programs)"),
        ("CPU of the samplers: workers served / headless processes (%)",
         f"{result.get('cpu', {}).get('workers', math.nan):.0f} / {result.get('headless_cpu', math.nan):.0f}"),
        ("steps per CPU-second of the samplers: served / headless",
         f"{summary['served_per_cpu']:,.0f} / {summary['headless_per_cpu']:,.0f}  (ratio "
         f"{fmt(summary['served_per_cpu'] / summary['headless_per_cpu'])})"),
    ]
    if result.get("light_updates"):
        rows.append(("light clients: status updates/s received, median (total MB/s)",
                     f"{median(result['light_updates']):.1f}  ({result['light_bytes'] / 1e6:.2f} MB/s)"))
    cpu = result.get("cpu", {})
    if cpu:
        rows.append(("CPU during the window (% of one core; 200 = both)",
                     ", ".join(f"{group} {value:.0f}" for group, value in sorted(cpu.items(), key=lambda x: -x[1]))))
    if "budget_message" in result:
        rows.append(("over budget: message shown after (s)", f"{result['budget_message_seconds']:.2f}: "
                                                              f"\"{result['budget_message'][:110]}…\""))
        rows.append(("over budget: others' steps/s before → after",
                     f"{result['budget_before']:,.0f} → {result['budget_after']:,.0f}  "
                     f"(slowdown {100 * summary['slowdown']:.1f} %)"))
        cpu0, cpu1, other = result["budget_cpu_before"], result["budget_cpu_after"], "everything else on the machine"
        rows.append(("  CPU of workers / of other programs on the machine, before → after (%)",
                     f"{cpu0.get('workers', 0):.0f} / {cpu0[other]:.0f} → "
                     f"{cpu1.get('workers', 0):.0f} / {cpu1[other]:.0f}"))
    elif "budget_error" in result:
        rows.append(("over budget", f"FAILED: {result['budget_error']}"))
    soak = result.get("soak")
    if soak:
        s, w, p = soak["server"], soak["workers_rss"], soak["workers_pss"]
        rows += [
            (f"server RSS over {soak['seconds']:.0f} s (MB): first / last / max",
             f"{s['first'] / mb:.0f} / {s['last'] / mb:.0f} / {s['max'] / mb:.0f}  "
             f"(last {100 * s['change']:+.1f} %, widest {100 * s['spread']:.1f} %)"),
            ("workers RSS sum (MB): first / last / max",
             f"{w['first'] / mb:.0f} / {w['last'] / mb:.0f} / {w['max'] / mb:.0f}  ({100 * w['change']:+.1f} %; "
             f"{min(soak['workers'])}–{max(soak['workers'])} workers)"),
            ("workers PSS sum (MB): first / last / max of the two",
             f"{p['first'] / mb:.0f} / {p['last'] / mb:.0f} / {p['max'] / mb:.0f}  ({100 * p['change']:+.1f} %)"),
            ("total steps/s, first vs last quarter of the soak",
             f"{soak['rate_early']:,.0f} → {soak['rate_late']:,.0f}"),
        ]
        drops = sorted(((late / early, key) for key, (early, late) in soak.get("per_session", {}).items()
                        if early > 0 and late == late), key=lambda item: item[0])[:3]
        if drops:
            rows.append(("  sessions that slowed most (last / first quarter)",
                         ", ".join(f"{key} ×{ratio:.2f}" for ratio, key in drops)))
    else:
        now = result.get("memory_now", {})
        if now:
            rows.append(("server RSS / workers RSS sum (MB) at the end",
                         f"{now['server'] / mb:.0f} / {now['workers_rss'] / mb:.0f}  ({now['workers']} workers)"))
    left = result.get("workers_left", math.nan)
    rows.append((f"worker processes left {LEFTOVER_SECONDS:.0f} s after all sessions closed",
                 f"{left} of {result.get('workers_before_close', '?')}" + _gone(result)))
    rows.append(("processes of the server's tree left after it stopped",
                 f"{len(result.get('left_after_stop', []))}  (server stopped by {result.get('server_stop')})"))
    rows.append(("server log: errors / tracebacks", str(len(result.get("log_errors", [])))))
    rows.append(("JavaScript errors in the pages", str(len(result.get("js_errors", [])))))
    width = max(len(label) for label, _ in rows)
    print(f"\nN = {n} concurrent sessions")
    print("-" * (width + 60))
    for label, value in rows:
        print(f"{label:{width}s}  {value}")
    problems = (result.get("light_failed", []) + result.get("page_failed", []) + result.get("headless_errors", [])
                + [f"left after stop: {p}" for p in result.get("left_after_stop", [])]
                + [f"server log: {e}" for e in _distinct(result.get("log_errors", []))]
                + [f"JS: {e}" for e in _distinct(result.get("js_errors", []))])
    for problem in problems[:25]:
        print(f"  ! {problem[:300]}")
    if len(problems) > 25:
        print(f"  ! … and {len(problems) - 25} more")
    presets = result.get("session_presets", {})
    served, headless = result.get("served", {}), result.get("headless", [])
    if served:
        print("  per session: steps/s served / headless (preset)")
        pages = result["pages"]
        index = {f"page {i}": i for i in range(pages)} | {f"light {i}": i for i in range(pages, n)}
        for key in sorted(served, key=lambda k: index.get(k, 0)):
            i = index.get(key, 0)
            h = headless[i] if i < len(headless) else math.nan
            print(f"    {key:9s} {served[key]:9.1f} / {h:9.1f}  {presets.get(key, '')[:70]}")


def _gone(result: dict) -> str:
    gone = result.get("workers_gone_after")
    if gone is None:
        return ""
    return f"  (all gone {gone:.0f} s after closing)" if gone != math.inf else "  (still there 40 s after closing)"


def _distinct(lines: list[str]) -> list[str]:
    counts: dict[str, int] = {}
    for line in lines:
        counts[line] = counts.get(line, 0) + 1
    return [f"{line} (×{count})" if count > 1 else line for line, count in counts.items()]


def print_goals(result: dict, summary: dict) -> None:
    n = result["n"]
    soak = result.get("soak")
    rows = []

    def goal(label: str, measured: str, target: str, met: bool | None) -> None:
        rows.append((label, measured, target, "met" if met else "NOT MET" if met is not None else "not measured"))

    p95 = max(summary["start_p95"], summary["pause_p95"]) if result.get("start") and result.get("pause") else math.nan
    goal("click-to-effect p95 (Start and Pause)", f"{fmt(summary['start_p95'], 3)} / {fmt(summary['pause_p95'], 3)} s",
         f"< {GOALS['click_p95']} s",
         None if math.isnan(p95) else (p95 < GOALS["click_p95"] and not result["click_timeouts"]
                                      and not result["click_skipped"]))
    goal("page load → first drawn lattice (worst page)", f"{fmt(summary['load_max'])} s", f"< {GOALS['page_load']} s",
         None if summary["load_max"] != summary["load_max"] else summary["load_max"] < GOALS["page_load"])
    goal("total throughput served / headless", fmt(summary["ratio"]), f">= {GOALS['ratio']}",
         None if summary["ratio"] != summary["ratio"] else summary["ratio"] >= GOALS["ratio"])
    goal("  the same, on the CPU the benchmark's clients leave", fmt(summary["ratio_left"]), f">= {GOALS['ratio']}",
         None if summary["ratio_left"] != summary["ratio_left"] else summary["ratio_left"] >= GOALS["ratio"])
    goal("all sessions loaded, built their preset and ran", f"{result.get('running', 0)} / {n}", f"{n} / {n}",
         result.get("running", 0) == n)
    left, stopped = result.get("workers_left"), len(result.get("left_after_stop", []))
    goal("processes left 10 s after close / after server stop", f"{left} / {stopped}", "0 / 0",
         None if left is None else (left == 0 and stopped == 0))
    if soak:
        goal(f"server memory flat over {soak['seconds']:.0f} s (widest departure from first)",
             f"{100 * soak['server']['spread']:.1f} %", f"<= {100 * GOALS['memory']:.0f} %",
             soak["server"]["spread"] <= GOALS["memory"])
    else:
        goal("server memory flat over the soak", "–", f"<= {100 * GOALS['memory']:.0f} %", None)
    goal("over-budget session gets a message", "yes" if "budget_message" in result else "no", "yes",
         "budget_message" in result)
    goal("others' slowdown meanwhile", f"{fmt(100 * summary['slowdown'], 1)} %", f"<= {100 * GOALS['slowdown']:.0f} %",
         None if summary["slowdown"] != summary["slowdown"] else summary["slowdown"] <= GOALS["slowdown"])
    goal("server log free of errors", str(len(result.get("log_errors", []))), "0", not result.get("log_errors"))
    print(f"\nGoals at N = {n}")
    widths = [max(len(row[i]) for row in rows + [("goal", "measured", "target", "")]) for i in range(4)]
    print(f"{'goal':{widths[0]}s}  {'measured':{widths[1]}s}  {'target':{widths[2]}s}  result")
    print("-" * (sum(widths) + 8))
    for row in rows:
        print(f"{row[0]:{widths[0]}s}  {row[1]:{widths[1]}s}  {row[2]:{widths[2]}s}  {row[3]}")


def main(argv: list[str] | None = None) -> None:
    args = arguments(
        "classroom", argv, sessions="1,8,30", pages=4, clicks=5, soak_seconds=600.0, window_seconds=20.0, port=0,
        click_timeout=30.0, click_phase_seconds=120.0, chromium_nice=0, speed_pages=5, speed_burst=10,
        sample_seconds=5.0, light_concurrency=4, session_lifetime_ms=2000,
        budget_args="--max-workers 40 --run-memory 2GB", chromium="/usr/bin/chromium", log_dir="",
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
               "log_dir": "where the server logs go (default: a new temporary directory)"})
    counts = [int(x) for x in args.sessions.split(",") if x.strip() and int(x) != 0]
    if counts and min(counts) < 1:
        raise SystemExit("--sessions wants positive numbers, e.g. 1,8,30 (or 0: only the page-speed phase)")
    import tempfile

    from playwright.sync_api import sync_playwright

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
    results = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=args.chromium, args=CHROMIUM_ARGS, timeout=60_000)
        renice_chromium(args.chromium_nice)
        try:
            if args.speed_pages or args.speed_burst:
                speed = page_speed(args, browser, log_dir)
                print_page_speed(speed)
                print(flush=True)
            for n in counts:
                soak = args.soak_seconds if n == max(counts) else 0.0
                results.append(classroom(n, args, browser, names, descriptions, next(iter(presets)), log_dir, soak))
                print_table(results[-1], summarise(results[-1]))
                print(flush=True)
        finally:
            browser.close()
    if results:
        print("\n== all classrooms ==")
        for result in results:
            print_table(result, summarise(result))
        largest = max(results, key=lambda r: r["n"])
        print_goals(largest, summarise(largest))
    if results and (args.speed_pages or args.speed_burst):
        print_page_speed(speed)  # again, below the classrooms' tables
    print(f"\nserver logs: {log_dir}")


if __name__ == "__main__":
    main(sys.argv[1:])
