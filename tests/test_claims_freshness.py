"""Which claims an edit stales (``benchmarks.claims.freshness``): the rule on a small tree, then the audit's claim
modules on a copy of the project, edited there (never here)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from types import ModuleType

import pytest

from benchmarks.claims import paper_claims
from benchmarks.claims.claim import NO_AUTHORS_CODE, Claim, Evidence
from benchmarks.claims.freshness import ROOT, Registered, Sources

LSB, MODELS, INTRACLUSTER, OPAD = (f"benchmarks.claims.{name}" for name in ("lsb", "lsb_models", "intracluster",
                                                                            "opad"))


@pytest.fixture(scope="module")
def settings() -> dict:
    """The quick audit's settings (its runs name the same samplers and targets as the full audit's)."""
    args = paper_claims.audit_arguments(["--quick", "1"])
    return {key: value for key, value in vars(args).items() if key not in paper_claims.MACHINE_SETTINGS}


@pytest.fixture
def tree(tmp_path) -> Path:
    """A copy of the project's packages and assets."""
    for item in ROOT.iterdir():
        if item.name == "assets" or (item / "__init__.py").is_file():
            shutil.copytree(item, tmp_path / item.name, ignore=shutil.ignore_patterns("__pycache__", "results"))
    return tmp_path


def stale(settings: dict, tree: Path, edit) -> set[str]:
    """The claim modules whose digest ``edit(tree)`` changes."""
    before = paper_claims.current_sources(settings, tree)
    edit(tree)
    after = paper_claims.current_sources(settings, tree)
    assert before.keys() == after.keys() == {LSB, MODELS, INTRACLUSTER, OPAD}
    return {module for module in before if before[module] != after[module]}


def append(path: str, text: str = "\n# edited\n"):
    """An edit: ``text`` appended to the file at ``path`` (relative to the tree)."""
    def edit(tree: Path) -> None:
        with open(tree / path, "a", encoding="utf-8") as file:
            file.write(text)
    return edit


def test_a_new_sampler_module_no_claim_reaches_stales_no_claim(settings, tree):
    new = "class Unused:\n    registry_name = 'unused'\n"
    assert stale(settings, tree, append("samplers/local/unused.py", new)) == set()
    assert stale(settings, tree, append("targets/unused.py", new)) == set()


def test_an_edited_module_stales_the_claims_whose_runs_reach_it_and_no_other(settings, tree):
    assert stale(settings, tree, append("samplers/dag/partition_mcmc.py")) == {OPAD}  # a sampler of OPAD's runs
    assert stale(settings, tree, append("benchmarks/papers/intracluster_paper.py")) == {INTRACLUSTER}
    assert stale(settings, tree, append("targets/gabor.py")) == {INTRACLUSTER}  # named by a trial: "gabor_rbm"
    assert stale(settings, tree, append("benchmarks/papers/lsb_runs.py")) == {LSB, MODELS, INTRACLUSTER}
    assert stale(settings, tree, append("sweeps/perform.py")) == {LSB, MODELS, INTRACLUSTER, OPAD}
    assert stale(settings, tree, append("dashboard/claims.py")) == set()


def test_a_changed_data_file_stales_the_claims_whose_targets_read_it(settings, tree):
    assert OPAD in stale(settings, tree, append("assets/bvs/diabetes.csv", "0\n"))  # OPAD's BVS runs
    assert MODELS in stale(settings, tree, append(f"assets/markov/{_network()}", "\n"))  # the Markov networks
    assert MODELS in stale(settings, tree, lambda root: (root / "assets/rbm_digits.npz").write_bytes(b"PK"))
    assert stale(settings, tree, append("assets/notes.txt", "read by nothing\n")) == set()
    assert stale(settings, tree, append("assets/paper_claims.json", "\n")) == set()  # the record is no source


