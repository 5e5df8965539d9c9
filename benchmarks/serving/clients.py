"""The classroom's simulated sessions: headless Chromium pages and light websocket clients of the served app.

``PageSession`` is one Chromium page (a context of its own) that opens the
app, loads a preset, starts it and times clicks in the page (the JavaScript
below reads the status line and the error alert from the page's Bokeh
models). ``LightClient`` is one session driven over the Bokeh websocket
protocol with the messages a browser sends (GET ``/app``, pull the document,
``document_ready``, the Preset select's ``value``, ``button_click`` events),
following the status line from the ``PATCH-DOC`` messages the server pushes;
all light clients run in one process of their own (one asyncio loop), and
``LightClients`` is the parent's handle on it.
"""

from __future__ import annotations

import asyncio
import html
import json
import math
import multiprocessing
import re
import time

import psutil

from benchmarks.serving.dashboard_live import IMAGE_READY

#: The benchmark's Chromium: headless, with nothing of its own running in the background.
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-quic",
                 "--no-first-run", "--disable-component-update", "--disable-sync"]
#: Longest wait for any one thing (a page, a run to build or start, a click's effect), seconds.
TIMEOUT = 120.0

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


def parse_status(text: str | None) -> tuple[str, int]:
    """("running", 1234) from a status line's text (HTML-escaped or not); ("", -1) when unreadable."""
    match = STATUS_RE.search(html.unescape(text or ""))
    if not match:
        return "", -1
    return match.group(1), int(match.group(2).replace(",", ""))


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
        """What the parent reads of this client (a picklable dict): its state, status line and traffic."""
        return {"index": self.index, "preset": self.preset, "state": self.state, "error": self.error,
                "phase": self.phase, "steps": self.steps, "seen_at": self.seen_at, "updates": self.updates,
                "received": self.received, "alert": self.alert, "opened_seconds": self.opened_seconds}

    async def _message(self):
        """The next whole protocol message from the server (its fragments counted in ``received``)."""
        while True:
            fragment = await self.ws.read_message()
            if fragment is None:
                raise ConnectionError("the websocket closed")
            self.received += len(fragment)
            message = await self.receiver.consume(fragment)
            if message is not None:
                return message

    async def _send(self, msgtype: str, content: dict) -> None:
        """Send one protocol message (header, empty metadata, content), whole, as BokehJS does."""
        from bokeh.util.serialization import make_id

        async with self._lock:
            await self.ws.write_message(json.dumps({"msgid": make_id(), "msgtype": msgtype}))
            await self.ws.write_message("{}")
            await self.ws.write_message(json.dumps(content))

    async def _event(self, name: str, model_id: str | None = None) -> None:
        """Send the Bokeh event ``name`` (``document_ready``, or ``button_click`` on the model ``model_id``)."""
        entries = [["model", {"id": model_id}]] if model_id else []
        await self._send("PATCH-DOC", {"events": [{"kind": "MessageSent", "msg_type": "bokeh_event", "msg_data": {
            "type": "event", "name": name, "values": {"type": "map", "entries": entries}}}]})

    async def _wait(self, condition, timeout: float, what: str) -> None:
        """Until ``condition()`` holds; fails when the client failed or after ``timeout`` s (saying ``what``)."""
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
        """The ids of the models this client drives and reads (buttons, status line, alert, Preset select, the
        preset's description), from the pulled document; fails when one it needs is missing."""
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
        """Follow every ``PATCH-DOC`` the server pushes: the status line, the alert, the preset's description."""
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
        """GET the app, open its websocket, pull the document and send ``document_ready`` (timed: ``opened_seconds``);
        ``default_hint`` is the start of the default preset's description, to find its pane."""
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
        """Select this client's preset, wait for its description, click "Load preset" and wait until it is built."""
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
        """Click "Start" and wait until the status line shows the run running."""
        await self._event("button_click", self.ids["Start"])
        await self._wait(lambda: self.phase == "running" and self.steps > 0, TIMEOUT, "the run to start")
        self.state = "running"

    async def close(self) -> None:
        """Close the websocket (the server then closes the session)."""
        if self.state != "failed":
            self.state = "closed"
        if self.ws is not None:
            self.ws.close()


async def _light_main(conn, url: str, jobs: list[tuple[int, str, str]], default_description: str,
                      concurrency: int) -> None:
    """Bring every client up (``concurrency`` opening at once) and answer the parent's "status" and "close"."""
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
        """Every client's report (``LightClient.report``)."""
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
        """Close every client, then end their process."""
        try:
            self.conn.send("close")
            self.conn.poll(30)
        except (OSError, EOFError):
            pass
        self.process.join(10)
        if self.process.is_alive():
            self.process.terminate()
            self.process.join(5)


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
        """(phase, steps, when) of the page's status line now."""
        text = self.page.evaluate(STATUS_JS)
        phase, steps = parse_status(text)
        return phase, steps, time.monotonic()

    def button(self, name: str):
        """The page's button labelled ``name``."""
        return self.page.get_by_role("button", name=name, exact=True)

    def _wait(self, condition, timeout: float, what: str):
        """``condition()``'s first true value, polled; fails after ``timeout`` s (saying ``what``)."""
        end = time.monotonic() + timeout
        while True:
            value = condition()
            if value:
                return value
            if time.monotonic() > end:
                raise TimeoutError(f"timed out after {timeout:.0f} s waiting for {what}")
            time.sleep(0.05)

    def load_preset(self, description: str, default_description: str) -> None:
        """Select this page's preset, wait for its description, click "Load preset" and wait until it is built."""
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
        """Click "Start" and wait until the status line shows the run running."""
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
        """Close the page's context (the server then closes the session)."""
        try:
            self.context.close()
        except Exception:  # noqa: BLE001 — closing a broken page must not stop the benchmark
            pass


def page_state(page: PageSession | None) -> str:
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


