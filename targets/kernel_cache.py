"""Keep numba's disk cache of compiled kernels true to the sources it was compiled from.

numba stores each ``@njit(cache=True)`` kernel keyed by the stamp of *its own*
source file. A kernel that calls a function of another module has that
function compiled into it, so after that other module changes (an edit, a
``git pull``) the kernel's cached machine code still runs the old function —
silently: a sampler built on a changed sum-tree layout then draws from the
wrong distribution. Here the cache directory is named after a digest of every
source file of the packages that hold compiled kernels (``targets`` and
``samplers``): any change to any of them starts a fresh cache, and two
versions never share one.

The digest directories live in one folder of this project's: ``.numba_cache``
beside the packages, or ``$NUMBA_CACHE_DIR/discrete-sampler-explorer`` if that
variable is set (a user-wide cache folder if the project is not writable).
Digest directories of other versions untouched for a week are removed; nothing
else in that folder, or beside it, is. ``use_source_keyed_cache()`` must run
before the first kernel is decorated: ``targets/__init__.py`` calls it first
thing, and ``samplers`` imports ``targets`` before its own kernels.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import tempfile
import time
from pathlib import Path

import numba

#: Packages whose modules define or call compiled kernels (paths relative to the project root).
KERNEL_PACKAGES = ("targets", "samplers")
#: Digest directories of other versions are removed once untouched for this long.
STALE_SECONDS = 7 * 24 * 3600
#: The folder of digest directories under a user's ``$NUMBA_CACHE_DIR``, which numba may share with other projects.
FOLDER = "discrete-sampler-explorer"
_DIGEST = re.compile(r"[0-9a-f]{16}")


def project_root() -> Path:
    return Path(__file__).resolve().parent.parent


def source_digest(root: Path, packages=KERNEL_PACKAGES) -> str:
    """SHA-256 (first 16 hex digits) of the names and contents of every ``.py`` file of ``packages`` under ``root``."""
    digest = hashlib.sha256()
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            digest.update(str(path.relative_to(root)).encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def _writable(directory: Path) -> bool:
    try:
        directory.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=directory):
            return True
    except OSError:
        return False


def cache_base() -> Path:
    """The folder of digest directories (module docstring).

    A ``NUMBA_CACHE_DIR`` that is already one of our digest directories (set by
    ``use_source_keyed_cache`` in a parent process) stands for its folder.
    """
    configured = os.environ.get("NUMBA_CACHE_DIR")
    if configured:
        configured = Path(configured)
        if _DIGEST.fullmatch(configured.name) and configured.parent.name in (FOLDER, ".numba_cache"):
            return configured.parent
        return configured / FOLDER
    in_project = project_root() / ".numba_cache"
    if _writable(in_project):
        return in_project
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / FOLDER


def _remove_stale(base: Path, keep: Path) -> None:
    """Remove digest directories other than ``keep`` that nobody has used for ``STALE_SECONDS``."""
    now = time.time()
    for directory in base.glob("*"):
        if (directory != keep and _DIGEST.fullmatch(directory.name) and directory.is_dir()
                and now - directory.stat().st_mtime > STALE_SECONDS):
            shutil.rmtree(directory, ignore_errors=True)


def use_source_keyed_cache() -> Path:
    """Point numba's kernel cache at the directory of this version of the sources (made if missing) and return it.

    Set as ``NUMBA_CACHE_DIR`` too: numba re-reads its configuration from the
    environment when that changes, and worker processes inherit it.
    """
    base = cache_base()
    directory = base / source_digest(project_root())
    directory.mkdir(parents=True, exist_ok=True)
    os.utime(directory)
    _remove_stale(base, directory)
    os.environ["NUMBA_CACHE_DIR"] = numba.config.CACHE_DIR = str(directory)
    return directory
