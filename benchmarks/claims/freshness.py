"""Which sources each audited claim was measured on: a digest per claim module, stale exactly when they change.

A claim module's claims (``benchmarks.claims.paper_claims.PAPERS``) share its
runs, so they share one digest: the SHA-256 of the path and bytes of every
file in its **sources**, which are

* the project modules reached (``reach``) from the claim module, from the
  module of each of its runs' classes (``sweeps.RunSpec``, or a task such as
  ``benchmarks.claims.lsb.AuthorsRun``) and from the modules of the samplers
  and targets its runs' configurations name (``sampler``, ``target``,
  ``compare_sampler``, looked up in the live registries);
* the data files those modules name under ``assets/`` (``data_files``).

Project modules are the modules under the project root, whatever their
package (``samplers``, ``targets``, ``engine``, ``sweeps``, ``benchmarks``…);
third-party ones do not count. A module reaches, read statically from its
source (``ast``):

* every project module it imports, wherever the import stands (in a function
  too), with the package ``__init__`` above it, which Python runs first
  (``from a import b`` also reaches the submodule ``a.b`` when there is one);
* the module of every registered sampler or target it names: a string equal
  to a registry name (``samplers.make("gibbs", …)``, a configuration's
  ``sampler``) or a name equal to a registered class's (``from samplers import
  Gibbs``, ``samplers.Gibbs``).

One import is not followed: a package ``__init__``'s import of registered
classes only (``samplers/__init__.py`` and ``targets/__init__.py`` import every
family to fill their registries). A family is reached by the names above, so a
new sampler module, or an edit of one no claim names, stales no claim; editing
``samplers/__init__.py`` or ``targets/__init__.py`` themselves stales every claim
that imports them. Left out by this rule: what importing a family no claim
names does besides defining it (the families define classes and their compiled
kernels, nothing else), and the authors' reference code in
``../shared/reference``, which is not part of the project.

A module's data files are the paths it builds under ``assets/`` from string
parts (``… / "assets" / "bvs" / "diabetes.csv"``, through module constants such
as ``ASSETS = … / "assets" / "markov"``; a part that is not a literal, such as
``f"{name}.uai"``, ends the path there): the most specific of the paths it
names, every file of a directory. The audit's own record (``RECORD``) is never
a source.

``digests(runs_by_module)`` gives each claim module's digest; ``root`` points it
at another copy of the project (the registries stay this process's).
"""

from __future__ import annotations

import ast
import functools
import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import targets
from samplers.registry import SAMPLERS

ROOT = Path(__file__).resolve().parents[2]
#: The project's data folder, relative to the root.
ASSETS = "assets"
#: The audit's record: written from the sources, never one of them.
RECORD = f"{ASSETS}/paper_claims.json"


@dataclass(frozen=True)
class Source:
    """What one module's source says: the modules it imports (but not a package ``__init__``'s imports of
    registered classes only), the strings and the identifiers it names, and the paths under ``assets/``."""

    imports: tuple[str, ...]
    strings: frozenset[str]
    identifiers: frozenset[str]
    assets: frozenset[tuple[str, ...]]


@dataclass(frozen=True)
class Registered:
    """The module of every registered sampler and target, by registry name and by class name."""

    by_name: dict[str, str]
    by_class: dict[str, str]

    @classmethod
    def now(cls) -> Registered:
        """The registries as this process has them."""
        classes = {name: registry.cls(name) for registry in (SAMPLERS, targets.TARGETS) for name in registry.names()}
        return cls({name: found.__module__ for name, found in classes.items()},
                   {found.__name__: found.__module__ for found in classes.values()})

    def modules(self, source: Source) -> set[str]:
        """The modules of the registered classes ``source`` names."""
        return ({self.by_name[item] for item in source.strings & self.by_name.keys()}
                | {self.by_class[item] for item in source.identifiers & self.by_class.keys()})


def module_path(name: str, root: Path) -> Path | None:
    """The file of project module ``name`` under ``root`` (a package's ``__init__.py``), or None."""
    base = root.joinpath(*name.split("."))
    return next((path for path in (base.with_suffix(".py"), base / "__init__.py") if path.is_file()), None)


@functools.lru_cache(maxsize=1024)
def read_source(name: str, is_package: bool, text: bytes, classes: frozenset[tuple[str, str]]) -> Source:
    """Parse the source ``text`` of module ``name`` (a package's ``__init__`` if ``is_package``; ``classes``: the
    registered classes' (name, module) pairs): its imports (absolute names), strings, identifiers and asset paths.
    Cached: an unchanged source is parsed once per process."""
    tree = ast.parse(text, filename=name)
    package = name if is_package else name.rpartition(".")[0]
    imports, strings, identifiers = [], set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imports += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parents = package.split(".")
                base = ".".join(parents[:len(parents) + 1 - node.level] + ([base] if base else []))
            bound = [alias.name for alias in node.names]
            if not is_package or any((item, base) not in classes for item in bound):
                imports += [base, *(f"{base}.{item}" for item in bound if item != "*")]
                identifiers.update(bound)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            strings.add(node.value)
        elif isinstance(node, ast.Attribute):
            identifiers.add(node.attr)
    assets = _asset_paths(tree) if ASSETS.encode() in text else frozenset()
    return Source(tuple(imports), frozenset(strings), frozenset(identifiers), assets)


