"""Reader and writer of the UAI competition format for Markov networks.

A ``.uai`` file is a stream of whitespace-separated tokens (line breaks carry
no meaning; they only locate errors):

    MARKOV                          the network type (case-insensitive)
    n                               number of variables
    c_0 c_1 … c_{n−1}               their cardinalities (≥ 1)
    F                               number of factors
    k_f v_1 … v_k                   for each factor: scope size, then distinct
                                    variable indices in 0..n−1
    N_f φ_f(…) …                    then for each factor: the number of table
                                    entries N_f = Π_j c_{v_j}, followed by the
                                    entries (finite, ≥ 0), the *last* variable
                                    of the scope varying fastest

so the table of factor f, reshaped in C order to (c_{v_1}, …, c_{v_k}), is
indexed as ``table[x_{v_1}, …, x_{v_k}] = φ_f(x)``. Any cardinality is read;
the ``markov_network`` target then requires binary variables.

A ``.evid`` file lists observed values in the same numbering:

    [1]  m  v_1 u_1  …  v_m u_m

i.e. the number of observed variables followed by (variable, value) pairs,
optionally preceded by the sample count ``1`` of the UAI 2008+ format (a
single evidence set; the two layouts cannot be confused, as one has an odd and
the other an even number of tokens). Only indices and values ≥ 0 are checked
here; their ranges depend on the network.

The reader is strict and bounded: the text may hold at most ``max_bytes``
(UTF-8) bytes and only ASCII letters, digits, ``. + -`` and ASCII whitespace;
counts and indices are plain decimal digits, table entries any decimal float
(``1e-6``, ``.5``). The first malformed token raises ``ValueError`` naming its
line (counted by newlines) and the token, e.g. ``line 7, token 'x': expected
the number of table entries of factor 2 (an integer ≥ 0)``. Scopes are read
token by token; the table entries of all factors are converted and checked in
one bulk NumPy call, so a 5 MB file of 100,000 small factors reads in about a
second.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import islice

import numpy as np

#: Default size limit of a text handed to the readers (5 MB).
MAX_BYTES = 5_000_000
#: Largest cardinality read (far beyond the competition networks).
MAX_CARDINALITY = 1_000_000
#: Longest integer token read (keeps every integer within int64).
_MAX_DIGITS = 18

_FORBIDDEN = re.compile(r"[^A-Za-z0-9.+\-\s]", re.ASCII)
_TOKEN = re.compile(r"\S+", re.ASCII)


def _decimal(token: str) -> int:
    """``token`` as a non-negative decimal integer, or −1 if it is not one (or longer than int64)."""
    return int(token) if token.isdigit() and len(token) <= _MAX_DIGITS else -1


def _frozen(array: np.ndarray) -> np.ndarray:
    array.flags.writeable = False
    return array


def _check_scopes(scopes: list[np.ndarray], n_vars: int) -> None:
    """Every scope must hold distinct indices in 0..n_vars−1 (checked for all factors at once)."""
    variables = np.concatenate([np.zeros(0, dtype=np.int64), *scopes])
    factor = np.repeat(np.arange(len(scopes)), [scope.size for scope in scopes])
    keys = np.sort(factor * n_vars + variables)  # (factor, variable) pairs, distinct iff no repeats
    bad = (variables < 0) | (variables >= n_vars)
    repeated = keys[1:][keys[1:] == keys[:-1]]
    if bad.any() or repeated.size:
        f = int(factor[bad][0]) if bad.any() else int(repeated[0] // n_vars)
        raise ValueError(f"scope {scopes[f].tolist()} of factor {f} is not distinct indices in 0..{n_vars - 1}")


@dataclass(frozen=True, eq=False)
class UAIModel:
    """A discrete Markov network p̃(x) = Π_f φ_f(x_{scopes[f]}).

    ``cardinalities`` is an int64 array of shape (n_vars,); ``scopes[f]`` is an
    int64 array of distinct variable indices; ``tables[f]`` is a float64 array
    of shape ``cardinalities[scopes[f]]`` with ``tables[f][x_scope] = φ_f``.
    Inputs are copied, checked (flat tables are reshaped) and frozen read-only.
    """

    n_vars: int
    cardinalities: np.ndarray
    scopes: tuple[np.ndarray, ...]
    tables: tuple[np.ndarray, ...]

    def __post_init__(self):
        cards = _frozen(np.array(self.cardinalities, dtype=np.int64).reshape(-1))
        if cards.size != self.n_vars or np.any(cards < 1):
            raise ValueError(f"need {self.n_vars} cardinalities ≥ 1; got {cards.tolist()}")
        scopes = tuple(_frozen(np.array(scope, dtype=np.int64).reshape(-1)) for scope in self.scopes)
        if len(self.tables) != len(scopes):
            raise ValueError(f"need one table per scope; got {len(self.tables)} tables for {len(scopes)} scopes")
        _check_scopes(scopes, self.n_vars)
        tables = tuple(
            _frozen(np.array(table, dtype=np.float64).reshape(tuple(cards[scope])))
            for table, scope in zip(self.tables, scopes)
        )
        object.__setattr__(self, "n_vars", int(self.n_vars))
        object.__setattr__(self, "cardinalities", cards)
        object.__setattr__(self, "scopes", scopes)
        object.__setattr__(self, "tables", tables)


class _Tokens:
    """A cursor over the tokens of a bounded, ASCII-only text; its errors name line and token."""

    def __init__(self, text: str, max_bytes: int, kind: str):
        size = len(text.encode("utf-8"))
        if size > max_bytes:
            raise ValueError(f"{kind} text is {size:,} bytes, over the limit of {max_bytes:,} bytes")
        forbidden = _FORBIDDEN.search(text)
        if forbidden:
            offset = forbidden.start()
            line_start = text.rfind("\n", 0, offset) + 1
            word = next(m[0] for m in _TOKEN.finditer(text, line_start) if m.end() > offset)
            line = text.count("\n", 0, offset) + 1
            raise ValueError(f"line {line}, token {word!r}: unexpected character {forbidden[0]!r}")
        self._text = text
        #: The tokens (after the character check, ``str.split`` and ``_TOKEN`` agree on them).
        self.tokens = text.split()
        #: Index of the next token; may run past the end, which the next read reports.
        self.pos = 0

    def error(self, message: str, index: int | None = None) -> ValueError:
        """A ``ValueError`` locating token ``index`` (default: the last one read)."""
        index = self.pos - 1 if index is None else index
        if index >= len(self.tokens):
            line = self._text.count("\n", 0, len(self._text.rstrip())) + 1
            return ValueError(f"line {line}, at end of input: {message}")
        match = next(islice(_TOKEN.finditer(self._text), index, None))
        line = self._text.count("\n", 0, match.start()) + 1
        return ValueError(f"line {line}, token {match[0]!r}: {message}")

    def _take(self) -> str:
        """The next token, or "" past the end."""
        self.pos += 1
        return self.tokens[self.pos - 1] if self.pos <= len(self.tokens) else ""

    def keyword(self, word: str, note: str) -> None:
        """The next token must be ``word`` (any case)."""
        if self._take().upper() != word:
            raise self.error(f"expected the word {word} {note}")

    def integer(self, what: str, low: int = 0, high: int | None = None) -> int:
        """The next token as a decimal integer in ``low..high`` (``high=None``: unbounded)."""
        token = self._take()
        value = _decimal(token)
        if value < low or (high is not None and value > high):
            bounds = f"≥ {low}" if high is None else f"in {low}..{high}"
            raise self.error(f"expected {what} (an integer {bounds})")
        return value

    def floats(self, start: int, stop: int) -> np.ndarray:
        """Tokens ``start:stop`` (fewer at the end of input) as floats, NaN for non-numbers."""
        chunk = self.tokens[start:stop]
        try:
            return np.array(chunk, dtype=np.float64)
        except ValueError:
            return np.array([_float_or_nan(token) for token in chunk], dtype=np.float64)

    def finish(self, what: str) -> None:
        """There must be no token left."""
        if self.pos < len(self.tokens):
            raise self.error(f"unexpected token after {what}", self.pos)


def _float_or_nan(token: str) -> float:
    try:
        return float(token)
    except ValueError:
        return math.nan


def _read_scope(tokens: _Tokens, f: int, n_vars: int) -> list[int]:
    size = tokens.integer(f"the scope size of factor {f}", 0, n_vars)
    what = f"a variable index of factor {f}"
    scope: list[int] = []
    for _ in range(size):
        variable = tokens.integer(what, 0, n_vars - 1)
        if variable in scope:
            raise tokens.error(f"variable {variable} appears twice in the scope of factor {f}")
        scope.append(variable)
    return scope


def _read_count(tokens: _Tokens, f: int, scope: list[int], cardinalities: list[int]) -> int:
    """Read factor f's number of table entries, which must be the product of its cardinalities."""
    cards = [cardinalities[v] for v in scope]
    size = math.prod(cards)
    if tokens.integer(f"the number of table entries of factor {f}") != size:
        raise tokens.error(f"factor {f} over variables {scope} with cardinalities {cards} needs {size} table entries")
    return size


