"""Hostile uploads and configuration files: each is refused with a short ValueError naming the problem.

Every refusal must come before the damage (no decompression bomb is expanded,
no RecursionError escapes), and its message must be short and quote at most a
short excerpt of the file, so that file contents never reach a page or a log.
"""

from __future__ import annotations

import io
import json
import struct
import tracemalloc
import zipfile
import zlib

import numpy as np
import pytest

from engine.config import MAX_CONFIG_BYTES, MAX_CONFIG_DEPTH, RunConfig
from engine.presets import load_presets
from engine.uploads import (DEFAULT_LIMITS, MAX_DECOMPRESSED_BYTES, MAX_NPZ_MEMBERS, MAX_UPLOAD_BYTES, UploadLimits,
                            format_bytes, parse_upload)
from tests.hostile_files import decompression_bomb, handmade_zip, npy_header
from tests.tiny import TINY_UAI

#: Longest run of a file's content a message may quote.
MAX_QUOTED = 100


def assert_short(error: pytest.ExceptionInfo, content: bytes | str = b"") -> str:
    """The message is short and holds no run of more than MAX_QUOTED characters of ``content``."""
    message = str(error.value)
    assert len(message) < 300, message
    if isinstance(content, bytes):
        content = content.decode("utf-8", "replace")
    for start in range(max(0, len(message) - MAX_QUOTED)):
        assert message[start:start + MAX_QUOTED + 1] not in content, message
    return message


def npz(**arrays) -> bytes:
    archive = io.BytesIO()
    np.savez(archive, **arrays)
    return archive.getvalue()


@pytest.fixture(scope="module")
def bomb() -> bytes:
    return decompression_bomb()


# -- .npz uploads ---------------------------------------------------------------------------------------
def test_the_bomb_is_real_and_small(bomb):
    assert len(bomb) < 5_000_000
    with zipfile.ZipFile(io.BytesIO(bomb)) as archive:
        (info,) = archive.infolist()
        assert info.file_size == 128 + 3_200_000_000
        with archive.open(info) as member:  # the start decompresses into the header and zeros
            assert np.lib.format.read_magic(member) == (1, 0)
            assert np.lib.format.read_array_header_1_0(member)[0] == (20_000, 20_000)
            assert member.read(1_000_000) == bytes(1_000_000)


def test_a_decompression_bomb_is_refused_before_decompressing(bomb):
    tracemalloc.start()
    try:
        with pytest.raises(ValueError) as error:
            parse_upload("boltzmann", "bomb.npz", bomb)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    message = assert_short(error)
    assert "J (20,000 × 20,000) would take 3.2 GB decompressed; the limit is 200 MB" in message
    assert peak < 50_000_000  # a few copies of the 3 MB file at most, never the 3.2 GB array


def test_the_declared_shape_is_checked_even_when_the_member_is_small():
    # The zip directory declares a tiny member, but its .npy header says 20000 × 20000.
    header = npy_header((20_000, 20_000))
    data = handmade_zip([("J.npy", header, zipfile.ZIP_STORED, zlib.crc32(header), len(header))])
    with pytest.raises(ValueError) as error:
        parse_upload("boltzmann", "liar.npz", data)
    message = assert_short(error)
    assert "20,000 × 20,000" in message and "3.2 GB" in message and "200 MB" in message


def test_limits_are_configurable():
    J = np.zeros((20, 20))
    small = UploadLimits(file_bytes=MAX_UPLOAD_BYTES, decompressed_bytes=1_000)
    with pytest.raises(ValueError, match=r"J \(20 × 20\) would take 3.2 kB decompressed; the limit is 1 kB"):
        parse_upload("boltzmann", "model.npz", npz(J=J), limits=small)
    data = npz(J=J)
    with pytest.raises(ValueError, match=f"the file is {len(data) / 1000:.3g} kB; the limit is 1 kB"):
        parse_upload("boltzmann", "model.npz", data, limits=UploadLimits(file_bytes=1_000))
    assert parse_upload("boltzmann", "model.npz", npz(J=J), limits=DEFAULT_LIMITS)["J"].shape == (20, 20)
    assert DEFAULT_LIMITS == UploadLimits(MAX_UPLOAD_BYTES, MAX_DECOMPRESSED_BYTES)
    assert MAX_UPLOAD_BYTES == 10_000_000 and format_bytes(MAX_DECOMPRESSED_BYTES) == "200 MB"
    with pytest.raises(AttributeError):
        DEFAULT_LIMITS.file_bytes = 1  # frozen


