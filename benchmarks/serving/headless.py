"""The classroom's baseline: the same presets headless, one process each, all at once, with no server running.

Each process builds its preset's ``RunSession`` and advances it in a loop with
its OPAD tracking, exactly what a worker steps (no server, no snapshots); all
wait at a barrier after a warm-up, then count their steps over the same window
and the CPU time they used (``time.process_time``: on a shared machine, time
spent waiting for a core does not count).
"""

from __future__ import annotations

import math
import multiprocessing
import time

from benchmarks.serving.clients import TIMEOUT


def _headless_one(index: int, name: str, run_bytes: int, warmup: float, window: float, barrier, results) -> None:
    """One headless process: preset ``name``'s session advanced ``warmup`` s, then, once every process is there
    (``barrier``), over ``window`` s; (index, steps/s, CPU fraction of one core, error) put in ``results``."""
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


def measure_headless(presets: list[str], run_bytes: int, window: float, result: dict) -> None:
    """The baseline: the classroom's presets headless, in as many processes, over ``window`` seconds; their
    steps/s, the CPU they used together (% of one core) and their errors."""
    rates, cpus, errors = headless_rates(presets, run_bytes, window)
    result["headless"], result["headless_cpu"] = rates, 100 * sum(c for c in cpus if c == c)
    result["headless_errors"] = [f"{presets[i]}: {e}" for i, e in enumerate(errors) if e]
