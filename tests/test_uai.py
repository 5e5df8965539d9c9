"""Tests of the UAI reader and writer: round trips, every malformed input, the size limit, evidence."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from targets.uai import MAX_BYTES, UAIModel, format_uai, parse_evidence, parse_uai

#: Three variables (the last ternary) and factors over (0), (0, 1), (1, 2); line numbers matter below.
TINY = """MARKOV
3
2 2 3
3
1 0
2 0 1
2 1 2

2
0.5 1.5

4
1 2
3 0

6
0.1 0.2 0.3
0.4 0.5 0.6
"""


def with_line(text: str, line: int, new: str) -> str:
    """``text`` with its 1-based ``line`` replaced by ``new``."""
    lines = text.split("\n")
    lines[line - 1] = new
    return "\n".join(lines)


def assert_same_model(a: UAIModel, b: UAIModel) -> None:
    assert a.n_vars == b.n_vars
    np.testing.assert_array_equal(a.cardinalities, b.cardinalities)
    assert len(a.scopes) == len(b.scopes) == len(a.tables) == len(b.tables)
    for scope_a, scope_b, table_a, table_b in zip(a.scopes, b.scopes, a.tables, b.tables):
        np.testing.assert_array_equal(scope_a, scope_b)
        assert table_a.shape == table_b.shape
        np.testing.assert_array_equal(table_a, table_b)


def test_parse_reads_scopes_and_tables_with_the_last_variable_fastest():
    model = parse_uai(TINY)
    assert model.n_vars == 3
    assert model.cardinalities.tolist() == [2, 2, 3]
    assert [scope.tolist() for scope in model.scopes] == [[0], [0, 1], [1, 2]]
    np.testing.assert_array_equal(model.tables[1], [[1, 2], [3, 0]])
    assert model.tables[2].shape == (2, 3)
    assert model.tables[2][1, 0] == 0.4  # x1 = 1, x2 = 0: entry 1·3 + 0
    assert not model.tables[0].flags.writeable


def test_line_layout_is_free_and_the_header_word_any_case():
    one_line = " ".join(TINY.replace("MARKOV", "markov").split())
    assert_same_model(parse_uai(one_line), parse_uai(TINY))


def test_format_writes_a_text_that_reads_back_identically():
    text = format_uai(parse_uai(TINY))
    assert text.startswith("MARKOV\n3\n2 2 3\n3\n1 0\n2 0 1\n2 1 2\n")
    assert_same_model(parse_uai(text), parse_uai(TINY))
    assert format_uai(parse_uai(text)) == text


@st.composite
def models(draw) -> UAIModel:
    """Random small models: any cardinalities, scopes of any order (empty included), any finite entries ≥ 0."""
    n_vars = draw(st.integers(1, 5))
    cards = draw(st.lists(st.integers(1, 3), min_size=n_vars, max_size=n_vars))
    variables = st.lists(st.integers(0, n_vars - 1), unique=True, max_size=min(n_vars, 3))
    scopes = draw(st.lists(variables, max_size=5))
    entries = st.floats(min_value=0.0, max_value=1e300, allow_nan=False, allow_infinity=False)
    sizes = [int(np.prod([cards[v] for v in scope])) for scope in scopes]
    tables = [draw(st.lists(entries, min_size=size, max_size=size)) for size in sizes]
    return UAIModel(n_vars, cards, tuple(scopes), tuple(tables))


@settings(max_examples=200, deadline=None)
@given(models())
def test_round_trip_of_random_models_is_exact(model):
    assert_same_model(parse_uai(format_uai(model)), model)


# (line replaced, its new text, the offending token, a fragment of the message)
MALFORMED = {
    "header word": (1, "BAYES", "BAYES", "expected the word MARKOV"),
    "number of variables": (2, "three", "three", "the number of variables (an integer ≥ 1)"),
    "no variables": (2, "0", "0", "the number of variables (an integer ≥ 1)"),
    "zero cardinality": (3, "2 0 3", "0", "the cardinality of variable 1 (an integer in 1..1000000)"),
    "fractional cardinality": (3, "2 2.0 3", "2.0", "the cardinality of variable 1"),
    "negative number of factors": (4, "-1", "-1", "the number of factors (an integer ≥ 0)"),
    "scope larger than the network": (5, "4 0", "4", "the scope size of factor 0 (an integer in 0..3)"),
    "variable index out of range": (6, "2 0 3", "3", "a variable index of factor 1 (an integer in 0..2)"),
    "negative variable index": (6, "2 -1 0", "-1", "a variable index of factor 1 (an integer in 0..2)"),
    "duplicate variable in a scope": (7, "2 1 1", "1", "variable 1 appears twice in the scope of factor 2"),
    "non-integer number of entries": (12, "x", "x", "the number of table entries of factor 1 (an integer ≥ 0)"),
    "wrong table length": (16, "5", "5", "over variables [1, 2] with cardinalities [2, 3] needs 6 table entries"),
    "negative entry": (14, "3 -1", "-1", "expected a finite non-negative table entry of factor 1"),
    "nan entry": (17, "0.1 nan 0.3", "nan", "expected a finite non-negative table entry of factor 2"),
    "infinite entry": (17, "0.1 inf 0.3", "inf", "expected a finite non-negative table entry of factor 2"),
    "overflowing entry": (17, "0.1 1e400 0.3", "1e400", "expected a finite non-negative table entry of factor 2"),
    "non-numeric entry": (10, "0.5 abc", "abc", "expected a finite non-negative table entry of factor 0"),
    "trailing garbage": (19, "7", "7", "unexpected token after the last factor table"),
    "punctuation": (13, "1 2;", "2;", "unexpected character ';'"),
    "digit separator": (13, "1_0 2", "1_0", "unexpected character '_'"),
    "non-ASCII digit": (13, "1 \u0662", "\u0662", "unexpected character"),
}


@pytest.mark.parametrize("line, new, token, fragment", MALFORMED.values(), ids=MALFORMED.keys())
def test_malformed_input_names_the_line_and_the_token(line, new, token, fragment):
    with pytest.raises(ValueError) as info:
        parse_uai(with_line(TINY, line, new))
    message = str(info.value)
    assert message.startswith(f"line {line}, token {token!r}: ")
    assert fragment in message


@pytest.mark.parametrize(
    "text, line",
    [("", 1), ("MARKOV\n3\n2 2", 3), ("\n".join(TINY.split("\n")[:17]), 17)],
    ids=["empty", "in the preamble", "in a table"],
)
def test_truncated_input_reports_the_end_of_input(text, line):
    with pytest.raises(ValueError, match=f"^line {line}, at end of input: expected "):
        parse_uai(text)


def test_the_first_problem_in_token_order_is_reported():
    bad_entry_then_bad_count = with_line(with_line(TINY, 10, "0.5 abc"), 16, "5")
    with pytest.raises(ValueError, match="^line 10, token 'abc': expected a finite non-negative table entry"):
        parse_uai(bad_entry_then_bad_count)
    missing_entry = with_line(TINY, 14, "3")  # factor 1 takes the next count, 6, as its last entry
    with pytest.raises(ValueError, match="^line 17, token '0.1': expected the number of table entries of factor 2"):
        parse_uai(missing_entry)


def test_size_limit():
    size = len(TINY.encode())
    assert parse_uai(TINY, max_bytes=size).n_vars == 3
    with pytest.raises(ValueError, match=f"UAI text is {size:,} bytes, over the limit of {size - 1:,} bytes"):
        parse_uai(TINY, max_bytes=size - 1)
    with pytest.raises(ValueError, match="over the limit of 5,000,000 bytes"):
        parse_uai(TINY + " " * MAX_BYTES)
    with pytest.raises(ValueError, match="evidence text is"):
        parse_evidence("1 0 1", max_bytes=4)


def test_model_rejects_inconsistent_arrays():
    with pytest.raises(ValueError):
        UAIModel(2, [2, 2], ([0, 1],), ([1.0, 2.0, 3.0],))  # 3 entries for 2×2
    with pytest.raises(ValueError, match="not distinct indices"):
        UAIModel(2, [2, 2], ([0, 0],), ([1.0, 2.0, 3.0, 4.0],))
    with pytest.raises(ValueError, match="cardinalities"):
        UAIModel(2, [2], (), ())


@pytest.mark.parametrize(
    "text, evidence",
    [
        ("2 0 1 3 0", {0: 1, 3: 0}),
        ("1\n2\n0 1\n3 0\n", {0: 1, 3: 0}),  # UAI 2008+: leading sample count 1
        ("1 0 1", {0: 1}),
        ("1 0", {}),
        ("0", {}),
    ],
)
def test_evidence_layouts(text, evidence):
    assert parse_evidence(text) == evidence


@pytest.mark.parametrize(
    "text, located",
    [
        ("2 0 1 0 1", "line 1, token '0': variable 0 is observed twice"),
        ("1\n2\n0 1\n3 x\n", "line 4, token 'x': expected the observed value of variable 3"),
        ("1 -2 1", "line 1, token '-2': expected an observed variable index"),
        ("2 0 1 3", "line 1, at end of input: expected the observed value of variable 3"),
        ("1 0 1\n5", "line 2, token '5': unexpected token after the 1 observations"),
    ],
)
def test_malformed_evidence_names_the_line_and_the_token(text, located):
    with pytest.raises(ValueError) as info:
        parse_evidence(text)
    assert str(info.value).startswith(located)
