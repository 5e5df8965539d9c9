"""Benchmarks: speed and cost measured in one run and printed as tables and ratios."""

from __future__ import annotations

import argparse


def arguments(name: str, argv, **defaults) -> argparse.Namespace:
    """Parse ``--option value`` arguments of benchmark ``name``; each keyword is an option and its default."""
    parser = argparse.ArgumentParser(prog=f"python -m benchmarks {name}")
    for key, value in defaults.items():
        parser.add_argument(f"--{key.replace('_', '-')}", type=type(value), default=value)
    return parser.parse_args(argv or [])
