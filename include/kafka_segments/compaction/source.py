"""The input of a cleaning round: a partition's segments as bytes, and the aborted transactions in them.

A round reads segments the way Kafka's cleaner reads ``log.logSegments(from, to)``: from the segment
containing ``from`` (its floor segment) through the segments whose base offset is below ``to``.

Aborted transactions come from the transaction indexes when the caller has them, searched as
``UnifiedLog.collectAbortedTransactions`` -> ``LocalLog.collectAbortedTransactions`` does: entries with
``lastOffset >= from`` and ``firstOffset < to``, going on through later segments until an entry's last
stable offset reaches ``to``. The cleaner's search starts at the log start offset, not at ``from``
(``UnifiedLog.collectAbortedTransactions`` passes ``logStartOffset`` as the fetch offset): an aborted
transaction whose marker is below the log start offset is not seen, and its records are cleaned as
committed ones (``from_log_start``). Without indexes they are rebuilt from the markers in the ``.log`` bytes
(both routes give the same answer: docs/compaction.md, "How it maps onto a lake").
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from kafka_segments.compaction.decoded_segment import Buffer, DecodedSegment
from kafka_segments.compaction.errors import SegmentOrderError
from kafka_segments.records.attributes import CONTROL_FLAG_MASK, TRANSACTIONAL_FLAG_MASK
from kafka_segments.records.batch import MAGIC_VALUE_V2, BatchHeader, RecordBatch
from kafka_segments.records.fast import HeaderTable, scan_header_table
from kafka_segments.segment.transactions import AbortedTxnTracker
from kafka_segments.segment.txn_index import AbortedTxn, collect_aborted_txns_from_segments

__all__ = ["Buffer", "SourceSegment"]


@dataclass(frozen=True, slots=True)
class SourceSegment:
    """One live segment of the partition: its ``.log`` bytes and what Kafka knows about the file."""

    name: str
    """The segment's object key or file name, for error messages."""
    base_offset: int
    data: Buffer
    last_modified_ms: int = 0
    """The file's last-modified time: the legacy (v0/v1) delete horizon and the cleaned segment's mtime."""
    offset_index_bytes: int = 0
    """Size of its ``.index`` (8 bytes per entry), for grouping; 0 when unknown."""
    time_index_bytes: int = 0
    """Size of its ``.timeindex`` (12 bytes per entry), for grouping; 0 when unknown."""
    decoded: DecodedSegment | None = field(default=None, compare=False, repr=False)
    """Its records and key identities already decoded (what ``decoded.decode_segment`` gives, e.g. by a
    ``streamed.StreamedSegment`` while it was read), or ``None``: the round decodes ``data`` itself."""

    @property
    def size(self) -> int:
        return len(self.data)

    def batch_at(self, header: BatchHeader) -> RecordBatch:
        """The batch of ``data`` that ``header`` (one of the segment's) describes."""
        end = header.position + header.size_in_bytes
        return RecordBatch(memoryview(self.data)[header.position : end], header, segment=self.name)

    def header_table(self) -> HeaderTable:
        """Its batch headers (``scan_header_table``): those of its decoded columns when they are every entry
        of a v2 segment (they then equal a scan), else a scan of ``data``."""
        table = None if self.decoded is None else self.decoded.columns.batches
        if table is not None and len(table) and bool(np.all(table.magic == MAGIC_VALUE_V2)):
            end = int(table.position[-1]) + int(table.size_in_bytes[-1])
            if int(table.position[0]) == 0 and end == len(self.data):
                return table
        return scan_header_table(self.data, segment=self.name)


def check_order(segments: Sequence[SourceSegment]) -> None:
    """Raises SegmentOrderError unless base offsets strictly increase."""
    for previous, current in itertools.pairwise(segments):
        if current.base_offset <= previous.base_offset:
            raise SegmentOrderError(
                f"base offset {current.base_offset} does not follow {previous.base_offset} ({previous.name})",
                location=current.name,
            )


def segment_slice(segments: Sequence[SourceSegment], start: int, end: int) -> Sequence[SourceSegment]:
    """Kafka's ``LogSegments.values(start, end)`` over source segments (``start == end``: none)."""
    if start >= end:
        return ()
    first = 0
    for index, segment in enumerate(segments):
        if segment.base_offset > start:
            break
        first = index
    return [segment for segment in segments[first:] if segment.base_offset < end]


def aborted_from_markers(segments: Sequence[SourceSegment]) -> tuple[tuple[AbortedTxn, ...], ...]:
    """The ``.txnindex`` entries of every segment, rebuilt from the markers (``segment.transactions``).

    Segments must be the partition's whole log from its first segment, so transactions that started in an
    earlier segment are known when their marker is read.
    """
    tracker = AbortedTxnTracker()
    per_segment: list[tuple[AbortedTxn, ...]] = []
    for segment in segments:
        if not _has_transaction_entries(segment):
            per_segment.append(())
            continue
        table = segment.header_table()
        rows = np.flatnonzero(table.has_producer_id)
        found = []
        for header in table.headers_at(rows):  # only a marker's batch is read: its key says which
            txn = tracker.observe_batch(header, functools.partial(segment.batch_at, header))
            if txn is not None:
                found.append(txn)
        per_segment.append(tuple(found))
    return tuple(per_segment)


def _has_transaction_entries(segment: SourceSegment) -> bool:
    """Whether a segment has a v2 transactional or control batch: the tracker ignores every other entry
    (``AbortedTxnTracker.observe``), so a segment without one is skipped after a header scan."""
    table = segment.header_table()
    flags = (table.attributes & (TRANSACTIONAL_FLAG_MASK | CONTROL_FLAG_MASK)) != 0
    return bool(np.any(flags & (table.magic >= MAGIC_VALUE_V2)))


def from_log_start(
    indexes: Sequence[Sequence[AbortedTxn]], log_start_offset: int
) -> tuple[tuple[AbortedTxn, ...], ...]:
    """``indexes`` without the aborted transactions whose ABORT marker is below ``log_start_offset``: the
    cleaner never sees them (``LocalLog.collectAbortedTransactions(logStartOffset, ...)`` searches from the
    log start offset; ``TransactionIndex.collectAbortedTxns`` keeps entries with ``lastOffset >=`` it). Such
    an entry's last stable offset is below the log start offset too, so it never ends a search early."""
    return tuple(tuple(txn for txn in entries if txn.last_offset >= log_start_offset) for entries in indexes)


def aborted_in_range(
    segments: Sequence[SourceSegment],
    indexes: Sequence[Sequence[AbortedTxn]],
    start: int,
    end: int,
) -> tuple[AbortedTxn, ...]:
    """``collectAbortedTransactions(start, end)``: search the indexes of ``start``'s floor segment and on.

    Args:
        indexes: the transaction-index entries of each of ``segments`` (same order and length).
    """
    if start >= end or not segments:
        return ()
    first = 0
    for index, segment in enumerate(segments):
        if segment.base_offset > start:
            break
        first = index
    return collect_aborted_txns_from_segments(indexes[first:], start, end)
