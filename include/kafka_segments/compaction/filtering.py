"""Cleaning one group of segments into one new segment: ``Cleaner.cleanInto`` + ``MemoryRecords.filterTo``.

Per source segment, in log order: every batch gets its retention (``batch_decisions``), every record its fate
in one pass over the record columns (``fates``), then each batch is deleted, copied byte for byte, rebuilt
(``records.fast.rebuild_batches``, falling back to ``records.builder.rebuild_batch``: the same bytes) or
written as the 61-byte empty header (``RETAIN_EMPTY``); the rules are in ``rewrite`` and ``decisions``. Kafka
refuses an empty legacy batch (``IllegalStateException`` in ``filterTo``); so does this
(``CompactionError``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from kafka_segments.compaction import batch_kinds
from kafka_segments.compaction.assembly import assemble
from kafka_segments.compaction.batch_decisions import batch_decisions, deletes_retained
from kafka_segments.compaction.batch_kinds import has_delete_horizon
from kafka_segments.compaction.decisions import BatchDecision, BatchRetention, RecordDecision, decide_batch
from kafka_segments.compaction.decoded import DecodedSegment, DecodedSegments, decode_segment
from kafka_segments.compaction.errors import CompactionError
from kafka_segments.compaction.fates import FATE_ORDER, FATES, I64, RETAINED_CODES, Bools, Codes
from kafka_segments.compaction.offset_map import NO_OFFSET
from kafka_segments.compaction.producers import is_last_batch_of_active_producer
from kafka_segments.compaction.results import (
    ACTIONS,
    BatchAction,
    BatchOutcomes,
    CleanedSegment,
    RoundContext,
)
from kafka_segments.compaction.source import SourceSegment
from kafka_segments.compaction.txn_state import TransactionState, control_type_from_key
from kafka_segments.records.batch import MAGIC_VALUE_V2, BatchHeader
from kafka_segments.records.fast import HeaderTable, RecordColumns, asked_ids, fate_codes
from kafka_segments.segment.txn_index import AbortedTxn


def clean_group(
    group: Sequence[SourceSegment],
    context: RoundContext,
    state: TransactionState,
    outcomes: list[BatchOutcomes],
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
    outcomes: list[BatchOutcomes],
    out: list[bytes],
    aborted: list[AbortedTxn],
) -> None:
    """Clean one source segment into ``out``: batch decisions in log order (``batch_decisions``), then every
    record's fate in one pass over the segment's record columns, then every batch's action over columns
    (``_Writes``), then the output batches in order."""
    columns = decoded.columns
    table = columns.batches
    bounds = np.searchsorted(columns.batch_index, np.arange(len(table) + 1))
    table.headers_at(np.flatnonzero(~batch_kinds.plain_batches(table)))  # each is asked: built at once
    header = table.header

    def decide(index: int) -> BatchDecision:
        first_row = int(bounds[index]) if bounds[index] < bounds[index + 1] else None
        return _decide(segment, header(index), decoded, first_row, context, state, aborted)

    decisions = batch_decisions(
        table, header, active=context.active, upper_bound=context.upper_bound, decide=decide
    )
    kinds = _DecisionColumns.of(decisions)
    fates = _record_fates(segment, kinds, decoded, context)
    writes = _Writes.of(table, columns, fates, kinds, context)
    legacy_empty = np.flatnonzero((writes.action == _EMPTY_HEADER) & (table.magic < MAGIC_VALUE_V2))
    if len(legacy_empty):
        raise CompactionError(
            f"legacy entry at offset {header(int(legacy_empty[0])).last_offset} would have to be kept "
            "as an empty batch",
            location=segment.name,
        )
    outcomes.append(writes.outcomes(table, tuple(decisions)))
    horizons = [
        writes.new_horizon_ms if stamp else None for stamp in writes.stamp[writes.action == _REBUILT].tolist()
    ]
    out.extend(assemble(segment, decoded, writes.action, writes.keep, horizons, header))


@dataclass(frozen=True, slots=True, eq=False)
class _DecisionColumns:
    """The batch decisions of a segment as columns: retention code, records discarded, marker of an
    emptied transaction."""

    retention: Codes
    discard: Bools
    marker_for_empty_txn: Bools

    @classmethod
    def of(cls, decisions: Sequence[BatchDecision]) -> _DecisionColumns:
        known: dict[int, tuple[int, bool, bool]] = {}  # most batches share a few decision objects
        rows = []
        for decision in decisions:
            row = known.get(id(decision))
            if row is None:
                row = known[id(decision)] = (
                    _RETENTIONS.index(decision.retention),
                    decision.discard_records,
                    decision.marker_for_empty_txn,
                )
            rows.append(row)
        table = np.array(rows, dtype=np.int64).reshape(-1, 3)
        return cls(table[:, 0].astype(np.int8), table[:, 1] != 0, table[:, 2] != 0)


_RETENTIONS = tuple(BatchRetention)
_DELETE = _RETENTIONS.index(BatchRetention.DELETE)
_RETAIN_EMPTY = _RETENTIONS.index(BatchRetention.RETAIN_EMPTY)
_COPIED, _REBUILT, _EMPTY_HEADER, _DELETED = (
    ACTIONS.index(action)
    for action in (BatchAction.COPIED, BatchAction.REBUILT, BatchAction.EMPTY_HEADER, BatchAction.DELETED)
)


@dataclass(frozen=True, slots=True, eq=False)
class _Writes:
    """``filterTo`` for every batch of a segment, over columns (one entry per batch): the action, the
    per-batch tallies, and the delete horizon to stamp on a rebuilt batch."""

    action: Codes
    stamp: Bools
    """A rebuilt batch gets a new delete horizon."""
    read: I64
    """Records ``filterTo`` reads: none of a batch the batch-retention check deletes (``DELETE``)."""
    kept: I64
    unkeyed: I64
    tombstones_read: I64
    tombstones_kept: I64
    aborted_removed: I64
    """Records of aborted transactional data removed: every record of the batch, read or not."""
    keep: Bools
    """Per record: retained."""
    new_horizon_ms: int

    @classmethod
    def of(
        cls,
        table: HeaderTable,
        columns: RecordColumns,
        fates: Codes,
        kinds: _DecisionColumns,
        context: RoundContext,
    ) -> _Writes:
        count = len(table)
        batch = columns.batch_index
        keep = RETAINED_CODES[fates]
        tombstones = (columns.value_length < 0) & ~columns.is_control

        def per_batch(rows: Bools | None = None) -> I64:
            counted: I64 = np.bincount(batch if rows is None else batch[rows], minlength=count)
            return counted.astype(np.int64)

        records, kept = per_batch(), per_batch(keep)
        tombstones_kept = per_batch(keep & tombstones)
        unread = kinds.retention == _DELETE
        deleted = unread | ((kept == 0) & (kinds.retention != _RETAIN_EMPTY))
        emptied = ~deleted & (kept == 0)
        # needToSetDeleteHorizon: a retained tombstone or a marker of an emptied transaction, no horizon yet
        stamp = ((tombstones_kept > 0) | kinds.marker_for_empty_txn) & ~has_delete_horizon(table)
        written = ~deleted & ~emptied
        copied = written & (table.magic >= MAGIC_VALUE_V2) & (kept == records) & ~stamp
        action = np.full(count, _REBUILT, dtype=np.int8)
        action[copied] = _COPIED
        action[emptied] = _EMPTY_HEADER
        action[deleted] = _DELETED
        return cls(
            action,
            stamp & (action == _REBUILT),
            np.where(unread, 0, records),
            np.where(deleted, 0, kept),
            per_batch(fates == _UNKEYED),
            per_batch(tombstones),
            np.where(deleted, 0, tombstones_kept),
            np.where(kinds.discard & ~table.is_control, records, 0),
            keep,
            context.now_ms + context.delete_retention_ms,
        )

    def outcomes(self, table: HeaderTable, decisions: tuple[BatchDecision, ...]) -> BatchOutcomes:
        """The batches' outcomes; nothing of a deleted batch is retained, and the records of a batch that
        ``DELETE`` drops unread are not counted as read (``filterTo`` adds its bytes to ``bytesRead`` and
        skips its record loop, so ``messagesRead`` never sees them)."""
        return BatchOutcomes(
            base_offset=table.base_offset.astype(np.int64),
            last_offset=table.last_offset.astype(np.int64),
            decisions=decisions,
            action=self.action,
            records_read=self.read,
            records_retained=self.kept,
            unkeyed_dropped=self.unkeyed,
            horizon_stamped=self.stamp,
            bytes_read=table.size_in_bytes,
            is_control=table.is_control,
            tombstones_read=self.tombstones_read,
            tombstones_retained=self.tombstones_kept,
            aborted_removed=self.aborted_removed,
        )


def _decide(
    segment: SourceSegment,
    header: BatchHeader,
    decoded: DecodedSegment,
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
            control = control_type_from_key(decoded.control_key(first_row), header, segment=segment.name)
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
    kinds: _DecisionColumns,
    decoded: DecodedSegment,
    context: RoundContext,
) -> Codes:
    """The fate code of every record of the segment (records of deleted batches: DROP_BATCH_DISCARDED)."""
    discard = kinds.discard | (kinds.retention == _DELETE)
    columns = decoded.columns
    deletes = deletes_retained(
        columns.batches,
        now_ms=context.now_ms,
        segment_last_modified_ms=segment.last_modified_ms,
        legacy_horizon_ms=context.legacy_horizon_ms,
    )
    batch = columns.batch_index
    latest = context.offset_map.latest_offset
    # one pass over the rows; the map asked once per distinct key that needs it
    asked = asked_ids(
        columns.offset, decoded.key_id, columns.is_control, batch, discard, latest, decoded.key_ids
    )
    wanted = np.flatnonzero(asked)
    mapped = np.full(decoded.key_ids, NO_OFFSET, dtype=np.int64)
    mapped[wanted] = context.digest_table.lookup(decoded.id_hi[wanted], decoded.id_lo[wanted])
    codes: Codes = fate_codes(
        columns.offset,
        decoded.key_id,
        columns.value_length,
        columns.is_control,
        batch,
        discard,
        deletes,
        mapped,
        latest,
        FATE_ORDER,
    )
    return codes


_UNKEYED = FATES.index(RecordDecision.DROP_UNKEYED)
