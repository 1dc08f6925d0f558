"""Whether a partition gets a cleaning round, and in which order a per-run budget takes them
(``LogCleanerManager.grabFilthiestCompactedLog``, ``maxCompactionDelay``; KIP-354; docs/compaction.md, steps
2-3).

Eligible iff ``(needCompactionNow && cleanableBytes > 0) || cleanableRatio > min.cleanable.dirty.ratio``
(strictly greater); ``needCompactionNow``: the earliest positive first-batch ``maxTimestamp`` of the dirty
non-active segments is before ``now - max.compaction.lag.ms``. Kafka's cleaner thread picks the single
dirtiest log; a lake run cleans many under a budget, so ``budget_order`` follows KIP-354's intent (overdue
first, most overdue first, then the dirtiest; ties by topic and partition, so the order is deterministic)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum

from kafka_segments.compaction.range import CleanableRange, cleanable_range, non_active_segments_from
from kafka_segments.config.model import TopicConfig
from kafka_segments.state import PartitionState
from kafka_segments.topic_partition import TopicPartition


class Eligibility(Enum):
    """Why a partition does or does not get a cleaning round."""

    MAX_COMPACTION_LAG = "max.compaction.lag.ms"
    """Eligible: a dirty segment's first batch is older than max.compaction.lag.ms (and there are bytes)."""
    DIRTY_RATIO = "min.cleanable.dirty.ratio"
    """Eligible: the dirty ratio is strictly above min.cleanable.dirty.ratio."""
    NOT_COMPACTED = "not-compacted"
    """cleanup.policy has no ``compact``."""
    CLEANER_DISABLED = "cleaner-disabled"
    """log.cleaner.enable is false."""
    UNCLEANABLE = "uncleanable"
    """The partition is marked uncleanable (a previous round failed on it)."""
    EMPTY_LOG = "empty-log"
    """totalBytes == 0: nothing clean and nothing cleanable."""
    BELOW_DIRTY_RATIO = "below-dirty-ratio"
    """The dirty ratio is not above min.cleanable.dirty.ratio and no max-lag deadline has passed."""

    @property
    def eligible(self) -> bool:
        return self in (Eligibility.MAX_COMPACTION_LAG, Eligibility.DIRTY_RATIO)


@dataclass(frozen=True, slots=True)
class CompactionCandidate:
    """One partition's assessment at ``now``: its cleanable range, compaction delay and verdict."""

    topic_partition: TopicPartition
    range: CleanableRange | None
    """``None`` when the partition is not a candidate at all (policy, cleaner disabled, uncleanable)."""
    compaction_delay_ms: int
    eligibility: Eligibility

    @property
    def eligible(self) -> bool:
        return self.eligibility.eligible

    @property
    def needs_compaction_now(self) -> bool:
        return self.compaction_delay_ms > 0

    @property
    def cleanable_ratio(self) -> float:
        return self.range.cleanable_ratio if self.range is not None else 0.0


def max_compaction_delay(state: PartitionState, config: TopicConfig, *, first_dirty: int, now_ms: int) -> int:
    """``LogCleanerManager.maxCompactionDelay``: how far the dirty section is past max.compaction.lag.ms."""
    if not state.segments:
        return 0
    stamps = [
        segment.first_batch_max_timestamp_ms
        for segment in non_active_segments_from(state.segments, first_dirty)
        if segment.first_batch_max_timestamp_ms > 0
    ]
    if not stamps:
        return 0
    earliest = min(stamps)
    clean_until = now_ms - max(config.max_compaction_lag_ms, 0)
    return clean_until - earliest if earliest < clean_until else 0


def assess(
    state: PartitionState, config: TopicConfig, *, now_ms: int, uncleanable: bool = False
) -> CompactionCandidate:
    """The verdict of ``grabFilthiestCompactedLog`` for one partition at ``now_ms``."""
    tp = state.topic_partition
    if not config.compact:
        return CompactionCandidate(tp, None, 0, Eligibility.NOT_COMPACTED)
    if not config.cleaner_enabled:
        return CompactionCandidate(tp, None, 0, Eligibility.CLEANER_DISABLED)
    if uncleanable:
        return CompactionCandidate(tp, None, 0, Eligibility.UNCLEANABLE)
    cleanable = cleanable_range(state, config, now_ms=now_ms)
    delay = max_compaction_delay(state, config, first_dirty=cleanable.first_dirty_offset, now_ms=now_ms)
    return CompactionCandidate(tp, cleanable, delay, _verdict(cleanable, config, delay))


def _verdict(cleanable: CleanableRange, config: TopicConfig, delay: int) -> Eligibility:
    if cleanable.total_bytes == 0:
        return Eligibility.EMPTY_LOG
    if delay > 0 and cleanable.cleanable_bytes > 0:
        return Eligibility.MAX_COMPACTION_LAG
    if cleanable.cleanable_ratio > config.min_cleanable_dirty_ratio:
        return Eligibility.DIRTY_RATIO
    return Eligibility.BELOW_DIRTY_RATIO


def budget_order(candidates: Iterable[CompactionCandidate]) -> tuple[CompactionCandidate, ...]:
    """The eligible candidates in the order a per-run budget should take them (KIP-354): past their
    max-compaction-lag deadline first, most overdue first; then the dirtiest first."""
    eligible = [candidate for candidate in candidates if candidate.eligible]
    return tuple(sorted(eligible, key=_budget_key))


def _budget_key(candidate: CompactionCandidate) -> tuple[int, int, float, str, int]:
    overdue = candidate.eligibility is Eligibility.MAX_COMPACTION_LAG
    tp = candidate.topic_partition
    return (
        0 if overdue else 1,
        -candidate.compaction_delay_ms if overdue else 0,
        -candidate.cleanable_ratio,
        tp.topic,
        tp.partition,
    )


@dataclass(frozen=True, slots=True)
class CompactionBudget:
    """How much cleaning one run may do (``kafka_segments.compaction.max.*.per.run``; -1: no limit)."""

    max_bytes: int = -1
    """The rounds stop being taken once those already taken read this many bytes (clean + cleanable)."""
    max_partitions: int = -1

    @property
    def unlimited(self) -> bool:
        return self.max_bytes < 0 and self.max_partitions < 0


UNLIMITED = CompactionBudget()


def take_within_budget(
    candidates: Iterable[CompactionCandidate], budget: CompactionBudget = UNLIMITED
) -> tuple[tuple[CompactionCandidate, ...], tuple[CompactionCandidate, ...]]:
    """The eligible candidates a run cleans and those it defers, in ``budget_order``.

    A round is taken while fewer than ``max_partitions`` were taken and the bytes of those taken are still
    below ``max_bytes`` (the last round taken may go past it: a partition larger than the whole budget is
    still cleaned when it comes first, so no partition starves).
    """
    taken: list[CompactionCandidate] = []
    deferred: list[CompactionCandidate] = []
    used = 0
    for candidate in budget_order(candidates):
        full = (0 <= budget.max_partitions <= len(taken)) or (0 <= budget.max_bytes <= used)
        if full:
            deferred.append(candidate)
            continue
        taken.append(candidate)
        used += candidate.range.total_bytes if candidate.range is not None else 0
    return tuple(taken), tuple(deferred)
