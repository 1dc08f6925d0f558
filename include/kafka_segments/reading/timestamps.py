"""Offsets by timestamp, as a broker answers ListOffsets (``UnifiedLog.fetchOffsetByTimestamp``,
``LogSegment.findOffsetByTimestamp``): the first segment whose largest timestamp reaches the target, in it
the first batch whose ``maxTimestamp`` does, and in that batch the first record at or after the target.

The segment is found from the manifest (each entry's largest timestamp, what the ``.timeindex``'s last entry
says) and the batch from a header scan of that one segment, so no record is decoded but the batch's own.
Offsets below the log start offset and at or past the last fetchable offset (the last stable offset under
read_committed, else the high watermark) are never answered, as the broker's lookup."""

from __future__ import annotations

import numpy as np

from kafka_segments.lake.history import location_of
from kafka_segments.lake.reader import read_segment, visible_segments
from kafka_segments.records.log import read_entry
from kafka_segments.state import PartitionState
from kafka_segments.storage.base import ObjectStore


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
    data = read_segment(store, segment)
    where = location_of(store, segment.key)
    from kafka_segments.records.fast import scan_header_table  # numba's kernels, only to resolve a timestamp

    table = scan_header_table(data, segment=where)
    reaching = np.flatnonzero((table.max_timestamp >= timestamp_ms) & (table.last_offset >= log_start))
    if reaching.size == 0:
        return None
    entry = read_entry(data, int(table.position[reaching[0]]), segment=where)
    found = next(
        (r.offset for r in entry.records if r.timestamp >= timestamp_ms and r.offset >= log_start), None
    )
    return found if found is not None and found < fetchable_end else None
