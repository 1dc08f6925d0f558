"""The retention rows of the validation tables: one row per partition and one per retired segment, carrying
the rules of ``UnifiedLog.deleteOldSegments`` and the KIP-68 pass (``kafka_segments.retention.rules``).

A pass that does not run for the topic has its limit column ``None``, so a deletion with that reason is not
allowed at all. The passes' deletions are described by the log a cleaning round left; a ``compaction``
retirement is described by the input log and is no retention deletion. A cleaned partition's counts
reconcile: before = after - output + retired."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from kafka_segments.compaction import COMPACTION_REASON
from kafka_segments.config import Config, TopicConfig
from kafka_segments.retention.rules import DeletionReason, last_offset_of, passes_for
from kafka_segments.state import RetiredObject, SegmentEntry
from kafka_segments.topic_partition import TopicPartition

from segment_quality.staged.compaction import LogChange

PLANNED, SKIPPED, NOT_PLANNED = "planned", "skipped", "not-planned"

Row = dict[str, object]


@dataclass(frozen=True, slots=True)
class TopicLimits:
    """The limits the deletion passes apply to one topic at ``now`` (``None``: the pass does not run)."""

    log_start_offset_pass: bool
    retention_bytes: int | None
    consumed_limit_timestamp_ms: int | None
    limit_timestamp_ms: int | None

    @classmethod
    def of(cls, config: TopicConfig, *, now_ms: int) -> TopicLimits:
        """Kafka's policy dispatch (``passes_for``) and each pass's own "does nothing" condition."""
        passes = passes_for(config)
        return cls(
            log_start_offset_pass=DeletionReason.LOG_START_OFFSET in passes,
            retention_bytes=config.retention_bytes
            if DeletionReason.RETENTION_BYTES in passes and config.retention_bytes >= 0
            else None,
            consumed_limit_timestamp_ms=now_ms - config.consumed_retention_ms
            if DeletionReason.CONSUMED in passes and config.consumed_retention_enabled
            else None,
            limit_timestamp_ms=now_ms - config.retention_ms
            if DeletionReason.RETENTION_MS in passes and config.retention_ms >= 0
            else None,
        )


@dataclass(frozen=True, slots=True)
class PlanEntry:
    """What ``plan.json`` says about one partition (only these two facts are taken from the plan)."""

    status: str
    consumed_bound: int | None


def plan_entry(plan: Mapping[TopicPartition, PlanEntry], tp: TopicPartition) -> PlanEntry:
    return plan.get(tp, PlanEntry(NOT_PLANNED, None))


def retention_rows(
    changes: Sequence[LogChange], plan: Mapping[TopicPartition, PlanEntry], *, config: Config, now_ms: int
) -> tuple[list[Row], list[Row]]:
    limits: dict[str, TopicLimits] = {}
    partition_rows: list[Row] = []
    deletion_rows: list[Row] = []
    for change in changes:
        tp = change.topic_partition
        entry = plan_entry(plan, tp)
        partition_rows.append(partition_row(change, entry))
        if tp.topic not in limits:
            limits[tp.topic] = TopicLimits.of(config.for_topic(tp.topic), now_ms=now_ms)
        deletion_rows.extend(
            deletion_row(item, change, entry, limits[tp.topic], now_ms=now_ms)
            for item in _in_log_order(change)
        )
    return partition_rows, deletion_rows


def partition_row(change: LogChange, entry: PlanEntry) -> Row:
    """One partition: offsets before and after, and how segments and bytes reconcile.

    The round's output (``LogChange.round_output``) is what a cleaned partition may add: it is subtracted
    from the staged side of the reconciliation and is no "added" segment."""
    before, after = change.before, change.after
    input_keys = {s.key for s in change.inputs}
    output = change.round_output
    output_keys = {s.key for s in output}
    kept = after.segments if after is not None else ()
    segments_after = len(kept) if after is not None else None
    bytes_after = sum(s.size for s in kept) if after is not None else None
    bytes_retired = sum(s.size for item in change.retired for s in _described(item, change))
    deleted = [s for item in change.deleted for s in _described(item, change)]
    output_bytes = sum(s.size for s in output)
    return {
        "topic": change.topic_partition.topic,
        "partition": change.topic_partition.partition,
        "plan_status": entry.status,
        "old_log_start_offset": None if before is None else before.log_start_offset,
        "new_log_start_offset": None if after is None else after.log_start_offset,
        "log_end_offset": None if before is None else before.log_end_offset,
        "new_log_end_offset": None if after is None else after.log_end_offset,
        "segments_before": None if before is None else len(before.segments),
        "segments_after": segments_after,
        "segments_retired": len(change.retired),
        "segments_added": sum(1 for s in kept if s.key not in input_keys and s.key not in output_keys),
        "segments_kept_plus_retired": None
        if segments_after is None
        else segments_after - len(output) + len(change.retired),
        "bytes_before": None if before is None else before.size_bytes,
        "bytes_after": bytes_after,
        "bytes_retired": bytes_retired,
        "bytes_kept_plus_retired": None
        if bytes_after is None
        else bytes_after - output_bytes + bytes_retired,
        "min_kept_base_offset": min((s.base_offset for s in kept), default=None),
        "max_retired_next_offset": max((s.next_offset for s in deleted), default=None),
        "retired_is_prefix": _is_prefix(change.middle, {item.key for item in change.deleted}),
        "consumed_bound": entry.consumed_bound,
    }


def deletion_row(
    retired: RetiredObject, change: LogChange, entry: PlanEntry, limits: TopicLimits, *, now_ms: int
) -> Row:
    """One retired segment, described by the log it was retired from (segment columns ``None`` if it was
    not in that log)."""
    before, after = change.before, change.after
    segments = change.retiring_log(retired)
    position = next((i for i, s in enumerate(segments) if s.key == retired.key), None)
    old_lso = None if before is None else before.log_start_offset
    return {
        "topic": retired.topic_partition.topic,
        "partition": retired.topic_partition.partition,
        "key": retired.key,
        "reason": retired.reason,
        "position": position,
        **_segment_columns(segments, position),
        "old_log_start_offset": old_lso,
        "new_log_start_offset": None if after is None else after.log_start_offset,
        "log_end_offset": None if before is None else before.log_end_offset,
        "now_ms": now_ms,
        "log_start_offset_bound": old_lso if limits.log_start_offset_pass else None,
        "retention_bytes": limits.retention_bytes,
        "consumed_bound": entry.consumed_bound,
        "consumed_limit_timestamp_ms": limits.consumed_limit_timestamp_ms,
        "limit_timestamp_ms": limits.limit_timestamp_ms,
    }


def _segment_columns(segments: Sequence[SegmentEntry], position: int | None) -> Row:
    names = (
        "base_offset",
        "last_offset",
        "next_offset",
        "size",
        "largest_timestamp_ms",
        "following_base_offset",
        "bytes_after_segment",
    )
    if position is None:
        return dict.fromkeys(names)
    segment = segments[position]
    following = segments[position + 1] if position + 1 < len(segments) else None
    return {
        "base_offset": segment.base_offset,
        "last_offset": last_offset_of(segment, following),
        "next_offset": segment.next_offset,
        "size": segment.size,
        "largest_timestamp_ms": segment.largest_timestamp_ms,
        "following_base_offset": None if following is None else following.base_offset,
        "bytes_after_segment": sum(s.size for s in segments[position + 1 :]),
    }


def _described(item: RetiredObject, change: LogChange) -> list[SegmentEntry]:
    """The entry of the log ``item`` was retired from (none when it was not in that log)."""
    return [segment for segment in change.retiring_log(item) if segment.key == item.key][:1]


def _is_prefix(log: Sequence[SegmentEntry], retired_keys: set[str]) -> bool:
    return {s.key for s in log[: len(retired_keys)]} == retired_keys


def _in_log_order(change: LogChange) -> list[RetiredObject]:
    """Compaction's replacements first (input order), then the passes' deletions (order of the log after
    the round); entries that were in no such log last, by key."""

    def order(item: RetiredObject) -> tuple[int, int, str]:
        log = change.retiring_log(item)
        position = next((i for i, s in enumerate(log) if s.key == item.key), len(log))
        return (0 if item.reason == COMPACTION_REASON else 1), position, item.key

    return sorted(change.retired, key=order)
