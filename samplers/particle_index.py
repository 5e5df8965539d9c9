"""Dictionaries from binary states to particle numbers, with every operation on a whole array of keys.

A particle store looks up thousands of states per flush; a Python ``dict``
costs about a microsecond per key, which is as much as the sampler step it
records. States of up to 62 bits are keyed by their integer code
(``targets.state_codes``) in ``CodeIndex``, an open-addressing hash table
(multiplicative hashing, linear probing, load ≤ 1/2) whose lookups and inserts
are compiled loops over a whole array of keys (the expected probe length is a
small constant). Longer states are keyed by their packed bits in
``BytesIndex`` (a ``dict``; exact, slower).

Both map an array of keys to particle numbers 0, 1, 2, … in order of first
insertion, with −1 for keys not present.
"""

from __future__ import annotations

import numpy as np
from numba import njit

#: 2^64 / golden ratio: Knuth's multiplicative hash constant.
_FIBONACCI = np.uint64(0x9E3779B97F4A7C15)
_EMPTY = -1


def state_keys(states: np.ndarray) -> np.ndarray:
    """Integer code of each row for ≤ 62 bits (bit 0 most significant), else its packed bits as one void scalar."""
    d = states.shape[1]
    if d <= 62:
        weights = np.left_shift(np.int64(1), np.arange(d - 1, -1, -1, dtype=np.int64))
        return states.astype(np.int64) @ weights
    packed = np.ascontiguousarray(np.packbits(states, axis=1))
    return packed.view(np.dtype((np.void, packed.shape[1])))[:, 0]


@njit(cache=True)
def _home(code, bits):
    """Slot where ``code``'s probe starts: the top ``bits`` bits of code × 2^64/φ (wrapping)."""
    return np.int64((np.uint64(code) * _FIBONACCI) >> np.uint64(64 - bits))


@njit(cache=True)
def _find(table_codes, table_numbers, bits, codes, found):
    """found[j] ← the number of codes[j], or −1 (linear probing from its home slot)."""
    mask = table_codes.size - 1
    for j in range(codes.size):
        code = codes[j]
        slot = _home(code, bits)
        found[j] = _EMPTY
        while table_codes[slot] != _EMPTY:
            if table_codes[slot] == code:
                found[j] = table_numbers[slot]
                break
            slot = (slot + 1) & mask


@njit(cache=True)
def _insert(table_codes, table_numbers, bits, codes, first_number):
    """Put codes[j] (absent, distinct) in the first free slot of its probe, numbered first_number + j."""
    mask = table_codes.size - 1
    for j in range(codes.size):
        slot = _home(codes[j], bits)
        while table_codes[slot] != _EMPTY:
            slot = (slot + 1) & mask
        table_codes[slot] = codes[j]
        table_numbers[slot] = first_number + j


class CodeIndex:
    """Hash table int64 code (≥ 0) → particle number (compiled open addressing, load ≤ 1/2)."""

    def __init__(self, capacity: int = 1 << 12):
        self._allocate(capacity)

    def _allocate(self, capacity: int) -> None:
        self._bits = max(4, int(capacity - 1).bit_length())
        self._codes = np.full(1 << self._bits, _EMPTY, dtype=np.int64)
        self._numbers = np.empty(1 << self._bits, dtype=np.int64)
        self.size = 0

    @property
    def nbytes(self) -> int:
        return self._codes.nbytes + self._numbers.nbytes

    def find(self, codes: np.ndarray) -> np.ndarray:
        """Particle number of each code, −1 where absent."""
        found = np.empty(codes.size, dtype=np.int64)
        _find(self._codes, self._numbers, self._bits, np.ascontiguousarray(codes, dtype=np.int64), found)
        return found

    def insert(self, codes: np.ndarray) -> None:
        """Add distinct codes not yet present; they get the next particle numbers in order."""
        if self.size + codes.size > self._codes.size // 2:
            self._grow(self.size + codes.size)
        _insert(self._codes, self._numbers, self._bits, np.ascontiguousarray(codes, dtype=np.int64), self.size)
        self.size += codes.size

    def _grow(self, needed: int) -> None:
        held = self._codes != _EMPTY
        codes, numbers = self._codes[held], self._numbers[held]
        self._allocate(4 * needed)
        self.insert(codes[np.argsort(numbers)])


class BytesIndex:
    """Dictionary packed state bytes → particle number, for states longer than 62 bits."""

    def __init__(self):
        self._numbers: dict[bytes, int] = {}

    @property
    def size(self) -> int:
        return len(self._numbers)

    @property
    def nbytes(self) -> int:
        """Approximate: CPython's dict slot and bytes object per key."""
        return sum(len(key) + 33 + 8 for key in self._numbers) + 8 * 3 * len(self._numbers)

    def find(self, keys: np.ndarray) -> np.ndarray:
        get = self._numbers.get
        return np.fromiter((get(key.tobytes(), -1) for key in keys), dtype=np.int64, count=keys.size)

    def insert(self, keys: np.ndarray) -> None:
        for key in keys:
            self._numbers[key.tobytes()] = len(self._numbers)


def make_index(dim: int) -> CodeIndex | BytesIndex:
    """The index suited to states of ``dim`` bits."""
    return CodeIndex() if dim <= 62 else BytesIndex()