def test_the_targets_data_files_are_their_sources():
    sources = Sources()
    found = {path.relative_to(ROOT).as_posix() for path in sources.files(["targets.rbm", "targets.bvs",
                                                                          "targets.markov_network"])}
    assert {"assets/rbm_digits.npz", "assets/bvs/diabetes.csv", f"assets/markov/{_network()}"} <= found
    assert not any(path.startswith("assets/") for path in (
        path.relative_to(ROOT).as_posix() for path in sources.files(["targets.pairwise"])))


def test_the_rule_on_a_small_tree(tmp_path):
    """Imports anywhere (in a function too, relative ones), the packages above a module, registered classes by
    name, a registry package's imports of its classes not followed, and asset paths through constants."""
    files = {
        "pkg/__init__.py": "from pkg.kinds import Gibbs\nfrom .helpers import helper\n",
        "pkg/kinds.py": "class Gibbs:\n    pass\n",
        "pkg/helpers.py": "def helper():\n    from ..other import thing\n",
        "other.py": "from pathlib import Path\nDATA = Path(__file__).parent / 'assets' / 'data'\n"
                    "def thing(name):\n    return (DATA / f'{name}.txt').read_text()\n",
        "user.py": "import pkg.kinds\n", "by_name.py": "CONFIG = {'sampler': 'gibbs'}\n",
        "assets/data/a.txt": "a", "assets/data/sub/b.txt": "b", "assets/elsewhere.txt": "c",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    sources = Sources(tmp_path, Registered({"gibbs": "pkg.kinds"}, {"Gibbs": "pkg.kinds"}))
    assert sources.reach(["pkg"]) == {"pkg", "pkg.helpers", "other"}  # not pkg.kinds: registered, not named
    assert sources.reach(["user"]) == {"user", "pkg", "pkg.kinds", "pkg.helpers", "other"}
    assert sources.reach(["by_name"]) == {"by_name", "pkg.kinds", "pkg", "pkg.helpers", "other"}
    assert {path.relative_to(tmp_path).as_posix() for path in sources.files(["other"])} == {
        "other.py", "assets/data/a.txt", "assets/data/sub/b.txt"}


def test_recording_measures_again_only_the_stale_claim_modules(tmp_path, monkeypatch):
    measured, sources = [], {"fake.a": "1" * 64, "fake.b": "2" * 64}

    def module(name: str):
        def claims(args, store):
            measured.append(name)
            return [Claim(name, "§1", "quote", "claim", "axis", "rule", "—", Evidence(NO_AUTHORS_CODE),
                          Evidence.not_measured("a test"), "—")]
        found = ModuleType(name)
        found.audit_runs, found.claims = lambda args: [], claims
        return found

    record = tmp_path / "record.json"
    monkeypatch.setattr(paper_claims, "PAPERS", {"a": (module("fake.a"),), "b": (module("fake.b"),)})
    monkeypatch.setattr(paper_claims, "CLAIMS_RECORD", record)
    monkeypatch.setattr(paper_claims, "digests", lambda runs: {name: sources[name] for name in runs})

    def audit(*options: str) -> list[str]:
        measured.clear()
        paper_claims.main(["--record", "1", "--workers", "0", "--results", str(tmp_path), *options])
        return sorted(measured)

    assert audit() == ["fake.a", "fake.b"]
    rows = json.loads(record.read_text())["claims"]
    assert [(row["module"], row["sources"]) for row in rows] == list(sources.items())
    assert audit() == []  # nothing changed
    assert json.loads(record.read_text())["claims"] == rows
    sources["fake.b"] = "3" * 64
    assert audit() == ["fake.b"]
    again = json.loads(record.read_text())["claims"]
    assert again[0] == rows[0] and again[1]["sources"] == sources["fake.b"]
    assert audit("--papers", "a", "--fresh-too", "1") == ["fake.a"]
    assert [row["module"] for row in json.loads(record.read_text())["claims"]] == ["fake.a", "fake.b"]
    assert audit("--seeds", "3") == ["fake.a", "fake.b"]  # other settings: every claim measured again


def _network() -> str:
    """The name of a shipped Markov network file."""
    return next(path.name for path in sorted((ROOT / "assets" / "markov").glob("*.uai")))
