"""numba kernels for the offset map's hot loops: MD5 of key spans, last-write-wins dedupe, a digest table.

Kafka identifies a key in the cleaner's offset map by its MD5 (``SkimpyOffsetMap.hashInto``: 16 bytes; two
keys with the same MD5 *are* the same key there). The Python path hashes one key per ``hashlib.md5`` call,
about 0.7 µs per record, twice per round (building the map, then deciding every record). These kernels do
the same over whole record columns in one call:

* ``md5_spans``: the MD5 (RFC 1321) of each ``(start, length)`` span of a byte buffer, as two big-endian
  uint64 halves per key (``hi`` = digest bytes 0..7, ``lo`` = bytes 8..15), so ``hi.tobytes(">")`` order
  matches the digest bytes. Checked against ``hashlib.md5`` in the tests.
* ``last_rows``: for each distinct digest, the last row holding it (the map's "later offsets overwrite").
* ``build_table`` / ``lookup_table``: an open-addressing table digest -> offset (-1 when absent).
* ``part_of_hi``: ``offset_map.part_of`` over the digests' top 64 bits.
* ``distinct_spans``: equal key bytes grouped (so each distinct key is hashed once).

Every kernel is ``@njit(cache=True)`` without a signature: nothing compiles at import time.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

_MASK = 0xFFFFFFFF

_S = np.array(
    [7, 12, 17, 22] * 4 + [5, 9, 14, 20] * 4 + [4, 11, 16, 23] * 4 + [6, 10, 15, 21] * 4, dtype=np.int64
)
_K = np.array([int(abs(np.sin(i + 1)) * 2**32) & _MASK for i in range(64)], dtype=np.int64)


@njit(cache=True, inline="always")
def _word(block: Any, j: int) -> Any:
    base = 4 * j
    return (
        np.int64(block[base])
        | (np.int64(block[base + 1]) << 8)
        | (np.int64(block[base + 2]) << 16)
        | (np.int64(block[base + 3]) << 24)
    )


@njit(cache=True, inline="always")
def _rotate(value: int, shift: int) -> int:
    return ((value << shift) | (value >> (32 - shift))) & _MASK


@njit(cache=True, inline="always")
def _compress(state: Any, block: Any, words: Any, s_table: Any, k_table: Any) -> None:
    """One 64-byte MD5 block into ``state`` (four int64 holding uint32 values), RFC 1321's four rounds."""
    for j in range(16):
        words[j] = _word(block, j)
    a, b, c, d = state[0], state[1], state[2], state[3]
    for i in range(16):
        f = (b & c) | ((~b & _MASK) & d)
        f = (f + a + k_table[i] + words[i]) & _MASK
        a, d, c = d, c, b
        b = (b + _rotate(f, s_table[i])) & _MASK
    for i in range(16, 32):
        f = (d & b) | ((~d & _MASK) & c)
        f = (f + a + k_table[i] + words[(5 * i + 1) & 15]) & _MASK
        a, d, c = d, c, b
        b = (b + _rotate(f, s_table[i])) & _MASK
    for i in range(32, 48):
        f = b ^ c ^ d
        f = (f + a + k_table[i] + words[(3 * i + 5) & 15]) & _MASK
        a, d, c = d, c, b
        b = (b + _rotate(f, s_table[i])) & _MASK
    for i in range(48, 64):
        f = c ^ (b | (~d & _MASK))
        f = (f + a + k_table[i] + words[(7 * i) & 15]) & _MASK
        a, d, c = d, c, b
        b = (b + _rotate(f, s_table[i])) & _MASK
    state[0] = (state[0] + a) & _MASK
    state[1] = (state[1] + b) & _MASK
    state[2] = (state[2] + c) & _MASK
    state[3] = (state[3] + d) & _MASK


@njit(cache=True, inline="always")
def _be_half(x: int, y: int) -> Any:
    """Two little-endian MD5 state words as the big-endian uint64 of their 8 digest bytes."""
    out = np.uint64(0)
    for word in (x, y):
        for i in range(4):
            out = (out << np.uint64(8)) | np.uint64((word >> (8 * i)) & 0xFF)
    return out


@njit(cache=True)
def md5_spans(buffer: Any, starts: Any, lengths: Any, hi: Any, lo: Any) -> None:
    """The MD5 of ``buffer[starts[i] : starts[i] + lengths[i]]`` into ``hi[i]``, ``lo[i]``."""
    s_table = _S
    k_table = _K
    block = np.empty(64, dtype=np.uint8)
    state = np.empty(4, dtype=np.int64)
    words = np.empty(16, dtype=np.int64)
    for row in range(len(starts)):
        start = starts[row]
        length = np.int64(lengths[row])
        state[0], state[1], state[2], state[3] = 0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476
        full = length // 64
        for chunk in range(full):
            base = start + 64 * chunk
            for i in range(64):
                block[i] = buffer[base + i]
            _compress(state, block, words, s_table, k_table)
        rest = length - 64 * full
        base = start + 64 * full
        for i in range(rest):
            block[i] = buffer[base + i]
        block[rest] = 0x80
        for i in range(rest + 1, 64):
            block[i] = 0
        if rest >= 56:
            _compress(state, block, words, s_table, k_table)
            for i in range(64):
                block[i] = 0
        bits = length * 8
        for i in range(8):
            block[56 + i] = (bits >> (8 * i)) & 0xFF
        _compress(state, block, words, s_table, k_table)
        hi[row] = _be_half(state[0], state[1])
        lo[row] = _be_half(state[2], state[3])


