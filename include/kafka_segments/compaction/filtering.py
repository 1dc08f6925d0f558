"""Cleaning one group of segments into one new segment: ``Cleaner.cleanInto`` + ``MemoryRecords.filterTo``.

Per source segment, in log order: every batch is read by the shared transaction state and gets its retention
(``decisions.decide_batch``); then the fate of every record of the segment is computed in one pass over the
codec's record columns (``fates``, ``records.fast``); then each batch is written as ``filterTo`` does —
deleted, copied byte for byte (v2, every record kept, no horizon to stamp), rebuilt with the source's codec
and metadata (``records.builder.rebuild_batch``: baseOffset and lastOffsetDelta kept for v2, a legacy entry
starting at its first retained record, a new delete horizon ``now + delete.retention.ms`` for a batch holding
a retained tombstone or an emptied transaction's marker, an existing horizon kept), or written as the
61-byte empty header for a ``RETAIN_EMPTY`` batch with nothing left. Kafka refuses an empty legacy batch
(``IllegalStateException`` in ``filterTo``); so does this (``CompactionError``).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from kafka_segments.compaction.decisions import (
    BatchDecision,
    BatchRetention,
    RecordDecision,
    decide_batch,
    needs_delete_horizon,
    retain_deletes,
)
from kafka_segments.compaction.errors import CompactionError
from kafka_segments.compaction.fates import (
    FATES,
    RETAINED_CODES,
    Codes,
    found_offsets,
    needs_lookup,
    record_fates,
)
from kafka_segments.compaction.producers import is_last_batch_of_active_producer
from kafka_segments.compaction.results import (
    BatchAction,
    BatchOutcome,
    CleanedSegment,
    RoundContext,
)
from kafka_segments.compaction.source import SourceSegment
from kafka_segments.compaction.txn_state import TransactionState, control_type_from_key
from kafka_segments.records.batch import MAGIC_VALUE_V2, BatchHeader, RecordBatch
from kafka_segments.records.builder import empty_batch_header, rebuild_batch
from kafka_segments.records.fast import RecordColumns, decode_record_columns
from kafka_segments.segment.txn_index import AbortedTxn


def clean_group(
    group: Sequence[SourceSegment],
    context: RoundContext,
    state: TransactionState,
    outcomes: list[BatchOutcome],
) -> CleanedSegment:
    out: list[bytes] = []
    aborted: list[AbortedTxn] = []
    for segment in group:
        _clean_segment(segment, context, state, outcomes, out, aborted)
    last = group[-1]
    return CleanedSegment(
        group[0].base_offset, tuple(out), tuple(aborted), last.last_modified_ms, tuple(s.name for s in group)
    )


def _clean_segment(
    segment: SourceSegment,
    context: RoundContext,
    state: TransactionState,
    outcomes: list[BatchOutcome],
    out: list[bytes],
    aborted: list[AbortedTxn],
) -> None:
    """Clean one source segment into ``out``: batch decisions in log order, then every record's fate in
    one pass over the segment's record columns, then each batch written."""
    columns = decode_record_columns(segment.data, segment=segment.name, verify_crc=False)
    headers = columns.batches.to_headers()
    bounds = np.searchsorted(columns.batch_index, np.arange(len(headers) + 1))
    starts = [int(start) if start < end else None for start, end in itertools.pairwise(bounds.tolist())]
    decisions = [
        _decide(segment, header, columns, start, context, state, aborted)
        for header, start in zip(headers, starts, strict=True)
    ]
    kept = _record_fates(segment, headers, decisions, columns, context)
    for index, header in enumerate(headers):
        rows = np.arange(bounds[index], bounds[index + 1])
        outcome, written = _write_batch(segment, header, decisions[index], columns, rows, kept, context)
        outcomes.append(outcome)
        if written is not None:
            out.append(written)


def _decide(
    segment: SourceSegment,
    header: BatchHeader,
    columns: RecordColumns,
    first_row: int | None,
    context: RoundContext,
    state: TransactionState,
    aborted: list[AbortedTxn],
) -> BatchDecision:
    """``checkBatchRetention`` after the transaction state has read the batch (``first_row``: the row of
    its first record, ``None`` for a batch without records)."""
    if header.is_control:
        control = None
        if first_row is not None:
            control = control_type_from_key(columns.key(first_row), header, segment=segment.name)
        read = state.on_control_batch(header, control)
        can_discard = read.discardable
        if read.retained_abort is not None:
            aborted.append(read.retained_abort)
    else:
        can_discard = state.on_data_batch(header)
    return decide_batch(
        header,
        can_discard=can_discard,
        last_of_active_producer=is_last_batch_of_active_producer(header, context.active),
        round_upper_bound=context.upper_bound,
        now_ms=context.now_ms,
    )


