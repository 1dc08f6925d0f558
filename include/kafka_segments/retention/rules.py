"""Kafka's deletion retention as pure rules over a partition's live segments (docs/retention.md, "The
passes").

The passes of ``UnifiedLog.deleteOldSegments``, in Kafka's order, with KIP-68's consumed retention added:
``log-start-offset``, ``retention.bytes`` (the log may stay up to one segment over), ``consumed`` and
``retention.ms`` (strict; a future timestamp never expires and so blocks every later segment). Each pass
(``deletableSegments``) deletes only a prefix, never past the high watermark nor an empty last segment;
the log start offset then moves to the first remaining segment (or the log end offset). ``cleanup.policy``
chooses the passes; a compacted topic gets none while ``log.cleaner.enable`` is false."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum

from kafka_segments.config.model import TopicConfig
from kafka_segments.state import SegmentEntry


class DeletionReason(Enum):
    """The pass that deleted a segment (Kafka's ``SegmentDeletionReason`` plus KIP-68's)."""

    LOG_START_OFFSET = "log-start-offset"
    RETENTION_BYTES = "retention.bytes"
    CONSUMED = "consumed"
    RETENTION_MS = "retention.ms"


PASS_ORDER = (
    DeletionReason.LOG_START_OFFSET,
    DeletionReason.RETENTION_BYTES,
    DeletionReason.CONSUMED,
    DeletionReason.RETENTION_MS,
)

Predicate = Callable[[SegmentEntry, SegmentEntry | None], bool]
"""``(segment, next segment or None) -> deletable``, Kafka's ``DeletionCondition``."""


@dataclass(frozen=True, slots=True)
class LogView:
    """What one pass sees: the live segments (oldest first) and the partition's offsets."""

    segments: tuple[SegmentEntry, ...]
    log_start_offset: int
    log_end_offset: int

    @property
    def high_watermark(self) -> int:
        return self.log_end_offset

    @property
    def size(self) -> int:
        return sum(segment.size for segment in self.segments)


@dataclass(frozen=True, slots=True)
class PassInputs:
    """Everything the passes read besides the log: the topic's settings, ``now`` and KIP-68's M."""

    config: TopicConfig
    now_ms: int
    min_committed_offset: int | None
    """KIP-68's M for this partition: ``None`` when consumed retention does not apply (disabled, no group
    counts, no snapshot) and ``-1`` when some group's offsets could not be read."""


def passes_for(config: TopicConfig) -> tuple[DeletionReason, ...]:
    """The passes ``deleteOldSegments`` runs for a topic with this configuration, in order."""
    if config.compact and not config.cleaner_enabled:
        return ()
    if config.delete:
        return PASS_ORDER
    return (DeletionReason.LOG_START_OFFSET,)


def deletable_prefix(log: LogView, predicate: Predicate) -> int:
    """How many segments, from the oldest, one pass deletes (``UnifiedLog.deletableSegments``)."""
    count = 0
    for index, segment in enumerate(log.segments):
        following = log.segments[index + 1] if index + 1 < len(log.segments) else None
        upper_bound = following.base_offset if following is not None else log.log_end_offset
        last_and_empty = following is None and segment.size == 0
        if log.high_watermark >= upper_bound and predicate(segment, following) and not last_and_empty:
            count += 1
        else:
            break
    return count


def predicate_for(reason: DeletionReason, log: LogView, inputs: PassInputs) -> Predicate | None:
    """The pass's predicate over ``log`` as it stands, or ``None`` when the pass deletes nothing at all."""
    if reason is DeletionReason.LOG_START_OFFSET:
        return log_start_offset_breach(log.log_start_offset)
    if reason is DeletionReason.RETENTION_BYTES:
        return retention_size_breach(log.size, inputs.config.retention_bytes)
    if reason is DeletionReason.CONSUMED:
        if not inputs.config.consumed_retention_enabled or inputs.min_committed_offset is None:
            return None
        return consumed_breach(
            inputs.min_committed_offset, now_ms=inputs.now_ms, consumed_ms=inputs.config.consumed_retention_ms
        )
    return retention_ms_breach(now_ms=inputs.now_ms, retention_ms=inputs.config.retention_ms)


