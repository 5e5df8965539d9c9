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

The directory lives under ``$NUMBA_CACHE_DIR`` if that is set, else under
``.numba_cache`` beside the packages (a user-wide cache directory if that is not
writable). Digest directories of other versions untouched for a day are
removed. ``use_source_keyed_cache()`` must run before the first kernel is
decorated: ``targets/__init__.py`` calls it first thing, and ``samplers``
imports ``targets`` before its own kernels.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import time
from pathlib import Path

import numba

#: Packages whose modules define or call compiled kernels (paths relative to the project root).
KERNEL_PACKAGES = ("targets", "samplers")
#: Digest directories of other versions are removed once untouched for this long.
STALE_SECONDS = 24 * 3600


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
    """Where digest directories go: ``$NUMBA_CACHE_DIR``, else ``.numba_cache`` in the project, else a user cache."""
    if os.environ.get("NUMBA_CACHE_DIR"):
        return Path(os.environ["NUMBA_CACHE_DIR"])
    in_project = project_root() / ".numba_cache"
    if _writable(in_project):
        return in_project
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "discrete-sampler-explorer" / "numba"


def _remove_stale(base: Path, keep: Path) -> None:
    """Remove digest directories other than ``keep`` that nobody has used for ``STALE_SECONDS``."""
    now = time.time()
    for directory in base.glob("*"):
        if directory != keep and directory.is_dir() and now - directory.stat().st_mtime > STALE_SECONDS:
            shutil.rmtree(directory, ignore_errors=True)


def use_source_keyed_cache() -> Path:
    """Point numba's kernel cache at the directory of this version of the sources (made if missing) and return it.

    Set as ``NUMBA_CACHE_DIR`` too: numba re-reads its configuration from the
    environment when that changes, and worker processes inherit it (a directory
    already named after this digest is used as it is).
    """
    digest = source_digest(project_root())
    configured = Path(os.environ.get("NUMBA_CACHE_DIR", ""))
    if configured.name == digest:
        directory = configured
    else:
        base = cache_base()
        directory = base / digest
        directory.mkdir(parents=True, exist_ok=True)
        _remove_stale(base, directory)
    directory.mkdir(parents=True, exist_ok=True)
    os.utime(directory)
    os.environ["NUMBA_CACHE_DIR"] = numba.config.CACHE_DIR = str(directory)
    return directory
