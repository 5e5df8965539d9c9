"""What the classroom measures and how: the sessions' steps/s, CPU by group, memory, clicks, the over-budget
request, the soak, the processes left, and the summary of one classroom's results.

A session's steps/s is read from its status line ("running · steps 1,234 ·
…") twice, ``window`` seconds apart. CPU is counted in CPU seconds of each
process, grouped (server, workers, Chromium and playwright, light clients,
everything else on the machine), because the benchmark's own clients share
the machine with the server: with the CPU the headless baseline used
(``headless.py``), the summary compares steps per CPU second and the
throughput on the CPU the clients leave.
"""

from __future__ import annotations

import html
import json
import math
import os
import re
import statistics
import threading
import time
from collections import defaultdict

import psutil

from benchmarks.serving.clients import ALERT_JS, TIMEOUT, LightClients, PageSession, page_state, renice_chromium
from benchmarks.serving.server import Server, alive

#: A configuration file over the default 2 GB run budget (estimated ~6.4 GB).
OVER_BUDGET = {"target": "ising_lattice", "target_params": {"ndim": 3, "size": 125}, "sampler": "metropolis",
               "n_chains": 256, "seed": 0, "opad": True}
#: Seconds to wait after the last session closed before counting leftover worker processes.
LEFTOVER_SECONDS = 10.0
#: The CPU groups that are the benchmark's clients or other programs, not the server and its workers.
CLIENT_GROUPS = ("benchmark + Chromium", "light clients", "everything else on the machine")

def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (``q`` in 0..100) of ``values``; nan when empty."""
    if not values:
        return math.nan
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q / 100 * len(ordered)) - 1)]


def median(values: list[float]) -> float:
    """The median of ``values``; nan when empty."""
    return statistics.median(values) if values else math.nan


def session_index(n: int, pages: int) -> dict[str, int]:
    """Each session's key ("page 0", …, "light 4", …) → its place in the classroom (and in its presets)."""
    return {f"page {i}": i for i in range(pages)} | {f"light {i}": i for i in range(pages, n)}


# -- instruments -----------------------------------------------------------------------------------------
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

    def rates(self, seconds: float) -> dict[str, float]:
        """Steps/s of each (running) session over ``seconds``."""
        first = self.read()
        time.sleep(seconds)
        last = self.read()
        rates = {}
        for key, (phase, steps, when) in last.items():
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
        """pid → group of every process counted now (the light clients' process and Chromium are this process's
        children)."""
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
        """(when, pid → (group, CPU seconds so far), the machine's busy CPU seconds so far), for ``usage``."""
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
        """The thread: a sample every ``seconds`` until ``stop``."""
        while not self._halt.is_set():
            self.samples.append(self.sample())
            self._halt.wait(self.seconds)

    def stop(self) -> None:
        """End the sampling and wait for the thread."""
        self._halt.set()
        self.join(10)

    def between(self, start: float, end: float) -> list[dict]:
        """The samples taken between ``start`` and ``end`` (monotonic)."""
        return [s for s in self.samples if start <= s["t"] <= end]


def memory_summary(samples: list[dict], key: str) -> dict:
    """First, last and largest value of ``key`` in ``samples``, the last's change and the widest departure from the
    first (fractions of the first)."""
    values = [s[key] for s in samples if not math.isnan(s[key])]  # (PSS: the first and last sample only)
    if not values:
        return {"first": math.nan, "last": math.nan, "max": math.nan, "change": math.nan, "spread": math.nan}
    first = values[0]
    return {"first": first, "last": values[-1], "max": max(values), "change": (values[-1] - first) / first,
            "spread": max(abs(v - first) for v in values) / first}


