"""Whether the cleaner can change a partition at all, from its summary alone (docs/metadata-format-2.md, "The
summary"): a run leaves the partitions this says no for unread.

The cleaner changes a partition by a round over its dirty section, from the first dirty offset (the cleaner
checkpoint, or the log start offset: ``range.first_dirty_offset``) up to the active segment at the latest,
or by resetting a checkpoint above the log end offset (``range.CheckpointState.ABOVE_LOG_END``). When the
first dirty offset is at or past the active segment's base offset there is no cleanable byte, so no verdict
makes the partition eligible (``eligibility._verdict``: the dirty ratio and ``max.compaction.lag.ms`` both
need cleanable bytes). The answer errs one way only: the last stable offset and ``min.compaction.lag.ms``
can only shrink the section, so they are left out."""

from __future__ import annotations

from kafka_segments.config.model import TopicConfig
from kafka_segments.state import PartitionSummary


def cleaning_may_change(summary: PartitionSummary, config: TopicConfig) -> bool:
    """``False`` only when the cleaner can neither clean the partition ``summary`` describes nor reset its
    checkpoint (for a topic that is not compacted, or whose cleaner is off: never)."""
    if not (config.compact and config.cleaner_enabled):
        return False
    if not summary.complete:
        return True
    checkpoint = summary.cleaner_checkpoint
    if checkpoint is not None and checkpoint > summary.log_end_offset:
        return True
    if summary.segments == 0 or summary.active_base_offset is None:
        return False
    valid = checkpoint is not None and checkpoint >= summary.log_start_offset
    first_dirty = checkpoint if valid and checkpoint is not None else summary.log_start_offset
    return first_dirty < summary.active_base_offset
