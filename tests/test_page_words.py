"""Refusals in the user's words and the page's options, with the numbers that decided them.

A limit is stated with both numbers, told apart when rounding would print
them equal; a file's fault is named by its line and column, never by the
parsing library's message; a model the samplers cannot start or whose
energies overflow floating point is refused saying what the page can change.
"""

from __future__ import annotations

import io
import zipfile
import zlib

import numpy as np
import pytest

from engine.config import RunConfig
from engine.session import RunSession
from engine.uploads import parse_upload
from tests.hostile_files import handmade_zip, npy_header

#: Phrases of libraries and of Python that a page must never show.
LIBRARY_VOICE = ("usecols", "invalid literal", "init=", "float64", "non-binary variables")


def refusal(target: str, filename: str, data: bytes) -> str:
    with pytest.raises(ValueError) as error:
        parse_upload(target, filename, data)
    message = str(error.value)
    assert not any(phrase in message for phrase in LIBRARY_VOICE), message
    return message


def npz(**arrays) -> bytes:
    archive = io.BytesIO()
    np.savez(archive, **arrays)
    return archive.getvalue()


def test_a_size_just_over_its_limit_is_told_apart_from_it():
    header = npy_header((5_000, 5_000))  # the array takes 200,000,000 bytes: the limit; the file 128 more
    data = handmade_zip([("J.npy", header, zipfile.ZIP_STORED, zlib.crc32(header), len(header) + 200_000_000)])
    assert refusal("boltzmann", "j.npz", data) == (
        "j.npz: J would take 200,000,128 bytes decompressed; the limit is 200,000,000 bytes")


@pytest.mark.parametrize("target, data, message", [
    ("boltzmann", b"0,1\n1,0,3\n", "m.csv: line 2 has 3 values but line 1 has 2: every row must have as many"),
    ("bvs", b"a,y\n1,2\n\n3\n4,5\n", "m.csv: line 4 has 1 value but line 2 has 2: every row must have as many"),
    ("dag", b"a,b\n1,2\n3,4,5\n", "m.csv: line 3 has 3 values but line 2 has 2: every row must have as many"),
    ("boltzmann", b"0,1\n1,x\n", "could not convert 'x' (line 2, column 2) to a number"),
    ("bvs", b"a,y\n1,2\n# a comment\n3,seven\n", "could not convert 'seven' (line 4, column 2) to a number"),
])
def test_a_csv_refusal_names_the_line_and_column(target, data, message):
    assert message in refusal(target, "m.csv", data)


def test_a_network_with_variables_of_more_than_two_states_is_refused_in_words():
    network = b"MARKOV\n3\n2 3 4\n1\n1 0\n2\n1 1\n"
    assert refusal("markov_network", "n.uai", network) == (
        "n.uai: every variable must have 2 states (binary); 2 variables of 3 have more or fewer, "
        "e.g. variable 1 has 3 states")


@pytest.mark.parametrize("arrays", [{"J": np.array([[0, 1e308], [1e308, 0]])},
                                    {"J": np.zeros((2, 2)), "h": np.array([1e200, 0])}])
def test_couplings_whose_energies_overflow_are_refused_with_the_limit(arrays):
    message = refusal("boltzmann", "big.npz", npz(**arrays))
    assert message.startswith("big.npz: the energies of J and h reach about 1e+")
    assert "the limit is 1e+148" in message
    assert "J and h reach about 1e+308" in refusal("boltzmann", "big.csv", b"0,1e308\n1e308,0\n")


def build(**values) -> str:
    """Why a run of this configuration cannot be built, as the worker builds it."""
    with pytest.raises(ValueError) as error:
        RunSession(RunConfig(**values), run=1, request=1, max_particles=1_000)
    message = str(error.value)
    assert not any(phrase in message for phrase in LIBRARY_VOICE), message
    return message


def test_a_link_or_configuration_with_overflowing_couplings_is_refused():
    J = [[0, 1e308], [1e308, 0]]
    assert "the energies of J and h reach about 1e+308" in build(target="boltzmann", target_params={"J": J},
                                                                sampler="metropolis", n_chains=2)


def test_a_zero_probability_start_says_what_the_page_can_change():
    network = "MARKOV\n2\n2 2\n1\n2 0 1\n\n4 1 0 0 1\n"  # the states 01 and 10 have probability zero
    message = build(target="markov_network", target_params={"uai_text": network}, sampler="metropolis",
                    n_chains=8, seed=1)
    assert "probability zero" in message and "another seed or fewer chains" in message
