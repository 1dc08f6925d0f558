"""The cleanable range and eligibility of a partition (``LogCleanerManager``, ``LogToClean``; KIP-354).

Scenarios named ``kafka_c*`` / ``kafka_a10`` are Kafka's (LogCleanerManagerTest, LogCleanerTest);
the mock clock of LogCleanerManagerTest starts at 1400000000000.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st
from kafka_segments.compaction.eligibility import (
    Eligibility,
    assess,
    budget_order,
    max_compaction_delay,
)
from kafka_segments.compaction.range import (
    CheckpointState,
    UncleanableBound,
    cleanable_range,
    segments_between,
)
from kafka_segments.state import OpenTransaction, PartitionState, SegmentEntry
from kafka_segments.topic_partition import TopicPartition
from unit.retention_helpers import seg, state, topic_config

pytestmark = pytest.mark.unit

NOW = 1_400_000_000_000
PER_SEGMENT = 14


def eight_segments(*, ts: int = NOW) -> list[SegmentEntry]:
    """LogCleanerManagerTest's cleanable-offsets log: segment.bytes 1024, eight segments of single-record
    batches stamped ``ts``."""
    return [seg(i * PER_SEGMENT, i * PER_SEGMENT + PER_SEGMENT - 1, size=1000, ts=ts) for i in range(8)]


def with_checkpoint(partition: PartitionState, checkpoint: int | None) -> PartitionState:
    return replace(partition, cleaner_checkpoint=checkpoint)


COMPACT = topic_config(cleanup_policy="compact")


# --- first dirty offset (cleanableOffsets steps 1-2) ---


def test_first_dirty_offset_is_the_log_start_offset_without_a_checkpoint() -> None:
    result = cleanable_range(state(eight_segments(), log_start=3), COMPACT, now_ms=NOW)
    assert (result.first_dirty_offset, result.checkpoint) == (3, CheckpointState.ABSENT)
    assert not result.force_update_checkpoint


def test_first_dirty_offset_is_the_checkpoint_when_valid() -> None:
    result = cleanable_range(with_checkpoint(state(eight_segments()), 30), COMPACT, now_ms=NOW)
    assert (result.first_dirty_offset, result.checkpoint) == (30, CheckpointState.VALID)


def test_checkpoint_equal_to_log_end_offset_is_valid() -> None:
    partition = with_checkpoint(state(eight_segments()), 8 * PER_SEGMENT)
    result = cleanable_range(partition, COMPACT, now_ms=NOW)
    assert result.checkpoint is CheckpointState.VALID
    assert result.first_dirty_offset == result.first_uncleanable_dirty_offset == 8 * PER_SEGMENT


def test_checkpoint_below_log_start_resets_to_log_start_and_forces_a_rewrite() -> None:
    partition = with_checkpoint(state(eight_segments()[2:], log_start=30), 10)
    result = cleanable_range(partition, COMPACT, now_ms=NOW)
    assert (result.first_dirty_offset, result.checkpoint) == (30, CheckpointState.BELOW_LOG_START)
    assert result.force_update_checkpoint


def test_checkpoint_above_log_end_resets_to_log_start_and_forces_a_rewrite() -> None:
    partition = with_checkpoint(state(eight_segments(), log_start=5), 10_000)
    result = cleanable_range(partition, COMPACT, now_ms=NOW)
    assert (result.first_dirty_offset, result.checkpoint) == (5, CheckpointState.ABOVE_LOG_END)
    assert result.force_update_checkpoint


# --- first uncleanable offset (cleanableOffsets step 3, calculateCleanableBytes) ---


def test_kafka_c1_uncleanable_offset_is_the_lso_and_rounds_down_to_its_segment() -> None:
    # testCleanableOffsetsForNone with HW=50: on a lake HW = LEO, so an open transaction at 50 plays the LSO.
    partition = replace(state(eight_segments()), open_transactions=(OpenTransaction(7, 0, 50),))
    result = cleanable_range(partition, COMPACT, now_ms=NOW)
    assert result.first_dirty_offset == 0
    assert result.first_uncleanable_dirty_offset == 50
    assert result.first_uncleanable_offset == 42  # the segment [42, 55] contains offset 50
    assert result.bound is UncleanableBound.LAST_STABLE_OFFSET


def test_kafka_c1_uncleanable_offset_is_the_active_segment_base_when_hw_is_leo() -> None:
    result = cleanable_range(state(eight_segments()), COMPACT, now_ms=NOW)
    assert result.first_uncleanable_dirty_offset == result.first_uncleanable_offset == 7 * PER_SEGMENT
    assert result.bound is UncleanableBound.ACTIVE_SEGMENT


def test_kafka_c1_min_compaction_lag_stops_at_the_segment_that_was_active_at_t0() -> None:
    t0, t1 = NOW, NOW + 3_600_001
    segments = eight_segments(ts=t1)
    segments[:3] = [replace(s, max_timestamp_ms=t0, first_batch_max_timestamp_ms=t0) for s in segments[:3]]
    segments[3] = replace(segments[3], first_batch_max_timestamp_ms=t0)  # t0 and t1 records
    config = topic_config(cleanup_policy="compact", min_compaction_lag_ms=3_600_000)
    result = cleanable_range(state(segments), config, now_ms=t1)
    assert result.first_uncleanable_offset == 3 * PER_SEGMENT
    assert result.bound is UncleanableBound.MIN_COMPACTION_LAG


def test_kafka_c1_min_compaction_lag_elapsed_for_every_segment_stops_at_the_active_segment() -> None:
    config = topic_config(cleanup_policy="compact", min_compaction_lag_ms=3_600_000)
    result = cleanable_range(state(eight_segments(ts=NOW)), config, now_ms=NOW + 3_600_001)
    assert result.first_uncleanable_offset == 7 * PER_SEGMENT
    assert result.bound is UncleanableBound.ACTIVE_SEGMENT


def test_min_compaction_lag_compares_strictly_greater() -> None:
    config = topic_config(cleanup_policy="compact", min_compaction_lag_ms=1000)
    exactly = cleanable_range(state(eight_segments(ts=NOW - 1000)), config, now_ms=NOW)
    assert exactly.bound is UncleanableBound.ACTIVE_SEGMENT  # largest == now - lag is old enough
    younger = cleanable_range(state(eight_segments(ts=NOW - 999)), config, now_ms=NOW)
    assert (younger.first_uncleanable_offset, younger.bound) == (0, UncleanableBound.MIN_COMPACTION_LAG)


def test_min_compaction_lag_of_zero_ignores_timestamps() -> None:
    result = cleanable_range(state(eight_segments(ts=NOW + 10**9)), COMPACT, now_ms=NOW)
    assert result.bound is UncleanableBound.ACTIVE_SEGMENT


def test_min_compaction_lag_only_looks_from_the_first_dirty_segment() -> None:
    segments = eight_segments(ts=NOW - 10_000)
    segments[0] = replace(segments[0], max_timestamp_ms=NOW)  # young, but already clean
    config = topic_config(cleanup_policy="compact", min_compaction_lag_ms=1000)
    result = cleanable_range(with_checkpoint(state(segments), PER_SEGMENT), config, now_ms=NOW)
    assert result.first_uncleanable_offset == 7 * PER_SEGMENT


def test_min_compaction_lag_falls_back_to_mtime_for_segments_without_timestamps() -> None:
    segments = eight_segments(ts=-1)
    segments[2] = replace(segments[2], last_modified_ms=NOW)
    config = topic_config(cleanup_policy="compact", min_compaction_lag_ms=1000)
    result = cleanable_range(state(segments), config, now_ms=NOW)
    assert result.first_uncleanable_offset == 2 * PER_SEGMENT


def test_uncleanable_offset_never_drops_below_first_dirty() -> None:
    partition = replace(
        with_checkpoint(state(eight_segments()), 60), open_transactions=(OpenTransaction(1, 0, 20),)
    )
    result = cleanable_range(partition, COMPACT, now_ms=NOW)
    assert result.first_uncleanable_dirty_offset == 60
    assert result.first_uncleanable_offset == 56  # the segment containing 60
    assert result.cleanable_bytes == 0


# --- bytes and ratio (LogToClean) ---


def six_single_record_segments() -> list[SegmentEntry]:
    return [seg(i, i, size=100 + i, ts=NOW) for i in range(6)]


def test_kafka_a10_log_to_clean_counts_clean_and_cleanable_bytes() -> None:
    # testLogToClean: firstDirty = seg2.base, uncleanable = seg4.base (an LSO at 4 plays the bound).
    segments = six_single_record_segments()
    partition = replace(with_checkpoint(state(segments), 2), open_transactions=(OpenTransaction(1, 0, 4),))
    result = cleanable_range(partition, COMPACT, now_ms=NOW)
    assert result.clean_bytes == segments[0].size + segments[1].size
    assert result.cleanable_bytes == segments[2].size + segments[3].size
    assert result.cleanable_ratio == result.cleanable_bytes / (result.clean_bytes + result.cleanable_bytes)


def test_kafka_a10_log_to_clean_with_uncleanable_section_counts_everything_but_the_active_segment() -> None:
    segments = six_single_record_segments()
    partition = with_checkpoint(state(segments), 5)
    result = cleanable_range(partition, COMPACT, now_ms=NOW)
    assert result.total_bytes == sum(s.size for s in segments) - segments[-1].size
    assert result.cleanable_bytes == 0


def test_a_segment_holding_first_dirty_mid_way_counts_as_clean_and_cleanable() -> None:
    segments = eight_segments()
    result = cleanable_range(with_checkpoint(state(segments), 20), COMPACT, now_ms=NOW)
    assert result.clean_bytes == 2 * 1000  # segments 0 and 14
    assert result.cleanable_bytes == 6 * 1000  # segments 14 .. 84


def test_segments_between_is_kafkas_log_segments_values() -> None:
    segments = eight_segments()
    assert segments_between(segments, 20, 20) == ()
    assert [s.base_offset for s in segments_between(segments, 20, 43)] == [14, 28, 42]
    assert [s.base_offset for s in segments_between(segments, -1, 14)] == [0]


def test_an_empty_partition_has_an_empty_range() -> None:
    result = cleanable_range(state([], log_start=7), COMPACT, now_ms=NOW)
    assert (result.first_dirty_offset, result.first_uncleanable_offset, result.total_bytes) == (7, 7, 0)


@given(
    sizes=st.lists(st.integers(1, 500), min_size=1, max_size=8),
    checkpoint=st.none() | st.integers(-5, 60),
    lso=st.none() | st.integers(0, 60),
)
def test_range_invariants(sizes: list[int], checkpoint: int | None, lso: int | None) -> None:
    segments = [seg(i * 5, i * 5 + 4, size=size, ts=NOW) for i, size in enumerate(sizes)]
    partition = with_checkpoint(state(segments), checkpoint)
    if lso is not None:
        partition = replace(partition, open_transactions=(OpenTransaction(1, 0, lso),))
    result = cleanable_range(partition, COMPACT, now_ms=NOW)
    bases = {s.base_offset for s in segments}
    assert result.first_uncleanable_offset in bases
    assert result.first_uncleanable_offset <= result.first_uncleanable_dirty_offset
    assert result.first_dirty_offset <= result.first_uncleanable_dirty_offset
    assert result.first_uncleanable_offset <= segments[-1].base_offset
    assert result.clean_bytes <= sum(sizes)  # a segment holding first dirty mid-way counts in both
    assert result.cleanable_bytes <= sum(sizes)
    assert 0.0 <= result.cleanable_ratio <= 1.0


# --- eligibility (grabFilthiestCompactedLog, maxCompactionDelay) ---


def test_kafka_c5_delete_only_topics_are_not_compaction_candidates() -> None:
    partition = state(eight_segments())
    verdicts = {
        policy: assess(partition, topic_config(cleanup_policy=policy), now_ms=NOW).eligibility
        for policy in ("delete", "compact,delete", "compact")
    }
    assert verdicts["delete"] is Eligibility.NOT_COMPACTED
    assert verdicts["compact,delete"] is Eligibility.DIRTY_RATIO
    assert verdicts["compact"] is Eligibility.DIRTY_RATIO


def test_kafka_c5_uncleanable_partitions_are_excluded() -> None:
    result = assess(state(eight_segments()), COMPACT, now_ms=NOW, uncleanable=True)
    assert result.eligibility is Eligibility.UNCLEANABLE
    assert not result.eligible


def test_a_disabled_cleaner_cleans_nothing() -> None:
    config = topic_config(cleanup_policy="compact", cleaner_enabled=False)
    assert assess(state(eight_segments()), config, now_ms=NOW).eligibility is Eligibility.CLEANER_DISABLED


def test_dirty_ratio_must_be_strictly_above_the_minimum() -> None:
    segments = [seg(0, 4, size=100, ts=NOW), seg(5, 9, size=100, ts=NOW), seg(10, 14, size=50, ts=NOW)]
    partition = with_checkpoint(state(segments), 5)  # clean 100, cleanable 100: ratio 0.5
    at = assess(partition, topic_config(cleanup_policy="compact", min_cleanable_dirty_ratio=0.5), now_ms=NOW)
    assert at.cleanable_ratio == 0.5
    assert at.eligibility is Eligibility.BELOW_DIRTY_RATIO
    below = assess(
        partition, topic_config(cleanup_policy="compact", min_cleanable_dirty_ratio=0.49), now_ms=NOW
    )
    assert below.eligibility is Eligibility.DIRTY_RATIO


def test_ratio_one_only_cleans_by_max_compaction_lag() -> None:
    partition = state(eight_segments(ts=NOW - 10_000))
    config = topic_config(cleanup_policy="compact", min_cleanable_dirty_ratio=1.0)
    assert assess(partition, config, now_ms=NOW).eligibility is Eligibility.BELOW_DIRTY_RATIO
    lagged = replace(config, max_compaction_lag_ms=5_000)
    result = assess(partition, lagged, now_ms=NOW)
    assert result.eligibility is Eligibility.MAX_COMPACTION_LAG
    assert result.compaction_delay_ms == 5_000


def test_max_compaction_delay_uses_the_first_batch_max_timestamp_of_dirty_non_active_segments() -> None:
    segments = eight_segments(ts=NOW)
    segments[1] = replace(segments[1], first_batch_max_timestamp_ms=NOW - 9_000)
    segments[7] = replace(segments[7], first_batch_max_timestamp_ms=NOW - 99_000)  # active: ignored
    config = topic_config(cleanup_policy="compact", max_compaction_lag_ms=1_000)
    assert max_compaction_delay(state(segments), config, first_dirty=0, now_ms=NOW) == 8_000
    # segment 1 is clean once the checkpoint passes it
    assert max_compaction_delay(state(segments), config, first_dirty=2 * PER_SEGMENT, now_ms=NOW) == 0


def test_max_compaction_delay_ignores_non_positive_timestamps_and_is_zero_when_not_due() -> None:
    segments = eight_segments(ts=-1)
    config = topic_config(cleanup_policy="compact", max_compaction_lag_ms=1)
    assert max_compaction_delay(state(segments), config, first_dirty=0, now_ms=NOW) == 0
    due_exactly = eight_segments(ts=NOW - 1000)
    config = topic_config(cleanup_policy="compact", max_compaction_lag_ms=1000)
    assert max_compaction_delay(state(due_exactly), config, first_dirty=0, now_ms=NOW) == 0


def test_max_compaction_lag_needs_cleanable_bytes() -> None:
    partition = replace(
        with_checkpoint(state(eight_segments(ts=NOW - 10_000)), PER_SEGMENT),
        open_transactions=(OpenTransaction(1, 0, PER_SEGMENT),),
    )
    config = topic_config(
        cleanup_policy="compact", max_compaction_lag_ms=1_000, min_cleanable_dirty_ratio=0.0
    )
    result = assess(partition, config, now_ms=NOW)
    assert result.needs_compaction_now
    assert result.range is not None
    assert result.range.cleanable_bytes == 0
    assert result.eligibility is Eligibility.BELOW_DIRTY_RATIO  # ratio 0.0 is not above 0.0 either


def test_a_log_without_bytes_is_dropped() -> None:
    partition = state([seg(0, None, size=0, ts=-1)])
    assert assess(partition, COMPACT, now_ms=NOW).eligibility is Eligibility.EMPTY_LOG


def test_budget_order_puts_overdue_partitions_first_then_the_dirtiest() -> None:
    def candidate(partition: int, *, ratio_clean: int, overdue_ms: int) -> PartitionState:
        segments = [
            seg(0, 4, size=ratio_clean, ts=NOW - overdue_ms),
            seg(5, 9, size=100, ts=NOW - overdue_ms),
            seg(10, 14, size=10, ts=NOW),
        ]
        segments[1] = replace(segments[1], first_batch_max_timestamp_ms=NOW - overdue_ms)
        return replace(with_checkpoint(state(segments), 5), topic_partition=TopicPartition("t", partition))

    config = topic_config(
        cleanup_policy="compact", max_compaction_lag_ms=50_000, min_cleanable_dirty_ratio=0.1
    )
    partitions = [
        candidate(0, ratio_clean=10, overdue_ms=0),  # dirtiest, not overdue
        candidate(1, ratio_clean=100, overdue_ms=60_000),  # overdue by 10 s
        candidate(2, ratio_clean=50, overdue_ms=0),
        candidate(3, ratio_clean=100, overdue_ms=80_000),  # overdue by 30 s
        candidate(4, ratio_clean=10_000, overdue_ms=0),  # below the ratio: not eligible
    ]
    order = budget_order(assess(p, config, now_ms=NOW) for p in partitions)
    assert [c.topic_partition.partition for c in order] == [3, 1, 0, 2]