def _table_entries(tokens: _Tokens, spans: list[tuple[int, int]]) -> list[np.ndarray]:
    """The entries in each (start, stop) token span, finite and ≥ 0, from one bulk conversion.

    The spans are consecutive tables, separated by their (valid) count tokens.
    """
    if not spans:
        return []
    first, last = spans[0][0], spans[-1][1]
    values = tokens.floats(first, last)
    bad = np.flatnonzero(~(np.isfinite(values) & (values >= 0)))
    if bad.size or first + values.size < last:
        index = first + (int(bad[0]) if bad.size else values.size)
        f = bisect_right([start for start, _ in spans], index) - 1
        raise tokens.error(f"expected a finite non-negative table entry of factor {f}", index)
    return [values[start - first : stop - first] for start, stop in spans]


def _read_tables(tokens: _Tokens, scopes: list[list[int]], cardinalities: list[int]) -> list[np.ndarray]:
    """Read every factor's ``count entries…`` block; the entries are converted all at once."""
    spans = []
    for f, scope in enumerate(scopes):
        try:
            size = _read_count(tokens, f, scope, cardinalities)
        except ValueError:
            _table_entries(tokens, spans)  # a malformed entry before the bad count is reported first
            raise
        spans.append((tokens.pos, tokens.pos + size))
        tokens.pos += size
    return _table_entries(tokens, spans)


