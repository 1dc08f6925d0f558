"""numba kernels grouping equal key bytes: an id per distinct key, so each distinct key is MD5'd once.

* ``distinct_spans``: (id of each span's bytes, first span of each id) over one set of spans;
* ``new_span_groups`` / ``group_spans``: the same, resumable — spans are added batch after batch (e.g. the
  steps of a segment decoded while it is read, ``compaction.streamed``) and ids go on from the earlier ones.

Every kernel is ``@njit(cache=True, nogil=True)`` without a signature: nothing compiles at import time."""

from __future__ import annotations

from typing import Any

import numpy as np

from kafka_segments.records.fast.jit import njit


@njit(cache=True, inline="always")
def _table_slot(h: Any, mask: Any) -> Any:
    return np.int64((np.uint64(h) * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(32)) & mask


_INLINE = 16
"""Key bytes held in the slot itself: shorter keys are compared without leaving the slot's cache line."""


@njit(cache=True, inline="always")
def _load8(buffer: Any, at: Any) -> Any:
    """Bytes ``at .. at + 7`` as one little-endian int64 (a fixed pattern LLVM turns into one load)."""
    return (
        np.int64(buffer[at])
        | (np.int64(buffer[at + 1]) << 8)
        | (np.int64(buffer[at + 2]) << 16)
        | (np.int64(buffer[at + 3]) << 24)
        | (np.int64(buffer[at + 4]) << 32)
        | (np.int64(buffer[at + 5]) << 40)
        | (np.int64(buffer[at + 6]) << 48)
        | (np.int64(buffer[at + 7]) << 56)
    )


@njit(cache=True, inline="always")
def _span_word(buffer: Any, start: Any, length: Any, word: Any) -> Any:
    """Bytes ``8 * word .. 8 * word + 7`` of the span (zeros past its end) as one int64."""
    first = 8 * word
    left = length - first
    if left >= 8:
        return _load8(buffer, start + first)
    out = np.int64(0)
    for i in range(max(0, left)):
        out |= np.int64(buffer[start + first + i]) << np.int64(8 * i)
    return out


@njit(cache=True, inline="always")
def _inline_words(buffer: Any, start: Any, length: Any) -> Any:
    """The span's first 16 bytes (zeros past its end) as two int64: one load each when the buffer allows."""
    if start + _INLINE > len(buffer):
        return _span_word(buffer, start, length, 0), _span_word(buffer, start, length, 1)
    w0 = _load8(buffer, start)
    w1 = _load8(buffer, start + 8)
    if length >= 16:
        return w0, w1
    if length > 8:
        return w0, w1 & ((np.int64(1) << np.int64(8 * (length - 8))) - 1)
    if length == 8:
        return w0, np.int64(0)
    return w0 & ((np.int64(1) << np.int64(8 * length)) - 1), np.int64(0)


@njit(cache=True, inline="always")
def _mix(h: Any, w: Any) -> Any:
    h = (h ^ w) * np.int64(-7046029254386353131)  # 0x9E3779B97F4A7C15 as a signed 64-bit value
    return h ^ ((h >> np.int64(29)) & np.int64(0x7FFFFFFFF))


@njit(cache=True, inline="always")
def _span_hash(buffer: Any, start: Any, length: Any, w0: Any, w1: Any) -> Any:
    """A 64-bit hash of the span from its words (only to find candidates: the bytes decide)."""
    h = _mix(_mix(length, w0), w1)
    rest = length - _INLINE
    for word in range((rest + 7) // 8 if rest > 0 else 0):
        h = _mix(h, _span_word(buffer, start + _INLINE, rest, word))
    return h


@njit(cache=True, nogil=True)
def _regrown(slots: Any) -> Any:
    """A slot table twice as large holding the same entries."""
    size = 2 * len(slots)
    out = np.full((size, 4), -1, dtype=np.int64)
    for old in range(len(slots)):
        if slots[old, 1] >= 0:
            at = _table_slot(slots[old, 0], size - 1)
            while out[at, 1] >= 0:
                at = (at + 1) & (size - 1)
            out[at] = slots[old]
    return out


@njit(cache=True, nogil=True)
def _grown_to(array: Any, size: int) -> Any:
    out = np.empty(max(size, 2 * len(array)), dtype=array.dtype)
    out[: len(array)] = array
    return out


@njit(cache=True, nogil=True)
def distinct_spans(buffer: Any, starts: Any, lengths: Any) -> Any:
    """(id of each span's bytes, index of the first span of each id): equal bytes, equal id.

    A 64-bit hash finds candidates and the bytes decide, so different keys never share an id. A slot keeps a
    key's first 16 bytes, so short keys probe one slot; longer ones compare against a compact store of the
    distinct keys' bytes. The table grows with the distinct keys, not the rows."""
    n = len(starts)
    ids = np.empty(n, dtype=np.int64)
    slots, store_at, store, firsts, counts = new_span_groups(n)
    slots, store_at, store, firsts = group_spans(
        buffer, starts, lengths, 0, ids, slots, store_at, store, firsts, counts
    )
    return ids, firsts[: counts[1]].copy()


@njit(cache=True, nogil=True)
def new_span_groups(rows_hint: int) -> Any:
    """The empty state of ``group_spans``: (slots, store_at, store, firsts, counts = [stored, distinct])."""
    slots = np.full((1024, 4), -1, dtype=np.int64)  # hash, id | length << 32, key bytes 0..7, 8..15
    store_at = np.empty(512, dtype=np.int64)
    store = np.empty(8192, dtype=np.uint8)
    firsts = np.empty(max(rows_hint, 16), dtype=np.int64)
    counts = np.zeros(2, dtype=np.int64)
    return slots, store_at, store, firsts, counts


@njit(cache=True, nogil=True)
def group_spans(  # noqa: PLR0913 - numba kernel: nopython mode takes arrays one by one, not objects
    buffer: Any,
    starts: Any,
    lengths: Any,
    row_base: int,
    ids: Any,
    slots: Any,
    store_at: Any,
    store: Any,
    firsts: Any,
    counts: Any,
) -> Any:
    """``distinct_spans`` over one more batch of spans, continuing the state of the earlier ones: writes
    ``ids[i]`` for span i (ids go on from the earlier spans'), records ``row_base + i`` as the first row of
    each new id, updates ``counts`` in place and returns (slots, store_at, store, firsts), grown as needed.
    The spans may lie in another buffer than the earlier ones: the state keeps no position."""
    stored = counts[0]
    distinct = counts[1]
    for row in range(len(starts)):
        start = starts[row]
        length = np.int64(lengths[row])
        w0, w1 = _inline_words(buffer, start, length)
        h = _span_hash(buffer, start, length, w0, w1)
        tag = length << np.int64(32)
        mask = len(slots) - 1
        slot = _table_slot(h, mask)
        while True:
            entry = slots[slot, 1]
            if entry < 0:
                if distinct == len(store_at):
                    store_at = _grown_to(store_at, distinct + 1)
                if distinct == len(firsts):
                    firsts = _grown_to(firsts, distinct + 1)
                rest: Any = length - _INLINE if length > _INLINE else 0
                if stored + rest > len(store):
                    store = _grown_to(store, stored + rest)
                for i in range(rest):
                    store[stored + i] = buffer[start + _INLINE + i]
                store_at[distinct] = stored
                stored += rest
                slots[slot, 0] = h
                slots[slot, 1] = tag | distinct
                slots[slot, 2] = w0
                slots[slot, 3] = w1
                firsts[distinct] = row_base + row
                ids[row] = distinct
                distinct += 1
                if 2 * distinct > len(slots):
                    slots = _regrown(slots)
                break
            if (
                slots[slot, 0] == h
                and (entry >> np.int64(32)) == length
                and slots[slot, 2] == w0
                and slots[slot, 3] == w1
            ):
                key_id = entry & np.int64(0xFFFFFFFF)
                same = True
                at = store_at[key_id]
                for i in range(length - _INLINE):
                    if store[at + i] != buffer[start + _INLINE + i]:
                        same = False
                        break
                if same:
                    ids[row] = key_id
                    break
            slot = (slot + 1) & mask
    counts[0] = stored
    counts[1] = distinct
    return slots, store_at, store, firsts
