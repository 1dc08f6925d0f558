"""Consumer-group offsets from the ``__consumer_offsets`` partitions archived in the lake: segments written
with Kafka's record schemas, uploaded as a broker sync would, adopted, and replayed as the group coordinator
loads them."""

from __future__ import annotations

import pytest
from kafka_segments.coordinator.replay import CoordinatorRecordError
from kafka_segments.errors import SegmentObjectMismatchError
from kafka_segments.lake.adopt_run import adopt
from kafka_segments.lake.reader import resolve_manifest
from kafka_segments.offsets.lake_source import LakeSourceError, snapshot_from_lake
from kafka_segments.state import CommittedOffset, GroupOffsets, GroupType, OffsetSnapshot
from kafka_segments.storage import ObjectStore
from kafka_segments.topic_partition import TopicPartition
from kit import T0, FakeClock, make_segment, upload_segment
from unit.coordinator_records import (
    CoordinatorLog,
    consumer_group_member,
    consumer_group_metadata,
    consumer_subscription,
    current_member_assignment,
    group_metadata_key,
    group_metadata_value,
    member,
    offset_commit_key,
    offset_commit_value,
    target_assignment_metadata,
)

from lake.read_helpers import PartitionSpec, Seg, commit_lake

pytestmark = pytest.mark.lake

OFFSETS_0 = TopicPartition("__consumer_offsets", 0)
OFFSETS_1 = TopicPartition("__consumer_offsets", 1)
ORDERS_0 = TopicPartition("orders", 0)
TAKEN_AT = T0 + 60_000


def commit(group: str, topic: str, partition: int, offset: int, **value: int) -> tuple[bytes, bytes]:
    return offset_commit_key(group, topic, partition), offset_commit_value(offset, **value)


def partition_0_segments() -> tuple[CoordinatorLog, CoordinatorLog]:
    """A classic consumer group that rebalanced to Stable, then an aborted and a committed transaction, over
    two segments."""
    first = CoordinatorLog()
    members = [
        member("m1", subscription=consumer_subscription(["orders"])),
        member("m2", subscription=consumer_subscription(["orders", "payments"], version=3, rack_id="r1")),
    ]
    first.append(
        (
            group_metadata_key("billing"),
            group_metadata_value(protocol_type="consumer", generation=0, protocol=None),
        )
    )
    first.append(
        (
            group_metadata_key("billing"),
            group_metadata_value(generation=1, leader="m1", current_state_timestamp=T0 - 10, members=members),
        )
    )
    first.append(commit("billing", "orders", 0, 100), commit("billing", "orders", 1, 200))
    first.append(commit("billing", "orders", 0, 150), producer_id=9)
    first.marker(9, commit=False)
    second = CoordinatorLog(base_offset=first.next_offset)
    second.append(commit("billing", "payments", 0, 7, version=4))
    second.append(commit("billing", "orders", 1, 250), producer_id=10)
    second.marker(10, commit=True)
    return first, second


def partition_1_segment() -> CoordinatorLog:
    """A standalone consumer with a v1 expire timestamp and an open transaction; a KIP-848 group; a deleted
    classic group."""
    log = CoordinatorLog()
    log.append(commit("standalone", "orders", 2, 42, version=1, expire_timestamp=T0 + 1000))
    log.append(commit("standalone", "orders", 2, 43), producer_id=11)
    log.append(
        consumer_group_metadata("fraud", 2),
        target_assignment_metadata("fraud", 2),
        consumer_group_member("fraud", "f1", ["payments"]),
        current_member_assignment("fraud", "f1", member_epoch=2),
        commit("fraud", "payments", 0, 5),
    )
    log.append((group_metadata_key("gone"), group_metadata_value()), commit("gone", "orders", 0, 1))
    log.append((offset_commit_key("gone", "orders", 0), None), (group_metadata_key("gone"), None))
    return log


