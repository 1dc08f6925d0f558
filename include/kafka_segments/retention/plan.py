"""A retention plan: per partition, the segments each pass deletes, the new log start offset, KIP-68's M
and the group holding it back, and the groups that would lose data they have not read.

Planning reads only the manifest (no segment bodies) and is pure: the same partitions, configuration,
snapshot and ``now`` give the same plan."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from kafka_segments.config.model import TopicConfig
from kafka_segments.retention.consumed import (
    ConsumedBound,
    ConsumedIndex,
    ConsumedIndexes,
    ConsumedStatus,
    consumed_bound,
)
from kafka_segments.retention.rules import (
    Deletion,
    DeletionReason,
    LogView,
    PassInputs,
    RetentionOutcome,
    apply_retention,
)
from kafka_segments.state import OffsetSnapshot, OpenTransaction, PartitionState, SegmentEntry
from kafka_segments.topic_partition import TopicPartition


@dataclass(frozen=True, slots=True)
class UnreadLoss:
    """A group whose committed offset the new log start offset passes: it loses records it has not read."""

    group_id: str
    committed_offset: int
    records: int
    """Offsets between its committed offset and the new log start offset that become unreadable."""


@dataclass(frozen=True, slots=True)
class HolderLag:
    """The group at M: how far behind the log end it is."""

    group_id: str
    committed_offset: int | None
    lag_records: int
    """High watermark − M (Kafka's consumer lag)."""
    lag_bytes: int
    """Bytes of the segments not yet wholly consumed (those holding offsets ≥ M)."""
    expires_at_ms: int | None


@dataclass(frozen=True, slots=True)
class PartitionPlan:
    """What retention does to one partition."""

    topic_partition: TopicPartition
    old_log_start_offset: int
    new_log_start_offset: int
    log_end_offset: int
    deletions: tuple[Deletion, ...]
    kept: tuple[SegmentEntry, ...]
    passes: tuple[DeletionReason, ...]
    consumed: ConsumedBound
    holder: HolderLag | None = None
    unread_loss: tuple[UnreadLoss, ...] = ()
    skipped: str | None = None
    """Why the partition was left alone (quarantined), else ``None``."""

    @property
    def changed(self) -> bool:
        return bool(self.deletions) or self.new_log_start_offset != self.old_log_start_offset

    def deleted_by(self, reason: DeletionReason) -> tuple[SegmentEntry, ...]:
        return tuple(deletion.segment for deletion in self.deletions if deletion.reason is reason)

    @property
    def bytes_deleted(self) -> int:
        return sum(deletion.segment.size for deletion in self.deletions)

    def new_state(self, base: PartitionState, *, run_id: str) -> PartitionState:
        """The partition's state after the plan (``base`` when nothing changes)."""
        if not self.changed:
            return base
        return replace(
            base,
            log_start_offset=self.new_log_start_offset,
            segments=self.kept,
            open_transactions=_clamped(
                _still_held(base.open_transactions, self.kept), self.new_log_start_offset
            ),
            run_id=run_id,
        )


def _still_held(
    transactions: tuple[OpenTransaction, ...], kept: tuple[SegmentEntry, ...]
) -> tuple[OpenTransaction, ...]:
    """The open transactions whose last data batch may still be in the ``kept`` segments: no later load of
    the log can replay the others' (``PartitionState.loaded_open_transactions``), so they go."""
    first = kept[0].base_offset if kept else None
    return tuple(
        txn
        for txn in transactions
        if txn.last_offset is None or (first is not None and txn.last_offset >= first)
    )


def _clamped(transactions: tuple[OpenTransaction, ...], log_start_offset: int) -> tuple[OpenTransaction, ...]:
    """Kafka clamps the first unstable offset to the log start offset
    (``UnifiedLog.maybeIncrementFirstUnstableOffset``)."""
    return tuple(replace(txn, first_offset=max(txn.first_offset, log_start_offset)) for txn in transactions)


@dataclass(frozen=True, slots=True)
class RetentionPlan:
    """The plan for every partition of a run, in the manifest's order."""

    now_ms: int
    partitions: tuple[PartitionPlan, ...]

    @property
    def changed(self) -> bool:
        return any(plan.changed for plan in self.partitions)

    def partition(self, topic_partition: TopicPartition) -> PartitionPlan | None:
        for plan in self.partitions:
            if plan.topic_partition == topic_partition:
                return plan
        return None


def plan_partition(
    state: PartitionState, config: TopicConfig, *, now_ms: int, index: ConsumedIndex | None
) -> PartitionPlan:
    """Kafka's deletion passes (plus KIP-68's) over one partition's committed state."""
    bound = consumed_bound(
        index, config, partition=state.topic_partition.partition, log_start_offset=state.log_start_offset
    )
    log = LogView(state.segments, state.log_start_offset, state.log_end_offset)
    outcome = apply_retention(log, PassInputs(config, now_ms, bound.min_offset))
    return partition_plan(state, outcome, consumed=bound, index=index)


def partition_plan(
    state: PartitionState, outcome: RetentionOutcome, *, consumed: ConsumedBound, index: ConsumedIndex | None
) -> PartitionPlan:
    """The plan of ``state`` after ``outcome``, with the holder's lag and the unread-data preview."""
    return PartitionPlan(
        topic_partition=state.topic_partition,
        old_log_start_offset=state.log_start_offset,
        new_log_start_offset=outcome.log_start_offset,
        log_end_offset=state.log_end_offset,
        deletions=outcome.deletions,
        kept=outcome.kept,
        passes=outcome.passes,
        consumed=consumed,
        holder=holder_lag(consumed, state),
        unread_loss=unread_loss(
            index, state.topic_partition, old=state.log_start_offset, new=outcome.log_start_offset
        ),
    )


def skipped_partition(state: PartitionState, *, reason: str) -> PartitionPlan:
    """A partition left exactly as it is (quarantined for this run)."""
    return PartitionPlan(
        topic_partition=state.topic_partition,
        old_log_start_offset=state.log_start_offset,
        new_log_start_offset=state.log_start_offset,
        log_end_offset=state.log_end_offset,
        deletions=(),
        kept=state.segments,
        passes=(),
        consumed=ConsumedBound(ConsumedStatus.DISABLED),
        skipped=reason,
    )


def holder_lag(bound: ConsumedBound, state: PartitionState) -> HolderLag | None:
    """The group at M and its lag in records and bytes (``None`` unless consumed retention is active)."""
    holder = bound.holder
    if holder is None:
        return None
    position = holder.position
    lag_bytes = sum(segment.size for segment in state.segments if segment.next_offset > position)
    return HolderLag(
        group_id=holder.group_id,
        committed_offset=holder.committed_offset,
        lag_records=max(0, state.high_watermark - position),
        lag_bytes=lag_bytes,
        expires_at_ms=holder.expires_at_ms,
    )


def unread_loss(
    index: ConsumedIndex | None, topic_partition: TopicPartition, *, old: int, new: int
) -> tuple[UnreadLoss, ...]:
    """Groups whose committed offset the log start offset moves past (``old`` → ``new``)."""
    if index is None or new <= old:
        return ()
    losses = [
        UnreadLoss(group_id, offset, new - max(offset, old))
        for group_id, offset in index.committed(topic_partition.topic, topic_partition.partition)
        if offset < new
    ]
    return tuple(sorted(losses, key=lambda loss: loss.group_id))


def plan_retention(
    partitions: Sequence[PartitionState],
    configs: Iterable[TopicConfig],
    *,
    now_ms: int,
    snapshot: OffsetSnapshot | None,
    quarantined: dict[TopicPartition, str] | None = None,
) -> RetentionPlan:
    """The plan for ``partitions`` (their topics' configs in ``configs``).

    Args:
        partitions: the partitions to plan (e.g. the adopted state of the run's base, filtered by topic).
        configs: the effective configuration of every topic in ``partitions``.
        snapshot: the consumer-offset snapshot (``None``: consumed retention reports ``no offsets snapshot``).
        quarantined: partitions to leave alone, with the reason.

    Raises:
        KeyError: a partition's topic has no configuration in ``configs``.
    """
    by_topic = {config.topic: config for config in configs}
    quarantined = quarantined or {}
    indexes = None if snapshot is None else ConsumedIndexes(snapshot, now_ms=now_ms)
    plans = []
    for state in partitions:
        reason = quarantined.get(state.topic_partition)
        if reason is not None:
            plans.append(skipped_partition(state, reason=reason))
            continue
        config = by_topic[state.topic_partition.topic]
        index = None if indexes is None else indexes.for_topic(config)
        plans.append(plan_partition(state, config, now_ms=now_ms, index=index))
    return RetentionPlan(now_ms, tuple(plans))
