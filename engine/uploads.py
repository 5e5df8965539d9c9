"""Parse a user's uploaded model files safely, within size limits (model code, no Panel).

* ``.uai`` — a Markov network for ``markov_network`` (text, parsed by ``targets.uai``);
* ``.npz`` — couplings for ``boltzmann``: an array ``J`` (d × d) and optionally ``h``
  (read with ``allow_pickle=False``: no code in the file can run);
* ``.csv`` — couplings for ``boltzmann``: a d × d matrix J, or d × (d + 1) with h as
  the last column;
* ``.csv`` — regression data for ``bvs``: a header row of column names, then
  numbers; the response is the column named ``y`` or ``response`` (else the
  last column), every other column is a predictor;
* ``.csv`` — data for ``dag``: a header row naming the variables (2 to 12), then
  one sample per row: real values for the BGe score, category codes 0, 1, …
  for BDeu.

Each parser returns the target parameters to merge into the configuration and
raises ``ValueError`` with a short reason when the file is unusable. The files
are hostile until proven otherwise: the upload's size is bounded
(``UploadLimits.file_bytes``), and so is what it may expand to
(``UploadLimits.decompressed_bytes``) — an ``.npz`` archive's zip directory and
``.npy`` headers are read, and the file refused, *before* anything is
decompressed, and a CSV's rows and columns are counted before it is parsed.
Error messages quote at most a short excerpt of the file (``excerpt``), so a
file's contents never reach a page or a log wholesale.
"""

from __future__ import annotations

import io
import lzma
import math
import re
import struct
import zipfile
import zlib
from dataclasses import dataclass

import numpy as np
from scipy import sparse

from targets.uai import parse_uai

#: Largest accepted upload (bytes); the browser enforces the same limit.
MAX_UPLOAD_BYTES = 10_000_000
#: Largest size the arrays of an upload may take once decompressed and converted to float64 (bytes).
MAX_DECOMPRESSED_BYTES = 200_000_000
#: Most files an .npz archive may hold (J, h and a few more are plenty).
MAX_NPZ_MEMBERS = 16
#: Largest zip central directory read (bytes): generous for ``MAX_NPZ_MEMBERS`` entries.
MAX_ZIP_DIRECTORY_BYTES = MAX_NPZ_MEMBERS * 1024
#: Most columns of an uploaded CSV (a d × d couplings matrix in a 10 MB file has d < 2,300).
MAX_CSV_COLUMNS = 5_000
#: Most variables of a structure-learning (``dag``) data file.
MAX_DAG_VARIABLES = 12
#: Longest excerpt of a file's content (or of a message quoting it) put into an error message (characters).
MAX_EXCERPT_CHARS = 100
#: Largest energy scale of couplings, ½ Σ|J_ij| + Σ|h_i|: log p̃ = β (½ sᵀJs + hᵀs) with β ≤ 100 then stays within
#: 1e150, whose squares (variances, ESS) and sums over millions of draws are still finite floats; beyond it
#: samplers' arithmetic overflows.
MAX_ENERGY = 1e148
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
#: A run of characters without spaces long enough to be a quoted piece of a file, not a word of a message.
_LONG_RUN = re.compile(r"\S{41,}")
#: Characters of such a run kept in a message.
_RUN_KEPT = 30
#: Kinds of .npy dtype accepted: booleans, signed and unsigned integers, floats.
_NUMERIC_KINDS = "biuf"


class _Refused(ValueError):
    """A refusal whose message is complete (names the file), passed on as it is."""


@dataclass(frozen=True)
class UploadLimits:
    """Size limits of an upload: the file itself, and what its arrays take decompressed (as float64)."""

    file_bytes: int = MAX_UPLOAD_BYTES
    decompressed_bytes: int = MAX_DECOMPRESSED_BYTES

    @property
    def max_elements(self) -> int:
        """Most numbers an upload (or a configuration) may hold: ``decompressed_bytes`` of float64."""
        return self.decompressed_bytes // 8


#: The limits used unless others are given.
DEFAULT_LIMITS = UploadLimits()


def format_bytes(n: int | float) -> str:
    """``n`` bytes in human units (decimal: 1 MB = 1,000,000 bytes), e.g. ``3.2 GB``."""
    if n < 1000:
        return f"{int(n)} bytes"
    for unit in ("kB", "MB", "GB", "TB"):
        n /= 1000
        if n < 999.5:
            return f"{n:.3g} {unit}"
    return f"{n:,.0f} TB"


