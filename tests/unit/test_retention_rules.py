"""Kafka's deletion retention rules (``UnifiedLog.deleteOldSegments``), one scenario table per rule.

Scenarios named ``kafka_E*`` are Kafka's UnifiedLogTest retention tests; r = the size of one single-record
batch.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from kafka_segments.retention.rules import (
    PASS_ORDER,
    DeletionReason,
    LogView,
    PassInputs,
    RetentionOutcome,
    apply_retention,
    deletable_prefix,
    passes_for,
    retention_ms_breach,
)
from kafka_segments.state import SegmentEntry
from unit.retention_helpers import fifteen_records, seg, topic_config

pytestmark = pytest.mark.unit

R = 70
NOW = 1_763_700_000_000


def run(
    segments: list[SegmentEntry],
    *,
    now: int = NOW,
    log_start: int | None = None,
    m: int | None = None,
    log_end: int | None = None,
    **config: object,
) -> RetentionOutcome:
    start = segments[0].base_offset if log_start is None else log_start
    end = segments[-1].next_offset if log_end is None else log_end
    return apply_retention(LogView(tuple(segments), start, end), PassInputs(topic_config(**config), now, m))


@pytest.mark.parametrize(
    ("retention_bytes", "left"),
    [
        pytest.param(10 * R, 2, id="kafka_E1_shouldDeleteSizeBasedSegments"),
        pytest.param(15 * R, 3, id="kafka_E1_shouldNotDeleteSizeBasedSegmentsWhenUnderRetentionSize"),
        pytest.param(11 * R, 3, id="stays_up_to_one_segment_over"),
        pytest.param(5 * R, 1, id="active_segment_counts_and_the_last_one_is_kept_when_it_fits"),
        pytest.param(4 * R, 1, id="never_part_of_a_segment"),
        pytest.param(0, 0, id="zero_deletes_everything"),
        pytest.param(-1, 3, id="negative_is_unlimited"),
    ],
)
def test_retention_bytes(retention_bytes: int, left: int) -> None:
    outcome = run(fifteen_records(ts=NOW, record_size=R), retention_bytes=retention_bytes)
    assert len(outcome.kept) == left
    assert {d.reason for d in outcome.deletions} <= {DeletionReason.RETENTION_BYTES}
    assert outcome.log_start_offset == (outcome.kept[0].base_offset if outcome.kept else 15)


@pytest.mark.parametrize(
    ("ts", "retention_ms", "left", "log_start"),
    [
        pytest.param(10, 10_000, 0, 15, id="kafka_E2_shouldDeleteTimeBasedSegmentsReadyToBeDeleted"),
        pytest.param(NOW, 10_000_000, 3, 0, id="kafka_E2_shouldNotDeleteTimeBasedSegmentsWhenNoneReady"),
        pytest.param(NOW - 10_000, 10_000, 3, 0, id="strictly_greater_than_retention"),
        pytest.param(NOW - 10_001, 10_000, 0, 15, id="one_ms_past_retention"),
        pytest.param(10, -1, 3, 0, id="negative_is_unlimited"),
    ],
)
def test_retention_ms(ts: int, retention_ms: int, left: int, log_start: int) -> None:
    outcome = run(fifteen_records(ts=ts), retention_ms=retention_ms)
    assert len(outcome.kept) == left
    assert outcome.log_start_offset == log_start
    assert all(d.reason is DeletionReason.RETENTION_MS for d in outcome.deletions)


def test_retention_ms_future_timestamp_blocks_every_later_segment() -> None:
    segments = [seg(0, 4, ts=10), seg(5, 9, ts=NOW + 60_000), seg(10, 14, ts=10)]
    outcome = run(segments, retention_ms=10_000)
    assert [d.segment.base_offset for d in outcome.deletions] == [0]
    assert outcome.log_start_offset == 5


def test_retention_ms_falls_back_to_the_mtime_only_without_any_timestamp() -> None:
    segments = [seg(0, 4, ts=-1, mtime=10), seg(5, 9, ts=-1, mtime=NOW), seg(10, 14, ts=10)]
    outcome = run(segments, retention_ms=10_000)
    assert [d.segment.base_offset for d in outcome.deletions] == [0]


@pytest.mark.parametrize(
    ("policy", "left"),
    [
        pytest.param("compact", 3, id="kafka_E3_shouldNotDeleteSegmentsWhenPolicyDoesNotIncludeDelete"),
        pytest.param("compact,delete", 0, id="kafka_E3_shouldDeleteSegmentsReadyToBeDeleted_compact_delete"),
        pytest.param("delete", 0, id="delete"),
        pytest.param("", 3, id="empty_policy_is_infinite_retention"),
    ],
)
def test_cleanup_policy_decides_the_passes(policy: str, left: int) -> None:
    segments = [seg(b, b + 4, ts=10, mtime=NOW - 20_000) for b in (0, 5, 10)]
    outcome = run(segments, retention_ms=10_000, cleanup_policy=policy)
    assert len(outcome.kept) == left


@pytest.mark.parametrize(
    ("policy", "cleaner", "expected"),
    [
        ("delete", True, PASS_ORDER),
        ("compact,delete", True, PASS_ORDER),
        ("compact", True, (DeletionReason.LOG_START_OFFSET,)),
        ("", True, (DeletionReason.LOG_START_OFFSET,)),
        ("compact", False, ()),
        ("compact,delete", False, ()),
        ("delete", False, PASS_ORDER),
    ],
)
def test_passes_for_policy_and_cleaner(
    policy: str, cleaner: bool, expected: tuple[DeletionReason, ...]
) -> None:
    assert passes_for(topic_config(cleanup_policy=policy, cleaner_enabled=cleaner)) == expected


@pytest.mark.parametrize(
    ("policy", "log_start", "left_bases"),
    [
        pytest.param("compact", 5, [5, 10], id="kafka_E4_shouldDeleteStartOffsetBreachedSegments_compact"),
        pytest.param("delete", 1, [0, 5, 10], id="kafka_E4_testLogDeletionAfterDeleteRecords_1"),
        pytest.param("delete", 6, [5, 10], id="kafka_E4_testLogDeletionAfterDeleteRecords_6"),
        pytest.param("delete", 15, [10], id="kafka_E4_active_segment_kept_at_log_end"),
        pytest.param("compact", 10, [10], id="boundary_next_base_equal_to_log_start"),
    ],
)
def test_log_start_offset_breach(policy: str, log_start: int, left_bases: list[int]) -> None:
    outcome = run(fifteen_records(ts=NOW), log_start=log_start, cleanup_policy=policy)
    assert [s.base_offset for s in outcome.kept] == left_bases
    assert all(d.reason is DeletionReason.LOG_START_OFFSET for d in outcome.deletions)
    assert outcome.log_start_offset == log_start


def test_high_watermark_bounds_every_pass() -> None:
    """UnifiedLogTest.testDeleteOldSegments: a high watermark of 0 makes nothing deletable."""
    outcome = run(fifteen_records(ts=10), retention_ms=10_000, log_end=0)
    assert outcome.deletions == ()
    partial = run(fifteen_records(ts=10), retention_ms=10_000, log_end=9)
    assert [d.segment.base_offset for d in partial.deletions] == [0]


def test_last_segment_when_empty_is_never_deleted() -> None:
    segments = [seg(0, 4, ts=10), seg(5, None, size=0, ts=-1, mtime=10)]
    outcome = run(segments, retention_ms=10_000, log_end=5)
    assert [s.base_offset for s in outcome.kept] == [5]
    assert outcome.log_start_offset == 5


def test_passes_run_in_kafka_order_each_over_what_the_previous_left() -> None:
    segments = [seg(b, b + 4, size=100, ts=ts) for b, ts in ((0, NOW), (5, NOW), (10, 10), (15, NOW))]
    outcome = run(segments, log_start=5, retention_bytes=200, retention_ms=10_000)
    assert [(d.segment.base_offset, d.reason) for d in outcome.deletions] == [
        (0, DeletionReason.LOG_START_OFFSET),
        (5, DeletionReason.RETENTION_BYTES),
        (10, DeletionReason.RETENTION_MS),
    ]
    assert outcome.log_start_offset == 15


@pytest.mark.parametrize(
    ("m", "consumed_ms", "left_bases"),
    [
        pytest.param(10, 1000, [10, 15], id="below_M_and_older_than_the_consumed_time"),
        pytest.param(9, 1000, [5, 10, 15], id="last_offset_must_be_below_M"),
        pytest.param(20, 10**12, [0, 5, 10, 15], id="too_young"),
        pytest.param(-1, 1000, [0, 5, 10, 15], id="M_minus_one_deletes_nothing"),
        pytest.param(None, 1000, [0, 5, 10, 15], id="no_M_no_pass"),
    ],
)
def test_consumed_pass(m: int | None, consumed_ms: int, left_bases: list[int]) -> None:
    segments = [seg(b, b + 4, ts=NOW - 10_000) for b in (0, 5, 10, 15)]
    outcome = run(segments, m=m, consumed_retention_enabled=True, consumed_retention_ms=consumed_ms)
    assert [s.base_offset for s in outcome.kept] == left_bases
    assert all(d.reason is DeletionReason.CONSUMED for d in outcome.deletions)


def test_consumed_pass_does_nothing_when_disabled() -> None:
    segments = [seg(b, b + 4, ts=NOW) for b in (0, 5)]
    assert run(segments, m=100, consumed_retention_enabled=False).deletions == ()


def test_time_predicate_is_strict() -> None:
    predicate = retention_ms_breach(now_ms=1000, retention_ms=100)
    assert predicate is not None
    assert not predicate(seg(0, 0, ts=900), None)
    assert predicate(seg(0, 0, ts=899), None)


# --------------------------------------------------------------------------------------------- invariants


@st.composite
def logs(draw: st.DrawFn) -> tuple[list[SegmentEntry], int]:
    count = draw(st.integers(0, 6))
    segments = []
    base = draw(st.integers(0, 50))
    for index in range(count):
        empty = index == count - 1 and draw(st.booleans())
        length = 0 if empty else draw(st.integers(1, 10))
        ts = draw(st.sampled_from([-1, 10, NOW - 5_000, NOW, NOW + 5_000]))
        size = 0 if empty else draw(st.integers(1, 500))
        segments.append(seg(base, None if empty else base + length - 1, size=size, ts=ts, mtime=NOW - 1))
        base += length + draw(st.integers(0, 3))
    log_start = draw(st.integers(0, base + 1)) if segments else 0
    if segments:
        log_start = min(max(log_start, segments[0].base_offset), segments[-1].next_offset)
    return segments, log_start


@given(
    log=logs(),
    retention_bytes=st.integers(-1, 2000),
    retention_ms=st.sampled_from([-1, 0, 1000, 10**9]),
    policy=st.sampled_from(["delete", "compact", "compact,delete", ""]),
    m=st.one_of(st.none(), st.integers(-1, 80)),
)
def test_invariants(
    log: tuple[list[SegmentEntry], int], retention_bytes: int, retention_ms: int, policy: str, m: int | None
) -> None:
    segments, log_start = log
    end = segments[-1].next_offset if segments else log_start
    view = LogView(tuple(segments), log_start, end)
    config = topic_config(
        retention_bytes=retention_bytes,
        retention_ms=retention_ms,
        cleanup_policy=policy,
        consumed_retention_enabled=True,
        consumed_retention_ms=0,
    )
    outcome = apply_retention(view, PassInputs(config, NOW, m))
    deleted = [d.segment for d in outcome.deletions]
    # A prefix is deleted, the rest kept, nothing invented.
    assert deleted + list(outcome.kept) == segments
    # The log start offset only moves forward, to the first kept base (or the log end).
    assert outcome.log_start_offset >= log_start
    if deleted:
        assert outcome.log_start_offset == max(
            log_start, outcome.kept[0].base_offset if outcome.kept else end
        )
    # Reasons follow the pass order; a last empty segment is never deleted.
    order = [PASS_ORDER.index(d.reason) for d in outcome.deletions]
    assert order == sorted(order)
    if segments and segments[-1].size == 0:
        assert outcome.kept
        assert outcome.kept[-1] is segments[-1]
    # Only passes the policy allows deleted anything.
    assert {d.reason for d in outcome.deletions} <= set(passes_for(config))


def test_deletable_prefix_stops_at_the_first_keeper() -> None:
    segments = (seg(0, 4), seg(5, 9), seg(10, 14))
    view = LogView(segments, 0, 15)
    assert deletable_prefix(view, lambda s, _n: s.base_offset != 5) == 1
