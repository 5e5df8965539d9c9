"""numba's kernel cache is keyed by the sources of every package with compiled kernels."""

from __future__ import annotations

import os
import time
from pathlib import Path

import numba

from targets import kernel_cache


def _package(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_the_digest_changes_with_any_source_of_any_kernel_package_and_with_nothing_else(tmp_path):
    _package(tmp_path, {"targets/a.py": "x = 1\n", "samplers/b.py": "y = 2\n", "dashboard/c.py": "z = 3\n"})
    first = kernel_cache.source_digest(tmp_path)
    assert kernel_cache.source_digest(tmp_path) == first
    (tmp_path / "dashboard/c.py").write_text("z = 4\n")  # not a kernel package
    assert kernel_cache.source_digest(tmp_path) == first
    (tmp_path / "samplers/b.py").write_text("y = 3\n")  # a callee in another module than its caller
    second = kernel_cache.source_digest(tmp_path)
    assert second != first
    (tmp_path / "samplers/b.py").rename(tmp_path / "samplers/renamed.py")
    assert kernel_cache.source_digest(tmp_path) not in (first, second)


def test_the_cache_directory_is_this_versions_and_only_our_old_versions_are_removed(tmp_path, monkeypatch):
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))  # a user's numba cache, shared with other projects
    monkeypatch.setattr(numba.config, "CACHE_DIR", numba.config.CACHE_DIR)  # both restored after the test
    ours = tmp_path / kernel_cache.FOLDER
    stale, recent = ours / "0000000000000000", ours / "1111111111111111"
    others = [tmp_path / "otherpackage_0123456789abcdef", ours / "notes"]
    old = time.time() - kernel_cache.STALE_SECONDS - 60
    for directory in [stale, recent, *others]:
        directory.mkdir(parents=True)
        os.utime(directory, (old, old) if directory != recent else None)
    directory = kernel_cache.use_source_keyed_cache()
    assert directory == ours / kernel_cache.source_digest(kernel_cache.project_root())
    assert directory.is_dir() and numba.config.CACHE_DIR == os.environ["NUMBA_CACHE_DIR"] == str(directory)
    assert not stale.exists() and recent.exists() and all(other.exists() for other in others)
    assert kernel_cache.use_source_keyed_cache() == directory  # what a worker that inherits the variable does
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(ours / "2222222222222222"))  # a parent on other sources
    assert kernel_cache.use_source_keyed_cache() == directory  # the same folder, not nested


def test_the_running_kernels_are_cached_under_the_digest_of_the_sources_they_were_built_from():
    directory = Path(numba.config.CACHE_DIR)
    assert directory.name == kernel_cache.source_digest(kernel_cache.project_root())
    assert os.environ["NUMBA_CACHE_DIR"] == str(directory)  # kept when numba re-reads its environment
