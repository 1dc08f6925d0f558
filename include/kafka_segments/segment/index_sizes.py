"""The sizes a segment's ``.index`` and ``.timeindex`` have, from its ``.log`` alone.

Kafka groups segments for cleaning by the *current* sizes of their index files
(``Cleaner.groupSegmentsBySize``). On a lake the indexes are optional accelerators rebuilt from the
``.log`` (docs/lake.md, "Layout"), so their sizes are those of the indexes an append of the same batches
builds (``segment.writer``; ``LogSegment.append``, ``onBecomeInactiveSegment``):

* an offset-index entry (8 bytes) before a batch when more than ``index.interval.bytes`` were appended since
  the last entry; a time-index entry (12 bytes) at the same moments when the largest timestamp so far grew
  past the last time entry;
* one more time-index entry when the segment is closed, again only if the largest timestamp grew.

Counting needs one pass over the batch headers (``records.fast.scan_header_table``), no record decoding,
and the rule is the columnar writer's (``fast_writer.index_entries``).
"""

from __future__ import annotations

from dataclasses import dataclass

from kafka_segments.records.fast import HeaderTable, scan_header_table
from kafka_segments.segment import offset_index, time_index
from kafka_segments.segment.fast_writer import index_entries

Buffer = bytes | bytearray | memoryview


@dataclass(frozen=True, slots=True)
class IndexSizes:
    offset_index_bytes: int
    time_index_bytes: int


def index_sizes(data: Buffer, *, index_interval_bytes: int, segment: str = "<memory>") -> IndexSizes:
    """The trimmed sizes of the indexes ``segment.writer`` builds for ``data`` (a whole ``.log``).

    Raises:
        CorruptRecordError: a damaged entry (naming ``segment`` and the byte position).
    """
    return index_sizes_of(scan_header_table(data, segment=segment), index_interval_bytes=index_interval_bytes)


def index_sizes_of(table: HeaderTable, *, index_interval_bytes: int) -> IndexSizes:
    """``index_sizes`` from the segment's header table (``scan_header_table``) when it is at hand."""
    entries = index_entries(table, index_interval_bytes=index_interval_bytes)
    return IndexSizes(
        len(entries.offset_rows) * offset_index.ENTRY_SIZE, len(entries.time_rows) * time_index.ENTRY_SIZE
    )
