"""Sweeps on the command line: ``python -m sweeps bakeoff --target my_model.uai --budget 1e7 [--option value ...]``.

``bakeoff`` runs every applicable sampler on a target (``sweeps.bakeoff``):
``--target`` is a ``.uai`` Markov network, a ``.npz``/``.csv`` coupling matrix,
or a registered target's name (its parameters as JSON in ``--target-params``).
It prints the ranked table with intervals and the verdict, and writes
``bakeoff.md`` (``--report``, default: beside the stored runs).
``python -m sweeps bakeoff --help`` lists the options and their defaults.
Its figures are a page, drawn on the page floor: ``python -m
dashboard.bakeoff_page`` with the same options writes ``bakeoff.html`` too
(stored runs are read, not computed again).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .bake_off.phases import AXES

COMMANDS = ("bakeoff",)


def bakeoff_arguments(argv: list[str], prog: str = "python -m sweeps bakeoff") -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog=prog, description="Every applicable sampler on "
                                     "one target, equal budgets, a ranking with intervals and a strict verdict.")
    add = parser.add_argument
    add("--target", required=True, help="a .uai, .npz or .csv file, or a registered target's name")
    add("--target-params", default="{}", help="a registered target's parameters, as JSON (default: %(default)s)")
    add("--samplers", default="all", help="'all' or a comma-separated list of sampler names (default: %(default)s)")
    add("--budget", type=float, default=1e5, help="budget of every measured run on the axis (default: %(default)g)")
    add("--axis", choices=AXES, default="evaluations", help="what the budget counts (default: %(default)s)")
    add("--seeds", type=int, default=5, help="independent seeds of every sampler; intervals are over them "
                                             "(default: %(default)s)")
    add("--chains", type=int, default=12, help="chains per run (default: %(default)s)")
    add("--statistic", default="log_prob", help="the statistic whose ESS, R̂ and equilibrium are measured "
                                                "(default: %(default)s)")
    add("--seed", type=int, default=0, help="seed of the sweep: every run's stream comes from it and the run's hash "
                                            "(default: %(default)s)")
    add("--workers", type=int, default=0, help="worker processes of a local Dask cluster (0: run here, one run after "
                                               "the other; default: %(default)s)")
    add("--scheduler", default="", help="address of an existing Dask scheduler, e.g. tcp://host:8786 (then "
                                        "--workers is ignored)")
    add("--results", default="", help="directory of the stored runs (default: benchmarks/results); stored runs are "
                                      "not computed again")
    add("--report", default="", help="directory of the report, bakeoff.md (and bakeoff.html, the page's) "
                                     "(default: beside the stored runs)")
    return parser.parse_args(argv)


def bakeoff_command(argv: list[str], prog: str = "python -m sweeps bakeoff") -> tuple:
    """Run the bake-off ``argv`` asks for, print its report and write it (``bakeoff.md``); the result and the
    report's directory."""
    from . import bakeoff

    args = bakeoff_arguments(argv, prog)
    samplers = "all" if args.samplers == "all" else [name.strip() for name in args.samplers.split(",")]
    result = bakeoff(args.target, samplers, args.budget, args.axis, args.seeds, chains=args.chains,
                     statistic=args.statistic, target_params=json.loads(args.target_params), seed=args.seed,
                     results=args.results or None, workers=args.workers, scheduler=args.scheduler or None)
    print(result)
    print("written:", result.save(args.report or None))
    return result, Path(args.report or result.store.directory)


def main(argv: list[str]) -> None:
    if not argv or argv[0] not in COMMANDS:
        raise SystemExit(f"usage: python -m sweeps {{{','.join(COMMANDS)}}} [--option value ...]; "
                         f"python -m sweeps bakeoff --help lists the options")
    bakeoff_command(argv[1:])


if __name__ == "__main__":
    main(sys.argv[1:])
