"""The classroom's server: ``panel serve app.py`` in a subprocess, its process tree (workers included) and its log.

``Server`` starts it on 127.0.0.1 with the budget and session lifetime the
benchmark asks for, tells when it answers, finds the sessions' worker
processes (children of its forkserver), stops it (SIGTERM, then SIGKILL) and
says what of its tree outlived it and which errors its log holds.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[2]
#: Log lines that are noise of closed connections, not errors of the dashboard.
LOG_NOISE = ("WebSocketClosedError", "StreamClosedError", "Failed sending message as connection was closed")


def _free_port() -> int:
    """A port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _die_with_parent() -> None:
    """In the server's process before it runs: end (SIGTERM) when the benchmark's process ends, however it ends."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def alive(process: psutil.Process) -> bool:
    """Whether ``process`` still runs (neither gone nor a zombie)."""
    try:
        return process.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def _living(processes) -> list[psutil.Process]:
    """The processes that still run (neither gone nor zombies)."""
    return [process for process in processes if alive(process)]


class Server:
    """``panel serve app.py`` in a subprocess on 127.0.0.1, its process tree and its log."""

    def __init__(self, port: int, budget_args: list[str], lifetime_ms: int | None, log_path: Path, root: Path = ROOT):
        """``lifetime_ms``: the server's ``--unused-session-lifetime`` (checked twice as often); None keeps Bokeh's
        defaults, as ``make serve`` does. ``root``: the code base served (another checkout, e.g. old code)."""
        self.port = port or _free_port()
        self.url = f"http://127.0.0.1:{self.port}/app"
        self.log_path = log_path
        self._log = open(log_path, "w")
        lifetimes = [] if lifetime_ms is None else ["--check-unused-sessions", str(max(100, lifetime_ms // 2)),
                                                    "--unused-session-lifetime", str(lifetime_ms)]
        command = [sys.executable, "-m", "panel", "serve", "app.py", "--port", str(self.port), "--address", "127.0.0.1",
                   "--allow-websocket-origin", f"127.0.0.1:{self.port}", "--liveness",
                   "--websocket-max-message-size", "104857600", "--setup", "serve_setup.py", *lifetimes,
                   "--args", *budget_args]
        env = {**os.environ, "PYTHONUNBUFFERED": "1", "PYTHONPATH": str(root)}  # its packages before installed ones
        self.process = subprocess.Popen(command, cwd=root, stdout=self._log, stderr=subprocess.STDOUT, env=env,
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
        """The server's forkservers (its children running multiprocessing's forkserver), parents of the workers."""
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

