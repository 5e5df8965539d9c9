"""Run benchmarks by name: ``python -m benchmarks [name ...]`` (default: all)."""

from __future__ import annotations

import importlib
import sys

BENCHMARKS = ["core_throughput", "dashboard_live"]


def main(names: list[str]) -> None:
    unknown = sorted(set(names) - set(BENCHMARKS))
    if unknown:
        raise SystemExit(f"unknown benchmark(s) {unknown}; available: {BENCHMARKS}")
    for name in names or BENCHMARKS:
        print(f"== {name} ==")
        importlib.import_module(f"benchmarks.{name}").main()


if __name__ == "__main__":
    main(sys.argv[1:])