def parse_uai(text: str, max_bytes: int = MAX_BYTES) -> UAIModel:
    """Read a Markov network in the UAI format (see the module docstring)."""
    tokens = _Tokens(text, max_bytes, "UAI")
    tokens.keyword("MARKOV", "(only Markov networks are supported)")
    n_vars = tokens.integer("the number of variables", low=1)
    cardinalities = [
        tokens.integer(f"the cardinality of variable {i}", 1, MAX_CARDINALITY) for i in range(n_vars)
    ]
    n_factors = tokens.integer("the number of factors")
    scopes = [_read_scope(tokens, f, n_vars) for f in range(n_factors)]
    tables = _read_tables(tokens, scopes, cardinalities)
    tokens.finish("the last factor table")
    return UAIModel(n_vars, cardinalities, tuple(scopes), tuple(tables))


def read_preamble(text: str, max_bytes: int = MAX_BYTES) -> tuple[list[int], Iterator[list[int]]]:
    """The cardinalities and, lazily, the factor scopes of a UAI text, without reading its tables.

    A cheap look at a network's size (``MarkovNetwork.estimate_size``): tokens
    are read one at a time and only up to the last scope, so nothing is held per
    table entry. Only what it reads is checked (``ValueError``); ``parse_uai`` checks everything.
    """
    if len(text) > max_bytes:
        raise ValueError(f"UAI text is {len(text):,} characters, over the limit of {max_bytes:,} bytes")
    tokens = (match[0] for match in _TOKEN.finditer(text))

    def integer(what: str, high: int | None = None) -> int:
        token = next(tokens, "")
        value = _decimal(token)
        if value < 0 or (high is not None and value > high):
            raise ValueError(f"UAI preamble: expected {what}, got {token!r}")
        return value

    if next(tokens, "").upper() != "MARKOV":
        raise ValueError("UAI preamble: expected the word MARKOV (only Markov networks are supported)")
    n_vars = integer("the number of variables")
    cardinalities = [integer("a cardinality", MAX_CARDINALITY) for _ in range(n_vars)]
    n_factors = integer("the number of factors")

    def scopes() -> Iterator[list[int]]:
        for _ in range(n_factors):
            yield [integer("a variable index", n_vars - 1) for _ in range(integer("a scope size", n_vars))]

    return cardinalities, scopes()


def _has_sample_count(tokens: list[str]) -> bool:
    """True for the UAI 2008+ layout ``1 m v u …`` (2 + 2m tokens; the plain one has 1 + 2m)."""
    return len(tokens) >= 2 and tokens[0] == "1" and len(tokens) == 2 + 2 * _decimal(tokens[1])


def parse_evidence(text: str, max_bytes: int = MAX_BYTES) -> dict[int, int]:
    """Read a ``.evid`` text into ``{variable: value}`` (see the module docstring for the layouts)."""
    tokens = _Tokens(text, max_bytes, "evidence")
    if _has_sample_count(tokens.tokens):
        tokens.integer("the sample count", 1, 1)
    n_observed = tokens.integer("the number of observed variables")
    evidence: dict[int, int] = {}
    for _ in range(n_observed):
        variable = tokens.integer("an observed variable index")
        if variable in evidence:
            raise tokens.error(f"variable {variable} is observed twice")
        evidence[variable] = tokens.integer(f"the observed value of variable {variable}")
    tokens.finish(f"the {n_observed} observations")
    return evidence


def format_uai(model: UAIModel) -> str:
    """Write ``model`` in the UAI format: one scope per line, one table row (last axis) per line.

    Entries are written with ``repr`` (shortest round-trip form), so
    ``parse_uai(format_uai(m))`` reproduces ``m`` exactly.
    """
    lines = ["MARKOV", str(model.n_vars), " ".join(map(str, model.cardinalities.tolist())), str(len(model.scopes))]
    lines += [" ".join(map(str, [scope.size, *scope.tolist()])) for scope in model.scopes]
    for table in model.tables:
        rows = table.reshape(-1, table.shape[-1] if table.ndim else 1)
        lines += ["", str(table.size), *(" ".join(map(repr, row)) for row in rows.tolist())]
    return "\n".join(lines) + "\n"
