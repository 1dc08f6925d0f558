"""The cleanable range of one partition: ``LogCleanerManager.cleanableOffsets`` (``calculateCleanableBytes``,
``findFirstUncleanableSegment``) and ``LogToClean``; the rules are docs/compaction.md, step 1.

A checkpoint below the log start offset or above the log end offset is invalid (``forceUpdateCheckpoint``),
and Kafka's look at the log (``grabFilthiestCompactedLog`` -> ``updateCheckpoints``) stores the reset even
without a round; so does a run. One below the log start offset is a legal state that Kafka's own deletions
leave (``deleteOldSegments`` never touches it) and means the log start offset wherever it is read: its reset
alone is not a change to commit (``state.PartitionState.as_read``), so a rerun at the same ``now`` changes
nothing.

Segment ranges use ``LogSegments.values(from, to)``: from the floor segment of ``from`` (or the first segment)
to the segments with a base offset below ``to``; ``from == to`` is empty."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum

from kafka_segments.config.model import TopicConfig
from kafka_segments.state import PartitionState, SegmentEntry


class CheckpointState(Enum):
    """Where the first dirty offset came from (``cleanableOffsets``)."""

    VALID = "valid"
    """The cleaner checkpoint, inside [log start offset, log end offset]."""
    ABSENT = "absent"
    """No checkpoint yet: the log start offset (no forced rewrite)."""
    BELOW_LOG_START = "below-log-start"
    """Checkpoint < log start offset: the log start offset is the first dirty offset; the checkpoint is left
    as it is unless a round moves it."""
    ABOVE_LOG_END = "above-log-end"
    """Checkpoint > log end offset: reset to the log start offset and rewritten immediately."""


class UncleanableBound(Enum):
    """Which rule set the first uncleanable offset (the smallest wins; ties in this order)."""

    LAST_STABLE_OFFSET = "last-stable-offset"
    ACTIVE_SEGMENT = "active-segment"
    MIN_COMPACTION_LAG = "min.compaction.lag.ms"


@dataclass(frozen=True, slots=True)
class CleanableRange:
    """One partition's dirty section as Kafka's cleaner sees it at ``now``."""

    first_dirty_offset: int
    first_uncleanable_dirty_offset: int
    """``max(firstDirty, min(LSO, active base, min-lag segment base))``: may be mid-segment."""
    first_uncleanable_offset: int
    """Rounded down to the base offset of the segment containing the offset above: the round's upper bound."""
    checkpoint: CheckpointState
    bound: UncleanableBound
    clean_bytes: int
    cleanable_bytes: int

    @property
    def force_update_checkpoint(self) -> bool:
        """Kafka's ``forceUpdateCheckpoint``: the checkpoint is invalid, ``first_dirty_offset`` is used."""
        return self.checkpoint in (CheckpointState.BELOW_LOG_START, CheckpointState.ABOVE_LOG_END)

    @property
    def total_bytes(self) -> int:
        return self.clean_bytes + self.cleanable_bytes

    @property
    def cleanable_ratio(self) -> float:
        """``cleanableBytes / totalBytes`` (0.0 when the log has no bytes; Kafka drops such logs)."""
        total = self.total_bytes
        return self.cleanable_bytes / total if total else 0.0


def first_dirty_offset(state: PartitionState) -> tuple[int, CheckpointState]:
    """The first dirty offset and whether the checkpoint was valid (``cleanableOffsets`` steps 1-2)."""
    checkpoint = state.cleaner_checkpoint
    if checkpoint is None:
        return state.log_start_offset, CheckpointState.ABSENT
    if checkpoint < state.log_start_offset:
        return state.log_start_offset, CheckpointState.BELOW_LOG_START
    if checkpoint > state.log_end_offset:
        return state.log_start_offset, CheckpointState.ABOVE_LOG_END
    return checkpoint, CheckpointState.VALID


def cleanable_range(state: PartitionState, config: TopicConfig, *, now_ms: int) -> CleanableRange:
    """The cleanable range of ``state`` at ``now_ms`` (``cleanableOffsets`` + ``LogToClean``)."""
    first_dirty, checkpoint = first_dirty_offset(state)
    segments = state.segments
    if not segments:
        return CleanableRange(
            first_dirty, first_dirty, first_dirty, checkpoint, UncleanableBound.ACTIVE_SEGMENT, 0, 0
        )
    uncleanable, bound = _first_uncleanable_dirty_offset(state, config, first_dirty, now_ms)
    uncleanable = max(first_dirty, uncleanable)
    upper = _segment_aligned(segments, uncleanable)
    clean_bytes = sum(segment.size for segment in segments if segment.base_offset < first_dirty)
    cleanable_bytes = sum(
        segment.size for segment in segments_between(segments, min(first_dirty, upper), upper)
    )
    return CleanableRange(first_dirty, uncleanable, upper, checkpoint, bound, clean_bytes, cleanable_bytes)


def segments_between(segments: Sequence[SegmentEntry], start: int, end: int) -> tuple[SegmentEntry, ...]:
    """Kafka's ``LogSegments.values(start, end)``: from the floor segment of ``start``, bases < ``end``."""
    if start >= end:
        return ()
    first = floor_index(segments, start)
    return tuple(segment for segment in segments[max(first, 0) :] if segment.base_offset < end)


def floor_index(segments: Sequence[SegmentEntry], offset: int) -> int:
    """Index of the last segment whose base offset is <= ``offset`` (-1 when none is)."""
    index = -1
    for position, segment in enumerate(segments):
        if segment.base_offset > offset:
            break
        index = position
    return index


def non_active_segments_from(segments: Sequence[SegmentEntry], offset: int) -> tuple[SegmentEntry, ...]:
    """Kafka's ``nonActiveLogSegmentsFrom``: empty when ``offset`` is past the active segment's base."""
    active_base = segments[-1].base_offset
    if offset > active_base:
        return ()
    return segments_between(segments, offset, active_base)


def _first_uncleanable_dirty_offset(
    state: PartitionState, config: TopicConfig, first_dirty: int, now_ms: int
) -> tuple[int, UncleanableBound]:
    candidates = [
        (state.last_stable_offset, UncleanableBound.LAST_STABLE_OFFSET),
        (state.segments[-1].base_offset, UncleanableBound.ACTIVE_SEGMENT),
    ]
    lag = max(config.min_compaction_lag_ms, 0)
    if lag > 0:
        young = _first_young_segment(state.segments, first_dirty, now_ms - lag)
        if young is not None:
            candidates.append((young, UncleanableBound.MIN_COMPACTION_LAG))
    return min(candidates, key=lambda candidate: candidate[0])


def _first_young_segment(segments: Sequence[SegmentEntry], first_dirty: int, limit_ms: int) -> int | None:
    """``findFirstUncleanableSegment``: the first dirty non-active segment with largestTimestamp > limit."""
    for segment in non_active_segments_from(segments, first_dirty):
        if segment.largest_timestamp_ms > limit_ms:
            return segment.base_offset
    return None


def _segment_aligned(segments: Sequence[SegmentEntry], uncleanable: int) -> int:
    """``calculateCleanableBytes``: the base offset of the first non-active segment from ``uncleanable``'s
    floor segment, else the active segment's base offset."""
    candidates = non_active_segments_from(segments, uncleanable)
    return candidates[0].base_offset if candidates else segments[-1].base_offset