EXPECTED = OffsetSnapshot(
    taken_at_ms=TAKEN_AT,
    source="lake",
    groups=(
        GroupOffsets(
            group_id="billing",
            state="Stable",
            protocol_type="consumer",
            state_timestamp_ms=T0 - 10,
            subscribed_topics=("orders", "payments"),
            offsets=(
                CommittedOffset("orders", 0, 100, commit_timestamp_ms=T0),
                CommittedOffset("orders", 1, 250, commit_timestamp_ms=T0),
                CommittedOffset("payments", 0, 7, commit_timestamp_ms=T0),
            ),
        ),
        GroupOffsets(
            group_id="fraud",
            state="Stable",
            protocol_type="consumer",
            state_timestamp_ms=None,
            subscribed_topics=("payments",),
            offsets=(CommittedOffset("payments", 0, 5, commit_timestamp_ms=T0),),
            group_type=GroupType.CONSUMER,
        ),
        GroupOffsets(
            group_id="standalone",
            state="Empty",
            protocol_type=None,
            state_timestamp_ms=None,
            subscribed_topics=None,
            offsets=(
                CommittedOffset(
                    "orders",
                    2,
                    42,
                    commit_timestamp_ms=T0,
                    expire_timestamp_ms=T0 + 1000,
                    pending_transaction=True,
                ),
            ),
        ),
    ),
)


def test_adopted_consumer_offsets_partitions_give_the_groups_kafka_would_load(
    store: ObjectStore, clock: FakeClock
) -> None:
    first, second = partition_0_segments()
    upload_segment(store, OFFSETS_0, first.segment())
    upload_segment(store, OFFSETS_0, second.segment())
    upload_segment(store, OFFSETS_1, partition_1_segment().segment())
    upload_segment(store, ORDERS_0, make_segment(0))  # an ordinary topic: not read
    adopt(store, now_ms=clock(), clock=clock)
    manifest = resolve_manifest(store)
    assert {state.topic_partition for state in manifest.partitions} == {OFFSETS_0, OFFSETS_1, ORDERS_0}
    assert snapshot_from_lake(store, manifest=manifest, taken_at_ms=TAKEN_AT) == EXPECTED


def test_records_below_the_log_start_offset_are_not_replayed(store: ObjectStore, clock: FakeClock) -> None:
    log = CoordinatorLog()
    log.append(commit("old", "orders", 0, 1))  # offset 0: below the log start offset
    log.append(commit("kept", "orders", 0, 2), commit("old-in-batch", "orders", 0, 3))  # offsets 1, 2
    log.append(commit("kept", "orders", 0, 4))
    manifest = commit_lake(
        store, {OFFSETS_0: PartitionSpec([Seg.of(log.segment())], log_start_offset=2)}, clock=clock
    )
    snapshot = snapshot_from_lake(store, manifest=manifest, taken_at_ms=TAKEN_AT)
    assert [(g.group_id, [o.offset for o in g.offsets]) for g in snapshot.groups] == [
        ("kept", [4]),
        ("old-in-batch", [3]),
    ]


def test_another_topic_name_can_be_read(store: ObjectStore, clock: FakeClock) -> None:
    log = CoordinatorLog()
    log.append(commit("g", "orders", 0, 1))
    offsets = TopicPartition("offsets_archive", 3)
    manifest = commit_lake(store, {offsets: PartitionSpec([Seg.of(log.segment())])}, clock=clock)
    snapshot = snapshot_from_lake(store, manifest=manifest, taken_at_ms=TAKEN_AT, topic="offsets_archive")
    assert [g.group_id for g in snapshot.groups] == ["g"]


def test_a_lake_without_consumer_offsets_partitions_is_refused(store: ObjectStore, clock: FakeClock) -> None:
    manifest = commit_lake(store, {ORDERS_0: PartitionSpec([Seg.of(make_segment(0))])}, clock=clock)
    with pytest.raises(
        LakeSourceError, match=r"has no __consumer_offsets partitions.*topics: orders"
    ) as raised:
        snapshot_from_lake(store, manifest=manifest, taken_at_ms=TAKEN_AT)
    assert raised.value.location == store.describe()