def log_start_offset_breach(log_start_offset: int) -> Predicate:
    """``deleteLogStartOffsetBreachedSegments``: the next segment starts at or below the log start offset."""

    def breached(_segment: SegmentEntry, following: SegmentEntry | None) -> bool:
        return following is not None and following.base_offset <= log_start_offset

    return breached


def retention_size_breach(log_size: int, retention_bytes: int) -> Predicate | None:
    """``deleteRetentionSizeBreachedSegments``: stateful over one walk, like Kafka's closure."""
    if retention_bytes < 0 or log_size < retention_bytes:
        return None
    remaining = log_size - retention_bytes

    def breached(segment: SegmentEntry, _following: SegmentEntry | None) -> bool:
        nonlocal remaining
        if remaining - segment.size >= 0:
            remaining -= segment.size
            return True
        return False

    return breached


def consumed_breach(min_committed_offset: int, *, now_ms: int, consumed_ms: int) -> Predicate | None:
    """KIP-68 (docs/retention.md): every offset of the segment is below M and it is older than the consumed
    time."""
    if min_committed_offset < 0:
        return None

    def breached(segment: SegmentEntry, following: SegmentEntry | None) -> bool:
        return (
            last_offset_of(segment, following) < min_committed_offset
            and now_ms - segment.largest_timestamp_ms > consumed_ms
        )

    return breached


def retention_ms_breach(*, now_ms: int, retention_ms: int) -> Predicate | None:
    """``deleteRetentionMsBreachedSegments``: older than retention.ms, by the largest timestamp (strict)."""
    if retention_ms < 0:
        return None

    def breached(segment: SegmentEntry, _following: SegmentEntry | None) -> bool:
        return now_ms - segment.largest_timestamp_ms > retention_ms

    return breached


def last_offset_of(segment: SegmentEntry, following: SegmentEntry | None) -> int:
    """The segment's last offset; for an empty segment, the offset before the next segment's base (or its
    own base): every offset it could hold is at or below that."""
    if segment.last_offset is not None:
        return segment.last_offset
    return (following.base_offset if following is not None else segment.base_offset) - 1


@dataclass(frozen=True, slots=True)
class Deletion:
    """One segment a pass removed."""

    segment: SegmentEntry
    reason: DeletionReason


@dataclass(frozen=True, slots=True)
class RetentionOutcome:
    """What the passes did to one partition."""

    deletions: tuple[Deletion, ...]
    kept: tuple[SegmentEntry, ...]
    log_start_offset: int
    passes: tuple[DeletionReason, ...]
    """The passes that ran (in order)."""


def apply_retention(
    log: LogView, inputs: PassInputs, *, passes: tuple[DeletionReason, ...] | None = None
) -> RetentionOutcome:
    """Run the topic's passes (or only ``passes``) in Kafka's order, each over what the previous left."""
    passes = passes_for(inputs.config) if passes is None else passes
    deletions: list[Deletion] = []
    for reason in passes:
        predicate = predicate_for(reason, log, inputs)
        count = 0 if predicate is None else deletable_prefix(log, predicate)
        if count:
            deletions.extend(Deletion(segment, reason) for segment in log.segments[:count])
            log = _without_prefix(log, count)
    return RetentionOutcome(tuple(deletions), log.segments, log.log_start_offset, passes)


def _without_prefix(log: LogView, count: int) -> LogView:
    """The log after deleting its first ``count`` segments (``UnifiedLog.deleteSegments``)."""
    kept = log.segments[count:]
    first_base = kept[0].base_offset if kept else log.log_end_offset
    return LogView(kept, max(log.log_start_offset, first_base), log.log_end_offset)