def _asset_paths(tree: ast.Module) -> frozenset[tuple[str, ...]]:
    """The most specific paths under ``assets/`` the module builds (as parts), module constants followed."""
    constants: dict[str, tuple[tuple[str, ...], bool]] = {}
    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            parts = _parts(node.value, constants)
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                if parts is not None and isinstance(target, ast.Name):
                    constants[target.id] = parts
    named = {found[0] for found in (_parts(node, constants) for node in ast.walk(tree)) if found is not None}
    return frozenset(parts for parts in named
                     if not any(len(other) > len(parts) and other[:len(parts)] == parts for other in named))


def _parts(node: ast.AST, constants: Mapping) -> tuple[tuple[str, ...], bool] | None:
    """The parts under ``assets/`` that expression ``node`` names and whether a literal part may still follow,
    or None when it names no such path."""
    if isinstance(node, ast.Name):
        return constants.get(node.id)
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith(f"{ASSETS}/"):
        return tuple(part for part in node.value.split("/")[1:] if part), True
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div)):
        return None
    left, right = _parts(node.left, constants), node.right
    literal = isinstance(right, ast.Constant) and isinstance(right.value, str)
    if left is None:
        return ((), True) if literal and right.value == ASSETS else None
    parts, open_ = left
    return (parts + tuple(right.value.split("/")), True) if literal and open_ else (parts, False)


def data_files(parts: Iterable[tuple[str, ...]], root: Path) -> set[Path]:
    """The files at the asset paths ``parts`` under ``root`` (every file of a directory), the record excepted."""
    files = set()
    for path in (root.joinpath(ASSETS, *item) for item in parts):
        files.update([path] if path.is_file() else (found for found in path.rglob("*") if found.is_file()))
    return {path for path in files if path.relative_to(root).as_posix() != RECORD}


class Sources:
    """The sources of modules under one root, each module's source read once; ``registered`` defaults to the
    registries of this process."""

    def __init__(self, root: Path = ROOT, registered: Registered | None = None):
        self.root = root
        self.registered = registered or Registered.now()
        self._classes = frozenset(self.registered.by_class.items())
        self._read: dict[str, Source | None] = {}

    def source(self, name: str) -> Source | None:
        """Module ``name``'s source, or None when it is not a project module."""
        if name not in self._read:
            path = module_path(name, self.root)
            self._read[name] = None if path is None else read_source(name, path.name == "__init__.py",
                                                                     path.read_bytes(), self._classes)
        return self._read[name]

    def reach(self, names: Iterable[str]) -> set[str]:
        """The project modules reached from ``names`` (see the module docstring), those included."""
        reached, pending = set(), [*names]
        while pending:
            name = pending.pop()
            if name in reached or self.source(name) is None:
                continue
            reached.add(name)
            parts = name.split(".")
            pending += [".".join(parts[:end]) for end in range(1, len(parts))]  # the packages above it
            pending += [*self.source(name).imports, *self.registered.modules(self.source(name))]
        return reached

    def files(self, names: Iterable[str]) -> list[Path]:
        """The sources of modules ``names``: the files of the modules they reach and their data files."""
        modules = self.reach(names)
        files = {module_path(name, self.root) for name in modules}
        files |= data_files((parts for name in modules for parts in self.source(name).assets), self.root)
        return sorted(files)

    def digest(self, names: Iterable[str]) -> str:
        """SHA-256 of the sources of modules ``names``: every file's path relative to the root, and its bytes."""
        digest = hashlib.sha256()
        for path in self.files(names):
            digest.update(path.relative_to(self.root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
        return digest.hexdigest()

    def run_modules(self, runs: Iterable) -> set[str]:
        """The modules the runs start from: each run's class's, and those of the samplers and targets its
        configuration (``config``, if it has one) names."""
        modules = set()
        for run in runs:
            modules.add(type(run).__module__)
            config = getattr(run, "config", None)
            if config is not None:
                modules.update(self.registered.by_name[name]
                               for name in (config.sampler, config.target, config.compare_sampler) if name)
        return modules


def digests(runs_by_module: Mapping[str, Iterable], root: Path = ROOT) -> dict[str, str]:
    """Each claim module's digest (by module name), from the module and its runs (``audit_runs``)."""
    sources = Sources(root)
    return {module: sources.digest({module, *sources.run_modules(runs)}) for module, runs in runs_by_module.items()}
