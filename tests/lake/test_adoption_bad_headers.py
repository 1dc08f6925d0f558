"""Issue 20: one bad upload must not stall the lake. A segment whose headers no writer can produce (offsets
past ``Long.MAX_VALUE``, a records count the batch cannot hold, timestamps below -1) quarantines its
partition by the object and byte position, as any corrupt segment does; every other partition is adopted
and committed, and later runs go on."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from kafka_segments.lake.adopt_run import adopt
from kafka_segments.lake.history import read_head
from kafka_segments.storage import ObjectStore
from kafka_segments.topic_partition import TopicPartition
from kit import FakeClock, make_segment, upload_segment
from unit.bad_batches import OVERFLOW_BASE, early_timestamp_batch, lying_count_batch, overflowing_batch

pytestmark = pytest.mark.lake

BAD_TP = TopicPartition("orders", 0)
GOOD_TP = TopicPartition("orders", 1)

CASES = {
    "offsets-past-long-max": (
        OVERFLOW_BASE,
        lambda: overflowing_batch(OVERFLOW_BASE),
        "batch offsets out of range: base offset 9223372036854775803 + lastOffsetDelta 9 = last offset "
        "9223372036854775812",
    ),
    "lying-records-count": (0, lying_count_batch, "records count 2147483647 cannot fit the batch"),
    "timestamp-below-minus-one": (
        0,
        early_timestamp_batch,
        ("batch timestamps out of range: baseTimestamp 1700000000000, maxTimestamp -5"),
    ),
}


@pytest.mark.parametrize(("base", "make", "reason"), list(CASES.values()), ids=list(CASES))
def test_a_bad_header_quarantines_its_partition_and_the_others_commit(
    store: ObjectStore, clock: FakeClock, base: int, make: Callable[[], bytes], reason: str
) -> None:
    bad_key = f"{BAD_TP.dir_name}/{base:020d}.log"
    store.put(bad_key, make())
    good_key = upload_segment(store, GOOD_TP, make_segment(0))

    report = adopt(store, now_ms=clock.advance(1000), clock=clock)

    (item,) = report.result.quarantined
    assert (item.topic_partition, item.key, item.position, item.error) == (
        BAD_TP,
        bad_key,
        0,
        "CorruptRecordError",
    )
    assert item.reason.startswith(reason), item.reason
    assert "at byte 0" in item.reason
    assert [entry.key for entry in report.result.adopted] == [good_key]
    assert report.committed_version == 1
    head = read_head(store)
    assert head is not None
    assert [str(p.topic_partition) for p in head.partitions] == [str(GOOD_TP)]

    # the next run is not stalled either: a new segment of the healthy partition is adopted
    later = upload_segment(store, GOOD_TP, make_segment(6))
    again = adopt(store, now_ms=clock.advance(1000), clock=clock)
    assert [entry.key for entry in again.result.adopted] == [later]
    assert [q.key for q in again.result.quarantined] == [bad_key]
    assert again.committed_version == 2


def test_describe_totals_are_not_poisoned_by_a_lying_count(store: ObjectStore, clock: FakeClock) -> None:
    store.put(f"{BAD_TP.dir_name}/{0:020d}.log", lying_count_batch())
    upload_segment(store, GOOD_TP, make_segment(0))

    adopt(store, now_ms=clock.advance(1000), clock=clock)

    head = read_head(store)
    assert head is not None
    assert sum(segment.record_count for p in head.partitions for segment in p.segments) == 6
