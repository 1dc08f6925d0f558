"""Per-batch and per-record retention in a cleaning round, as pure functions returning explicit enums
(``Cleaner.cleanInto``'s ``RecordFilter`` and ``shouldRetainRecord``; ``MemoryRecords.filterTo``).

**Per batch** (``checkBatchRetention``), in log order, after the transaction state has read the batch
(``txn_state``; ``canDiscardBatch``). Its records are discardable for a control batch when ``canDiscardBatch``
and its delete horizon has passed (``horizon <= now``), for a data batch when ``canDiscardBatch`` (aborted
data, whatever its keys or age). The retention is ``RETAIN_EMPTY`` for the last batch of an active producer
(``producers``; the batch has a producer id), else ``RETAIN_EMPTY`` for a batch ending exactly at the round's
upper bound (``nextOffset == upperBoundOffsetOfCleaningRound``: the last offset must not be lost), else
``DELETE`` when its records are discardable (not even read), else ``DELETE_EMPTY`` (kept only if a record
survives). ``containsMarkerForEmptyTxn = canDiscardBatch && isControl``.

**Per record**: discardable batch records go; control records stay; a record past the map's latest offset
stays (tombstones and unkeyed records included); an unkeyed record goes (an "invalid message"); otherwise it
stays iff it is the latest offset of its key (``offset >= map.get(key)``, -1 when absent) and it has a value
or deletes are retained: for v2 while the batch has no delete horizon or ``now < horizon``, for v0/v1 while
the source segment's mtime is after the legacy delete horizon (the last clean segment's mtime -
``delete.retention.ms``).

**Horizon** (``filterTo``): a batch with a retained record gets the delete horizon ``now +
delete.retention.ms`` when it holds a retained tombstone or is a marker of an emptied transaction and has no
horizon yet (any magic: a legacy entry is rewritten as v2 anyway). An existing horizon is never reset."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from kafka_segments.compaction.offset_map import OffsetLookup, key_digest
from kafka_segments.records.batch import MAGIC_VALUE_V2, BatchHeader
from kafka_segments.records.record import Record


class BatchRetention(Enum):
    """``MemoryRecords.RecordFilter.BatchRetention``."""

    DELETE = "delete"
    """Drop the batch without reading its records."""
    RETAIN_EMPTY = "retain-empty"
    """Keep the batch even with no record left (an empty batch header then)."""
    DELETE_EMPTY = "delete-empty"
    """Keep the batch only if a record survives."""


class BatchReason(Enum):
    """Which rule gave a batch its retention."""

    LAST_BATCH_OF_ACTIVE_PRODUCER = "last-batch-of-active-producer"
    END_OF_ROUND = "end-of-round"
    ABORTED_DATA = "aborted-data"
    EXPIRED_MARKER = "expired-marker"
    RECORDS_DECIDE = "records-decide"


@dataclass(frozen=True, slots=True)
class BatchDecision:
    """``BatchRetentionResult`` plus the filter's ``discardBatchRecords``, with the reason."""

    retention: BatchRetention
    reason: BatchReason
    discard_records: bool
    marker_for_empty_txn: bool


def decide_batch(
    header: BatchHeader,
    *,
    can_discard: bool,
    last_of_active_producer: bool,
    round_upper_bound: int,
    now_ms: int,
) -> BatchDecision:
    """``checkBatchRetention`` for one batch (``can_discard``: the transaction state's answer)."""
    if header.is_control:
        horizon = header.delete_horizon_ms
        discard = can_discard and horizon is not None and horizon <= now_ms
    else:
        discard = can_discard
    marker_for_empty_txn = can_discard and header.is_control
    if header.has_producer_id and last_of_active_producer:
        retention, reason = BatchRetention.RETAIN_EMPTY, BatchReason.LAST_BATCH_OF_ACTIVE_PRODUCER
    elif header.next_offset == round_upper_bound:
        retention, reason = BatchRetention.RETAIN_EMPTY, BatchReason.END_OF_ROUND
    elif discard:
        why = BatchReason.EXPIRED_MARKER if header.is_control else BatchReason.ABORTED_DATA
        retention, reason = BatchRetention.DELETE, why
    else:
        retention, reason = BatchRetention.DELETE_EMPTY, BatchReason.RECORDS_DECIDE
    return BatchDecision(retention, reason, discard, marker_for_empty_txn)


class RecordDecision(Enum):
    """What happens to one record, and why."""

    KEEP_CONTROL = "keep-control"
    KEEP_BEYOND_MAP = "keep-beyond-map"
    KEEP_LATEST = "keep-latest"
    KEEP_TOMBSTONE = "keep-tombstone"
    """The latest record of its key is a tombstone whose delete horizon has not passed."""
    DROP_BATCH_DISCARDED = "drop-batch-discarded"
    DROP_UNKEYED = "drop-unkeyed"
    DROP_SUPERSEDED = "drop-superseded"
    DROP_EXPIRED_TOMBSTONE = "drop-expired-tombstone"

    @property
    def retained(self) -> bool:
        """The record is kept: the ``KEEP_`` decisions (every other one is a ``DROP_``)."""
        return self.name.startswith("KEEP_")


def retain_deletes(
    header: BatchHeader, *, now_ms: int, segment_last_modified_ms: int, legacy_delete_horizon_ms: int
) -> bool:
    """Whether tombstones of this batch may still be kept (``Cleaner.shouldRetainRecord``)."""
    if header.magic >= MAGIC_VALUE_V2:
        horizon = header.delete_horizon_ms
        return horizon is None or now_ms < horizon
    return segment_last_modified_ms > legacy_delete_horizon_ms


def decide_record(  # noqa: PLR0911 - one early return per decision, in the order of Kafka's MemoryRecords.filterTo and shouldRetainRecord
    record: Record,
    *,
    is_control: bool,
    discard_records: bool,
    offset_map: OffsetLookup,
    deletes_retained: bool,
) -> RecordDecision:
    """The filter's ``shouldRetainRecord`` for one record of a batch that was not deleted outright."""
    if discard_records:
        return RecordDecision.DROP_BATCH_DISCARDED
    if is_control:
        return RecordDecision.KEEP_CONTROL
    if record.offset > offset_map.latest_offset:
        return RecordDecision.KEEP_BEYOND_MAP
    key = record.key
    if key is None:
        return RecordDecision.DROP_UNKEYED
    if record.offset < offset_map.get(key_digest(key)):
        return RecordDecision.DROP_SUPERSEDED
    if record.value is not None:
        return RecordDecision.KEEP_LATEST
    return RecordDecision.KEEP_TOMBSTONE if deletes_retained else RecordDecision.DROP_EXPIRED_TOMBSTONE


def legacy_delete_horizon(clean_segment_mtimes: list[int], *, delete_retention_ms: int) -> int:
    """``Cleaner.doClean``'s ``legacyDeleteHorizonMs``: the last clean segment's mtime minus
    delete.retention.ms, or 0 when nothing is clean yet."""
    if not clean_segment_mtimes:
        return 0
    return clean_segment_mtimes[-1] - delete_retention_ms


def needs_delete_horizon(
    header: BatchHeader, *, contains_tombstones: bool, marker_for_empty_txn: bool
) -> bool:
    """``filterTo``'s ``needToSetDeleteHorizon`` (for a batch with at least one retained record)."""
    return (contains_tombstones or marker_for_empty_txn) and header.delete_horizon_ms is None
