"""Whether Kafka's deletion passes can delete anything from a partition, from its summary alone
(docs/metadata-format-2.md, "The summary"): a run leaves the partitions this says no for unread.

Each pass deletes a prefix (``retention.rules.deletable_prefix``), so a pass deletes nothing when it cannot
delete the first segment; passes run in order over what the previous left, so when none can delete the
first segment none deletes anything and the plan leaves the partition as it is. The answer errs one way
only: *maybe* when a pass might delete the first segment (the summary does not hold the second segment's
base offset, nor the high-watermark and empty-last-segment conditions, so those are assumed to allow it).
A property test checks that a *no* is never wrong (``tests/unit/test_summary_rules.py``)."""

from __future__ import annotations

from kafka_segments.config.model import TopicConfig
from kafka_segments.retention.rules import DeletionReason, passes_for
from kafka_segments.state import PartitionSummary


def retention_may_delete(
    summary: PartitionSummary, config: TopicConfig, *, now_ms: int, min_committed_offset: int | None
) -> bool:
    """``False`` only when the topic's passes delete no segment of the partition ``summary`` describes at
    ``now_ms`` with KIP-68's M = ``min_committed_offset`` (``PassInputs.min_committed_offset``)."""
    if summary.segments == 0:
        return False
    if not summary.complete:
        return True
    return any(
        _may_delete_first(reason, summary, config, now_ms=now_ms, min_committed_offset=min_committed_offset)
        for reason in passes_for(config)
    )


def _may_delete_first(
    reason: DeletionReason,
    summary: PartitionSummary,
    config: TopicConfig,
    *,
    now_ms: int,
    min_committed_offset: int | None,
) -> bool:
    first_next = _known(summary.first_segment_next_offset)
    largest = _known(summary.first_segment_largest_timestamp_ms)
    if reason is DeletionReason.LOG_START_OFFSET:
        # The next segment starts at or after the first one's next offset.
        return summary.segments > 1 and summary.log_start_offset >= first_next
    if reason is DeletionReason.RETENTION_BYTES:
        first_bytes = _known(summary.first_segment_bytes)
        retention = config.retention_bytes
        return retention >= 0 and summary.bytes - retention - first_bytes >= 0
    if reason is DeletionReason.CONSUMED:
        if not config.consumed_retention_enabled or min_committed_offset is None or min_committed_offset < 0:
            return False
        last = summary.first_segment_last_offset  # None: empty, its last offset depends on the next segment
        below = last is None or last < min_committed_offset
        return below and now_ms - largest > config.consumed_retention_ms
    return config.retention_ms >= 0 and now_ms - largest > config.retention_ms


def _known(value: int | None) -> int:
    """A first-segment field of a complete summary of a partition with segments (always set there)."""
    if value is None:
        raise ValueError("a complete summary of a partition with segments has every first_segment_* field")
    return value
