"""A segment's ``.timeindex`` pinned by the manifest, so a reader may start a timestamp range inside the
segment (docs/reading.md, "Timestamps inside a segment").

A time-index entry ``(T, O)`` says every record up to offset ``O`` has a timestamp at or below ``T``: Kafka
appends ``(maxTimestampSoFar, offsetOfMaxTimestampSoFar)`` (``LogSegment.append``, ``TimeIndex``), and
``UnifiedLog.fetchOffsetByTimestamp`` starts its search from the entry ``TimeIndex.lookup`` finds. For a lower
bound ``lo``, every offset up to the last entry with ``T < lo`` is therefore below it.

The index is never trusted over the ``.log``. When a segment enters the lake (staged by a run, or adopted)
its ``.timeindex`` is checked against the ``.log``'s batch headers, and only an index whose every entry holds
gets its sha256 recorded in the segment's manifest entry (``SegmentEntry.time_index_sha256``). A reader uses
the index only when the bytes it gets have that sha256; otherwise (no pin, gone, replaced, a manifest
written before the field) it starts at the segment's first offset, as without an index."""

from __future__ import annotations

import bisect
from typing import TYPE_CHECKING

import numpy as np

from kafka_segments.errors import CorruptIndexError
from kafka_segments.lake.index_pin import bounded_object
from kafka_segments.lake.layout import index_keys
from kafka_segments.lake.scan import sha256_hex
from kafka_segments.records.batch import MAGIC_VALUE_V2
from kafka_segments.segment.time_index import ENTRY_SIZE, TimeIndex, parse_time_index
from kafka_segments.state import SegmentEntry
from kafka_segments.storage.base import ObjectStore

if TYPE_CHECKING:
    from kafka_segments.records.fast import HeaderTable

Buffer = bytes | bytearray | memoryview

__all__ = [
    "checked_time_index_sha256",
    "pinned_time_index",
    "stored_time_index_sha256",
    "time_floor",
    "time_index_key",
]


def time_index_key(log_key: str) -> str:
    """The key of the ``.timeindex`` object beside ``log_key``."""
    return index_keys(log_key)[1]


def checked_time_index_sha256(data: Buffer, table: HeaderTable, *, base_offset: int) -> str | None:
    """The sha256 of ``data`` (a ``.timeindex``) when it parses, has entries, and every entry holds for the
    batches of ``table`` (the segment's headers, all v2: a batch's ``maxTimestamp`` is its records' largest
    timestamp); else ``None``."""
    try:
        index = parse_time_index(data, base_offset=base_offset)
    except CorruptIndexError:
        return None
    if not index.entries or not _entries_hold(index, table):
        return None
    return sha256_hex(data)


def stored_time_index_sha256(
    store: ObjectStore, log_key: str, table: HeaderTable, *, base_offset: int
) -> str | None:
    """``checked_time_index_sha256`` of the ``.timeindex`` object beside ``log_key`` (``None`` when there is
    none, it is not a plain object, or it is larger than its segment's batches can fill: ``_bounded``).

    Raises:
        ObjectStoreError: the store could not be read.
    """
    data = _bounded(store, log_key, batch_count=len(table))
    return None if data is None else checked_time_index_sha256(data, table, base_offset=base_offset)


def _bounded(store: ObjectStore, log_key: str, *, batch_count: int) -> bytes | None:
    """The ``.timeindex`` beside ``log_key`` when it has at most one entry per batch and the one a roll adds
    (a trimmed index: a broker's active segment preallocates ``segment.index.bytes``, 10 MiB by default,
    which is then not read past that bound); ``None`` when larger, missing or not a plain object."""
    return bounded_object(store, time_index_key(log_key), bound=ENTRY_SIZE * (batch_count + 1))


def _entries_hold(index: TimeIndex, table: HeaderTable) -> bool:
    """Every entry ``(T, O)``: the batches starting at or below ``O`` have ``maxTimestamp`` <= ``T``."""
    if len(table) == 0 or bool(np.any(table.magic != MAGIC_VALUE_V2)):
        return False
    largest_so_far = np.maximum.accumulate(table.max_timestamp)
    offsets = np.fromiter((entry.offset for entry in index.entries), dtype=np.int64)
    timestamps = np.fromiter((entry.timestamp for entry in index.entries), dtype=np.int64)
    last_batch = np.searchsorted(table.base_offset, offsets, side="right") - 1
    claims = last_batch >= 0  # an entry below the first batch claims nothing
    return bool(np.all(largest_so_far[last_batch[claims]] <= timestamps[claims]))


def pinned_time_index(store: ObjectStore, segment: SegmentEntry) -> TimeIndex | None:
    """The segment's ``.timeindex`` when the manifest pinned it and the object still has those bytes, else
    ``None`` (no pin, gone, replaced: read no further than the pinned index could be long).

    Raises:
        ObjectStoreError: the store could not be read (a missing ``.timeindex`` is not an error).
    """
    pin = segment.time_index_sha256
    if pin is None:
        return None
    data = _bounded(store, segment.key, batch_count=segment.batch_count)
    if data is None or sha256_hex(data) != pin:
        return None
    try:
        return parse_time_index(data, base_offset=segment.base_offset)
    except CorruptIndexError:  # bytes it was checked with parse: only a colliding sha256 gets here
        return None


def time_floor(store: ObjectStore, segment: SegmentEntry, timestamp_ms: int) -> int:
    """The first offset of ``segment`` that may hold a record whose timestamp is at or after
    ``timestamp_ms``: one past the last entry of its pinned ``.timeindex`` whose timestamp is below it, else
    the segment's base offset (no trusted index, or no such entry: never one when the first batch already
    reaches ``timestamp_ms``, as an entry's timestamp is the largest so far; the index is not read then).

    Raises:
        ObjectStoreError: the store could not be read.
    """
    if timestamp_ms <= segment.first_batch_max_timestamp_ms:  # every entry's T is at least that: none below
        return segment.base_offset
    index = pinned_time_index(store, segment)
    if index is None:
        return segment.base_offset
    below = bisect.bisect_left(index.entries, timestamp_ms, key=lambda entry: entry.timestamp)
    if below == 0:
        return segment.base_offset
    return min(index.entries[below - 1].offset + 1, segment.next_offset)
