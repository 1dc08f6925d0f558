"""A run's compaction budget (``take_within_budget``) and the checkpoint a run leaves without a round.

Kafka's cleaner takes the single dirtiest log; a run takes every eligible partition unless
``kafka_segments.compaction.max.*.per.run`` limits it, in KIP-354's order (overdue first, then dirtiest).
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from kafka_segments.compaction.eligibility import (
    CompactionBudget,
    CompactionCandidate,
    assess,
    take_within_budget,
)
from kafka_segments.config import parse_config
from kafka_segments.pipeline.compaction.stage import CompactionStatus, PartitionCompaction, compaction_budget
from kafka_segments.state import PartitionState
from kafka_segments.topic_partition import TopicPartition
from unit.retention_helpers import seg, state, topic_config

pytestmark = pytest.mark.unit

NOW = 1_400_000_000_000
COMPACT = topic_config(cleanup_policy="compact", min_cleanable_dirty_ratio=0.1)


def dirty(partition: int, *, clean_bytes: int) -> CompactionCandidate:
    """A partition with ``clean_bytes`` clean and 100 dirty bytes, then a 10-byte active segment."""
    segments = [
        seg(0, 4, size=clean_bytes, ts=NOW),
        seg(5, 9, size=100, ts=NOW),
        seg(10, 14, size=10, ts=NOW),
    ]
    partition_state = replace(
        state(segments), cleaner_checkpoint=5, topic_partition=TopicPartition("t", partition)
    )
    return assess(partition_state, COMPACT, now_ms=NOW)


CANDIDATES = [dirty(0, clean_bytes=300), dirty(1, clean_bytes=10), dirty(2, clean_bytes=100)]
"""Dirty ratios 0.25, 0.91, 0.5; total bytes read by a round: 400, 110, 200."""


def partitions(candidates: tuple[CompactionCandidate, ...]) -> list[int]:
    return [candidate.topic_partition.partition for candidate in candidates]


@pytest.mark.parametrize(
    ("budget", "taken", "deferred"),
    [
        pytest.param(CompactionBudget(), [1, 2, 0], [], id="no_limit_cleans_every_eligible_partition"),
        pytest.param(
            CompactionBudget(max_partitions=2), [1, 2], [0], id="partition_limit_takes_the_dirtiest"
        ),
        pytest.param(CompactionBudget(max_partitions=0), [], [1, 2, 0], id="partition_limit_zero_defers_all"),
        pytest.param(CompactionBudget(max_bytes=110), [1], [2, 0], id="byte_limit_reached_exactly_stops"),
        pytest.param(
            CompactionBudget(max_bytes=111), [1, 2], [0], id="byte_limit_lets_the_last_round_go_over"
        ),
        pytest.param(
            CompactionBudget(max_bytes=1), [1], [2, 0], id="a_partition_larger_than_the_budget_goes_first"
        ),
        pytest.param(CompactionBudget(max_bytes=0), [], [1, 2, 0], id="byte_limit_zero_defers_all"),
    ],
)
def test_budget_takes_rounds_in_order_until_a_limit_is_reached(
    budget: CompactionBudget, taken: list[int], deferred: list[int]
) -> None:
    got_taken, got_deferred = take_within_budget(CANDIDATES, budget)
    assert (partitions(got_taken), partitions(got_deferred)) == (taken, deferred)


def test_ineligible_partitions_are_neither_taken_nor_deferred() -> None:
    below = assess(
        replace(state([seg(0, 4, size=100, ts=NOW), seg(5, 9, size=10, ts=NOW)]), cleaner_checkpoint=5),
        COMPACT,
        now_ms=NOW,
    )
    assert take_within_budget([below], CompactionBudget(max_partitions=5)) == ((), ())


def test_the_budget_comes_from_the_broker_section() -> None:
    config = parse_config(
        "broker:\n"
        "  kafka_segments.compaction.max.bytes.per.run: 1000000\n"
        "  kafka_segments.compaction.max.partitions.per.run: 3\n",
        source="test.yaml",
    )
    assert compaction_budget(config) == CompactionBudget(max_bytes=1_000_000, max_partitions=3)
    assert compaction_budget(parse_config("{}\n", source="t.yaml")).unlimited


def _partition(*, log_start: int, checkpoint: int | None) -> PartitionState:
    segments = [seg(10, 19, size=100, ts=NOW), seg(20, 29, size=100, ts=NOW)]
    return replace(state(segments, log_start=log_start), cleaner_checkpoint=checkpoint)


@pytest.mark.parametrize(
    ("policy", "checkpoint", "stored", "a_change"),
    [
        pytest.param("compact", 5, 12, False, id="below_log_start_is_reset_but_reads_the_same"),
        pytest.param("compact,delete", 5, 12, False, id="below_log_start_for_compact_delete_too"),
        pytest.param("compact", 1_000, 12, True, id="above_log_end_is_reset_to_log_start"),
        pytest.param("compact", 15, 15, False, id="a_valid_checkpoint_stays"),
        pytest.param("compact", None, None, False, id="no_checkpoint_stays_absent"),
    ],
)
def test_a_partition_without_a_round_stores_the_reset_of_an_invalid_checkpoint(
    policy: str, checkpoint: int | None, stored: int | None, a_change: bool
) -> None:
    """cleanableOffsets resets an invalid checkpoint to the log start offset (forceUpdateCheckpoint), and
    Kafka's look at the log stores it (grabFilthiestCompactedLog -> updateCheckpoints) even without a round.
    One below the log start offset (Kafka's deletions leave it so) reads as the log start offset anyway: its
    reset alone is not a change to commit (the new state reads the same, keeps the partition's last run)."""
    partition = replace(_partition(log_start=12, checkpoint=checkpoint), run_id="earlier")
    candidate = assess(partition, topic_config(cleanup_policy=policy), now_ms=NOW)

    result = PartitionCompaction.without_round(partition, candidate, CompactionStatus.SKIPPED)
    after = result.new_state(partition, run_id="this-run")

    assert result.checkpoint_after == stored
    assert after.cleaner_checkpoint == stored
    assert (after.as_read() != partition.as_read()) is a_change
    assert after.run_id == ("this-run" if a_change else "earlier")
    assert candidate.range is not None
    assert candidate.range.first_dirty_offset == (15 if checkpoint == 15 else 12)
