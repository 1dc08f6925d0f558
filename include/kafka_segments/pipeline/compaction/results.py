"""What a run did about the partitions of compacted topics: one ``PartitionCompaction`` per partition
(cleaned, skipped, deferred by the budget, or quarantined), the state each leaves, and the run's
``CompactionResult``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Any

from kafka_segments.compaction import COMPACTION_REASON
from kafka_segments.compaction.eligibility import CompactionBudget, CompactionCandidate, Eligibility
from kafka_segments.compaction.range import CheckpointState
from kafka_segments.compaction.stats import CleanerStats
from kafka_segments.config import Config
from kafka_segments.lake.runs import RunRecord
from kafka_segments.lake.staging import retire
from kafka_segments.state import PartitionState, RetiredObject, SegmentEntry
from kafka_segments.topic_partition import TopicPartition


class CompactionStatus(Enum):
    """What a run did about one partition of a compacted topic."""

    CLEANED = "cleaned"
    """A cleaning round ran."""
    SKIPPED = "skipped"
    """Not eligible (see the eligibility: dirty ratio, empty log, cleaner disabled …)."""
    DEFERRED = "deferred"
    """Eligible, but the run's compaction budget was used up by partitions ahead of it."""
    QUARANTINED = "quarantined"
    """The round failed on the partition's data: neither compaction nor retention touch it in this run."""


@dataclass(frozen=True, slots=True)
class PartitionCompaction:
    """What the run did about one partition of a compacted topic, and the state it leaves."""

    topic_partition: TopicPartition
    status: CompactionStatus
    eligibility: Eligibility
    checkpoint_before: int | None
    checkpoint_after: int | None
    """The cleaner checkpoint the run stores: the round's end offset, the log start offset for a checkpoint
    above the log end offset, else the checkpoint as it was (below the log start offset included)."""
    checkpoint_state: CheckpointState | None = None
    first_dirty_offset: int | None = None
    first_uncleanable_offset: int | None = None
    dirty_ratio_before: float = 0.0
    dirty_ratio_after: float = 0.0
    compaction_delay_ms: int = 0
    """Kafka's ``maxCompactionDelay``: how far past max.compaction.lag.ms the dirty section is."""
    cleanable_bytes: int = 0
    """Bytes of the dirty section (``calculateCleanableBytes``), before the round."""
    end_offset: int | None = None
    """The round's end offset (``map.latestOffset + 1``); every segment below it was recopied."""
    segments: tuple[SegmentEntry, ...] = ()
    """The live segments below the round's end offset after the round (written or kept), in order."""
    replaced: tuple[SegmentEntry, ...] = ()
    """The segments the round's output replaced (retired with the reason ``compaction``)."""
    kept: frozenset[str] = frozenset()
    """Keys of the segments the round left as they were (their cleaned bytes equal their own)."""
    stats: CleanerStats | None = None
    error: str | None = None

    @classmethod
    def without_round(
        cls, state: PartitionState, candidate: CompactionCandidate, status: CompactionStatus
    ) -> PartitionCompaction:
        """A partition without a round; an invalid checkpoint is still reset
        (``CleanableRange.force_update_checkpoint``)."""
        cleanable = candidate.range
        after = state.cleaner_checkpoint
        if cleanable is not None and cleanable.force_update_checkpoint:
            after = cleanable.first_dirty_offset
        return cls(
            topic_partition=state.topic_partition,
            status=status,
            eligibility=candidate.eligibility,
            checkpoint_before=state.cleaner_checkpoint,
            checkpoint_after=after,
            checkpoint_state=None if cleanable is None else cleanable.checkpoint,
            first_dirty_offset=None if cleanable is None else cleanable.first_dirty_offset,
            first_uncleanable_offset=None if cleanable is None else cleanable.first_uncleanable_offset,
            dirty_ratio_before=candidate.cleanable_ratio,
            dirty_ratio_after=candidate.cleanable_ratio,
            compaction_delay_ms=candidate.compaction_delay_ms,
            cleanable_bytes=0 if cleanable is None else cleanable.cleanable_bytes,
        )

    @property
    def changed(self) -> bool:
        return self.status is CompactionStatus.CLEANED or self.checkpoint_after != self.checkpoint_before

    def new_state(self, state: PartitionState, *, run_id: str) -> PartitionState:
        """``state`` after the round (or with its reset checkpoint); ``state`` itself when nothing changed. A
        reset that reads the same (``PartitionState.as_read``) keeps the partition's last run."""
        if not self.changed:
            return state
        if self.status is not CompactionStatus.CLEANED:
            reset = replace(state, cleaner_checkpoint=self.checkpoint_after)
            return reset if reset.as_read() == state.as_read() else replace(reset, run_id=run_id)
        segments = state.segments
        if self.status is CompactionStatus.CLEANED and self.end_offset is not None:
            end = self.end_offset
            segments = self.segments + tuple(s for s in state.segments if s.base_offset >= end)
        return replace(state, segments=segments, cleaner_checkpoint=self.checkpoint_after, run_id=run_id)

    def to_dict(self) -> dict[str, Any]:
        return {
            "topic": self.topic_partition.topic,
            "partition": self.topic_partition.partition,
            "status": self.status.value,
            "eligibility": self.eligibility.value,
            "checkpoint": {
                "before": self.checkpoint_before,
                "after": self.checkpoint_after,
                "state": None if self.checkpoint_state is None else self.checkpoint_state.value,
            },
            "first_dirty_offset": self.first_dirty_offset,
            "first_uncleanable_offset": self.first_uncleanable_offset,
            "end_offset": self.end_offset,
            "dirty_ratio": {"before": self.dirty_ratio_before, "after": self.dirty_ratio_after},
            "max_compaction_delay_ms": self.compaction_delay_ms,
            "max_compaction_delay_secs": self.compaction_delay_ms / 1000,
            "cleanable_bytes": self.cleanable_bytes,
            "segments_replaced": [segment.key for segment in self.replaced],
            "segments_written": [s.key for s in self.segments if s.key not in self.kept],
            "segments_kept": sorted(self.kept),
            "stats": None if self.stats is None else self.stats.to_dict(),
            "error": self.error,
        }


