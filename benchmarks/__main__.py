"""Run benchmarks by name: ``python -m benchmarks [name ...] [--option value ...]`` (default: all).

``python -m benchmarks --help`` lists them, ``python -m benchmarks NAME --help``
shows NAME's options with their defaults. Each option goes to the named
benchmarks that declare it (an option none of them declares is refused before
anything runs), so ``python -m benchmarks opad_ising opad_bvs --steps 1000``
shortens both.
"""

from __future__ import annotations

import ast
import importlib
import sys
from pathlib import Path

#: Each benchmark's name and the group (sub-package) it lives in, in the order ``python -m benchmarks`` runs them.
GROUPS = {"core_throughput": "costs", "dashboard_live": "serving", "lsb_cost": "costs", "lsb_segmentation": "papers",
          "lsb_rbm": "papers", "lsb_markov": "papers", "opad_ising": "papers", "opad_bvs": "papers",
          "opad_dag": "papers", "exact_enumeration": "papers", "intracluster_paper": "papers",
          "intracluster_cost": "costs", "kernels_vs_reference": "costs", "paper_claims": "claims",
          "discs_ising": "papers", "classroom": "serving", "sweep_scaling": "costs", "bakeoff": "costs",
          "discs_vs_ours": "costs"}
BENCHMARKS = list(GROUPS)


def module_name(name: str) -> str:
    """The module of benchmark ``name`` (its ``main(argv)`` runs it)."""
    return f"benchmarks.{GROUPS[name]}.{name}"
HELP = ("-h", "--help")


def _tree(name: str) -> ast.Module:
    """Benchmark ``name``'s module (or the package's ``__init__``), parsed from its source."""
    path = Path(__file__).parent / (f"{GROUPS[name]}/{name}.py" if name in GROUPS else f"{name}.py")
    return ast.parse(path.read_text(encoding="utf-8"))


def summary(name: str) -> str:
    """The first line of benchmark ``name``'s docstring (read from its source, not imported)."""
    return (ast.get_docstring(_tree(name)) or "").splitlines()[0]


def _shared_defaults(name: str) -> list[str]:
    """The keys of the dictionary literal ``name`` in ``benchmarks/__init__.py`` (e.g. ``SWEEP_DEFAULTS``)."""
    for node in ast.walk(_tree("__init__")):
        if (isinstance(node, ast.Assign) and any(getattr(target, "id", "") == name for target in node.targets)
                and isinstance(node.value, ast.Dict)):
            return [key.value for key in node.value.keys]
    return []


def declared_options(name: str) -> set[str]:
    """The ``--options`` benchmark ``name`` declares: the keywords of its ``arguments("name", argv, ...)`` call
    (``**SWEEP_DEFAULTS`` stands for the keys of that dictionary in ``benchmarks/__init__.py``)."""
    for node in ast.walk(_tree(name)):
        if (isinstance(node, ast.Call) and getattr(node.func, "id", "") == "arguments" and node.args
                and isinstance(node.args[0], ast.Constant) and node.args[0].value == name):
            keys = [key for keyword in node.keywords for key in (
                [keyword.arg] if keyword.arg else _shared_defaults(getattr(keyword.value, "id", "")))]
            return {"--" + key.replace("_", "-") for key in keys if key != "helps"}
    return set()


def listing() -> str:
    width = max(map(len, BENCHMARKS))
    lines = ["usage: python -m benchmarks [name ...] [--option value ...]"]
    for group in dict.fromkeys(GROUPS.values()):
        lines += ["", f"{group} (benchmarks/{group}/):"]
        lines += [f"  {name:<{width}}  {summary(name)}" for name in BENCHMARKS if GROUPS[name] == group]
    lines += ["", "python -m benchmarks NAME --help shows NAME's options and their defaults.",
              "Without a name every benchmark runs at its default (paper) size, one after the other: several hours."]
    return "\n".join(lines)


def routed(names: list[str], options: list[str]) -> dict[str, list[str]]:
    """The options each named benchmark gets: those it declares (``--key value`` pairs, or ``--key=value``)."""
    pairs, i = [], 0
    while i < len(options):
        if "=" in options[i] or options[i] in HELP or i + 1 == len(options) or options[i + 1].startswith("--"):
            pairs.append(options[i:i + 1])
            i += 1
        else:
            pairs.append(options[i:i + 2])
            i += 2
    declared = {name: declared_options(name) for name in names}
    out = {name: [] for name in names}
    for pair in pairs:
        key = pair[0].split("=", 1)[0]
        takers = [name for name in names if key in declared[name] or key in HELP]
        if not takers:
            raise SystemExit(f"option {key} is not an option of {', '.join(names)}; "
                             f"python -m benchmarks NAME --help lists a benchmark's options")
        for name in takers:
            out[name] += pair
    return out


def main(argv: list[str]) -> None:
    split = next((i for i, arg in enumerate(argv) if arg.startswith("-")), len(argv))
    names, options = argv[:split], argv[split:]
    if not names and any(option in HELP for option in options):
        print(listing())
        return
    unknown = sorted(set(names) - set(BENCHMARKS))
    if unknown:
        raise SystemExit(f"unknown benchmark(s) {unknown}; python -m benchmarks --help lists them")
    if not names:
        print(f"Running all {len(BENCHMARKS)} benchmarks at their default sizes: several hours on two cores "
              f"(python -m benchmarks --help lists them, to run one).", flush=True)
    for name, own_options in routed(names or BENCHMARKS, options).items():
        print(f"== {name} ==")
        importlib.import_module(module_name(name)).main(own_options)


if __name__ == "__main__":
    main(sys.argv[1:])