# -- the classroom's measuring steps -----------------------------------------------------------------------
def measure_clicks(pages: list[PageSession], args, result: dict) -> None:
    """Click-to-effect in every page, Pause then Start, ``--clicks`` times (stopping after
    ``--click-phase-seconds``): the seconds in ``result["pause"]`` and ``result["start"]``, the clicks without
    effect within ``--click-timeout`` and those skipped (the run not in the state the click changes) counted."""
    result["start"], result["pause"], result["click_timeouts"], result["click_skipped"] = [], [], 0, 0
    clicks_end = time.monotonic() + args.click_phase_seconds
    for _ in range(args.clicks):
        for page in pages:
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


def measure_window(sessions: Sessions, meter: CpuMeter, window: float, result: dict) -> None:
    """Every session's steps/s over ``window`` seconds (``result["served"]``, the sessions that ran counted), the
    CPU each group used meanwhile, and the status updates and bytes the light clients received per second."""
    lights = sessions.lights
    before = meter.snapshot()
    light_before = lights.status() if lights is not None else []
    rates = sessions.rates(window)
    light_after = lights.status() if lights is not None else []
    result["cpu"] = CpuMeter.usage(before, meter.snapshot())
    if light_before:
        result["light_updates"] = [(b["updates"] - a["updates"]) / window for a, b in zip(light_before, light_after)]
        result["light_bytes"] = sum(b["received"] - a["received"] for a, b in zip(light_before, light_after)) / window
    result["served"] = rates
    result["running"] = sum(1 for rate in rates.values() if rate > 0)


def _rates_and_cpu(sessions: Sessions, meter: CpuMeter, window: float) -> tuple[dict, dict]:
    """Every session's steps/s over ``window`` seconds, and the CPU each group used meanwhile."""
    cpu_before = meter.snapshot()
    rates = sessions.rates(window)
    return rates, CpuMeter.usage(cpu_before, meter.snapshot())


def measure_over_budget(browser, url: str, sessions: Sessions, meter: CpuMeter, args, pages: list[PageSession],
                        result: dict) -> None:
    """One extra page (in ``pages`` while open) loads a configuration file over the run budget (``OVER_BUDGET``):
    the seconds until its alert shows and its text, and the others' total steps/s and the CPU over a window
    before and a window after; what failed in ``result["budget_error"]``."""
    from dashboard.controls import CONFIG_FILES

    extra = None
    try:
        extra = PageSession(browser, "")
        renice_chromium(args.chromium_nice)
        pages.append(extra)
        extra.open(url)
        time.sleep(5.0)  # the new page settles: its load is not the over-budget request's cost
        before_rates, result["budget_cpu_before"] = _rates_and_cpu(sessions, meter, args.window_seconds)
        payload = json.dumps(OVER_BUDGET).encode()
        result["budget_upload_at"] = time.monotonic() - extra.created
        clicked = time.monotonic()
        extra.page.locator(f'input[type="file"][accept="{CONFIG_FILES}"]').set_input_files(
            files=[{"name": "too-big.json", "mimeType": "application/json", "buffer": payload}])
        text = extra.page.wait_for_function(ALERT_JS, polling=20, timeout=TIMEOUT * 1000).json_value()
        result["budget_message_seconds"] = time.monotonic() - clicked
        result["budget_message"] = re.sub(r"<[^>]+>", "", html.unescape(html.unescape(text))).strip()
        after_rates, result["budget_cpu_after"] = _rates_and_cpu(sessions, meter, args.window_seconds)
        both = [k for k in before_rates if before_rates[k] > 0 and not math.isnan(after_rates.get(k, math.nan))]
        result["budget_before"] = sum(before_rates[k] for k in both)
        result["budget_after"] = sum(after_rates[k] for k in both)
        extra.close()
        pages.remove(extra)
    except Exception as error:  # noqa: BLE001
        result["budget_error"] = f"{type(error).__name__}: {error}"[:200] + page_state(extra) + (
            f"; uploaded {result['budget_upload_at']:.1f} s after opening" if "budget_upload_at" in result else "")


