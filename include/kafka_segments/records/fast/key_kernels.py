"""numba kernels for the offset map's hot loops: MD5 of key spans, last-write-wins dedupe, a digest table.

Kafka identifies a key in the cleaner's offset map by its MD5 (``SkimpyOffsetMap.hashInto``); these kernels
hash whole record columns in one call instead of one ``hashlib.md5`` call per record (checked against it in
the tests). Digests are two big-endian uint64 halves (``hi``, ``lo``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from kafka_segments.records.fast.jit import njit
from kafka_segments.records.fast.words import MASK32, rotl32, u32_le


@njit(cache=True, inline="always")
def _ff(a: Any, b: Any, c: Any, d: Any, x: Any, s: int, t: int) -> Any:
    return (b + rotl32((a + ((b & c) | (~b & d)) + x + t) & MASK32, s)) & MASK32


@njit(cache=True, inline="always")
def _gg(a: Any, b: Any, c: Any, d: Any, x: Any, s: int, t: int) -> Any:
    return (b + rotl32((a + ((b & d) | (c & ~d)) + x + t) & MASK32, s)) & MASK32


@njit(cache=True, inline="always")
def _hh(a: Any, b: Any, c: Any, d: Any, x: Any, s: int, t: int) -> Any:
    return (b + rotl32((a + (b ^ c ^ d) + x + t) & MASK32, s)) & MASK32


@njit(cache=True, inline="always")
def _ii(a: Any, b: Any, c: Any, d: Any, x: Any, s: int, t: int) -> Any:
    return (b + rotl32((a + (c ^ (b | (~d & MASK32))) + x + t) & MASK32, s)) & MASK32


@njit(cache=True, inline="always")
def _compress(state: Any, block: Any) -> None:  # noqa: PLR0915 - MD5's 64 steps written out, as the RFC 1321 reference does; a loop would cost the kernel its unrolling
    """One 64-byte MD5 block into ``state`` (four int64 holding uint32 values): RFC 1321's 64 steps
    written out (its reference implementation's FF/GG/HH/II), constants inline."""
    x0 = u32_le(block, 0)
    x1 = u32_le(block, 4)
    x2 = u32_le(block, 8)
    x3 = u32_le(block, 12)
    x4 = u32_le(block, 16)
    x5 = u32_le(block, 20)
    x6 = u32_le(block, 24)
    x7 = u32_le(block, 28)
    x8 = u32_le(block, 32)
    x9 = u32_le(block, 36)
    x10 = u32_le(block, 40)
    x11 = u32_le(block, 44)
    x12 = u32_le(block, 48)
    x13 = u32_le(block, 52)
    x14 = u32_le(block, 56)
    x15 = u32_le(block, 60)
    a, b, c, d = state[0], state[1], state[2], state[3]
    a = _ff(a, b, c, d, x0, 7, 0xD76AA478)
    d = _ff(d, a, b, c, x1, 12, 0xE8C7B756)
    c = _ff(c, d, a, b, x2, 17, 0x242070DB)
    b = _ff(b, c, d, a, x3, 22, 0xC1BDCEEE)
    a = _ff(a, b, c, d, x4, 7, 0xF57C0FAF)
    d = _ff(d, a, b, c, x5, 12, 0x4787C62A)
    c = _ff(c, d, a, b, x6, 17, 0xA8304613)
    b = _ff(b, c, d, a, x7, 22, 0xFD469501)
    a = _ff(a, b, c, d, x8, 7, 0x698098D8)
    d = _ff(d, a, b, c, x9, 12, 0x8B44F7AF)
    c = _ff(c, d, a, b, x10, 17, 0xFFFF5BB1)
    b = _ff(b, c, d, a, x11, 22, 0x895CD7BE)
    a = _ff(a, b, c, d, x12, 7, 0x6B901122)
    d = _ff(d, a, b, c, x13, 12, 0xFD987193)
    c = _ff(c, d, a, b, x14, 17, 0xA679438E)
    b = _ff(b, c, d, a, x15, 22, 0x49B40821)
    a = _gg(a, b, c, d, x1, 5, 0xF61E2562)
    d = _gg(d, a, b, c, x6, 9, 0xC040B340)
    c = _gg(c, d, a, b, x11, 14, 0x265E5A51)
    b = _gg(b, c, d, a, x0, 20, 0xE9B6C7AA)
    a = _gg(a, b, c, d, x5, 5, 0xD62F105D)
    d = _gg(d, a, b, c, x10, 9, 0x02441453)
    c = _gg(c, d, a, b, x15, 14, 0xD8A1E681)
    b = _gg(b, c, d, a, x4, 20, 0xE7D3FBC8)
    a = _gg(a, b, c, d, x9, 5, 0x21E1CDE6)
    d = _gg(d, a, b, c, x14, 9, 0xC33707D6)
    c = _gg(c, d, a, b, x3, 14, 0xF4D50D87)
    b = _gg(b, c, d, a, x8, 20, 0x455A14ED)
    a = _gg(a, b, c, d, x13, 5, 0xA9E3E905)
    d = _gg(d, a, b, c, x2, 9, 0xFCEFA3F8)
    c = _gg(c, d, a, b, x7, 14, 0x676F02D9)
    b = _gg(b, c, d, a, x12, 20, 0x8D2A4C8A)
    a = _hh(a, b, c, d, x5, 4, 0xFFFA3942)
    d = _hh(d, a, b, c, x8, 11, 0x8771F681)
    c = _hh(c, d, a, b, x11, 16, 0x6D9D6122)
    b = _hh(b, c, d, a, x14, 23, 0xFDE5380C)
    a = _hh(a, b, c, d, x1, 4, 0xA4BEEA44)
    d = _hh(d, a, b, c, x4, 11, 0x4BDECFA9)
    c = _hh(c, d, a, b, x7, 16, 0xF6BB4B60)
    b = _hh(b, c, d, a, x10, 23, 0xBEBFBC70)
    a = _hh(a, b, c, d, x13, 4, 0x289B7EC6)
    d = _hh(d, a, b, c, x0, 11, 0xEAA127FA)
    c = _hh(c, d, a, b, x3, 16, 0xD4EF3085)
    b = _hh(b, c, d, a, x6, 23, 0x04881D05)
    a = _hh(a, b, c, d, x9, 4, 0xD9D4D039)
    d = _hh(d, a, b, c, x12, 11, 0xE6DB99E5)
    c = _hh(c, d, a, b, x15, 16, 0x1FA27CF8)
    b = _hh(b, c, d, a, x2, 23, 0xC4AC5665)
    a = _ii(a, b, c, d, x0, 6, 0xF4292244)
    d = _ii(d, a, b, c, x7, 10, 0x432AFF97)
    c = _ii(c, d, a, b, x14, 15, 0xAB9423A7)
    b = _ii(b, c, d, a, x5, 21, 0xFC93A039)
    a = _ii(a, b, c, d, x12, 6, 0x655B59C3)
    d = _ii(d, a, b, c, x3, 10, 0x8F0CCC92)
    c = _ii(c, d, a, b, x10, 15, 0xFFEFF47D)
    b = _ii(b, c, d, a, x1, 21, 0x85845DD1)
    a = _ii(a, b, c, d, x8, 6, 0x6FA87E4F)
    d = _ii(d, a, b, c, x15, 10, 0xFE2CE6E0)
    c = _ii(c, d, a, b, x6, 15, 0xA3014314)
    b = _ii(b, c, d, a, x13, 21, 0x4E0811A1)
    a = _ii(a, b, c, d, x4, 6, 0xF7537E82)
    d = _ii(d, a, b, c, x11, 10, 0xBD3AF235)
    c = _ii(c, d, a, b, x2, 15, 0x2AD7D2BB)
    b = _ii(b, c, d, a, x9, 21, 0xEB86D391)
    state[0] = (state[0] + a) & MASK32
    state[1] = (state[1] + b) & MASK32
    state[2] = (state[2] + c) & MASK32
    state[3] = (state[3] + d) & MASK32


@njit(cache=True, inline="always")
def _be_half(x: int, y: int) -> Any:
    """Two little-endian MD5 state words as the big-endian uint64 of their 8 digest bytes."""
    out = np.uint64(0)
    for word in (x, y):
        for i in range(4):
            out = (out << np.uint64(8)) | np.uint64((word >> (8 * i)) & 0xFF)
    return out


@njit(cache=True, nogil=True)
def md5_spans(buffer: Any, starts: Any, lengths: Any, hi: Any, lo: Any) -> None:
    """The MD5 of ``buffer[starts[i] : starts[i] + lengths[i]]`` into ``hi[i]``, ``lo[i]``."""
    block = np.empty(64, dtype=np.uint8)
    state = np.empty(4, dtype=np.int64)
    for row in range(len(starts)):
        start = starts[row]
        length = np.int64(lengths[row])
        state[0], state[1], state[2], state[3] = 0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476
        full = length // 64
        for chunk in range(full):
            base = start + 64 * chunk
            for i in range(64):
                block[i] = buffer[base + i]
            _compress(state, block)
        rest = length - 64 * full
        base = start + 64 * full
        for i in range(rest):
            block[i] = buffer[base + i]
        block[rest] = 0x80
        for i in range(rest + 1, 64):
            block[i] = 0
        if rest >= 56:
            _compress(state, block)
            for i in range(64):
                block[i] = 0
        bits = length * 8
        for i in range(8):
            block[56 + i] = (bits >> (8 * i)) & 0xFF
        _compress(state, block)
        hi[row] = _be_half(state[0], state[1])
        lo[row] = _be_half(state[2], state[3])


@njit(cache=True, inline="always")
def _slot(hi: Any, lo: Any, mask: int) -> Any:
    mixed = (hi ^ (lo * np.uint64(0xC2B2AE3D27D4EB4F))) * np.uint64(0x9E3779B97F4A7C15)
    return np.int64(mixed >> np.uint64(32)) & mask


@njit(cache=True, nogil=True)
def last_of_ids(ids: Any, count: int) -> Any:
    """The last index of each id present in ``ids`` (values in ``0 .. count - 1``), ascending.

    Collected in row order, not sorted afterwards: numba's quicksort went quadratic on the last rows of
    keys written round-robin (1M rows over 200k keys: 31 s)."""
    last = np.full(count, -1, dtype=np.int64)
    for row in range(len(ids)):
        last[ids[row]] = row
    present = 0
    for row in range(len(ids)):
        if last[ids[row]] == row:
            present += 1
    out = np.empty(present, dtype=np.int64)
    at = 0
    for row in range(len(ids)):
        if last[ids[row]] == row:
            out[at] = row
            at += 1
    return out


@njit(cache=True, nogil=True)
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


@njit(cache=True, nogil=True)
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
