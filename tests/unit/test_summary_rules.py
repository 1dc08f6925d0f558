"""``retention_may_delete`` and ``cleaning_may_change``: a partition the summary says no for is one Kafka's
passes leave unchanged and one the cleaner neither cleans nor resets (Hypothesis over random logs,
settings, clocks, checkpoints and KIP-68 bounds), and the scenarios where each rule says maybe."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kafka_segments.compaction.eligibility import assess
from kafka_segments.compaction.range import CheckpointState, first_dirty_offset
from kafka_segments.compaction.summary_rules import cleaning_may_change
from kafka_segments.retention.rules import LogView, PassInputs, apply_retention
from kafka_segments.retention.summary_rules import retention_may_delete
from kafka_segments.state import PartitionState, SegmentEntry, summarize
from unit.retention_helpers import seg, state, topic_config

pytestmark = pytest.mark.unit

NOW = 1_000_000


@st.composite
def logs(draw: st.DrawFn) -> PartitionState:
    """A partition of 1-6 segments (gaps between them, empty ones, sizes, timestamps or none) with a log
    start offset anywhere from its first offset to its log end offset. Small numbers throughout, so that
    every rule's boundary (a timestamp exactly retention.ms old, a size exactly at retention.bytes, M at a
    segment's last offset) comes up often."""
    segments: list[SegmentEntry] = []
    base = draw(st.integers(0, 50))
    for _ in range(draw(st.integers(1, 6))):
        count = draw(st.integers(0, 5))
        last = None if count == 0 else base + count - 1
        ts = draw(st.one_of(st.just(-1), st.integers(0, SPAN)))
        mtime = draw(st.integers(0, SPAN))
        segments.append(seg(base, last, size=draw(st.integers(0, 6)), ts=ts, mtime=mtime))
        base = (base if last is None else last + 1) + draw(st.integers(0, 3)) + (1 if last is None else 0)
    log_end = segments[-1].next_offset + draw(st.integers(0, 2))
    log_start = draw(st.integers(segments[0].base_offset, log_end))
    return state(segments, log_start=log_start, log_end=log_end)


SPAN = 8
configs = st.builds(
    topic_config,
    cleanup_policy=st.sampled_from(["delete", "compact", "compact,delete", ""]),
    retention_ms=st.integers(-1, SPAN),
    retention_bytes=st.integers(-1, 20),
    consumed_retention_enabled=st.booleans(),
    consumed_retention_ms=st.integers(0, SPAN),
    cleaner_enabled=st.booleans(),
)


@settings(max_examples=1_000)
@given(log=logs(), config=configs, now=st.integers(0, 2 * SPAN), m=st.one_of(st.none(), st.integers(-1, 80)))
def test_a_partition_the_summary_says_no_for_is_left_unchanged(
    log: PartitionState, config: object, now: int, m: int | None
) -> None:
    assert isinstance(config, type(topic_config()))
    view = LogView(log.segments, log.log_start_offset, log.log_end_offset)
    outcome = apply_retention(view, PassInputs(config, now, m))
    if not retention_may_delete(summarize(log), config, now_ms=now, min_committed_offset=m):
        assert outcome.deletions == ()


FIFTEEN = state([seg(b, b + 4, size=100, ts=NOW - 10_000) for b in (0, 5, 10)])


@pytest.mark.parametrize(
    ("settings", "log_start", "m", "may"),
    [
        pytest.param({"retention_ms": 20_000}, 0, None, False, id="retention_ms_not_yet"),
        pytest.param({"retention_ms": 5_000}, 0, None, True, id="retention_ms_past"),
        pytest.param({"retention_ms": -1, "retention_bytes": 250}, 0, None, False, id="bytes_segment_over"),
        pytest.param({"retention_ms": -1, "retention_bytes": 200}, 0, None, True, id="bytes_first_fits"),
        pytest.param({"retention_ms": -1}, 4, None, False, id="log_start_inside_first_segment"),
        pytest.param({"retention_ms": -1}, 5, None, True, id="log_start_at_second_segment"),
        pytest.param(
            {"retention_ms": -1, "consumed_retention_enabled": True, "consumed_retention_ms": 0},
            0,
            4,
            False,
            id="consumed_below_the_first_segments_last_offset",
        ),
        pytest.param(
            {"retention_ms": -1, "consumed_retention_enabled": True, "consumed_retention_ms": 0},
            0,
            5,
            True,
            id="consumed_past_the_first_segment",
        ),
        pytest.param(
            {"retention_ms": 0, "cleanup_policy": "compact", "cleaner_enabled": False},
            0,
            None,
            False,
            id="compacted_without_the_cleaner_has_no_passes",
        ),
    ],
)
def test_each_pass_says_maybe_when_it_can_delete_the_first_segment(
    settings: dict[str, object], log_start: int, m: int | None, may: bool
) -> None:
    summary = summarize(replace(FIFTEEN, log_start_offset=log_start))
    assert retention_may_delete(summary, topic_config(**settings), now_ms=NOW, min_committed_offset=m) is may


def test_a_summary_without_the_later_fields_always_says_maybe() -> None:
    summary = replace(summarize(FIFTEEN), live_sha256=None)
    assert retention_may_delete(summary, topic_config(retention_ms=-1), now_ms=NOW, min_committed_offset=None)


def test_a_partition_without_segments_has_nothing_to_delete() -> None:
    empty = summarize(state([], log_start=7, log_end=7))
    config = topic_config(retention_ms=0)
    assert not retention_may_delete(empty, config, now_ms=NOW, min_committed_offset=None)


compacted = st.builds(
    topic_config,
    cleanup_policy=st.sampled_from(["compact", "compact,delete", "delete"]),
    cleaner_enabled=st.booleans(),
    min_cleanable_dirty_ratio=st.sampled_from([0.0, 0.1, 0.5, 0.9]),
    min_compaction_lag_ms=st.integers(0, SPAN),
    max_compaction_lag_ms=st.one_of(st.just(2**63 - 1), st.integers(0, SPAN)),
)


@settings(max_examples=1_000)
@given(
    log=logs(),
    config=compacted,
    now=st.integers(0, 2 * SPAN),
    checkpoint=st.one_of(st.none(), st.integers(0, 80)),
)
def test_a_partition_cleaning_cannot_change_is_neither_eligible_nor_reset(
    log: PartitionState, config: object, now: int, checkpoint: int | None
) -> None:
    assert isinstance(config, type(topic_config()))
    state = replace(log, cleaner_checkpoint=checkpoint)
    if not cleaning_may_change(summarize(state), config):
        assert not assess(state, config, now_ms=now).eligible
        cleaned = config.compact and config.cleaner_enabled  # only the cleaner resets a checkpoint
        assert not cleaned or first_dirty_offset(state)[1] is not CheckpointState.ABOVE_LOG_END


def test_a_cleaned_partition_is_left_alone_and_a_dirty_one_is_not() -> None:
    compact = topic_config(cleanup_policy="compact")
    assert not cleaning_may_change(summarize(replace(FIFTEEN, cleaner_checkpoint=10)), compact)
    assert cleaning_may_change(summarize(replace(FIFTEEN, cleaner_checkpoint=5)), compact)
    assert cleaning_may_change(summarize(FIFTEEN), compact)  # no checkpoint: dirty from the log start
    assert cleaning_may_change(summarize(replace(FIFTEEN, cleaner_checkpoint=99)), compact)  # reset
    assert not cleaning_may_change(summarize(FIFTEEN), topic_config(cleanup_policy="delete"))
