"""Parse a user's uploaded model files safely, with a size limit (model code, no Panel).

* ``.uai`` — a Markov network for ``markov_network`` (text, parsed by ``targets.uai``);
* ``.npz`` — couplings for ``boltzmann``: an array ``J`` (d × d) and optionally ``h``
  (loaded with ``allow_pickle=False``: no code in the file can run);
* ``.csv`` — couplings for ``boltzmann``: a d × d matrix J, or d × (d + 1) with h as
  the last column;
* ``.csv`` — regression data for ``bvs``: a header row of column names, then
  numbers; the response is the column named ``y`` or ``response`` (else the
  last column), every other column is a predictor;
* ``.csv`` — data for ``dag``: a header row naming the variables (2 to 12), then
  one sample per row: real values for the BGe score, category codes 0, 1, …
  for BDeu.

Each parser returns the target parameters to merge into the configuration and
raises ``ValueError`` with the reason when the file is unusable.
"""

from __future__ import annotations

import io
import zipfile

import numpy as np

from targets.uai import parse_uai

#: Largest accepted upload (bytes).
MAX_UPLOAD_BYTES = 5_000_000
#: Which targets take which file types.
UPLOAD_TYPES = {"markov_network": (".uai",), "boltzmann": (".npz", ".csv"), "bvs": (".csv",), "dag": (".csv",)}
#: Column names taken as the response of uploaded regression data.
RESPONSE_NAMES = ("y", "response")
#: What a file for each target must hold, shown next to the upload button.
UPLOAD_HINTS = {
    "markov_network": "a MARKOV network in the UAI format",
    "boltzmann": "couplings J (.npz with arrays J and optional h, or a CSV matrix, h as an extra last column)",
    "bvs": "regression data with a header row; the response is the column named y or response, else the last",
    "dag": "data with a header row naming 2–12 variables, one sample per row (real values for BGe, codes for BDeu)",
}


def _check_size(data: bytes) -> None:
    if len(data) > MAX_UPLOAD_BYTES:
        raise ValueError(f"the file is {len(data):,} bytes; the limit is {MAX_UPLOAD_BYTES:,}")
    if not data:
        raise ValueError("the file is empty")


def parse_upload(target: str, filename: str, data: bytes) -> dict:
    """Target parameters from an uploaded file for ``target``."""
    _check_size(data)
    suffix = filename[filename.rfind("."):].lower() if "." in filename else ""
    allowed = UPLOAD_TYPES.get(target, ())
    if suffix not in allowed:
        expected = ", ".join(allowed) if allowed else "no files"
        raise ValueError(f"{target} accepts {expected}; got {filename!r}")
    if suffix == ".uai":
        try:
            text = data.decode("ascii")
        except UnicodeDecodeError:
            raise ValueError(f"{filename}: a .uai file must be plain ASCII text") from None
        parse_uai(text)  # validate now, so the error names the file's line and token
        return {"uai_text": text}
    if suffix == ".npz":
        return _couplings_from_npz(filename, data)
    if target == "bvs":
        return _regression_from_csv(filename, data)
    if target == "dag":
        return _structure_data_from_csv(filename, data)
    return _couplings_from_csv(filename, data)


def _couplings_from_npz(filename: str, data: bytes) -> dict:
    if not data.startswith(b"PK"):  # an .npz is a zip archive; anything else np.load would try to unpickle
        raise ValueError(f"{filename}: not a readable .npz archive (no zip header)")
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as archive:
            if "J" not in archive.files:
                raise ValueError(f"{filename}: the archive must contain an array named 'J' (found {archive.files})")
            params = {"J": np.array(archive["J"], dtype=np.float64)}
            if "h" in archive.files:
                params["h"] = np.array(archive["h"], dtype=np.float64)
    except (zipfile.BadZipFile, OSError, EOFError) as error:
        raise ValueError(f"{filename}: not a readable .npz archive ({error})") from None
    except ValueError as error:
        raise ValueError(f"{filename}: {error}") from None
    return params


def _couplings_from_csv(filename: str, data: bytes) -> dict:
    try:
        matrix = np.loadtxt(io.StringIO(data.decode("utf-8")), delimiter=",", ndmin=2)
    except (ValueError, UnicodeDecodeError) as error:
        raise ValueError(f"{filename}: not a numeric CSV matrix ({error})") from None
    rows, cols = matrix.shape
    if cols == rows:
        return {"J": matrix}
    if cols == rows + 1:
        return {"J": matrix[:, :-1], "h": matrix[:, -1]}
    raise ValueError(f"{filename}: expected a d × d matrix J or d × (d + 1) with h last; got {rows} × {cols}")


def _named_table(filename: str, data: bytes, min_columns: int) -> tuple[list[str], np.ndarray]:
    """Column names from the header row and the finite numbers below it."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"{filename}: a .csv file must be UTF-8 text") from None
    header, _, body = text.partition("\n")
    names = [name.strip() for name in header.split(",")]
    if len(names) < min_columns or any(not name for name in names) or all(_is_number(name) for name in names):
        raise ValueError(f"{filename}: the first row must name every column (at least {min_columns} columns)")
    try:
        table = np.loadtxt(io.StringIO(body), delimiter=",", ndmin=2)
    except ValueError as error:
        raise ValueError(f"{filename}: below the header, every value must be a number ({error})") from None
    if table.shape[1] != len(names):
        raise ValueError(f"{filename}: {len(names)} column names but {table.shape[1]} columns of numbers")
    if table.shape[0] < 2:
        raise ValueError(f"{filename}: at least 2 rows of data are needed; got {table.shape[0]}")
    if not np.all(np.isfinite(table)):
        raise ValueError(f"{filename}: missing or non-finite values; remove those rows")
    return names, table


def _regression_from_csv(filename: str, data: bytes) -> dict:
    names, table = _named_table(filename, data, min_columns=2)
    lowered = [name.lower() for name in names]
    response = next((lowered.index(n) for n in RESPONSE_NAMES if n in lowered), len(names) - 1)
    return {"X": np.delete(table, response, axis=1), "y": table[:, response]}


def _structure_data_from_csv(filename: str, data: bytes) -> dict:
    names, table = _named_table(filename, data, min_columns=2)
    if len(names) > 12:
        raise ValueError(f"{filename}: structure learning takes 2 to 12 variables; got {len(names)}")
    return {"data": table, "n_nodes": len(names)}


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True