def test_an_oversize_file_is_refused_in_human_units():
    with pytest.raises(ValueError) as error:
        parse_upload("boltzmann", "big.npz", b"PK" + bytes(3 * MAX_UPLOAD_BYTES))
    assert assert_short(error) == "the file is 30 MB; the limit is 10 MB"
    with pytest.raises(ValueError) as error:  # just over: exact counts, as rounding would hide the difference
        parse_upload("bvs", "big.csv", b"0" * (MAX_UPLOAD_BYTES + 1))
    assert assert_short(error) == "the file is 10,000,001 bytes; the limit is 10,000,000 bytes"


def test_pickled_object_arrays_are_refused_without_unpickling():
    with pytest.raises(ValueError) as error:
        parse_upload("boltzmann", "evil.npz", npz(J=np.array([{"code": "evil"}], dtype=object)))
    assert "pickle" in assert_short(error)
    square = np.empty((2, 2), dtype=object)
    with pytest.raises(ValueError, match="pickle"):
        parse_upload("boltzmann", "evil.npz", npz(J=square))


@pytest.mark.parametrize(
    "arrays, message",
    [
        (dict(J=np.zeros((3, 4))), "square"),
        (dict(J=np.zeros((2, 2, 2))), "2-D"),
        (dict(J=np.zeros(4)), "2-D"),
        (dict(J=np.zeros((0, 0))), "empty"),
        (dict(J=np.zeros((2, 2)), h=np.zeros(3)), "h must have shape"),
        (dict(J=np.zeros((2, 2)), h=np.zeros((2, 1))), "1-D"),
        (dict(J=np.zeros((2, 2), dtype=complex)), "only numeric"),
        (dict(J=np.array([["a", "b"], ["c", "d"]])), "only numeric"),
        (dict(J=np.zeros((2, 2), dtype=[("x", "f8")])), "only numeric"),
        (dict(J=np.zeros((2, 2), dtype="datetime64[s]")), "only numeric"),
        (dict(h=np.zeros(2)), "named 'J'"),
    ],
)
def test_odd_arrays_are_refused(arrays, message):
    with pytest.raises(ValueError, match=message) as error:
        parse_upload("boltzmann", "odd.npz", npz(**arrays))
    assert_short(error)


def test_absurd_shapes_are_refused_from_the_header():
    header = npy_header((2**62, 2**62))
    data = handmade_zip([("J.npy", header, zipfile.ZIP_STORED, zlib.crc32(header), len(header))])
    with pytest.raises(ValueError, match="would take") as error:
        parse_upload("boltzmann", "absurd.npz", data)
    assert_short(error)


@pytest.mark.parametrize(
    "data, message",
    [
        (b"not a zip", "no zip header"),
        (b"PK" + b"\x00" * 1000, "not a readable .npz"),
        (b"PK\x03\x04" + bytes(range(256)) * 40, "not a readable .npz"),
    ],
)
def test_files_that_are_not_zip_archives_are_refused(data, message):
    with pytest.raises(ValueError, match=message) as error:
        parse_upload("boltzmann", "fake.npz", data)
    assert_short(error, data)


def test_a_member_that_is_not_an_npy_array_is_refused():
    junk = b"no magic here" * 100
    data = handmade_zip([("J.npy", junk, zipfile.ZIP_STORED, zlib.crc32(junk), len(junk))])
    with pytest.raises(ValueError, match="not a .npy array") as error:
        parse_upload("boltzmann", "junk.npz", data)
    assert_short(error, junk)