def sizes(size: int, limit: int) -> tuple[str, str]:
    """``size`` and ``limit`` in human units (``format_bytes``), in bytes when rounding would print them equal."""
    shown = format_bytes(size), format_bytes(limit)
    return shown if shown[0] != shown[1] else (f"{size:,} bytes", f"{limit:,} bytes")


def counted(n: int, noun: str) -> str:
    """``n`` and ``noun``, plural unless ``n`` is 1: "1 column", "3 columns"."""
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def excerpt(text: object, limit: int = MAX_EXCERPT_CHARS) -> str:
    """``str(text)`` cut to ``limit`` characters, ending in "…" when cut (keeps file contents out of messages)."""
    text = str(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _quoting_briefly(error: Exception) -> str:
    """A parser's message with every long run of non-space characters (a quoted piece of the file) cut short."""
    return excerpt(_LONG_RUN.sub(lambda run: run[0][:_RUN_KEPT] + "…", str(error)), 2 * MAX_EXCERPT_CHARS)


def parse_upload(target: str, filename: str, data: bytes, limits: UploadLimits = DEFAULT_LIMITS) -> dict:
    """Target parameters from an uploaded file for ``target`` (``ValueError`` with the reason if unusable)."""
    suffix = filename[filename.rfind("."):].lower() if "." in filename else ""
    filename = excerpt(filename, 60)  # as messages name it
    _check_size(data, limits)
    allowed = UPLOAD_TYPES.get(target, ())
    if suffix not in allowed:
        expected = ", ".join(allowed) if allowed else "no files"
        raise ValueError(f"{excerpt(target, 40)} accepts {expected}; got {filename!r}")
    if suffix == ".uai":
        return _network_from_uai(filename, data)
    if suffix == ".npz":
        return _couplings_from_npz(filename, data, limits)
    if target == "bvs":
        return _regression_from_csv(filename, data, limits)
    if target == "dag":
        return _structure_data_from_csv(filename, data, limits)
    return _couplings_from_csv(filename, data, limits)


def _check_size(data: bytes, limits: UploadLimits) -> None:
    if len(data) > limits.file_bytes:
        size, limit = sizes(len(data), limits.file_bytes)
        raise ValueError(f"the file is {size}; the limit is {limit}")
    if not data:
        raise ValueError("the file is empty")


def _network_from_uai(filename: str, data: bytes) -> dict:
    try:
        text = data.decode("ascii")
    except UnicodeDecodeError:
        raise ValueError(f"{filename}: a .uai file must be plain ASCII text") from None
    try:
        model = parse_uai(text)  # validate now, so the error names the file's line and token
    except ValueError as error:  # the message quotes a token, which may be the whole file
        raise ValueError(f"{filename}: {_quoting_briefly(error)}") from None
    non_binary = np.flatnonzero(model.cardinalities != 2)
    if non_binary.size:
        first = int(non_binary[0])
        raise ValueError(f"{filename}: every variable must have 2 states (binary); "
                         f"{counted(non_binary.size, 'variable')} of {model.n_vars:,} "
                         f"{'has' if non_binary.size == 1 else 'have'} more or fewer, "
                         f"e.g. variable {first} has {counted(int(model.cardinalities[first]), 'state')}")
    return {"uai_text": text}


# -- .npz -----------------------------------------------------------------------------------------
#: Errors that reading a malformed or hostile zip archive may raise.
ZIP_ERRORS = (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, RuntimeError, NotImplementedError,
               zlib.error, lzma.LZMAError, struct.error, KeyError, IndexError, OverflowError)


def _couplings_from_npz(filename: str, data: bytes, limits: UploadLimits) -> dict:
    """Arrays J and h from an .npz archive, checked against ``limits`` before anything is decompressed."""
    if not data.startswith(b"PK"):  # an .npz is a zip archive; anything else np.load would try to unpickle
        raise ValueError(f"{filename}: not a readable .npz archive (no zip header)")
    try:
        _check_zip_directory(filename, data)
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            members = archive.infolist()
            if len(members) > MAX_NPZ_MEMBERS:
                raise _Refused(f"{filename}: the archive holds {len(members):,} files; "
                               f"the limit is {MAX_NPZ_MEMBERS}")
            by_name = {_array_name(info.filename): info for info in members}
            if "J" not in by_name:
                names = [excerpt(name, 20) for name in list(by_name)[:4]] + (["…"] if len(by_name) > 4 else [])
                raise _Refused(f"{filename}: the archive must contain an array named 'J' (found {names})")
            declared = sum(info.file_size for info in members)
            shapes = {name: _npy_shape(filename, archive, by_name[name], name, limits)
                      for name in ("J", "h") if name in by_name}
            if declared > limits.decompressed_bytes:
                size, limit = sizes(declared, limits.decompressed_bytes)
                raise _Refused(f"{filename}: the archive would take {size} decompressed; the limit is {limit}")
            d = shapes["J"][0]
            if "h" in shapes and shapes["h"] != (d,):
                raise _Refused(f"{filename}: h must have shape ({d},) to match J; got {shapes['h']}")
            params = {}
            for name in shapes:
                with archive.open(by_name[name]) as member:
                    array = np.lib.format.read_array(member, allow_pickle=False)
                params[name] = np.asarray(array, dtype=np.float64)
    except _Refused as error:
        raise ValueError(str(error)) from None
    except ValueError as error:  # from numpy's .npy reader, e.g. a malformed header (which it quotes)
        raise ValueError(f"{filename}: {excerpt(error)}") from None
    except ZIP_ERRORS as error:
        raise ValueError(f"{filename}: not a readable .npz archive ({excerpt(error)})") from None
    check_energies(params["J"], params.get("h"), filename)
    return params


def _array_name(member: str) -> str:
    """The array name numpy gives an archive member ("J.npy" → "J")."""
    return member[:-4] if member.endswith(".npy") else member


def _check_zip_directory(filename: str, data: bytes) -> None:
    """Refuse an archive whose end record declares too many files or too large a directory.

    ``zipfile.ZipFile`` reads the whole central directory into memory when it
    opens an archive (about 500 bytes per entry); a 10 MB upload may declare
    hundreds of thousands of entries, so their count and the directory's size
    are read first from the end record, as ``zipfile`` finds it.
    """
    start = data.rfind(b"PK\x05\x06", max(0, len(data) - 22 - 65_535))
    if start < 0 or len(data) - start < 22:
        return  # no end record: zipfile reports the archive as unreadable
    entries, size = struct.unpack("<HI", data[start + 10:start + 16])
    locator = start - 20
    if locator >= 56 and data[locator:locator + 4] == b"PK\x06\x07":  # ZIP64: the counts are in its own record
        record = data[locator - 56:locator]
        if record[:4] == b"PK\x06\x06":
            entries, size = struct.unpack("<QQ", record[32:48])
    if entries > MAX_NPZ_MEMBERS:
        raise _Refused(f"{filename}: the archive holds {entries:,} files; the limit is {MAX_NPZ_MEMBERS}")
    if size > MAX_ZIP_DIRECTORY_BYTES:
        raise _Refused(f"{filename}: the archive's directory takes {format_bytes(size)}; "
                       f"the limit is {format_bytes(MAX_ZIP_DIRECTORY_BYTES)}")


def npy_header(archive: zipfile.ZipFile, info: zipfile.ZipInfo, label: str) -> tuple[tuple[int, ...], np.dtype]:
    """Shape and dtype of an ``.npy`` entry from its header alone (decompresses only its first few kilobytes),
    refusing (``ValueError`` naming ``label``) what is not a numeric array of .npy format 1.0 or 2.0."""
    with archive.open(info) as member:
        try:
            version = np.lib.format.read_magic(member)
        except ValueError:
            raise _Refused(f"{label} is not a .npy array") from None
        if version == (1, 0):
            shape, _, dtype = np.lib.format.read_array_header_1_0(member)
        elif version == (2, 0):
            shape, _, dtype = np.lib.format.read_array_header_2_0(member)
        else:
            raise _Refused(f"{label} uses .npy format version {version}; only 1.0 and 2.0 are read")
    if dtype.hasobject:
        raise _Refused(f"{label} holds Python objects, which would need pickle to load; "
                       f"only numeric arrays are accepted")
    if dtype.kind not in _NUMERIC_KINDS or dtype.fields is not None or dtype.subdtype is not None:
        raise _Refused(f"{label} has dtype {excerpt(dtype.str, 20)}; "
                       f"only numeric (bool, integer or float) arrays are accepted")
    return shape, dtype


def _npy_shape(filename: str, archive: zipfile.ZipFile, info: zipfile.ZipInfo, name: str,
               limits: UploadLimits) -> tuple[int, ...]:
    """Shape of array ``name`` from its .npy header alone, refusing what is too large, odd-shaped or not numeric."""
    shape, dtype = npy_header(archive, info, f"{filename}: {name}")
    wanted = 2 if name == "J" else 1
    if len(shape) != wanted:
        raise _Refused(f"{filename}: {name} must be a {wanted}-D array; got {len(shape)} dimensions")
    if name == "J" and shape[0] != shape[1]:
        raise _Refused(f"{filename}: J must be a square matrix; got {shape[0]:,} × {shape[1]:,}")
    size = math.prod(shape) * max(dtype.itemsize, 8)  # kept as float64
    if size > limits.decompressed_bytes:
        dims = " × ".join(f"{n:,}" for n in shape)
        size, limit = sizes(size, limits.decompressed_bytes)
        raise _Refused(f"{filename}: {name} ({dims}) would take {size} decompressed; the limit is {limit}")
    if info.file_size > limits.decompressed_bytes:  # a small array declared, a large file: padding, or a lie
        size, limit = sizes(info.file_size, limits.decompressed_bytes)
        raise _Refused(f"{filename}: {name} would take {size} decompressed; the limit is {limit}")
    if 0 in shape:
        raise _Refused(f"{filename}: {name} is empty")
    return tuple(int(n) for n in shape)


# -- .csv -----------------------------------------------------------------------------------------
def _first_row_columns(data: bytes) -> int:
    """Number of comma-separated fields in the first line of ``data`` (counted on the bytes)."""
    end = data.find(b"\n")
    return (data if end < 0 else data[:end]).count(b",") + 1


def _check_table_size(filename: str, data: bytes, limits: UploadLimits) -> tuple[int, int]:
    """(columns of the first row, an upper bound on the rows) of a CSV, refusing tables too wide or too large.

    Counted on the raw bytes (commas of the first line, line breaks of the
    file) before anything is parsed; later rows of another width are refused by
    the parser.
    """
    columns = _first_row_columns(data)
    rows = data.count(b"\n") + 1
    if columns > MAX_CSV_COLUMNS:
        raise ValueError(f"{filename}: the first row has {columns:,} columns; the limit is {MAX_CSV_COLUMNS:,}")
    cells = columns * rows
    if cells > limits.max_elements:
        size, limit = sizes(8 * cells, limits.decompressed_bytes)
        raise ValueError(f"{filename}: {rows:,} rows × {columns:,} columns would take {size} as numbers; "
                         f"the limit is {limit}")
    return columns, rows


def _couplings_from_csv(filename: str, data: bytes, limits: UploadLimits) -> dict:
    columns, rows = _check_table_size(filename, data, limits)
    if columns > rows + 1:  # a d × d or d × (d + 1) matrix has at least columns − 1 rows
        raise ValueError(f"{filename}: expected a d × d matrix J or d × (d + 1) with h last; "
                         f"got {columns:,} columns but at most {rows:,} rows")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"{filename}: a .csv file must be UTF-8 text") from None
    matrix = _numbers(filename, text, 1, "not a numeric CSV matrix")
    rows, cols = matrix.shape
    if cols in (rows, rows + 1):
        J, h = (matrix, None) if cols == rows else (matrix[:, :-1], matrix[:, -1])
        check_energies(J, h, filename)
        return {"J": J} if h is None else {"J": J, "h": h}
    raise ValueError(f"{filename}: expected a d × d matrix J or d × (d + 1) with h last; got {rows} × {cols}")


