"""Writing ``__consumer_offsets`` records: golden bytes from the JSON schemas, round trips through the
library's decoders (``coordinator.keys``, ``coordinator.values``) and replay (``coordinator.replay``), and
agreement with the test-side schema-driven encoder (``coordinator_records``), which shares no code with the
writer."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st
from kafka_segments.coordinator.keys import GroupMetadataKey, OffsetCommitKey, decode_key
from kafka_segments.coordinator.replay import replay_log
from kafka_segments.coordinator.values import (
    GroupMetadataValue,
    MemberMetadata,
    OffsetCommitValue,
    decode_subscription_topics,
    decode_value,
)
from kafka_segments.coordinator.writer import (
    CoordinatorEncodeError,
    GroupMember,
    GroupMetadata,
    OffsetCommit,
    consumer_assignment,
    consumer_subscription,
    group_metadata_key,
    group_metadata_record,
    group_metadata_tombstone,
    group_metadata_value,
    java_string_hash,
    offset_commit_key,
    offset_commit_record,
    offset_commit_tombstone,
    offset_commit_value,
    partition_for_group,
)
from kafka_segments.records.builder import build_batch
from kafka_segments.records.record import Record
from unit import coordinator_records as reference

pytestmark = pytest.mark.unit

INT32 = st.integers(-(2**31), 2**31 - 1)
INT64 = st.integers(-(2**63), 2**63 - 1)
TEXT = st.text(max_size=12)
T0 = 1_763_700_000_000


def _s(text: str) -> bytes:
    data = text.encode()
    return struct.pack(">h", len(data)) + data


# ------------------------------------------------------------------------------------------- golden bytes


def test_offset_commit_key_is_record_type_1_then_group_topic_partition() -> None:
    assert offset_commit_key("g", "t", 7) == b"\x00\x01" + _s("g") + _s("t") + b"\x00\x00\x00\x07"


def test_offset_commit_value_is_written_as_v3_without_an_expire_timestamp() -> None:
    value = offset_commit_value(OffsetCommit("g", "t", 0, 42, T0, metadata="m", leader_epoch=5))
    assert value == (
        b"\x00\x03" + struct.pack(">q", 42) + struct.pack(">i", 5) + _s("m") + struct.pack(">q", T0)
    )


def test_offset_commit_value_is_written_as_v1_with_an_explicit_expire_timestamp() -> None:
    """``offsetCommitValueVersion(true) == 1``: the only version with expireTimestamp (no leaderEpoch)."""
    value = offset_commit_value(OffsetCommit("g", "t", 0, 42, T0, expire_timestamp_ms=T0 + 1))
    assert value == (
        b"\x00\x01" + struct.pack(">q", 42) + _s("") + struct.pack(">q", T0) + struct.pack(">q", T0 + 1)
    )


def test_group_metadata_key_is_record_type_2_then_group() -> None:
    assert group_metadata_key("billing") == b"\x00\x02" + _s("billing")


def test_empty_group_metadata_value_v3() -> None:
    value = group_metadata_value(GroupMetadata("g", generation=4, current_state_timestamp_ms=T0))
    null_string = b"\xff\xff"
    assert value == (
        b"\x00\x03"
        + _s("consumer")
        + struct.pack(">i", 4)
        + null_string
        + null_string
        + struct.pack(">q", T0)
        + struct.pack(">i", 0)
    )


def test_member_metadata_v3_fields_in_schema_order() -> None:
    member = GroupMember(
        "m-1", "client", "/10.0.0.1", b"S", b"AB", rebalance_timeout_ms=7, session_timeout_ms=9
    )
    value = group_metadata_value(
        GroupMetadata("g", generation=1, protocol="range", leader="m-1", members=(member,))
    )
    member_bytes = (
        _s("m-1")
        + b"\xff\xff"  # groupInstanceId null (v3+)
        + _s("client")
        + _s("/10.0.0.1")
        + struct.pack(">ii", 7, 9)
        + struct.pack(">i", 1)
        + b"S"
        + struct.pack(">i", 2)
        + b"AB"
    )
    assert value.endswith(struct.pack(">i", 1) + member_bytes)


def test_consumer_subscription_v3_and_assignment_v3() -> None:
    subscription = consumer_subscription(["a"], owned_partitions={"a": [0]}, generation_id=3, rack_id="r")
    assert subscription == (
        b"\x00\x03"
        + struct.pack(">i", 1)
        + _s("a")
        + struct.pack(">i", -1)  # UserData null
        + struct.pack(">i", 1)
        + _s("a")
        + struct.pack(">ii", 1, 0)
        + struct.pack(">i", 3)
        + _s("r")
    )
    assert consumer_assignment({"a": [0, 2]}) == (
        b"\x00\x03" + struct.pack(">i", 1) + _s("a") + struct.pack(">iii", 2, 0, 2) + struct.pack(">i", -1)
    )


def test_tombstones_have_the_key_and_no_value() -> None:
    assert offset_commit_tombstone("g", "t", 1).value is None
    assert offset_commit_tombstone("g", "t", 1).key == offset_commit_key("g", "t", 1)
    assert group_metadata_tombstone("g").value is None


# ----------------------------------------------------------------------------------------- agreement checks


@given(group=TEXT, topic=TEXT, partition=INT32)
def test_offset_commit_key_round_trips_through_the_decoder(group: str, topic: str, partition: int) -> None:
    key = offset_commit_key(group, topic, partition)
    assert decode_key(key) == OffsetCommitKey(1, group, topic, partition)
    assert key == reference.offset_commit_key(group, topic, partition)


@given(offset=INT64, epoch=INT32, metadata=TEXT, committed=INT64, expire=st.none() | INT64)
def test_offset_commit_value_round_trips_and_matches_the_schema_encoder(
    offset: int, epoch: int, metadata: str, committed: int, expire: int | None
) -> None:
    commit = OffsetCommit("g", "t", 0, offset, committed, metadata, epoch, expire)
    value = offset_commit_value(commit)
    decoded = decode_value(OffsetCommitKey(1, "g", "t", 0), value)
    version = 3 if expire is None else 1
    assert decoded == OffsetCommitValue(
        version,
        offset,
        epoch if expire is None else -1,
        metadata,
        committed,
        -1 if expire is None else expire,
    )
    assert value == reference.offset_commit_value(
        offset,
        version=version,
        commit_timestamp=committed,
        metadata=metadata,
        leader_epoch=epoch,
        expire_timestamp=-1 if expire is None else expire,
    )


members = st.builds(
    GroupMember,
    member_id=TEXT,
    client_id=TEXT,
    client_host=TEXT,
    subscription=st.binary(max_size=8),
    assignment=st.binary(max_size=8),
    group_instance_id=st.none() | TEXT,
    rebalance_timeout_ms=INT32,
    session_timeout_ms=INT32,
)


@given(
    metadata=st.builds(
        GroupMetadata,
        group=TEXT,
        protocol_type=TEXT,
        generation=INT32,
        protocol=st.none() | TEXT,
        leader=st.none() | TEXT,
        current_state_timestamp_ms=INT64,
        members=st.lists(members, max_size=3).map(tuple),
    )
)
def test_group_metadata_round_trips_and_matches_the_schema_encoder(metadata: GroupMetadata) -> None:
    record = group_metadata_record(metadata)
    key = decode_key(record.key)
    assert key == GroupMetadataKey(metadata.group)
    decoded = decode_value(key, record.value)
    assert decoded == GroupMetadataValue(
        3,
        metadata.protocol_type,
        metadata.generation,
        metadata.protocol,
        metadata.leader,
        metadata.current_state_timestamp_ms,
        tuple(
            MemberMetadata(
                m.member_id,
                m.group_instance_id,
                m.client_id,
                m.client_host,
                m.rebalance_timeout_ms,
                m.session_timeout_ms,
                m.subscription,
                m.assignment,
            )
            for m in metadata.members
        ),
    )
    assert record.value == reference.group_metadata_value(
        protocol_type=metadata.protocol_type,
        generation=metadata.generation,
        protocol=metadata.protocol,
        leader=metadata.leader,
        current_state_timestamp=metadata.current_state_timestamp_ms,
        members=[
            reference.member(
                m.member_id,
                subscription=m.subscription,
                assignment=m.assignment,
                group_instance_id=m.group_instance_id,
                client_id=m.client_id,
                client_host=m.client_host,
                rebalance_timeout=m.rebalance_timeout_ms,
                session_timeout=m.session_timeout_ms,
            )
            for m in metadata.members
        ],
    )


@given(topics=st.lists(TEXT, max_size=4), generation=INT32, rack=st.none() | TEXT)
def test_subscription_topics_decode_and_match_the_schema_encoder(
    topics: list[str], generation: int, rack: str | None
) -> None:
    data = consumer_subscription(
        topics, owned_partitions={"t": [1, 2]}, generation_id=generation, rack_id=rack
    )
    assert decode_subscription_topics(data) == tuple(topics)
    assert data == reference.consumer_subscription(
        topics, version=3, owned_partitions=[("t", [1, 2])], generation_id=generation, rack_id=rack
    )


def test_a_written_log_replays_into_the_groups_it_describes() -> None:
    """Commits, a later commit of the same partition, an offset deletion and an empty group, replayed as the
    coordinator loads them."""
    stable = GroupMetadata(
        "billing",
        generation=3,
        protocol="range",
        leader="m-1",
        current_state_timestamp_ms=T0,
        members=(
            GroupMember(
                "m-1", "c", "/h", consumer_subscription(["clicks"]), consumer_assignment({"clicks": [0, 1]})
            ),
        ),
    )
    empty = GroupMetadata("audit", generation=9, current_state_timestamp_ms=T0 - 5)
    records = [
        group_metadata_record(stable),
        offset_commit_record(OffsetCommit("billing", "clicks", 0, 10, T0)),
        offset_commit_record(OffsetCommit("billing", "clicks", 1, 4, T0)),
        offset_commit_record(OffsetCommit("billing", "clicks", 0, 12, T0 + 1)),
        offset_commit_tombstone("billing", "clicks", 1),
        group_metadata_record(empty),
        offset_commit_record(OffsetCommit("audit", "clicks", 0, 3, T0 - 9)),
    ]
    log = build_batch([Record(i, T0, r.key, r.value) for i, r in enumerate(records)])
    result = replay_log(log, partition="__consumer_offsets-0")
    groups = {g.group_id: g for g in result.groups}
    assert groups["billing"].state == "Stable"
    assert groups["billing"].subscribed_topics == ("clicks",)
    assert [(o.partition, o.offset, o.commit_timestamp_ms) for o in groups["billing"].offsets] == [
        (0, 12, T0 + 1)
    ]
    assert groups["audit"].state == "Empty"
    assert groups["audit"].protocol_type == "consumer"
    assert groups["audit"].state_timestamp_ms == T0 - 5


# ------------------------------------------------------------------------------------------- placement


@pytest.mark.parametrize(
    ("text", "expected"),
    [("", 0), ("a", 97), ("hello", 99162322), ("polygenelubricants", -(2**31)), ("\U0001f600", 1772899)],
)
def test_java_string_hash_matches_java(text: str, expected: int) -> None:
    """Known ``String.hashCode`` values; the emoji is one code point but two UTF-16 units (0xD83D 0xDE00)."""
    assert java_string_hash(text) == expected


def test_partition_for_group_is_abs_hash_modulo_partitions() -> None:
    assert partition_for_group("polygenelubricants") == 0  # Utils.abs(Integer.MIN_VALUE) == 0
    assert partition_for_group("billing") == 9  # -109829509 → 109829509 % 50
    assert partition_for_group("billing", partitions=7) == 109829509 % 7


@given(group=st.text(max_size=20), partitions=st.integers(1, 200))
def test_partition_for_group_is_in_range(group: str, partitions: int) -> None:
    assert 0 <= partition_for_group(group, partitions=partitions) < partitions


# ---------------------------------------------------------------------------------------------------- errors


def test_a_string_longer_than_32767_bytes_is_refused_naming_the_field() -> None:
    with pytest.raises(CoordinatorEncodeError, match=r"OffsetCommitKey\.topic: is too long"):
        offset_commit_key("g", "x" * 32768, 0)


def test_an_int_out_of_range_is_refused_naming_the_field() -> None:
    with pytest.raises(CoordinatorEncodeError, match=r"OffsetCommitKey\.partition: 2147483648 does not fit"):
        offset_commit_key("g", "t", 2**31)


def test_zero_offsets_partitions_is_refused() -> None:
    with pytest.raises(CoordinatorEncodeError, match=r"offsets\.topic\.num\.partitions"):
        partition_for_group("g", partitions=0)
