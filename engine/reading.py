"""Readers of a user's files that may run in a process of their own: no Panel import, results that pickle.

Parsing a 13 MB configuration or a 4.5 MB ``.uai`` holds the GIL for seconds
(``json.loads`` and pure-Python parsers); in a thread of the server that
still slows every other session's clicks, so the dashboard runs these readers
in reader processes (``dashboard.file_reading.off_the_loop``), forked from
the workers' forkserver, which has imported this package already. Each takes
the file as the browser sends it (base64, decoded here, off the server) and
returns what pickles cheaply: a ``RunConfig`` whose array-valued parameters
are arrays (one buffer each, not millions of Python floats), or an upload's
target parameters. ``refused_unless_read`` turns whatever a reader raises
into a ``ValueError`` that says why, in the process that raised it.
"""

from __future__ import annotations

import base64
import functools

import numpy as np

import samplers
import targets

from .config import RunConfig, _is_array_valued
from .config_archive import SECTIONS, config_from_archive, is_configuration_archive
from .stored_runs import config_from_stored_run, is_stored_run
from .uploads import UploadLimits, excerpt, parse_upload


def refused_unless_read(read):
    """``read`` (a reader of an uploaded file) with every error it raises a ``ValueError`` that says why: a
    hostile file may break a library's reader in ways nobody listed, and its refusal still reaches the page."""
    @functools.wraps(read)
    def reading(*args):
        try:
            return read(*args)
        except ValueError:
            raise
        except Exception as error:
            raise ValueError(f"the file could not be read ({type(error).__name__}: {excerpt(str(error))})") from error

    return reading


def _bytes(data: bytes | str) -> bytes:
    """A file's bytes from its base64 text (as a browser's file input sends it), or the bytes themselves."""
    return base64.b64decode(data, validate=True) if isinstance(data, str) else data


def _with_arrays(config: RunConfig) -> RunConfig:
    """``config`` with every array-valued parameter given as a list of numbers made an array (as an upload's)."""
    owners = dict(zip(SECTIONS, (targets.target_class(config.target), samplers.sampler_class(config.sampler),
                                 samplers.sampler_class(config.compare_sampler) if config.compare_sampler else None)))
    changed = {}
    for section, owner in owners.items():
        params = getattr(config, section)
        for key, value in params.items():
            if owner is None or not isinstance(value, list) or key not in owner.param:
                continue
            if _is_array_valued(owner.param[key]):
                try:
                    array = np.asarray(value)
                except ValueError:  # ragged: left as it is, for the target to refuse with its own message
                    continue
                if array.dtype.kind in "biuf":
                    changed.setdefault(section, dict(params))[key] = array
    config.param.update(changed)
    return config


@refused_unless_read
def read_configuration(data: bytes | str) -> RunConfig:
    """The configuration a file holds — a configuration (JSON), a configuration archive (``config_archive``) or a
    run a sweep stored (``stored_runs``) — checked; ``data`` is its bytes or their base64."""
    data = _bytes(data)
    if is_configuration_archive(data):
        return _with_arrays(config_from_archive(data))
    if is_stored_run(data):
        return _with_arrays(config_from_stored_run(data))
    return _with_arrays(RunConfig.from_json(data))


@refused_unless_read
def read_model_file(target: str, filename: str, data: bytes | str, limits: UploadLimits) -> dict:
    """The target parameters an uploaded model file holds (``uploads.parse_upload``); ``data`` is its bytes or
    their base64."""
    return parse_upload(target, filename, _bytes(data), limits)
