"""A hash index from binary states to particle numbers, compiled, for states of any length.

A state of d bits is kept as its key: ⌈d/64⌉ words of 64 bits, site i at bit
i mod 64 of word ⌊i/64⌋ (``pack_state``). The index is an open-addressing
hash table (multiplicative hashing of the words, linear probing, load ≤ 1/2,
so the expected probe length is a small constant) whose slots hold a key's
first word and its particle number (0, 1, 2, … in order of first insertion);
the whole keys are stored once, row ``n`` of ``words`` for particle n, and
read only when the first words agree.

``find_or_insert`` is the compiled operation the particle store's fold calls
on every key (``samplers.opad.store``); ``ParticleIndex`` owns the arrays, grows
them between compiled calls (``reserve``) and answers whole-array lookups and
unpacking for the store's readers.

Cost: the store looks up every sample and proposal of every chain, and a
Python ``dict`` costs about a microsecond per key — as much as the sampler
step it records; here a lookup reads one cache line (the slot) unless the
first words agree.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from targets.compiled import helper

#: 2^64 / golden ratio: Knuth's multiplicative hash constant.
_FIBONACCI = np.uint64(0x9E3779B97F4A7C15)
#: A free slot's particle number.
_EMPTY = np.iinfo(np.uint64).max


def words_per_state(dim: int) -> int:
    """64-bit words of a state's key."""
    return max(1, (dim + 63) // 64)


@helper
def pack_state(states, row, keys, k):
    """keys[k] ← the bits of ``states[row]`` (0/1 bytes): site i at bit i mod 64 of word ⌊i/64⌋.

    Keys are rows of 2-D arrays, passed with their row number, throughout: a
    row taken as an array view would cost a reference count in the inner loops.
    """
    d = states.shape[1]
    for w in range(keys.shape[1]):
        word = np.uint64(0)
        for i in range(64 * w, min(64 * w + 64, d)):
            word |= np.uint64(states[row, i]) << np.uint64(i & 63)
        keys[k, w] = word


@helper
def set_sites(keys, k, sites, values, row):
    """Set the bits ``sites[row]`` of keys[k] to ``values[row]`` (0/1)."""
    for j in range(sites.shape[1]):
        word, bit = sites[row, j] >> 6, np.uint64(1) << np.uint64(sites[row, j] & 63)
        keys[k, word] = (keys[k, word] | bit) if values[row, j] else (keys[k, word] & ~bit)


@helper
def same_key(keys, k, others, j):
    """Whether keys[k] = others[j]."""
    for w in range(keys.shape[1]):
        if keys[k, w] != others[j, w]:
            return False
    return True


@helper
def home(keys, k, bits):
    """Slot where keys[k]'s probe starts: the top ``bits`` bits of its words mixed by × 2^64/φ (wrapping)."""
    mixed = np.uint64(0)
    for w in range(keys.shape[1]):
        mixed = (mixed ^ keys[k, w]) * _FIBONACCI
    return np.int64(mixed >> np.uint64(64 - bits))


@helper
def _holds(table, slot, words, keys, k):
    """Whether the particle in ``slot`` has key keys[k] (its first word is in the slot, the others in ``words``)."""
    if table[slot, 0] != keys[k, 0]:
        return False
    number = table[slot, 1]
    for w in range(1, keys.shape[1]):
        if words[number, w] != keys[k, w]:
            return False
    return True


@helper
def slot_of(table, bits, words, keys, k):
    """The slot holding keys[k], or the free slot where its probe ends."""
    mask = table.shape[0] - 1
    slot = home(keys, k, bits)
    while table[slot, 1] != _EMPTY and not _holds(table, slot, words, keys, k):
        slot = (slot + 1) & mask
    return slot


@helper
def number_in(table, slot):
    """The particle number in ``slot``, −1 if it is free."""
    return -1 if table[slot, 1] == _EMPTY else np.int64(table[slot, 1])


@helper
def _put(table, slot, keys, k, number):
    """Slot ``slot`` ← particle ``number`` with key keys[k] (its first word)."""
    table[slot, 0] = keys[k, 0]
    table[slot, 1] = number


@helper
def find_or_insert(table, bits, words, size, keys, k):
    """(particle number of keys[k], whether it is new): a new key becomes particle ``size`` (its words stored in
    row ``size``). The caller leaves room: ``size`` < rows of ``words`` and load ≤ 1/2 after the insert."""
    slot = slot_of(table, bits, words, keys, k)
    if table[slot, 1] != _EMPTY:
        return np.int64(table[slot, 1]), False
    _put(table, slot, keys, k, size)
    for w in range(keys.shape[1]):
        words[size, w] = keys[k, w]
    return np.int64(size), True


@njit(cache=True)
def _find_states(table, bits, words, states, found):
    """found[j] ← the particle number of states[j], or −1."""
    key = np.empty((1, words.shape[1]), dtype=np.uint64)
    for j in range(states.shape[0]):
        pack_state(states, j, key, 0)
        found[j] = number_in(table, slot_of(table, bits, words, key, 0))


@njit(cache=True)
def _rehash(table, bits, words, size):
    """Put particles 0 … size − 1 (their keys in ``words``) into an empty table."""
    for number in range(size):
        _put(table, slot_of(table, bits, words, words, number), words, number, number)


class ParticleIndex:
    """Particle numbers of binary states of ``dim`` sites (compiled open addressing over stored keys)."""

    def __init__(self, dim: int, capacity: int = 1024):
        self.dim = dim
        self.size = 0
        self.words = np.zeros((capacity, words_per_state(dim)), dtype=np.uint64)
        self._allocate_table(capacity)

    def _allocate_table(self, capacity: int) -> None:
        self.bits = max(4, int(2 * capacity - 1).bit_length())
        self.table = np.full((1 << self.bits, 2), _EMPTY, dtype=np.uint64)

    @property
    def capacity(self) -> int:
        """Particles the arrays hold before ``reserve`` must grow them."""
        return self.words.shape[0]

    @property
    def nbytes(self) -> int:
        return self.table.nbytes + self.words.nbytes

    def reserve(self, needed: int) -> bool:
        """Make room for ``needed`` particles in all (doubling the capacity); True if the arrays were replaced."""
        capacity = self.capacity
        if needed <= capacity:
            return False
        while capacity < needed:
            capacity *= 2
        words = np.zeros((capacity, self.words.shape[1]), dtype=np.uint64)
        words[:self.size] = self.words[:self.size]
        self.words = words
        self._allocate_table(capacity)
        _rehash(self.table, self.bits, self.words, self.size)
        return True

    def find(self, states: np.ndarray) -> np.ndarray:
        """Particle number of each state (rows of 0/1 bytes), −1 where absent."""
        found = np.empty(states.shape[0], dtype=np.int64)
        _find_states(self.table, self.bits, self.words, np.ascontiguousarray(states, dtype=np.uint8), found)
        return found

    def states(self, numbers: np.ndarray) -> np.ndarray:
        """The states of these particles, ``(len(numbers), dim)`` uint8."""
        as_bytes = self.words[numbers].astype("<u8").view(np.uint8)
        return np.unpackbits(as_bytes, axis=1, count=self.dim, bitorder="little")