def _numbers(filename: str, text: str, first_line: int, refusal: str) -> np.ndarray:
    """The comma-separated numbers of ``text`` (whose first line is line ``first_line`` of the file) as a 2-D
    array; else ``ValueError`` saying which line holds how many values, or which value is not a number."""
    try:
        return np.loadtxt(io.StringIO(text), delimiter=",", ndmin=2)
    except ValueError as error:
        why = _first_misfit(text, first_line, refusal) or f"{refusal} ({_quoting_briefly(error)})"
        raise ValueError(f"{filename}: {why}") from None


def _first_misfit(text: str, first_line: int, refusal: str) -> str:
    """Why ``np.loadtxt`` refused ``text``, in words (looked for only once it did): the first line with another
    number of values than the first row, or the first value that is not a number (after ``refusal``); '' if
    neither is found."""
    first = None
    for number, line in enumerate(text.split("\n"), first_line):
        fields = line.split("#", 1)[0].split(",")  # as loadtxt reads it: comments dropped, blank lines skipped
        if len(fields) == 1 and not fields[0].strip():
            continue
        if first is None:
            first = (number, len(fields))
        elif len(fields) != first[1]:
            return (f"line {number:,} has {counted(len(fields), 'value')} but line {first[0]:,} has "
                    f"{first[1]:,}: every row must have as many, separated by commas")
        for column, field in enumerate(fields, 1):
            try:
                float(field)
            except ValueError:
                return (f"{refusal}; could not convert {excerpt(field.strip(), 30)!r} "
                        f"(line {number:,}, column {column:,}) to a number")
    return ""


