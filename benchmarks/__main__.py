"""Run benchmarks by name: ``python -m benchmarks [name ...] [--option value ...]`` (default: all).

Options after the names go to every named benchmark (e.g. ``--seeds 3``).
"""

from __future__ import annotations

import importlib
import sys

BENCHMARKS = ["core_throughput", "dashboard_live", "lsb_cost", "lsb_segmentation", "lsb_rbm", "lsb_markov",
              "opad_ising", "opad_bvs", "opad_dag", "exact_enumeration", "intracluster_paper", "intracluster_cost",
              "kernels_vs_reference", "paper_claims", "discs_ising",
              "classroom"]


def main(argv: list[str]) -> None:
    split = next((i for i, arg in enumerate(argv) if arg.startswith("--")), len(argv))
    names, options = argv[:split], argv[split:]
    unknown = sorted(set(names) - set(BENCHMARKS))
    if unknown:
        raise SystemExit(f"unknown benchmark(s) {unknown}; available: {BENCHMARKS}")
    for name in names or BENCHMARKS:
        print(f"== {name} ==")
        importlib.import_module(f"benchmarks.{name}").main(options)


if __name__ == "__main__":
    main(sys.argv[1:])
