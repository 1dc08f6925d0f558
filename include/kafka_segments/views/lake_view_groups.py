"""The lake view's consumer groups, from the offsets snapshot the lake holds (docs/lake-view.md, "Groups").

Per group and partition of the lake: the committed offset, the lag in records (log end offset less the
committed offset, Kafka's consumer lag) and in bytes (the live segments that end above it, as
``retention.plan.holder_lag`` counts them: from the partition's summary when the offset is outside its
segments, ``views.lake_view_reads``), and when the offset expires (KIP-211, ``retention.expiry``:
``offsets.retention.minutes`` after the group became Empty or after the commit)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from kafka_segments.retention.expiry import offset_expiry
from kafka_segments.state import OffsetSnapshot
from kafka_segments.topic_partition import TopicPartition
from kafka_segments.views.lake_view_reads import ViewPartitions

DEFAULT_OFFSETS_RETENTION_MS = 10_080 * 60_000
"""``offsets.retention.minutes``' default (7 days), used when the view has no configuration."""


@dataclass(frozen=True, slots=True)
class GroupPartition:
    """One committed offset of a group on a partition of the lake."""

    topic: str
    partition: int
    committed_offset: int
    lag_records: int
    lag_bytes: int
    expires_at_ms: int | None
    """``None``: it does not expire as things stand (``expiry_why`` says why)."""
    expiry_why: str
    holds_back: bool
    """Consumed retention's holder here: the next run stops at this group's offset."""


@dataclass(frozen=True, slots=True)
class GroupView:
    group_id: str
    state: str
    partitions: tuple[GroupPartition, ...]

    @property
    def lag_records(self) -> int:
        return sum(p.lag_records for p in self.partitions)

    @property
    def lag_bytes(self) -> int:
        return sum(p.lag_bytes for p in self.partitions)

    @property
    def held_back(self) -> tuple[GroupPartition, ...]:
        return tuple(p for p in self.partitions if p.holds_back)


def group_views(
    snapshot: OffsetSnapshot,
    partitions: ViewPartitions,
    *,
    now_ms: int,
    retention_ms: Mapping[str, int],
    holders: Mapping[TopicPartition, str],
) -> tuple[GroupView, ...]:
    """Every group of ``snapshot`` with its offsets on ``partitions`` (groups by id).

    ``retention_ms``: offsets.retention per topic (missing: the default); ``holders``: the group holding
    each partition back in the next run's plan."""
    views = []
    for group in sorted(snapshot.groups, key=lambda g: g.group_id):
        rows = []
        for offset in group.offsets:
            tp = TopicPartition(offset.topic, offset.partition)
            summary = partitions.summaries.get(tp)
            if summary is None:
                continue
            expiry = offset_expiry(
                group,
                offset,
                now_ms=now_ms,
                retention_ms=retention_ms.get(tp.topic, DEFAULT_OFFSETS_RETENTION_MS),
            )
            rows.append(
                GroupPartition(
                    topic=tp.topic,
                    partition=tp.partition,
                    committed_offset=offset.offset,
                    lag_records=max(0, summary.log_end_offset - offset.offset),
                    lag_bytes=partitions.lag_bytes(tp, offset.offset),
                    expires_at_ms=expiry.expires_at_ms,
                    expiry_why=expiry.why,
                    holds_back=holders.get(tp) == group.group_id,
                )
            )
        views.append(GroupView(group.group_id, group.state, tuple(sorted(rows, key=_order))))
    return tuple(views)


def _order(row: GroupPartition) -> tuple[str, int]:
    return row.topic, row.partition