def _named_table(filename: str, data: bytes, min_columns: int, limits: UploadLimits) -> tuple[list[str], np.ndarray]:
    """Column names from the header row and the finite numbers below it."""
    _check_table_size(filename, data, limits)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"{filename}: a .csv file must be UTF-8 text") from None
    header, _, body = text.partition("\n")
    names = [name.strip() for name in header.split(",")]
    if len(names) < min_columns or any(not name for name in names) or all(_is_number(name) for name in names):
        raise ValueError(f"{filename}: the first row must name every column (at least {min_columns} columns)")
    table = _numbers(filename, body, 2, "below the header, every value must be a number")
    if table.shape[1] != len(names):
        raise ValueError(f"{filename}: {counted(len(names), 'column name')} but "
                         f"{counted(table.shape[1], 'column')} of numbers")
    if table.shape[0] < 2:
        raise ValueError(f"{filename}: at least 2 rows of data are needed; got {table.shape[0]}")
    if not np.all(np.isfinite(table)):
        raise ValueError(f"{filename}: missing or non-finite values; remove those rows")
    return names, table


def _regression_from_csv(filename: str, data: bytes, limits: UploadLimits) -> dict:
    names, table = _named_table(filename, data, 2, limits)
    lowered = [name.lower() for name in names]
    response = next((lowered.index(n) for n in RESPONSE_NAMES if n in lowered), len(names) - 1)
    return {"X": np.delete(table, response, axis=1), "y": table[:, response]}