def _record_fates(
    segment: SourceSegment,
    headers: Sequence[BatchHeader],
    decisions: Sequence[BatchDecision],
    columns: RecordColumns,
    context: RoundContext,
) -> Codes:
    """The fate code of every record of the segment (records of deleted batches: DROP_BATCH_DISCARDED)."""
    deleted = np.array([d.retention is BatchRetention.DELETE for d in decisions], dtype=np.bool_)
    discard = np.array([d.discard_records for d in decisions], dtype=np.bool_) | deleted
    deletes = np.array(
        [
            retain_deletes(
                header,
                now_ms=context.now_ms,
                segment_last_modified_ms=segment.last_modified_ms,
                legacy_delete_horizon_ms=context.legacy_horizon_ms,
            )
            for header in headers
        ],
        dtype=np.bool_,
    )
    batch = columns.batch_index
    has_key = columns.key_length >= 0
    latest = context.offset_map.latest_offset
    discard_rows = discard[batch]
    lookup = needs_lookup(
        offset=columns.offset,
        has_key=has_key,
        is_control=columns.is_control,
        discard=discard_rows,
        latest_offset=latest,
    )
    found = found_offsets(columns.buffer, columns.key_start, columns.key_length, lookup, context.offset_map)
    return record_fates(
        offset=columns.offset,
        has_key=has_key,
        has_value=columns.value_length >= 0,
        is_control=columns.is_control,
        discard=discard_rows,
        deletes_retained=deletes[batch],
        found=found,
        latest_offset=latest,
    )


_UNKEYED = FATES.index(RecordDecision.DROP_UNKEYED)


def _write_batch(
    segment: SourceSegment,
    header: BatchHeader,
    decision: BatchDecision,
    columns: RecordColumns,
    rows: npt.NDArray[np.intp],
    fates: Codes,
    context: RoundContext,
) -> tuple[BatchOutcome, bytes | None]:
    """``filterTo`` for one batch: nothing, the original bytes, a rebuilt batch, or an empty header."""
    if decision.retention is BatchRetention.DELETE:
        return _outcome(header, decision, BatchAction.DELETED, 0, 0, 0, horizon=False), None
    codes = fates[rows]
    keep = RETAINED_CODES[codes]
    retained_rows = rows[keep]
    read, kept = len(rows), len(retained_rows)
    unkeyed = int(np.count_nonzero(codes == _UNKEYED))
    if not kept:
        if decision.retention is not BatchRetention.RETAIN_EMPTY:
            return _outcome(header, decision, BatchAction.DELETED, read, 0, unkeyed, horizon=False), None
        if header.magic < MAGIC_VALUE_V2:
            raise CompactionError(
                f"legacy entry at offset {header.last_offset} would have to be kept as an empty batch",
                location=segment.name,
            )
        written = empty_batch_header(header)
        return _outcome(header, decision, BatchAction.EMPTY_HEADER, read, 0, unkeyed, horizon=False), written
    tombstones = bool(np.any((columns.value_length[retained_rows] < 0) & ~columns.is_control[retained_rows]))
    stamp = needs_delete_horizon(
        header, contains_tombstones=tombstones, marker_for_empty_txn=decision.marker_for_empty_txn
    )
    raw = memoryview(segment.data)[header.position : header.position + header.size_in_bytes]
    if header.magic >= MAGIC_VALUE_V2 and kept == read and not stamp:
        return _outcome(header, decision, BatchAction.COPIED, read, kept, unkeyed, horizon=False), bytes(raw)
    horizon = context.now_ms + context.delete_retention_ms if stamp else None
    records = [columns.record(int(row)) for row in retained_rows]
    written = rebuild_batch(
        RecordBatch(raw, header, segment=segment.name), records, delete_horizon_ms=horizon
    )
    return _outcome(header, decision, BatchAction.REBUILT, read, kept, unkeyed, horizon=stamp), written


def _outcome(
    header: BatchHeader,
    decision: BatchDecision,
    action: BatchAction,
    read: int,
    kept: int,
    unkeyed: int,
    *,
    horizon: bool,
) -> BatchOutcome:
    return BatchOutcome(
        header.base_offset, header.last_offset, decision, action, read, kept, unkeyed, horizon
    )
