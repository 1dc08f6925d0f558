"""numba kernels behind ``segment.fast_writer``: Kafka's append rules (``LogSegment.ensureOffsetInRange``) and
index entries (``LogSegment.append``, ``onBecomeInactiveSegment``) over header columns. Every kernel is
``@njit(cache=True, nogil=True)`` without a signature: nothing compiles at import time."""

from __future__ import annotations

from typing import Any

import numpy as np

from kafka_segments.records.batch import INT32_MAX, NO_TIMESTAMP
from kafka_segments.records.fast.jit import njit

# relative_last_offsets outcomes
OFFSETS_OK = 0
BELOW_BASE = 1
NOT_INCREASING = 2
OFFSET_OVERFLOW = 3


@njit(cache=True, nogil=True)
def relative_last_offsets(base_offsets: Any, last_offset_deltas: Any, segment_base: Any) -> Any:
    """(each batch's last offset - ``segment_base``, first bad row or -1, outcome code).

    Works on offsets relative to the segment base so nothing overflows an int64: a row is only turned
    relative once it is known to be at or above the base."""
    count = base_offsets.shape[0]
    relative_last = np.empty(count, dtype=np.int64)
    previous = np.int64(-1)
    for row in range(count):
        base = base_offsets[row]
        if base < segment_base:
            return relative_last, row, BELOW_BASE
        relative = base - segment_base
        if relative <= previous:
            return relative_last, row, NOT_INCREASING
        delta = np.int64(last_offset_deltas[row])
        if relative > INT32_MAX - delta:
            return relative_last, row, OFFSET_OVERFLOW
        previous = relative + delta
        relative_last[row] = previous
    return relative_last, -1, OFFSETS_OK


@njit(cache=True, nogil=True)
def index_rule(sizes: Any, max_timestamps: Any, interval: Any) -> Any:
    """(offset-index rows, time-index timestamps, time-index rows, largest timestamp, its row)."""
    count = sizes.shape[0]
    offset_rows = np.empty(count, dtype=np.int64)
    stamps = np.empty(count + 1, dtype=np.int64)
    stamp_rows = np.empty(count + 1, dtype=np.int64)
    offsets = 0
    times = 0
    since = np.int64(0)
    largest = np.int64(NO_TIMESTAMP)
    largest_row = -1
    last_indexed = np.int64(NO_TIMESTAMP)
    for row in range(count):
        if max_timestamps[row] > largest:
            largest = max_timestamps[row]
            largest_row = row
        if since > interval:
            offset_rows[offsets] = row
            offsets += 1
            if largest > last_indexed:
                stamps[times] = largest
                stamp_rows[times] = largest_row
                times += 1
                last_indexed = largest
            since = np.int64(0)
        since += sizes[row]
    if largest > last_indexed:  # the closing entry (onBecomeInactiveSegment)
        stamps[times] = largest
        stamp_rows[times] = largest_row
        times += 1
    return offset_rows[:offsets], stamps[:times], stamp_rows[:times], largest, largest_row