def test_a_corrupt_member_is_refused():
    good = npz(J=np.ones((4, 4)))
    corrupt = good.replace(np.ones(4).tobytes(), np.zeros(4).tobytes(), 1)  # the CRC no longer matches
    with pytest.raises(ValueError, match="not a readable .npz") as error:
        parse_upload("boltzmann", "corrupt.npz", corrupt)
    assert_short(error)


def test_a_malformed_npy_header_is_refused_and_not_quoted():
    junk = b"\x93NUMPY\x01\x00" + struct.pack("<H", 5000) + b"{" + b"'x' * 9999, " * 384 + b"}"
    junk = junk[:10 + 5000]
    data = handmade_zip([("J.npy", junk, zipfile.ZIP_STORED, zlib.crc32(junk), len(junk))])
    with pytest.raises(ValueError) as error:
        parse_upload("boltzmann", "header.npz", data)
    assert_short(error, junk)


@pytest.mark.parametrize("n", [5_000, 70_000])  # beyond 65,535 members the counts are in the ZIP64 end record
def test_an_archive_with_thousands_of_members_is_refused(n):
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as zf:
        for i in range(n):
            zf.writestr(str(i), b"")
    with pytest.raises(ValueError, match=f"{n:,} files; the limit is {MAX_NPZ_MEMBERS}") as error:
        parse_upload("boltzmann", "many.npz", archive.getvalue())
    assert_short(error)


def test_an_archive_whose_directory_is_huge_is_refused():
    # Few members, each with a long name: the central directory alone is large.
    members = [("x" * 60_000 + str(i), b"", zipfile.ZIP_STORED, 0, 0) for i in range(3)]
    data = handmade_zip(members)
    with pytest.raises(ValueError, match="directory") as error:
        parse_upload("boltzmann", "names.npz", data)
    assert_short(error, data)


def test_an_archive_too_large_in_total_is_refused():
    J = np.zeros((2, 2))
    padding = b"\x00" * 2_000
    archive = io.BytesIO(npz(J=J))
    with zipfile.ZipFile(archive, "a") as zf:
        zf.writestr("padding.npy", padding)
    with pytest.raises(ValueError, match="the archive would take") as error:
        parse_upload("boltzmann", "padded.npz", archive.getvalue(), limits=UploadLimits(decompressed_bytes=1_000))
    assert_short(error)


def test_valid_npz_files_still_parse():
    J = np.array([[0, 1, 2], [1, 0, 3], [2, 3, 0]], dtype=np.int16)
    archive = io.BytesIO()
    np.savez_compressed(archive, J=np.asfortranarray(J), h=np.array([True, False, True]), notes=np.zeros(3))
    params = parse_upload("boltzmann", "model.NPZ", archive.getvalue())
    assert params["J"].dtype == np.float64 and params["h"].dtype == np.float64
    np.testing.assert_array_equal(params["J"], J)
    np.testing.assert_array_equal(params["h"], [1, 0, 1])


# -- CSV and UAI uploads --------------------------------------------------------------------------------
def test_a_csv_too_wide_is_refused_before_parsing():
    wide = b",".join([b"0"] * 6_000) + b"\n"
    for target in ("boltzmann", "bvs"):
        with pytest.raises(ValueError, match="6,000 columns; the limit is 5,000") as error:
            parse_upload(target, "wide.csv", wide * 3)
        assert_short(error, wide)


def test_a_couplings_csv_wider_than_it_is_long_is_refused_before_parsing():
    row = b",".join([b"0"] * 1_000)
    with pytest.raises(ValueError, match="1,000 columns but at most 2 rows") as error:
        parse_upload("boltzmann", "flat.csv", row + b"\n" + row)
    assert_short(error, row)


