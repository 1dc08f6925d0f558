"""Cleaning one group of segments into one new segment: ``Cleaner.cleanInto`` + ``MemoryRecords.filterTo``.

Per source segment, in log order: every batch is read by the shared transaction state and gets its retention
(``batch_decisions``: plain batches over header columns, the others through ``decisions.decide_batch``); then
the fate of every record of the segment is computed in one pass over the codec's record columns (``fates``,
``records.fast``); then each batch is written as ``filterTo`` does — deleted, copied byte for byte (v2, every
record kept, no horizon to stamp), rebuilt with the source's codec and metadata (all of a segment's rebuilds
in one call of ``records.fast_rebuild.rebuild_batches``, falling back to ``records.builder.rebuild_batch`` for
what it does not write itself; both give the same bytes: baseOffset and lastOffsetDelta kept for v2, a legacy
entry starting at its first retained record, a new delete horizon ``now + delete.retention.ms`` for a batch
holding a retained tombstone or an emptied transaction's marker, an existing horizon kept), or written as the
61-byte empty header for a ``RETAIN_EMPTY`` batch with nothing left. Kafka refuses an empty legacy batch
(``IllegalStateException`` in ``filterTo``); so does this (``CompactionError``).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from kafka_segments.compaction.batch_decisions import batch_decisions, deletes_retained
from kafka_segments.compaction.batch_kinds import has_delete_horizon
from kafka_segments.compaction.decisions import (
    BatchDecision,
    BatchRetention,
    RecordDecision,
    decide_batch,
)
from kafka_segments.compaction.decoded import DecodedSegment, DecodedSegments, decode_segment
from kafka_segments.compaction.errors import CompactionError
from kafka_segments.compaction.fates import (
    FATES,
    I32,
    RETAINED_CODES,
    Bools,
    Codes,
    found_offsets,
    needs_lookup,
    record_fates,
)
from kafka_segments.compaction.offset_map import NO_OFFSET
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
from kafka_segments.records.fast import RecordColumns
from kafka_segments.records.fast_rebuild import rebuild_batches
from kafka_segments.segment.txn_index import AbortedTxn


def clean_group(
    group: Sequence[SourceSegment],
    context: RoundContext,
    state: TransactionState,
    outcomes: list[BatchOutcome],
    decoded: DecodedSegments | None = None,
) -> CleanedSegment:
    """One group of segments cleaned into one segment (``decoded``: the round's decoded segments)."""
    out: list[bytes] = []
    aborted: list[AbortedTxn] = []
    for segment in group:
        found = decoded.get(segment) if decoded is not None else decode_segment(segment)
        _clean_segment(segment, found, context, state, outcomes, out, aborted)
    last = group[-1]
    return CleanedSegment(
        group[0].base_offset, tuple(out), tuple(aborted), last.last_modified_ms, tuple(s.name for s in group)
    )


def _clean_segment(
    segment: SourceSegment,
    decoded: DecodedSegment,
    context: RoundContext,
    state: TransactionState,
    outcomes: list[BatchOutcome],
    out: list[bytes],
    aborted: list[AbortedTxn],
) -> None:
    """Clean one source segment into ``out``: batch decisions in log order (``batch_decisions``), then every
    record's fate in one pass over the segment's record columns, then each batch written."""
    columns = decoded.columns
    table = columns.batches
    headers = table.to_headers()
    bounds = np.searchsorted(columns.batch_index, np.arange(len(headers) + 1))
    starts = [int(start) if start < end else None for start, end in itertools.pairwise(bounds.tolist())]
    decisions = batch_decisions(
        table,
        headers,
        active=context.active,
        upper_bound=context.upper_bound,
        decide=lambda index: _decide(
            segment, headers[index], columns, starts[index], context, state, aborted
        ),
    )
    fates = _record_fates(segment, decisions, decoded, context)
    tallies = _Tallies.of(columns, fates, len(headers))
    stamped = has_delete_horizon(table).tolist()
    written: list[bytes | _Rebuild | None] = []
    for index, header in enumerate(headers):
        outcome, batch = _write_batch(
            segment,
            index,
            header,
            decisions[index],
            (int(bounds[index]), int(bounds[index + 1])),
            tallies,
            stamped[index],
            context,
        )
        outcomes.append(outcome)
        written.append(batch)
    out.extend(_rebuild(segment, columns, RETAINED_CODES[fates], written))


def _rebuild(
    segment: SourceSegment,
    columns: RecordColumns,
    keep: Bools,
    written: list[bytes | _Rebuild | None],
) -> list[bytes]:
    """The segment's output batches, rebuilding the requested ones all at once (``fast_rebuild``) and the
    few it does not write itself record by record (``builder.rebuild_batch``)."""
    requests = [batch for batch in written if isinstance(batch, _Rebuild)]
    fast = rebuild_batches(
        columns, keep, [r.batch for r in requests], [r.delete_horizon_ms for r in requests]
    )
    rebuilt = iter(fast)
    out: list[bytes] = []
    for batch in written:
        if isinstance(batch, _Rebuild):
            done = next(rebuilt)
            out.append(done if done is not None else _rebuild_per_record(segment, columns, keep, batch))
        elif batch is not None:
            out.append(batch)
    return out


@dataclass(frozen=True, slots=True)
class _Rebuild:
    """A batch to rebuild: its header, its row in the header table, its rows, a new horizon to stamp."""

    header: BatchHeader
    batch: int
    first_row: int
    end_row: int
    delete_horizon_ms: int | None


def _rebuild_per_record(
    segment: SourceSegment, columns: RecordColumns, keep: Bools, request: _Rebuild
) -> bytes:
    header = request.header
    rows = np.arange(request.first_row, request.end_row)
    records = [columns.record(int(row)) for row in rows[keep[request.first_row : request.end_row]]]
    raw = memoryview(segment.data)[header.position : header.position + header.size_in_bytes]
    return rebuild_batch(
        RecordBatch(raw, header, segment=segment.name), records, delete_horizon_ms=request.delete_horizon_ms
    )


@dataclass(frozen=True, slots=True)
class _Tallies:
    """Per batch: records read, kept, unkeyed dropped, tombstones read and retained (one entry per batch)."""

    read: list[int]
    kept: list[int]
    unkeyed: list[int]
    tombstones: list[int]
    tombstones_read: list[int]

    batch_index: I32

    def row(self, span: tuple[int, int]) -> _Row:
        """The tallies of the batch whose records are rows ``span``."""
        if span[0] >= span[1]:
            return _Row(0, 0, 0, 0, 0)
        index = int(self.batch_index[span[0]])
        return _Row(
            self.read[index],
            self.kept[index],
            self.unkeyed[index],
            self.tombstones[index],
            self.tombstones_read[index],
        )

    @classmethod
    def of(cls, columns: RecordColumns, fates: Codes, count: int) -> _Tallies:
        batch = columns.batch_index
        keep = RETAINED_CODES[fates]
        all_tombstones = (columns.value_length < 0) & ~columns.is_control
        return cls(
            np.bincount(batch, minlength=count).tolist(),
            np.bincount(batch[keep], minlength=count).tolist(),
            np.bincount(batch[fates == _UNKEYED], minlength=count).tolist(),
            np.bincount(batch[keep & all_tombstones], minlength=count).tolist(),
            np.bincount(batch[all_tombstones], minlength=count).tolist(),
            batch,
        )


@dataclass(frozen=True, slots=True)
class _Row:
    read: int
    kept: int
    unkeyed: int
    tombstones: int
    tombstones_read: int


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
    decisions: Sequence[BatchDecision],
    decoded: DecodedSegment,
    context: RoundContext,
) -> Codes:
    """The fate code of every record of the segment (records of deleted batches: DROP_BATCH_DISCARDED)."""
    deleted = np.array([d.retention is BatchRetention.DELETE for d in decisions], dtype=np.bool_)
    discard = np.array([d.discard_records for d in decisions], dtype=np.bool_) | deleted
    columns = decoded.columns
    deletes = deletes_retained(
        columns.batches,
        now_ms=context.now_ms,
        segment_last_modified_ms=segment.last_modified_ms,
        legacy_horizon_ms=context.legacy_horizon_ms,
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
    table = context.digest_table
    if table is not None:
        found = np.full(len(lookup), NO_OFFSET, dtype=np.int64)
        rows = np.flatnonzero(lookup)
        found[rows] = table.lookup(decoded.hi[rows], decoded.lo[rows], context.offset_map)
    else:
        found = found_offsets(
            columns.buffer, columns.key_start, columns.key_length, lookup, context.offset_map
        )
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
    index: int,
    header: BatchHeader,
    decision: BatchDecision,
    span: tuple[int, int],
    tallies: _Tallies,
    has_horizon: bool,
    context: RoundContext,
) -> tuple[BatchOutcome, bytes | _Rebuild | None]:
    """``filterTo`` for batch ``index`` (its records are rows ``span`` of the columns): nothing, the original
    bytes, a batch to rebuild, or an empty header."""
    row = tallies.row(span)
    if decision.retention is BatchRetention.DELETE:
        return _outcome(header, decision, BatchAction.DELETED, row, horizon=False), None
    kept = row.kept
    if not kept:
        if decision.retention is not BatchRetention.RETAIN_EMPTY:
            return _outcome(header, decision, BatchAction.DELETED, row, horizon=False), None
        if header.magic < MAGIC_VALUE_V2:
            raise CompactionError(
                f"legacy entry at offset {header.last_offset} would have to be kept as an empty batch",
                location=segment.name,
            )
        empty = empty_batch_header(header)
        return _outcome(header, decision, BatchAction.EMPTY_HEADER, row, horizon=False), empty
    # filterTo's needToSetDeleteHorizon (decisions.needs_delete_horizon) over the tallies
    stamp = (row.tombstones > 0 or decision.marker_for_empty_txn) and not has_horizon
    if header.magic >= MAGIC_VALUE_V2 and kept == row.read and not stamp:
        raw = bytes(memoryview(segment.data)[header.position : header.position + header.size_in_bytes])
        return _outcome(header, decision, BatchAction.COPIED, row, horizon=False), raw
    horizon = context.now_ms + context.delete_retention_ms if stamp else None
    request = _Rebuild(header, index, span[0], span[1], horizon)
    return _outcome(header, decision, BatchAction.REBUILT, row, horizon=stamp), request


def _outcome(
    header: BatchHeader, decision: BatchDecision, action: BatchAction, row: _Row, *, horizon: bool
) -> BatchOutcome:
    """The batch's outcome; nothing of a deleted batch is retained (its records may never have been
    decided: ``DELETE`` drops them unread, as Kafka does, but they are still counted as read)."""
    deleted = action is BatchAction.DELETED
    aborted = not header.is_control and decision.discard_records
    return BatchOutcome(
        base_offset=header.base_offset,
        last_offset=header.last_offset,
        decision=decision,
        action=action,
        records_read=row.read,
        records_retained=0 if deleted else row.kept,
        unkeyed_dropped=row.unkeyed,
        horizon_stamped=horizon,
        bytes_read=header.size_in_bytes,
        is_control=header.is_control,
        tombstones_read=row.tombstones_read,
        tombstones_retained=0 if deleted else row.tombstones,
        aborted_removed=row.read if aborted else 0,
    )