def test_an_undecodable_value_fails_only_its_group(store: ObjectStore, clock: FakeClock) -> None:
    log = CoordinatorLog()
    log.append(commit("good", "orders", 0, 1))
    offset = log.append((offset_commit_key("bad", "orders", 0), b"\x00\x09"))
    manifest = commit_lake(
        store, {OFFSETS_1: PartitionSpec([Seg.of(log.segment(), adopted=True)])}, clock=clock
    )
    snapshot = snapshot_from_lake(store, manifest=manifest, taken_at_ms=TAKEN_AT)
    assert [g.group_id for g in snapshot.groups] == ["good"]
    [error] = snapshot.errors
    assert error.group_id == "bad"
    assert f"__consumer_offsets-1 offset {offset} (segment " in error.error
    assert "__consumer_offsets-1/00000000000000000000.log" in error.error
    assert "unknown OffsetCommitValue version 9" in error.error


def test_an_undecodable_key_fails_the_source_with_its_location(store: ObjectStore, clock: FakeClock) -> None:
    log = CoordinatorLog()
    offset = log.append((b"\x00\x01\x00", offset_commit_value(1)))
    manifest = commit_lake(
        store, {OFFSETS_0: PartitionSpec([Seg.of(log.segment(), adopted=True)])}, clock=clock
    )
    with pytest.raises(CoordinatorRecordError) as raised:
        snapshot_from_lake(store, manifest=manifest, taken_at_ms=TAKEN_AT)
    assert (raised.value.partition, raised.value.offset) == ("__consumer_offsets-0", offset)
    assert raised.value.segment is not None
    assert raised.value.segment.endswith("__consumer_offsets-0/00000000000000000000.log")


def test_a_damaged_segment_fails_the_source(store: ObjectStore, clock: FakeClock) -> None:
    log = CoordinatorLog()
    log.append(commit("g", "orders", 0, 1))
    manifest = commit_lake(
        store, {OFFSETS_0: PartitionSpec([Seg.of(log.segment(), adopted=True)])}, clock=clock
    )
    key = manifest.partitions[0].segments[0].key
    data = bytearray(store.get(key))
    data[-1] ^= 0xFF  # the bytes no longer match the manifest's checksum
    store.put(key, bytes(data))
    with pytest.raises(SegmentObjectMismatchError, match="changed"):
        snapshot_from_lake(store, manifest=manifest, taken_at_ms=TAKEN_AT)


def test_a_run_replays_the_offsets_as_of_its_now(store: ObjectStore, clock: FakeClock) -> None:
    """Records written after a run's ``now`` are not yet committed offsets at ``now`` (issue: a late run
    pinned newer offsets under its older ``now``): the commit at T0 + 1 min counts, the one at T0 + 2 min,
    and the transaction marker after it, do not."""
    log = CoordinatorLog(timestamp=T0 + 60_000)
    log.append(commit("g", "orders", 0, 10))
    log.append(commit("g", "orders", 1, 5), producer_id=9)
    log.timestamp = T0 + 120_000
    log.append(commit("g", "orders", 0, 20))
    log.marker(9, commit=True)
    manifest = commit_lake(store, {OFFSETS_0: PartitionSpec([Seg.of(log.segment())])}, clock=clock)

    def offsets(as_of: int | None) -> list[tuple[int, int]]:
        snapshot = snapshot_from_lake(store, manifest=manifest, taken_at_ms=TAKEN_AT, as_of_ms=as_of)
        return sorted((o.partition, o.offset) for group in snapshot.groups for o in group.offsets)

    assert offsets(T0 + 90_000) == [(0, 10)]  # the transactional commit is still open at now
    assert offsets(T0 + 120_000) == [(0, 20), (1, 5)]
    assert offsets(None) == [(0, 20), (1, 5)]