def test_a_csv_with_too_many_cells_is_refused_before_parsing():
    table = b"a,b,c,y\n" + b"1,2,3,4\n" * 100
    with pytest.raises(ValueError, match="102 rows × 4 columns would take 3.26 kB as numbers; the limit is 800 bytes"):
        parse_upload("bvs", "data.csv", table, limits=UploadLimits(decompressed_bytes=800))
    assert parse_upload("bvs", "data.csv", table)["X"].shape == (100, 3)


def test_a_dag_csv_with_many_columns_is_refused_before_parsing():
    header = ",".join(f"v{i}" for i in range(40)).encode()
    with pytest.raises(ValueError, match="2 to 12 variables; got 40") as error:
        parse_upload("dag", "dag.csv", header + b"\n" + b"x" * 1_000)
    assert_short(error)


def test_csv_error_messages_quote_only_an_excerpt():
    cell = b"x" * 1_000_000
    for target, data in [("bvs", b"a,y\n1," + cell + b"\n2,3\n"), ("boltzmann", b"0," + cell + b"\n1,0\n")]:
        with pytest.raises(ValueError, match="num.*could not convert") as error:
            parse_upload(target, "data.csv", data)
        assert_short(error, data)
    with pytest.raises(ValueError, match="UTF-8") as error:
        parse_upload("bvs", "data.csv", b"a,y\n\xff\xfe,1\n")
    assert_short(error)


def test_uai_error_messages_quote_only_an_excerpt():
    for data in (b"MARKOV\n" + b"9" * 1_000_000, b"MARKOV\n1\n2\n1\n1 0\n2 " + b"1" * 500_000, b"A" * 1_000_000):
        with pytest.raises(ValueError) as error:
            parse_upload("markov_network", "net.uai", data)
        assert_short(error, data)
    with pytest.raises(ValueError, match="ASCII") as error:
        parse_upload("markov_network", "net.uai", "MARKOV ü".encode())
    assert_short(error)
    assert parse_upload("markov_network", "tiny.uai", TINY_UAI.encode())["uai_text"] == TINY_UAI


def test_a_long_filename_is_not_quoted_whole():
    name = "n" * 10_000 + ".exe"
    with pytest.raises(ValueError, match="accepts .npz, .csv") as error:
        parse_upload("boltzmann", name, b"data")
    assert_short(error, name)
    with pytest.raises(ValueError, match="square") as error:
        parse_upload("boltzmann", "n" * 10_000 + ".npz", npz(J=np.zeros((2, 3))))
    assert_short(error, name)
    assert parse_upload("boltzmann", "n" * 10_000 + ".csv", b"0,1\n1,0\n")["J"].shape == (2, 2)


@pytest.mark.parametrize(
    "n, text",
    [(0, "0 bytes"), (999, "999 bytes"), (1_000, "1 kB"), (12_345_678, "12.3 MB"), (200_000_000, "200 MB"),
     (3_200_000_128, "3.2 GB"), (999_600_000, "1 GB"), (5 * 10**15, "5,000 TB")],
)
def test_sizes_are_given_in_human_units(n, text):
    assert format_bytes(n) == text


# -- configuration files ----------------------------------------------------------------------------------
def deep_array(depth: int) -> str:
    return "[" * depth + "]" * depth


def deep_object(depth: int) -> str:
    return '{"a": ' * depth + "1" + "}" * depth


NESTED = [
    deep_array(100_000),
    deep_object(100_000),
    "[" * 100_000,  # unterminated
    '{"a": ' * 100_000,
    '{"target": "boltzmann", "target_params": {"J": ' + deep_array(5_000) + "}}",
    '{"target": "markov_network", "target_params": {"evidence": ' + deep_object(5_000) + "}}",
    '{"target_params": {"size": 3, "extra": ' + deep_object(40) + "}}",
    '{"sampler_params": {"reference": ' + deep_array(MAX_CONFIG_DEPTH) + "}}",
    '{"compare_params": ' + deep_object(1_000) + "}",
    '["a string with brackets [[[[", ' + deep_array(50) + "]",
    '{"a": "\\" [[[[", "b": ' + deep_array(1_000) + "}",
]


