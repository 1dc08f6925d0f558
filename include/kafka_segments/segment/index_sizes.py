"""The sizes a segment's ``.index`` and ``.timeindex`` have, from its ``.log`` alone.

Kafka groups segments for cleaning by their index files' current sizes (``Cleaner.groupSegmentsBySize``); on
a lake indexes are rebuilt from the ``.log``, so the sizes are those an append of the same batches builds
(``fast_writer.index_entries``): one pass over the batch headers, no record decoding."""

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