@dataclass(frozen=True, slots=True)
class CompactionResult:
    """The compaction part of a run, one entry per partition of a compacted topic it looked at."""

    partitions: tuple[PartitionCompaction, ...] = ()
    budget: CompactionBudget = field(default_factory=CompactionBudget)

    @property
    def changed(self) -> bool:
        return any(partition.changed for partition in self.partitions)

    def partition(self, topic_partition: TopicPartition) -> PartitionCompaction | None:
        for partition in self.partitions:
            if partition.topic_partition == topic_partition:
                return partition
        return None

    def quarantined(self) -> dict[TopicPartition, str]:
        """The partitions whose round failed, with the reason (retention leaves them alone too)."""
        return {
            p.topic_partition: f"uncleanable: {p.error}"
            for p in self.partitions
            if p.status is CompactionStatus.QUARANTINED
        }

    def states_after(self, states: Sequence[PartitionState], *, run_id: str) -> list[PartitionState]:
        by_tp = {partition.topic_partition: partition for partition in self.partitions}
        return [
            state
            if (found := by_tp.get(state.topic_partition)) is None
            else found.new_state(state, run_id=run_id)
            for state in states
        ]

    def retired(self, run: RunRecord, config: Config) -> list[RetiredObject]:
        """The replaced segments as retired objects (kept, unchanged segments are not replaced)."""
        return [
            retire(
                segment,
                partition.topic_partition,
                run,
                reason=COMPACTION_REASON,
                delete_delay_ms=config.for_topic(partition.topic_partition.topic).file_delete_delay_ms,
            )
            for partition in self.partitions
            for segment in partition.replaced
        ]

    def to_dict(self) -> dict[str, Any]:
        stats = [p.stats for p in self.partitions if p.stats is not None]
        return {
            "budget": {"max_bytes": self.budget.max_bytes, "max_partitions": self.budget.max_partitions},
            "totals": {
                "partitions": len(self.partitions),
                "cleaned": len(stats),
                "deferred": sum(1 for p in self.partitions if p.status is CompactionStatus.DEFERRED),
                "quarantined": sum(1 for p in self.partitions if p.status is CompactionStatus.QUARANTINED),
                "bytes_read": sum(s.bytes_read for s in stats),
                "bytes_written": sum(s.bytes_written for s in stats),
                "messages_read": sum(s.messages_read for s in stats),
                "messages_written": sum(s.messages_written for s in stats),
                "max_compaction_delay_secs": max(
                    (p.compaction_delay_ms / 1000 for p in self.partitions), default=0.0
                ),
            },
            "partitions": [partition.to_dict() for partition in self.partitions],
        }