@pytest.mark.parametrize("text", NESTED, ids=range(len(NESTED)))
def test_deeply_nested_json_is_refused_without_recursion_error(text):
    for data in (text, text.encode()):
        with pytest.raises(ValueError, match=f"nests deeper than {MAX_CONFIG_DEPTH} levels") as error:
            RunConfig.from_json(data)
        assert_short(error, text)


def test_deep_nesting_from_python_is_refused_too():
    nested: list = []
    for _ in range(10_000):
        nested = [nested]
    with pytest.raises(ValueError, match="nests deeper") as error:
        RunConfig.from_dict({"target": "boltzmann", "target_params": {"J": nested}})
    assert_short(error)


def test_nesting_within_the_limit_is_parsed():
    config = RunConfig.from_json('{"target": "boltzmann", "target_params": {"J": [[0, 1], [1, 0]]}, '
                                 '"sampler": "gibbs", "statistic": "magnetisation", "seed": 3}')
    assert config.target_params["J"] == [[0, 1], [1, 0]] and config.seed == 3


@pytest.mark.parametrize(
    "text, message",
    [
        ('{"seed": 1e400}', "too large"),
        ('{"steps_per_second": -1e400}', "too large"),
        ('{"seed": ' + "9" * 100_000 + "}", "integer of 100,000 digits"),
        ('{"seed": -' + "9" * 5_000 + "}", "integer of 5,000 digits"),
        ('{"target_params": {"size": ' + "1" * 4_301 + "}}", "integer of 4,301 digits"),
        ('{"steps_per_second": 1' + "0" * 100_000 + ".5}", "too large"),
        ('{"steps_per_second": NaN}', "NaN is not allowed"),
        ('{"steps_per_second": Infinity}', "Infinity is not allowed"),
        ('{"target_params": {"mu": -Infinity}}', "-Infinity is not allowed"),
        ('{"seed": 123456789012345678901}', "integer of 21 digits"),
    ],
)
def test_huge_numbers_and_non_finite_literals_are_refused(text, message):
    with pytest.raises(ValueError, match=message) as error:
        RunConfig.from_json(text)
    assert_short(error, text)


@pytest.mark.parametrize(
    "data",
    [b'{"target": "\xff\xfe"}', b"\xff" * 1_000, b'{"statistic": "' + b"\xc3" * 1_000 + b'"}', b"\x00\x00\x00{"],
)
def test_invalid_utf8_is_refused(data):
    with pytest.raises(ValueError) as error:
        RunConfig.from_json(data)
    message = assert_short(error, data)
    assert "UTF-8" in message or "not valid JSON" in message


def test_a_utf8_byte_order_mark_is_accepted():
    config = RunConfig.from_json(b"\xef\xbb\xbf" + b'{"seed": 7}')
    assert config.seed == 7


@pytest.mark.parametrize("text", ["[1, 2]", "3", '"a string"', "null", "true", ""])
def test_a_non_object_top_level_is_refused(text):
    with pytest.raises(ValueError, match="JSON object|not valid JSON") as error:
        RunConfig.from_json(text)
    assert_short(error)


LONG = "z" * 100_000


