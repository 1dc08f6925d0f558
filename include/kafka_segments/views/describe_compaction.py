"""``describe``'s compaction view: each partition of a compacted topic as Kafka's cleaner sees it at ``now``.

``LogCleanerManager.cleanableOffsets``, ``LogToClean``, ``maxCompactionDelay``, ``grabFilthiestCompactedLog``
and KIP-354, through ``compaction.range`` and ``compaction.eligibility``: first dirty and first uncleanable
offsets, dirty ratio, compaction delay, and what a run at ``now`` would do (clean, defer for the budget,
skip)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum

from kafka_segments.compaction.eligibility import (
    UNLIMITED,
    CompactionBudget,
    CompactionCandidate,
    Eligibility,
    assess,
    max_compaction_delay,
    take_within_budget,
)
from kafka_segments.compaction.range import cleanable_range
from kafka_segments.compaction.summary_rules import cleaning_may_change
from kafka_segments.config import Config, TopicConfig
from kafka_segments.state import PartitionState, PartitionSummary
from kafka_segments.topic_partition import TopicPartition

COMPACTION_KEYS = (
    "first_dirty_offset",
    "first_uncleanable_offset",
    "dirty_ratio",
    "compaction_delay_ms",
    "compaction_eligibility",
    "compaction_next_run",
)
"""The compaction keys of each partition's dict (``null`` without a configuration or compaction)."""


class NextRun(Enum):
    """What a run at ``now`` would do about a partition of a compacted topic (``compaction.stage``)."""

    CLEAN = "clean"
    """Eligible and within the run's compaction budget: the run gives it a cleaning round."""
    DEFER = "defer"
    """Eligible, but partitions ahead of it in the budget order use up the run's budget."""
    SKIP = "skip"
    """Not eligible (the eligibility says why)."""


@dataclass(frozen=True, slots=True)
class CompactionContext:
    """The configuration, the time, and the run's budget (``compaction.stage.compaction_budget``)."""

    config: Config
    now_ms: int
    budget: CompactionBudget = UNLIMITED


@dataclass(frozen=True, slots=True)
class CompactionOutlook:
    """One partition of a compacted topic as Kafka's cleaner would see it at ``now``.

    ``first_uncleanable_offset`` is segment-aligned (``LogToClean.firstUncleanableOffset``): the round's upper
    bound, the offset a run's report names too. With ``log.cleaner.enable`` false the range and delay are
    still shown (they describe the log); the eligibility says ``cleaner-disabled``."""

    first_dirty_offset: int
    first_uncleanable_offset: int
    dirty_ratio: float
    """``cleanableBytes / (cleanBytes + cleanableBytes)``; 0.0 for a log without bytes."""
    compaction_delay_ms: int
    """``maxCompactionDelay``: how far the oldest dirty first batch is past max.compaction.lag.ms (0: not)."""
    eligibility: Eligibility
    next_run: NextRun


def compaction_outlooks(
    states: Sequence[PartitionState], context: CompactionContext
) -> dict[TopicPartition, CompactionOutlook]:
    """The outlook of every partition of a compacted topic among ``states`` (others are left out).

    The verdict is ``compaction.eligibility.assess``'s; the budget is applied over ``states`` in
    ``budget_order``, as a run over the same partitions (``run --topic``) applies it."""
    now_ms = context.now_ms
    configs = {topic: context.config.for_topic(topic) for topic in {s.topic_partition.topic for s in states}}
    compacted = [
        (s, configs[s.topic_partition.topic]) for s in states if configs[s.topic_partition.topic].compact
    ]
    candidates = [assess(state, config, now_ms=now_ms) for state, config in compacted]
    _, deferred = take_within_budget(candidates, context.budget)
    later = {candidate.topic_partition for candidate in deferred}
    return {
        c.topic_partition: _outlook(state, config, c, now_ms=now_ms, deferred=c.topic_partition in later)
        for (state, config), c in zip(compacted, candidates, strict=True)
    }


def _outlook(
    state: PartitionState, config: TopicConfig, candidate: CompactionCandidate, *, now_ms: int, deferred: bool
) -> CompactionOutlook:
    """The figures come from the log itself (``assess`` computes none with the cleaner disabled)."""
    cleanable = candidate.range
    delay = candidate.compaction_delay_ms
    if cleanable is None:
        cleanable = cleanable_range(state, config, now_ms=now_ms)
        delay = max_compaction_delay(state, config, first_dirty=cleanable.first_dirty_offset, now_ms=now_ms)
    next_run = NextRun.DEFER if deferred else NextRun.CLEAN if candidate.eligible else NextRun.SKIP
    return CompactionOutlook(
        first_dirty_offset=cleanable.first_dirty_offset,
        first_uncleanable_offset=cleanable.first_uncleanable_offset,
        dirty_ratio=cleanable.cleanable_ratio,
        compaction_delay_ms=delay,
        eligibility=candidate.eligibility,
        next_run=next_run,
    )


def summary_outlook(summary: PartitionSummary, config: TopicConfig) -> CompactionOutlook | None:
    """The outlook of a partition the cleaner cannot change (``compaction.summary_rules``), from its summary
    alone; ``None`` when the summary does not settle it (the partition's state is needed).

    Such a partition's first dirty offset is at or past the active segment's base offset, so its cleanable
    range ends there (``range.cleanable_range``: the segment-aligned bound is the active base), nothing is
    cleanable (dirty ratio 0.0, no compaction delay) and the verdict is ``empty-log`` when nothing below the
    first dirty offset has a byte, else ``below-dirty-ratio``. The clean bytes are known to be 0 or not
    except when the first dirty offset is the active base and the first of several segments is empty."""
    if not (config.compact and config.cleaner_enabled) or not summary.complete:
        return None
    if cleaning_may_change(summary, config):
        return None
    checkpoint = summary.cleaner_checkpoint
    valid = checkpoint is not None and summary.log_start_offset <= checkpoint <= summary.log_end_offset
    first_dirty = checkpoint if valid and checkpoint is not None else summary.log_start_offset
    active = summary.active_base_offset
    if summary.segments == 0 or active is None:
        upper, clean = first_dirty, False
    elif first_dirty > active:
        upper, clean = active, summary.bytes > 0
    elif summary.segments == 1:
        upper, clean = active, False
    elif summary.first_segment_bytes:
        upper, clean = active, True
    else:
        return None
    if config.min_cleanable_dirty_ratio < 0.0:
        return None
    return CompactionOutlook(
        first_dirty_offset=first_dirty,
        first_uncleanable_offset=upper,
        dirty_ratio=0.0,
        compaction_delay_ms=0,
        eligibility=Eligibility.BELOW_DIRTY_RATIO if clean else Eligibility.EMPTY_LOG,
        next_run=NextRun.SKIP,
    )
