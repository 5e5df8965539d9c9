"""Benchmarks: speed and cost measured in one run and printed as tables and ratios."""

from __future__ import annotations

import argparse
import time


def arguments(name: str, argv, *, helps: dict[str, str] | None = None, **defaults) -> argparse.Namespace:
    """Parse ``--option value`` arguments of benchmark ``name``; each keyword is an option and its default.

    ``helps`` maps some of those keywords to their ``--help`` text.
    """
    parser = argparse.ArgumentParser(prog=f"python -m benchmarks {name}")
    for key, value in defaults.items():
        text = (helps or {}).get(key)
        parser.add_argument(f"--{key.replace('_', '-')}", type=type(value), default=value,
                            help=None if text is None else f"{text} (default: %(default)s)")
    return parser.parse_args(argv or [])


def cpu_seconds_per_step(sampler, steps: int, repeats: int, record: bool = False) -> float:
    """Best-of-``repeats`` CPU seconds per ``sampler.step(record)`` over ``steps`` steps, after ``steps // 5`` warm-up steps.

    CPU time of this process (``time.process_time``): on a shared machine, time spent waiting for a core does not count.
    """
    for _ in range(max(1, steps // 5)):
        sampler.step(record)
    best = float("inf")
    for _ in range(repeats):
        start = time.process_time()
        for _ in range(steps):
            sampler.step(record)
        best = min(best, (time.process_time() - start) / steps)
    return best