@pytest.mark.parametrize(
    "config, message",
    [
        ({"n_chains": "many"}, "n_chains must be an integer, not a string"),
        ({"n_chains": 2.5}, "n_chains must be an integer"),
        ({"n_chains": True}, "n_chains must be an integer, not true"),
        ({"n_chains": 100_000}, "n_chains"),
        ({"seed": -5}, "seed"),
        ({"seed": [1]}, "seed must be an integer, not a list"),
        ({"opad": "yes"}, "opad must be true or false"),
        ({"steps_per_second": {"a": 1}}, "steps_per_second must be a number, not an object"),
        ({"target": ["ising1d"]}, "target must be one of"),
        ({"target": LONG}, "100,000 characters"),
        ({"statistic": LONG}, "100,000 characters"),
        ({"sampler": None}, "sampler must not be null"),
        ({"target_params": {"size": [[[]]]}}, "target_params.size must be an integer, not a list"),
        ({"target_params": {"size": 10**9}}, "size"),
        ({"target_params": {LONG: 1}}, "unknown parameter"),
        ({"target_params": {"lam": "strong"}}, "target_params.lam must be a number, not a string"),
        ({"target": "boltzmann", "target_params": {"J": [["a", "b"], ["c", "d"]]}}, "only numbers; found a string"),
        ({"target": "boltzmann", "target_params": {"J": [[0, 1], [1, None]]}}, "only numbers"),
        ({"target": "boltzmann", "target_params": {"J": {"rows": 2}}}, "an array of numbers; found an object"),
        ({"target": "boltzmann", "target_params": {"J": LONG}}, "only numbers; found a string of 100,000"),
        ({"target": "markov_network", "target_params": {"network": LONG}}, "network must be one of"),
        ({"target": "markov_network", "target_params": {"evidence": [1]}}, "evidence must be a JSON object"),
        ({"sampler_params": {"n_chains": 4}}, "top level"),
        ({"sampler_params": {"balancing": 3.5}}, "balancing"),
        ({"sampler_params": {LONG: 1}}, "unknown parameter"),
        ({"compare_sampler": "gibbs", "compare_params": {"scan": LONG}}, "scan must be one of"),
        ({"compare_params": [1]}, "compare_params must be a JSON object"),
        ({LONG: 1, "other": 2}, "unknown configuration keys"),
    ],
)
def test_values_of_the_wrong_type_are_refused_with_a_short_message(config, message):
    text = json.dumps(config)
    with pytest.raises(ValueError, match=message) as error:
        RunConfig.from_json(text)
    assert_short(error, text)
    with pytest.raises(ValueError, match=message):
        RunConfig.from_dict(config)


def test_too_many_numbers_in_a_configuration_are_refused():
    J = np.zeros((20, 20)).tolist()
    text = json.dumps({"target": "boltzmann", "target_params": {"J": J}})
    small = UploadLimits(decompressed_bytes=800)
    with pytest.raises(ValueError, match=r"target_params.J holds 400 numbers \(3.2 kB as float64\); "
                                         r"the limit is 100 \(800 bytes\)") as error:
        RunConfig.from_json(text, limits=small)
    assert_short(error, text)
    assert RunConfig.from_json(text).target_params["J"] == J
    huge = np.broadcast_to(0.0, (6_000, 6_000))  # 288 MB as float64, never allocated
    with pytest.raises(ValueError, match=r"36,000,000 numbers \(288 MB as float64\); "
                                         r"the limit is 25,000,000 \(200 MB\)"):
        RunConfig.from_dict({"target": "boltzmann", "target_params": {"J": huge}})


def test_invalid_json_messages_name_the_position_not_the_content():
    text = '{"target": "' + "x" * 10_000 + '", oops}'
    with pytest.raises(ValueError, match="not valid JSON.*line 1") as error:
        RunConfig.from_json(text)
    assert_short(error, text)
    with pytest.raises(ValueError, match=f"larger than {format_bytes(MAX_CONFIG_BYTES)}"):
        RunConfig.from_json(b" " * (MAX_CONFIG_BYTES + 1))


def test_every_preset_round_trips_through_json():
    for preset in load_presets().values():
        config = preset.run_config()
        again = RunConfig.from_json(config.to_json())
        assert again.to_dict() == config.to_dict()


@pytest.mark.parametrize("data, message", [
    (b"a,b,y\n1\n2\n", "3 column names but 1 column of numbers"),
    (b"y\n1,2\n3,4\n", "the first row must name every column"),
    (b"a,b,c,y\n1,2\n3,4\n", "4 column names but 2 columns of numbers"),
])
def test_a_header_that_does_not_match_the_numbers_is_refused_in_plain_english(data, message):
    with pytest.raises(ValueError, match=message):
        parse_upload("bvs", "data.csv", data)
