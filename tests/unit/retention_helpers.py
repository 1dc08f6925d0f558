"""Values for the retention unit tests: Kafka-default topic configs and manifest segments by hand."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from kafka_segments.config.model import TopicConfig
from kafka_segments.state import PartitionState, SegmentEntry, SegmentOrigin
from kafka_segments.topic_partition import TopicPartition

KAFKA_DEFAULTS = TopicConfig(
    topic="t",
    cleanup_policy=frozenset({"delete"}),
    retention_ms=604_800_000,
    retention_bytes=-1,
    segment_bytes=1_073_741_824,
    segment_index_bytes=10_485_760,
    index_interval_bytes=4096,
    file_delete_delay_ms=60_000,
    delete_retention_ms=86_400_000,
    min_compaction_lag_ms=0,
    max_compaction_lag_ms=2**63 - 1,
    min_cleanable_dirty_ratio=0.5,
    message_timestamp_type="CreateTime",
    max_message_bytes=1_048_588,
    consumed_retention_enabled=False,
    consumed_retention_ms=604_800_000,
    required_groups=(),
    producer_id_expiration_ms=86_400_000,
    offsets_retention_ms=10_080 * 60_000,
    cleaner_enabled=True,
)


def topic_config(**overrides: Any) -> TopicConfig:
    """Kafka's defaults for topic ``t`` with ``overrides`` (``cleanup_policy`` may be a string)."""
    policy = overrides.pop("cleanup_policy", None)
    if isinstance(policy, str):
        overrides["cleanup_policy"] = frozenset(p for p in policy.split(",") if p)
    elif policy is not None:
        overrides["cleanup_policy"] = frozenset(policy)
    return replace(KAFKA_DEFAULTS, **overrides)


def seg(
    base: int, last: int | None, *, size: int = 100, ts: int = -1, mtime: int = 0, records: int | None = None
) -> SegmentEntry:
    """A live segment ``[base, last]`` (``last`` None: empty) with max timestamp ``ts``."""
    count = 0 if last is None else (last - base + 1 if records is None else records)
    return SegmentEntry(
        key=f"t-0/{base:020d}.log",
        base_offset=base,
        last_offset=last,
        size=size,
        sha256="0" * 64,
        etag="e",
        record_count=count,
        batch_count=count,
        max_timestamp_ms=ts,
        first_batch_max_timestamp_ms=ts,
        last_modified_ms=mtime,
        origin=SegmentOrigin.ADOPTED,
        run_id="r",
    )


def state(
    segments: Sequence[SegmentEntry], *, log_start: int | None = None, log_end: int | None = None
) -> PartitionState:
    """Partition ``t-0`` with these segments (log start/end from them unless given)."""
    start = log_start if log_start is not None else (segments[0].base_offset if segments else 0)
    end = log_end if log_end is not None else (segments[-1].next_offset if segments else start)
    return PartitionState(TopicPartition("t", 0), start, end, tuple(segments))


def fifteen_records(*, ts: int = 10, record_size: int = 70) -> list[SegmentEntry]:
    """UnifiedLogTest's log: 15 single-record batches, 5 per segment: [0-4], [5-9], [10-14 active]."""
    return [seg(base, base + 4, size=5 * record_size, ts=ts) for base in (0, 5, 10)]