def _total_rate(rows: list[tuple[float, int, dict]]) -> float:
    """All sessions' steps/s between the first and the last of ``rows`` (when, total steps, reads)."""
    return (rows[-1][1] - rows[0][1]) / max(rows[-1][0] - rows[0][0], 1e-9)


def _session_rate(rows: list[tuple[float, int, dict]], key: str) -> float:
    """Session ``key``'s steps/s between the first and the last of ``rows``; nan when it was not read in both."""
    _, steps0, when0 = rows[0][2].get(key, ("", -1, 0))
    _, steps1, when1 = rows[-1][2].get(key, ("", -1, 0))
    return (steps1 - steps0) / (when1 - when0) if steps0 >= 0 and when1 > when0 else math.nan


def measure_soak(sessions: Sessions, memory: MemorySampler, seconds: float, sample_seconds: float) -> dict:
    """Memory and throughput while every session runs for ``seconds``: the server's RSS and the workers' RSS (the
    memory sampler's samples) and PSS (first and last), summarised, and the total and each session's steps/s
    over the first and the last quarter of the soak (the sessions read every ``sample_seconds``)."""
    soak_start = time.monotonic()
    pss_first = memory.sample(full=True)
    totals = []

    def read() -> None:
        reads = sessions.read()
        totals.append((time.monotonic(), sum(max(s, 0) for _, s, _ in reads.values()), reads))

    while time.monotonic() - soak_start < seconds:
        read()
        time.sleep(min(sample_seconds, max(0.0, seconds - (time.monotonic() - soak_start))))
    read()
    soak_samples = [pss_first] + memory.between(soak_start, time.monotonic()) + [memory.sample(full=True)]
    quarter = max(1, len(totals) // 4)
    early, late = totals[:quarter + 1], totals[-quarter - 1:]
    return {"seconds": time.monotonic() - soak_start,
            "server": memory_summary(soak_samples, "server"),
            "workers_rss": memory_summary(soak_samples, "workers_rss"),
            "workers_pss": memory_summary(soak_samples, "workers_pss"),
            "workers": [s["workers"] for s in soak_samples],
            "rate_early": _total_rate(early), "rate_late": _total_rate(late),
            "per_session": {key: (_session_rate(early, key), _session_rate(late, key)) for key in totals[-1][2]}}


def count_leftover_workers(server: Server, closed: float, result: dict) -> None:
    """The sessions' worker processes still alive ``LEFTOVER_SECONDS`` after every session closed (at ``closed``,
    monotonic), and, when there are some, how long they linger (up to 30 s more)."""
    while time.monotonic() - closed < LEFTOVER_SECONDS:
        time.sleep(0.5)
    left = server.workers()
    result["workers_left"] = len(left)
    result["workers_left_detail"] = [f"pid {p.pid}" for p in left]
    if left:
        waited = LEFTOVER_SECONDS
        while server.workers() and waited < LEFTOVER_SECONDS + 30:
            time.sleep(1.0)
            waited = time.monotonic() - closed
        result["workers_gone_after"] = waited if not server.workers() else math.inf


def stop_server(server: Server, result: dict) -> None:
    """Stop the server (SIGTERM, then SIGKILL); the processes of its tree alive 3 s later (then killed) and the
    errors in its log."""
    server.tree()
    result["server_stop"] = server.stop()
    time.sleep(3.0)
    result["left_after_stop"] = [f"pid {p.pid} {' '.join(p.cmdline())[:80]}" for p in server.leftovers() if alive(p)]
    server.kill_leftovers()
    result["log_errors"] = server.log_errors()


# -- the summary ---------------------------------------------------------------------------------------------
def summarise(result: dict) -> dict:
    """One classroom's figures from its results: total and per-session served / headless ratios (also per CPU
    second of the samplers, and on the CPU the benchmark's clients and other programs leave), click and page-load
    medians and extremes, and the others' slowdown during the over-budget request."""
    n, pages = result["n"], result["pages"]
    served = result.get("served", {})
    headless = result.get("headless", [])
    index = session_index(n, pages)
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


