"""Whether a rule may change a partition, from its root's summary alone (issue 33; docs/metadata-format-2.md,
"The summary"): the one rule a run's scope (``pipeline.run_scope``) and the lake view's reads
(``views.lake_view_reads``) both use, so that what a run leaves unread the page shows as unchanged.

The answer errs one way only (``retention.summary_rules``, ``compaction.summary_rules``): *no* means the
cleaner and every deletion pass leave the partition exactly as it is at ``now_ms``."""

from __future__ import annotations

from kafka_segments.compaction.summary_rules import cleaning_may_change
from kafka_segments.config.model import TopicConfig
from kafka_segments.lake.roots import RootPartition
from kafka_segments.retention.consumed import ConsumedIndexes, consumed_bound
from kafka_segments.retention.summary_rules import retention_may_delete


def partition_may_change(
    partition: RootPartition, config: TopicConfig, *, now_ms: int, indexes: ConsumedIndexes | None
) -> bool:
    """``False`` only when neither the cleaner nor retention changes ``partition`` at ``now_ms`` (``indexes``:
    the offsets snapshot's consumed indexes at ``now_ms``, ``None`` without a snapshot)."""
    summary = partition.summary
    if cleaning_may_change(summary, config):
        return True
    bound = consumed_bound(
        None if indexes is None else indexes.for_topic(config),
        config,
        partition=partition.topic_partition.partition,
        log_start_offset=summary.log_start_offset,
    )
    return retention_may_delete(summary, config, now_ms=now_ms, min_committed_offset=bound.min_offset)
