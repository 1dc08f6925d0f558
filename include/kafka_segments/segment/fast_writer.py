"""Writing a segment's files from its whole ``.log`` in one columnar pass (no Python call per plain batch).

``write_segment_columns(log, ...)`` returns exactly what ``writer.write_segment`` returns for the batches of
``log`` (the same bytes, counts, transactions and errors). Kafka's append rules run over the header columns
in two numba kernels: ``relative_last_offsets`` (``LogSegment.ensureOffsetInRange``; the first offender is
reported as ``SegmentWriter.append`` reports it) and ``index_rule`` (``LogSegment.append`` /
``onBecomeInactiveSegment``; ``index_entries`` exposes it).

The producer-state replay for the ``.txnindex`` stays per batch, but only for the batches that can change
it (transactional or control v2 batches with a producer id; after a producer's first data batch its others
are skipped). A damaged ``.log``, legacy entries or a base offset beyond int64 go to ``write_segment``."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from kafka_segments.errors import CorruptRecordError, SegmentFullError, SegmentWriteError
from kafka_segments.records.attributes import CONTROL_FLAG_MASK, TRANSACTIONAL_FLAG_MASK
from kafka_segments.records.batch import MAGIC_VALUE_V2, NO_PRODUCER_ID, RecordBatch
from kafka_segments.records.fast import (
    BELOW_BASE,
    NOT_INCREASING,
    OFFSETS_OK,
    HeaderTable,
    index_rule,
    relative_last_offsets,
    scan_header_table,
)
from kafka_segments.records.log import scan_valid_prefix
from kafka_segments.segment.transactions import AbortedTxnTracker
from kafka_segments.segment.txn_index import AbortedTxn, build_txn_index
from kafka_segments.segment.writer import DEFAULT_INDEX_INTERVAL_BYTES, SegmentFiles, write_segment

__all__ = ["IndexEntries", "index_entries", "write_segment_columns"]

Buffer = bytes | bytearray | memoryview

I64 = npt.NDArray[np.int64]
INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1
_INTERVAL_CAP = 2**62
"""``index.interval.bytes`` above any possible byte count: larger values behave the same (no entry)."""

_TXN_FLAGS = TRANSACTIONAL_FLAG_MASK | CONTROL_FLAG_MASK


@dataclass(frozen=True, slots=True, eq=False)
class IndexEntries:
    """The entries ``LogSegment.append`` gives a segment's indexes, as rows of its header table.

    Attributes:
        offset_rows: the batches that get an offset-index entry ``(lastOffset, position)``.
        time_timestamps: the timestamp of each time-index entry, the closing entry included.
        time_rows: for each time-index entry, the batch whose last offset is the entry's offset (the batch
            that carried the largest timestamp so far).
        largest_timestamp: the segment's largest batch max timestamp (-1 when none is above -1).
        largest_row: the batch that carried it (the first one, when several did), -1 when there is none.
    """

    offset_rows: I64
    time_timestamps: I64
    time_rows: I64
    largest_timestamp: int
    largest_row: int


def index_entries(table: HeaderTable, *, index_interval_bytes: int) -> IndexEntries:
    """Where ``LogSegment.append`` (batch by batch) and ``onBecomeInactiveSegment`` put index entries for the
    batches of ``table`` appended to an empty segment (see the module doc)."""
    interval = min(index_interval_bytes, _INTERVAL_CAP)
    offset_rows, stamps, rows, largest, largest_row = index_rule(
        table.size_in_bytes, table.max_timestamp, np.int64(interval)
    )
    return IndexEntries(offset_rows, stamps, rows, int(largest), int(largest_row))


def write_segment_columns(
    log: Buffer,
    *,
    base_offset: int,
    index_interval_bytes: int = DEFAULT_INDEX_INTERVAL_BYTES,
    ongoing_txns: Mapping[int, int] | None = None,
    segment: str = "<memory>",
) -> SegmentFiles:
    """The closed segment holding the entries of ``log`` (a whole ``.log``): equal, field for field, to
    ``write_segment(<its entries>, base_offset=..., index_interval_bytes=..., segment_index_bytes=None,
    ongoing_txns=..., segment=..., verify_crc=False)``.

    Args:
        log: the segment's bytes, kept as the result's ``log`` (copied only when not ``bytes``).
        base_offset: the segment's base offset (its file name).
        index_interval_bytes: ``index.interval.bytes`` (>= 0).
        ongoing_txns: transactions open when the segment starts (producer id -> first offset).
        segment: names the segment in errors.

    Raises:
        SegmentFullError: a batch's last offset overflows the int32 relative offsets.
        SegmentWriteError: a damaged entry, offsets below the base offset or not above the previous batch's,
            a control batch whose marker key is invalid (each naming the segment and the batch number).
        ValueError: a negative ``base_offset`` or ``index_interval_bytes``.
    """
    _check_options(base_offset, index_interval_bytes)
    data = log if isinstance(log, bytes) else bytes(log)
    options = _Options(base_offset, index_interval_bytes, ongoing_txns, segment)
    try:
        table = scan_header_table(data, segment=segment)
    except CorruptRecordError:
        return _reference(data, options)
    if base_offset > INT64_MAX or bool((table.magic < MAGIC_VALUE_V2).any()):
        return _reference(data, options)
    relative_last, bad_row, outcome = relative_last_offsets(
        table.base_offset, table.last_offset_delta, np.int64(base_offset)
    )
    bad_row, outcome = int(bad_row), int(outcome)
    checked = len(table) if bad_row < 0 else bad_row
    aborted, tracker = _replay_transactions(data, table, checked, options)
    if outcome != OFFSETS_OK:
        raise _offset_error(table, bad_row, outcome, base_offset, segment)
    entries = index_entries(table, index_interval_bytes=index_interval_bytes)
    return _files(data, table, relative_last, entries, aborted, tracker, options)


@dataclass(frozen=True, slots=True)
class _Options:
    base_offset: int
    index_interval_bytes: int
    ongoing_txns: Mapping[int, int] | None
    segment: str


def _files(
    data: bytes,
    table: HeaderTable,
    relative_last: I64,
    entries: IndexEntries,
    aborted: list[AbortedTxn],
    tracker: AbortedTxnTracker,
    options: _Options,
) -> SegmentFiles:
    base = options.base_offset
    count = len(table)
    largest_offset = base if entries.largest_row < 0 else base + int(relative_last[entries.largest_row])
    return SegmentFiles(
        base_offset=base,
        log=data,
        offset_index=_offset_index_bytes(
            relative_last[entries.offset_rows], table.position[entries.offset_rows], options.segment
        ),
        time_index=_time_index_bytes(entries.time_timestamps, relative_last[entries.time_rows]),
        txn_index=build_txn_index(aborted, base_offset=base),
        batch_count=count,
        record_count=int(table.records_count.sum(dtype=np.int64)),
        next_offset=base + int(relative_last[-1]) + 1 if count else base,
        largest_timestamp=entries.largest_timestamp,
        offset_of_largest_timestamp=largest_offset,
        aborted_txns=tuple(aborted),
        ongoing_txns=tracker.ongoing,
    )


def _offset_index_bytes(relative: I64, positions: I64, segment: str) -> bytes:
    """``.index`` entries: big-endian int32 relative offset and int32 position (``OffsetIndex``)."""
    if positions.size and int(positions[-1]) > INT32_MAX:
        # Kafka's segments are at most Integer.MAX_VALUE bytes (segment.bytes is an int); the reference
        # writer fails packing such a position (struct.error).
        raise SegmentWriteError(
            f"{segment}: an index entry's position {int(positions[-1])} does not fit an int32 "
            "(the segment is larger than 2 GiB)"
        )
    out = np.empty(len(relative), dtype=[("relative_offset", ">i4"), ("position", ">i4")])
    out["relative_offset"] = relative
    out["position"] = positions
    return out.tobytes()


def _time_index_bytes(timestamps: I64, relative: I64) -> bytes:
    """``.timeindex`` entries: big-endian int64 timestamp and int32 relative offset (``TimeIndex``)."""
    out = np.empty(len(timestamps), dtype=[("timestamp", ">i8"), ("relative_offset", ">i4")])
    out["timestamp"] = timestamps
    out["relative_offset"] = relative
    return out.tobytes()


def _replay_transactions(
    data: bytes, table: HeaderTable, limit: int, options: _Options
) -> tuple[list[AbortedTxn], AbortedTxnTracker]:
    """Feed the first ``limit`` batches that can change the producer state to an ``AbortedTxnTracker``.

    Raises:
        SegmentWriteError: a control batch's marker key is invalid (as ``SegmentWriter.append`` wraps it).
    """
    tracker = AbortedTxnTracker(ongoing=options.ongoing_txns)
    aborted: list[AbortedTxn] = []
    view = memoryview(data)
    for row in _transaction_rows(table, limit).tolist():
        header = table.header(row)
        batch = RecordBatch(
            view[header.position : header.position + header.size_in_bytes], header, segment=options.segment
        )
        try:
            txn = tracker.observe(batch)
        except CorruptRecordError as exc:
            raise SegmentWriteError(f"{options.segment}: batch {row}: {exc.reason}") from exc
        if txn is not None:
            aborted.append(txn)
    return aborted, tracker


def _transaction_rows(table: HeaderTable, limit: int) -> I64:
    """The rows among the first ``limit`` that ``AbortedTxnTracker.observe`` can act on, in order.

    Only batches with a producer id that are transactional or control count. A producer's transactional
    data batch only matters when no transaction of that producer is open, which can only be true for its
    first such batch after its last control batch (or the segment start): every later one finds the
    transaction that one opened (only a control batch of the same producer closes it), so it is dropped."""
    producers = table.producer_id[:limit]
    attributes = table.attributes[:limit]
    rows = np.flatnonzero((producers > NO_PRODUCER_ID) & ((attributes & _TXN_FLAGS) != 0))
    if rows.size < 2:
        return rows
    order = np.argsort(producers[rows], kind="stable")  # by producer, offset order within a producer
    grouped = producers[rows][order]
    control = (attributes[rows][order] & CONTROL_FLAG_MASK) != 0
    needed = control.copy()
    needed[0] = True
    needed[1:] |= (grouped[1:] != grouped[:-1]) | control[:-1]
    keep = np.empty(len(rows), dtype=np.bool_)
    keep[order] = needed
    return rows[keep]


def _offset_error(
    table: HeaderTable, row: int, outcome: int, base_offset: int, segment: str
) -> SegmentWriteError:
    """The error ``SegmentWriter.append`` raises for batch ``row`` (same class and message)."""
    first = int(table.base_offset[row])
    last = first + int(table.last_offset_delta[row])
    where = f"{segment}: batch {row} (offsets {first}..{last})"
    if outcome == BELOW_BASE:
        return SegmentWriteError(f"{where}: below the segment base offset {base_offset}")
    if outcome == NOT_INCREASING:
        previous = int(table.base_offset[row - 1]) + int(table.last_offset_delta[row - 1])
        return SegmentWriteError(f"{where}: not above the previous batch's last offset {previous}")
    return SegmentFullError(
        f"{where}: offset {last} overflows the int32 relative offset of base offset {base_offset}"
    )


def _reference(data: bytes, options: _Options) -> SegmentFiles:
    """``write_segment`` over the entries of ``data``: the valid ones, then the damaged rest (if any)."""
    return write_segment(
        _entries(data, options.segment),
        base_offset=options.base_offset,
        index_interval_bytes=options.index_interval_bytes,
        segment_index_bytes=None,
        ongoing_txns=options.ongoing_txns,
        segment=options.segment,
        verify_crc=False,
    )


def _entries(data: bytes, segment: str) -> Iterator[memoryview]:
    view = memoryview(data)
    scan = scan_valid_prefix(view, segment=segment, verify_crc=False)
    for header in scan.batches:
        yield view[header.position : header.position + header.size_in_bytes]
    if scan.damage is not None:
        yield view[scan.valid_bytes :]


def _check_options(base_offset: int, index_interval_bytes: int) -> None:
    """The checks (and messages) of ``SegmentWriter``'s constructor for the options taken here."""
    if base_offset < 0:
        raise ValueError(f"base_offset must be >= 0, not {base_offset}")
    if index_interval_bytes < 0:
        raise ValueError(
            f"index_interval_bytes (index.interval.bytes) must be >= 0, not {index_interval_bytes}"
        )
