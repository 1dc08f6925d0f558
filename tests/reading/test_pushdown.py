"""Pushed filters skip and clip tasks, never drop a row a filter keeps (Spark re-checks every filter)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from kafka_segments.reading.pushdown import LARGEST_UTC_OFFSET_MS, Narrowing
from kafka_segments.reading.tasks import SegmentTask
from kafka_segments.state import SegmentEntry, SegmentOrigin
from kafka_segments.topic_partition import TopicPartition
from pyspark.sql.datasource import (
    EqualTo,
    GreaterThan,
    GreaterThanOrEqual,
    In,
    LessThan,
    StringStartsWith,
)

pytestmark = pytest.mark.unit

T0 = 1_763_700_000_000


def _task(topic: str, partition: int, base: int, last: int, *, max_ts: int = T0) -> SegmentTask:
    entry = SegmentEntry(
        key=f"{topic}-{partition}/{base:020d}.log",
        base_offset=base,
        last_offset=last,
        size=1,
        sha256="",
        etag="",
        record_count=last - base + 1,
        batch_count=1,
        max_timestamp_ms=max_ts,
        first_batch_max_timestamp_ms=max_ts,
        last_modified_ms=max_ts,
        origin=SegmentOrigin.ADOPTED,
        run_id="r",
    )
    return SegmentTask(TopicPartition(topic, partition), entry, base, last + 1, drop_aborted=False)


TASKS = [
    _task("a", 0, 0, 9, max_ts=T0),
    _task("a", 0, 10, 19, max_ts=T0 + 100),
    _task("a", 1, 0, 9),
    _task("b", 0, 0, 9),
]


def _narrowed(*filters: object, records_too: bool = True) -> list[tuple[str, int, int, int]]:
    narrowing = Narrowing()
    for pushed in filters:
        narrowing = narrowing.with_filter(pushed)
    return [
        (t.topic_partition.topic, t.topic_partition.partition, t.start, t.end)
        for t in narrowing.narrow(TASKS, records_too=records_too)
    ]


def test_topic_partition_and_offset_filters_skip_and_clip() -> None:
    assert _narrowed(EqualTo(("topic",), "a"), In(("partition",), (0,))) == [
        ("a", 0, 0, 10),
        ("a", 0, 10, 20),
    ]
    assert _narrowed(EqualTo(("topic",), "a"), GreaterThan(("offset",), 12)) == [("a", 0, 13, 20)]
    assert _narrowed(GreaterThanOrEqual(("offset",), 5), LessThan(("offset",), 8)) == [
        ("a", 0, 5, 8),
        ("a", 1, 5, 8),
        ("b", 0, 5, 8),
    ]
    assert _narrowed(EqualTo(("topic",), "a"), EqualTo(("topic",), "b")) == []


def test_a_lower_timestamp_bound_skips_older_segments_safely() -> None:
    after = datetime.fromtimestamp((T0 + 50) / 1000, tz=UTC)
    assert _narrowed(
        EqualTo(("topic",), "a"), EqualTo(("partition",), 0), GreaterThan(("timestamp",), after)
    ) == [("a", 0, 10, 20)]
    naive = datetime.fromtimestamp((T0 + 50 + LARGEST_UTC_OFFSET_MS) / 1000, tz=UTC).replace(tzinfo=None)
    kept = _narrowed(EqualTo(("topic",), "a"), EqualTo(("partition",), 0), GreaterThan(("timestamp",), naive))
    assert kept == [("a", 0, 10, 20)]


def test_other_filters_and_the_compacted_view_keep_records() -> None:
    assert len(_narrowed(StringStartsWith(("topic",), "a"))) == len(TASKS)
    assert _narrowed(EqualTo(("topic",), "a"), GreaterThan(("offset",), 12), records_too=False) == [
        ("a", 0, 0, 10),
        ("a", 0, 10, 20),
        ("a", 1, 0, 10),
    ]
