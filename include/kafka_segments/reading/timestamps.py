"""Offsets by timestamp, as a broker answers ListOffsets (``UnifiedLog.fetchOffsetByTimestamp``,
``LogSegment.findOffsetByTimestamp``): the first segment whose largest timestamp reaches the target, in it
the first batch whose ``maxTimestamp`` does, and in that batch the first record at or after the target.

The segment is found from the manifest (each entry's largest timestamp, what the ``.timeindex``'s last entry
says) and the batch from a header scan of that one segment, so no record is decoded but the batch's own.
The scan starts where the broker's does (``TimeIndex.lookup``, then ``OffsetIndex.lookup``) when the
segment's ``.timeindex`` and ``.index`` are pinned by the manifest (``lake.time_pin.time_floor``, the door
a pushed ``timestamp`` bound uses too; ``lake.index_pin``) and the bytes from the ``.index``'s position
prove themselves; else it scans the whole segment.
Offsets below the log start offset and at or past the last fetchable offset (the last stable offset under
read_committed, else the high watermark) are never answered, as the broker's lookup."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from kafka_segments.errors import CorruptRecordError, ObjectNotFoundError, PreconditionFailedError
from kafka_segments.lake.reader import pinned_range, read_segment, visible_segments
from kafka_segments.lake.time_pin import time_floor
from kafka_segments.reading.spans import index_entries
from kafka_segments.records.batch import MAGIC_VALUE_V2
from kafka_segments.records.log import read_entry
from kafka_segments.state import PartitionState, SegmentEntry
from kafka_segments.storage.base import ObjectStore

if TYPE_CHECKING:
    from kafka_segments.records.fast import HeaderTable

Buffer = bytes | bytearray | memoryview


def offset_for_timestamp(
    store: ObjectStore, state: PartitionState, timestamp_ms: int, *, fetchable_end: int
) -> int | None:
    """The earliest offset whose record's timestamp is at or after ``timestamp_ms``, or ``None``.

    Args:
        fetchable_end: the last fetchable offset (exclusive): offsets at or past it are not answered.

    Raises:
        SegmentObjectMismatchError, CorruptRecordError: the segment read does not match the manifest.
    """
    log_start = state.log_start_offset
    segment = next((s for s in visible_segments(state) if s.largest_timestamp_ms >= timestamp_ms), None)
    if segment is None:
        return None
    where = store.location(segment.key)
    data, table = _from_floor(store, segment, time_floor(store, segment, timestamp_ms), where=where)
    reaching = np.flatnonzero((table.max_timestamp >= timestamp_ms) & (table.last_offset >= log_start))
    if reaching.size == 0:
        return None
    entry = read_entry(data, int(table.position[reaching[0]]), segment=where)
    found = next(
        (r.offset for r in entry.records if r.timestamp >= timestamp_ms and r.offset >= log_start), None
    )
    return found if found is not None and found < fetchable_end else None


def _from_floor(
    store: ObjectStore, segment: SegmentEntry, floor: int, *, where: str
) -> tuple[Buffer, HeaderTable]:
    """The segment's bytes from where ``OffsetIndex.lookup(floor)`` puts a batch at or below ``floor`` (no
    offset before ``floor`` can reach the timestamp: ``time_floor``), and their batch headers; the whole
    segment (sha256-checked) when the floor is its base offset or the bytes do not prove the position.

    A ranged read is pinned to the manifest's etag, and proven as a span's (``span_read``): every batch's
    CRC-32C checked, the walk ends exactly at the segment's end, all batches v2, the first starting at or
    below ``floor`` (offsets grow along a segment, so nothing before it is at or above ``floor``).
    """
    from kafka_segments.records.fast import scan_header_table  # numba's kernels, only to resolve a timestamp

    position = _indexed_position(store, segment, floor)
    if position > 0:
        try:
            data = pinned_range(store, segment, start=position, end=segment.size)
            table = scan_header_table(data, segment=f"{where} (bytes {position}-)", verify_crc=True)
        except (PreconditionFailedError, ObjectNotFoundError, CorruptRecordError):
            table = None
        if table is not None and _proven(table, size=len(data), floor=floor):
            return data, table
    data = read_segment(store, segment)
    return data, scan_header_table(data, segment=where)


def _indexed_position(store: ObjectStore, segment: SegmentEntry, floor: int) -> int:
    """``OffsetIndex.lookup(floor)``'s position (0 without a usable ``.index``, or ``floor`` at the base)."""
    if floor <= segment.base_offset:
        return 0
    entries = index_entries(store, segment)
    below = [entry.position for entry in entries if entry.offset <= floor]
    return below[-1] if below else 0


def _proven(table: HeaderTable, *, size: int, floor: int) -> bool:
    if len(table) == 0 or bool(np.any(table.magic != MAGIC_VALUE_V2)):
        return False
    ends_at_size = int(table.position[-1]) + int(table.size_in_bytes[-1]) == size
    return ends_at_size and int(table.base_offset[0]) <= floor