def _structure_data_from_csv(filename: str, data: bytes, limits: UploadLimits) -> dict:
    variables = _first_row_columns(data)
    if variables > MAX_DAG_VARIABLES:
        raise ValueError(f"{filename}: structure learning takes 2 to {MAX_DAG_VARIABLES} variables; "
                         f"got {variables:,}")
    names, table = _named_table(filename, data, 2, limits)
    return {"data": table, "n_nodes": len(names)}


def check_energies(J, h, filename: str = "") -> None:
    """Refuse couplings ``J`` (and field ``h``; of the file ``filename``, if any) with values that are not finite,
    or whose energies exceed ``MAX_ENERGY`` (½ Σ|J_ij| + Σ|h_i|, the largest |½ sᵀJs + hᵀs|): the samplers'
    arithmetic would overflow."""
    try:
        J = J.tocoo().data if sparse.issparse(J) else np.asarray(J, dtype=np.float64)
        h = np.zeros(0) if h is None else np.asarray(h, dtype=np.float64)
    except (TypeError, ValueError):  # not an array of numbers: the target says what is wrong with it
        return
    where = f"{filename}: " if filename else ""
    for label, values in (("J", J), ("h", h)):
        if not np.all(np.isfinite(values)):
            raise ValueError(f"{where}{label} holds values that are not finite numbers (infinite or NaN)")
    scale = np.abs(J / MAX_ENERGY).sum() / 2 + np.abs(h / MAX_ENERGY).sum()  # in units of the limit: no overflow
    if scale > 1:
        exponent = math.floor(math.log10(scale))
        raise ValueError(f"{where}the energies of J and h reach about {scale / 10**exponent:.3g}e+"
                         f"{exponent + round(math.log10(MAX_ENERGY))} (half the sum of |J| plus the sum of |h|); "
                         f"the limit is {MAX_ENERGY:.0e}, so that log-probabilities stay within floating point")


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True
