"""The sizes a segment's ``.index`` and ``.timeindex`` have, from its ``.log`` alone.

Kafka groups segments for cleaning by the *current* sizes of their index files
(``Cleaner.groupSegmentsBySize``). On a lake the indexes are optional accelerators rebuilt from the
``.log`` (Part L), so their sizes are those of the indexes an append of the same batches builds
(``segment.writer``; ``LogSegment.append``, ``onBecomeInactiveSegment``):

* an offset-index entry (8 bytes) before a batch when more than ``index.interval.bytes`` were appended since
  the last entry; a time-index entry (12 bytes) at the same moments when the largest timestamp so far grew
  past the last time entry;
* one more time-index entry when the segment is closed, again only if the largest timestamp grew.

Counting needs one pass over the batch headers (``records.fast.scan_header_table``), no record decoding.
"""

from __future__ import annotations

from dataclasses import dataclass

from kafka_segments.records.fast import scan_header_table
from kafka_segments.segment import offset_index, time_index

Buffer = bytes | bytearray | memoryview

_NO_TIMESTAMP = -1


@dataclass(frozen=True, slots=True)
class IndexSizes:
    offset_index_bytes: int
    time_index_bytes: int


def index_sizes(data: Buffer, *, index_interval_bytes: int, segment: str = "<memory>") -> IndexSizes:
    """The trimmed sizes of the indexes ``segment.writer`` builds for ``data`` (a whole ``.log``).

    Raises:
        CorruptRecordError: a damaged entry (naming ``segment`` and the byte position).
    """
    table = scan_header_table(data, segment=segment)
    sizes = table.size_in_bytes.tolist()
    stamps = table.max_timestamp.tolist()
    offsets = times = 0
    since = 0
    largest = _NO_TIMESTAMP
    last_indexed = _NO_TIMESTAMP
    for size, stamp in zip(sizes, stamps, strict=True):
        largest = max(largest, stamp)
        if since > index_interval_bytes:
            offsets += 1
            if largest > last_indexed:
                times += 1
                last_indexed = largest
            since = 0
        since += size
    if largest > last_indexed:
        times += 1
    return IndexSizes(offsets * offset_index.ENTRY_SIZE, times * time_index.ENTRY_SIZE)
