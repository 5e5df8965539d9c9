"""The layout's rules (ARCHITECTURE.md), read from the imports of every module, and that each rule catches a breach.

Packages sit on floors: ``targets`` < ``samplers`` < ``engine`` < ``sweeps`` <
``dashboard`` < ``benchmarks``. A module imports only from its floor and the
floors below it, and no modules import each other round a circle (a module
that imports the package listing it, as a registry, closes one). Views import nothing of the library
but ``engine.snapshot`` (the views' base class also holds the session's
``RunClient``), and no library package imports Panel, Bokeh or HoloViews. Lazy imports
inside functions count; imports under ``if TYPE_CHECKING:`` (annotations only)
do not.
"""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parents[1]
#: Each first-party package's floor: a module may import packages on its floor or below.
FLOORS = {"targets": 0, "samplers": 1, "engine": 2, "sweeps": 3, "dashboard": 4, "benchmarks": 5}
#: What a view module may import of the library, and the one view module that also holds the run's client.
VIEWS_IMPORT = {"engine.snapshot"}
VIEWS_BASE_IMPORT = {"engine.snapshot", "engine.client"}
#: Packages the library (everything below ``dashboard``) never imports.
PAGE_ONLY = ("panel", "bokeh", "holoviews")


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules(root: Path) -> dict[str, Path]:
    """Every first-party module under ``root`` by its dotted name."""
    return {module_name(path, root): path for package in FLOORS for path in sorted((root / package).rglob("*.py"))}


def _type_checking_only(node: ast.If) -> bool:
    return isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING" or (
        isinstance(node.test, ast.Attribute) and node.test.attr == "TYPE_CHECKING")


def imports(name: str, path: Path, known: set[str]) -> list[tuple[str, int]]:
    """(imported module, line) of every import in a module, relative ones resolved; ``from X import y`` names the
    module ``X.y`` when there is one, else ``X``."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []

    def visit(node):
        if isinstance(node, ast.If) and _type_checking_only(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.extend((alias.name, node.lineno) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([node.module] if node.module else []))
            for alias in node.names:
                child = f"{base}.{alias.name}"
                found.append((child if child in known else base, node.lineno))
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text(encoding="utf-8")))
    return list(dict.fromkeys(found))


def violations(root: Path = ROOT) -> list[str]:
    """Every breach of the layout's rules under ``root``, one sentence each."""
    found = modules(root)
    known = set(found)
    graph = nx.DiGraph()
    out = []
    for name, path in found.items():
        top = name.split(".")[0]
        for target, line in imports(name, path, known):
            where = f"{path.relative_to(root)}:{line}"
            target_top = target.split(".")[0]
            if target_top in FLOORS and FLOORS[target_top] > FLOORS[top]:
                out.append(f"{where}: {name} imports {target}, a floor above it ({target_top} over {top})")
            if name.startswith("dashboard.views.") and target_top in FLOORS and target_top != "dashboard":
                allowed = VIEWS_BASE_IMPORT if name == "dashboard.views.base" else VIEWS_IMPORT
                if target not in allowed:
                    out.append(f"{where}: the view {name} imports {target}; views read only {sorted(allowed)}")
            if target_top in PAGE_ONLY and FLOORS[top] < FLOORS["dashboard"]:
                out.append(f"{where}: {name} imports {target}, which only the dashboard may")
            if target in known and target != name:
                graph.add_edge(name, target)
    for group in sorted(sorted(group) for group in nx.strongly_connected_components(graph) if len(group) > 1):
        cycle = [edge[0] for edge in nx.find_cycle(graph.subgraph(group), source=group[0])]
        out.append("modules that import each other round a circle: " + " → ".join(cycle + cycle[:1]))
    return out


def test_every_import_goes_down_the_floors_with_no_circle_and_views_read_only_snapshots():
    assert violations() == []


def _planted(tmp_path: Path, file: str, line: str) -> list[str]:
    root = tmp_path / "tree"
    for package in FLOORS:
        shutil.copytree(ROOT / package, root / package, ignore=shutil.ignore_patterns("__pycache__", "results"))
    path = root / file
    path.write_text(path.read_text(encoding="utf-8") + f"\n{line}\n", encoding="utf-8")
    return violations(root)


def test_a_sampler_importing_the_dashboard_is_caught(tmp_path):
    found = _planted(tmp_path, "samplers/base.py", "import dashboard.views.traces")
    assert found[0] == (f"samplers/base.py:{_last_line(tmp_path, 'samplers/base.py')}: samplers.base imports "
                        "dashboard.views.traces, a floor above it (dashboard over samplers)")


def test_a_view_importing_a_sampler_module_is_caught(tmp_path):
    found = _planted(tmp_path, "dashboard/views/traces.py", "from samplers.base import Sampler")
    assert len(found) == 1 and "the view dashboard.views.traces imports samplers.base" in found[0]


def test_a_library_module_drawing_with_holoviews_is_caught(tmp_path):
    found = _planted(tmp_path, "sweeps/bake_off/report.py", "def page():\n    import holoviews.plotting.bokeh")
    assert found == [f"sweeps/bake_off/report.py:{_last_line(tmp_path, 'sweeps/bake_off/report.py')}: "
                     "sweeps.bake_off.report imports holoviews.plotting.bokeh, which only the dashboard may"]


def test_a_lazy_import_of_the_package_that_lists_a_module_and_a_circle_are_caught(tmp_path):
    found = _planted(tmp_path / "lazy", "samplers/tempering.py", "def registry():\n    from samplers import make")
    assert found == ["modules that import each other round a circle: samplers → samplers.tempering → samplers"]
    found = _planted(tmp_path / "circle", "engine/numbers.py", "from engine.snapshot import number")
    assert any(f.startswith("modules that import each other round a circle") and "engine.numbers" in f
               for f in found)


def test_an_import_for_annotations_only_is_no_arrow(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from dashboard.app import App\n"
                     "def f():\n    import engine.config\n", encoding="utf-8")
    assert [target for target, _ in imports("samplers.probe", probe, set())] == ["typing", "engine.config"]


def _last_line(tmp_path: Path, file: str) -> int:
    return len((tmp_path / "tree" / file).read_text(encoding="utf-8").splitlines())
