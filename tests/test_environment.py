"""The set-up files agree with each other.

requirements.txt (+ requirements-dev.txt) and environment.yml must list the same
packages at the same pinned versions; torch must stay pinned to the CPU wheel
that pip finds on disk; and the README's quick start must be exactly the two
set-up commands.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent

_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*={1,2}\s*([^\s;,]+)\s*$")


def _normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _parse_pin(spec: str, where: str) -> tuple[str, str]:
    """``name==version`` (or conda's ``name=version``) -> (normalised name, version)."""
    match = _PIN.match(spec.strip())
    assert match, f"{where}: {spec!r} is not pinned to one exact version"
    return _normalise(match.group(1)), match.group(2)


def read_requirements(path: Path, _seen: frozenset[Path] = frozenset()) -> dict[str, str]:
    """Pins of a requirements file, following ``-r`` includes."""
    path = path.resolve()
    assert path not in _seen, f"-r cycle at {path}"
    pins: dict[str, str] = {}
    for raw in path.read_text().splitlines():
        line = raw.split(" #", 1)[0].strip()
        if not line or line.startswith("#"):
            continue
        include = re.match(r"^(?:-r|--requirement)[\s=]+(\S+)$", line)
        if include:
            for name, version in read_requirements(path.parent / include.group(1), _seen | {path}).items():
                assert name not in pins, f"{name} listed twice"
                pins[name] = version
            continue
        assert not line.startswith("-"), f"{path.name}: unexpected option line {line!r}"
        name, version = _parse_pin(line, path.name)
        assert name not in pins, f"{path.name}: {name} listed twice"
        pins[name] = version
    return pins


def read_environment(path: Path) -> tuple[dict[str, str], dict[str, str]]:
    """(pins of the packages, pins of python/pip themselves) from a conda environment file."""
    env = yaml.safe_load(path.read_text())
    pins: dict[str, str] = {}
    base: dict[str, str] = {}

    def add(spec: str) -> None:
        name, version = _parse_pin(spec, path.name)
        assert name not in pins, f"{path.name}: {name} listed twice"
        pins[name] = version

    for dep in env["dependencies"]:
        if isinstance(dep, dict):
            assert set(dep) == {"pip"}, f"{path.name}: unexpected entry {dep!r}"
            for spec in dep["pip"]:
                add(spec)
        elif _normalise(re.split(r"[=<>! ]", dep, maxsplit=1)[0]) in {"python", "pip"}:
            name, _, version = dep.partition("=")
            base[_normalise(name)] = version.lstrip("=")
        else:
            add(dep)
    return pins, base


@pytest.fixture(scope="module")
def requirements() -> dict[str, str]:
    return read_requirements(ROOT / "requirements-dev.txt")


def test_requirements_dev_includes_runtime(requirements):
    runtime = read_requirements(ROOT / "requirements.txt")
    assert runtime.items() <= requirements.items()


def test_environment_yml_matches_requirements(requirements):
    conda, _ = read_environment(ROOT / "environment.yml")
    assert sorted(conda) == sorted(requirements), "package names differ"
    differing = {n: (requirements[n], conda[n]) for n in requirements if conda[n] != requirements[n]}
    assert not differing, f"versions differ (requirements, environment.yml): {differing}"


def test_environment_yml_uses_python_311_and_pip():
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    _, base = read_environment(ROOT / "environment.yml")
    assert base.get("python") == "3.11"
    assert "pip" in base
    assert env.get("name") == "discrete-sampler-explorer"


def test_torch_is_pinned_to_the_local_cpu_wheel(requirements):
    runtime = read_requirements(ROOT / "requirements.txt")
    conda, _ = read_environment(ROOT / "environment.yml")
    assert runtime.get("torch") == "2.13.0"
    assert conda.get("torch") == "2.13.0"


def _code_blocks(markdown: str) -> list[tuple[int, str]]:
    """(start offset, body) of each fenced code block."""
    return [(m.start(), m.group(1)) for m in re.finditer(r"^```[^\n]*\n(.*?)^```", markdown, re.M | re.S)]


def _commands(block: str) -> list[str]:
    lines = (line.split("#", 1)[0].strip() for line in block.splitlines())
    return [re.sub(r"^\$\s*", "", line) for line in lines if line]


def test_readme_quick_start_is_the_two_set_up_commands():
    readme = (ROOT / "README.md").read_text()
    heading = re.search(r"^#+\s*Quick start\s*$", readme, re.M | re.I)
    assert heading, "README.md has no 'Quick start' section"
    blocks = _code_blocks(readme)
    quick = [body for start, body in blocks if start > heading.end()]
    assert quick, "no code block after 'Quick start'"
    assert _commands(quick[0]) == ["make serve", "make test"]

    # No other code block offers another way to set up or run the project.
    set_up = re.compile(r"^(make|pip3?|python3?\s+-m\s+(pip|venv)|conda|mamba|uv|poetry|panel\s+serve)\b")
    others = [cmd for start, body in blocks if body != quick[0] for cmd in _commands(body) if set_up.match(cmd)]
    assert not others, f"README.md has set-up commands outside the quick start: {others}"
    assert "http://localhost:5006/app" in readme
