"""Benchmarks: speed and cost measured in one run and printed as tables and ratios."""

from __future__ import annotations

import argparse


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