@njit(cache=True, inline="always")
def _slot(hi: Any, lo: Any, mask: int) -> Any:
    mixed = (hi ^ (lo * np.uint64(0xC2B2AE3D27D4EB4F))) * np.uint64(0x9E3779B97F4A7C15)
    return np.int64(mixed >> np.uint64(32)) & mask


@njit(cache=True)
def last_rows(hi: Any, lo: Any) -> Any:
    """The last row of each distinct (hi, lo), in order of first appearance."""
    n = len(hi)
    size = 16
    while size < 2 * n:
        size *= 2
    mask = size - 1
    table = np.full(size, -1, dtype=np.int64)
    first_seen = np.empty(n, dtype=np.int64)
    last = np.empty(n, dtype=np.int64)
    distinct = 0
    for row in range(n):
        slot = _slot(hi[row], lo[row], mask)
        while True:
            entry = table[slot]
            if entry < 0:
                table[slot] = distinct
                first_seen[distinct] = row
                last[distinct] = row
                distinct += 1
                break
            head = first_seen[entry]
            if hi[head] == hi[row] and lo[head] == lo[row]:
                last[entry] = row
                break
            slot = (slot + 1) & mask
    return last[:distinct].copy()


@njit(cache=True)
def build_table(hi: Any, lo: Any, offsets: Any) -> Any:
    """An open-addressing table of distinct digests: (slots, keys hi, keys lo, offsets)."""
    n = len(hi)
    size = 16
    while size < 2 * n:
        size *= 2
    mask = size - 1
    slots = np.full(size, -1, dtype=np.int64)
    for row in range(n):
        slot = _slot(hi[row], lo[row], mask)
        while slots[slot] >= 0:
            slot = (slot + 1) & mask
        slots[slot] = row
    return slots, hi, lo, offsets


@njit(cache=True)
def lookup_table(slots: Any, keys_hi: Any, keys_lo: Any, values: Any, hi: Any, lo: Any, out: Any) -> int:
    """``out[i]`` = the offset of digest i, or -1 when absent; returns the number of misses."""
    mask = len(slots) - 1
    misses = 0
    for row in range(len(hi)):
        slot = _slot(hi[row], lo[row], mask)
        found = np.int64(-1)
        while True:
            entry = slots[slot]
            if entry < 0:
                misses += 1
                break
            if keys_hi[entry] == hi[row] and keys_lo[entry] == lo[row]:
                found = values[entry]
                break
            slot = (slot + 1) & mask
        out[row] = found
    return misses


@njit(cache=True)
def part_of_hi(hi: Any, count: int, out: Any) -> None:
    """``(hi * count) >> 64`` for each digest (``offset_map.part_of``), without 128-bit integers."""
    c = np.uint64(count)
    for row in range(len(hi)):
        upper = hi[row] >> np.uint64(32)
        lower = hi[row] & np.uint64(0xFFFFFFFF)
        out[row] = np.int64((upper * c + ((lower * c) >> np.uint64(32))) >> np.uint64(32))


@njit(cache=True, inline="always")
def _same_span(buffer: Any, a: Any, b: Any, length: Any) -> Any:
    for i in range(length):  # noqa: SIM110 (numba compiles no generator expressions)
        if buffer[a + i] != buffer[b + i]:
            return False
    return True


@njit(cache=True, inline="always")
def _span_hash(buffer: Any, start: Any, length: Any) -> Any:
    h = np.int64(-3750763034362895579)  # FNV-1a 64 offset basis, as a signed 64-bit value
    for i in range(length):
        h = (h ^ np.int64(buffer[start + i])) * np.int64(0x100000001B3)
    return h


@njit(cache=True)
def _grown(table: Any) -> Any:
    """The table at twice its size, every entry re-placed."""
    size = 2 * len(table)
    out = np.full((size, 4), -1, dtype=np.int64)
    for slot in range(len(table)):
        if table[slot, 1] >= 0:
            at = _table_slot(table[slot, 0], size - 1)
            while out[at, 1] >= 0:
                at = (at + 1) & (size - 1)
            out[at] = table[slot]
    return out


@njit(cache=True, inline="always")
def _table_slot(h: Any, mask: Any) -> Any:
    return np.int64((np.uint64(h) * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(32)) & mask


@njit(cache=True)
def distinct_spans(buffer: Any, starts: Any, lengths: Any) -> Any:
    """(id of each span's bytes, index of the first span of each id): equal bytes, equal id.

    A 64-bit FNV-1a of the bytes finds the candidates; the bytes themselves decide, so two different keys
    never share an id (their MD5s are then computed separately, and only equal MD5s merge them). The table
    (hash, id, start, length per slot: one cache line per probe) grows with the distinct keys, not the rows.
    """
    n = len(starts)
    table = np.full((1024, 4), -1, dtype=np.int64)
    ids = np.empty(n, dtype=np.int64)
    firsts = np.empty(n, dtype=np.int64)
    distinct = 0
    for row in range(n):
        start = starts[row]
        length = np.int64(lengths[row])
        h = _span_hash(buffer, start, length)
        mask = len(table) - 1
        slot = _table_slot(h, mask)
        while True:
            if table[slot, 1] < 0:
                table[slot, 0] = h
                table[slot, 1] = distinct
                table[slot, 2] = start
                table[slot, 3] = length
                firsts[distinct] = row
                ids[row] = distinct
                distinct += 1
                if 2 * distinct > len(table):
                    table = _grown(table)
                break
            if (
                table[slot, 0] == h
                and table[slot, 3] == length
                and _same_span(buffer, table[slot, 2], start, length)
            ):
                ids[row] = table[slot, 1]
                break
            slot = (slot + 1) & mask
    return ids, firsts[:distinct].copy()
