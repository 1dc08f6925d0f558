"""Decoding ``__consumer_offsets`` keys and values with Kafka's group-coordinator schemas.

Three independent checks: golden bytes written by hand from the JSON schemas, the test-side encoder
(``coordinator_records``, schema-driven), and kafka-python's generic schema codec (its own implementation of
Kafka's message encodings, and its own copy of ``ConsumerProtocolSubscription.json``).
"""

from __future__ import annotations

import io
import warnings
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from kafka_segments.coordinator.fields import CoordinatorSchemaError
from kafka_segments.coordinator.keys import (
    ConsumerGroupRecordKey,
    GroupMetadataKey,
    OffsetCommitKey,
    UnknownRecordKey,
    decode_key,
)
from kafka_segments.coordinator.values import (
    ConsumerGroupCurrentMemberAssignmentValue,
    ConsumerGroupMemberMetadataValue,
    ConsumerGroupMetadataValue,
    ConsumerGroupRegularExpressionValue,
    ConsumerGroupTargetAssignmentMetadataValue,
    CoordinatorValue,
    GroupMetadataValue,
    MemberMetadata,
    OffsetCommitValue,
    OpaqueValue,
    decode_subscription_topics,
    decode_value,
)
from unit.coordinator_records import (
    CONSUMER_GROUP_MEMBER_METADATA_VALUE,
    GROUP_METADATA_VALUE,
    OFFSET_COMMIT_VALUE,
    consumer_group_member,
    consumer_group_metadata,
    consumer_subscription,
    current_member_assignment,
    group_metadata_key,
    group_metadata_value,
    member,
    offset_commit_key,
    offset_commit_value,
    partition_metadata,
    regular_expression,
    target_assignment_member,
    target_assignment_metadata,
)

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)  # kafka/__init__ imports its admin client
    from kafka.protocol.consumer.metadata import ConsumerProtocolSubscription
    from kafka.protocol.data_container import DataContainer
    from kafka.protocol.schemas import StructField

pytestmark = pytest.mark.unit

INT32 = st.integers(-(2**31), 2**31 - 1)
INT64 = st.integers(-(2**63), 2**63 - 1)
TEXT = st.text(max_size=16)
OPT_TEXT = st.none() | TEXT


def h(text: str) -> bytes:
    """Hex with spaces and ``|`` separators, as the golden bytes are written."""
    return bytes.fromhex(text.replace("|", " "))


def s16(text: str) -> str:
    """A non-flexible string: int16 length + UTF-8, as hex."""
    data = text.encode()
    return f"{len(data):04x}" + data.hex()


def value_of(key: bytes, value: bytes | None) -> CoordinatorValue | None:
    return decode_value(decode_key(key), value)


# --------------------------------------------------------------------------------------------- golden bytes


def test_offset_commit_key_golden_bytes_types_1_and_0() -> None:
    golden = h("0001 | 0002 6731 | 0001 74 | 00000003")
    assert offset_commit_key("g1", "t", 3) == golden
    assert decode_key(golden) == OffsetCommitKey(1, "g1", "t", 3)
    legacy = h("0000 | 0002 6731 | 0001 74 | 00000003")
    assert offset_commit_key("g1", "t", 3, record_type=0) == legacy
    assert decode_key(legacy) == OffsetCommitKey(0, "g1", "t", 3)


@pytest.mark.parametrize(
    ("golden", "expected", "encoded"),
    [
        (
            "0000 | 0000000000000064 | 0002 6162 | 00000000000003e8",
            OffsetCommitValue(0, 100, -1, "ab", 1000, -1),
            offset_commit_value(100, version=0, metadata="ab", commit_timestamp=1000),
        ),
        (
            "0001 | 0000000000000064 | 0000 | 00000000000003e8 | 00000000000007d0",
            OffsetCommitValue(1, 100, -1, "", 1000, 2000),
            offset_commit_value(100, version=1, commit_timestamp=1000, expire_timestamp=2000),
        ),
        (
            "0003 | 0000000000000064 | 00000005 | 0001 6d | 00000000000003e8",
            OffsetCommitValue(3, 100, 5, "m", 1000, -1),
            offset_commit_value(100, version=3, leader_epoch=5, metadata="m", commit_timestamp=1000),
        ),
        (  # flexible: compact string, then one unknown tagged field (tag 7, 2 bytes) that must be skipped
            "0004 | 0000000000000064 | ffffffff | 02 6d | 00000000000003e8 | 01 07 02 7a7a",
            OffsetCommitValue(4, 100, -1, "m", 1000, -1),
            offset_commit_value(100, version=4, metadata="m", commit_timestamp=1000, extra_tags={7: b"zz"}),
        ),
    ],
)
def test_offset_commit_value_golden_bytes(golden: str, expected: OffsetCommitValue, encoded: bytes) -> None:
    assert encoded == h(golden)
    assert value_of(offset_commit_key("g", "t", 0), h(golden)) == expected


SUBSCRIPTION_V0 = "0000 | 00000001 | 0001 74 | ffffffff"  # topics ["t"], userData null


def test_group_metadata_value_v3_golden_bytes() -> None:
    golden = h(
        f"0003 | {s16('consumer')} | 00000002 | {s16('range')} | {s16('m1')} | 0000000000001388 | 00000001"
        f" | {s16('m1')} | ffff | {s16('c')} | {s16('h')} | 000493e0 | 0000afc8"
        f" | 0000000d {SUBSCRIPTION_V0} | 00000000"
    )
    subscription = h(SUBSCRIPTION_V0)
    encoded = group_metadata_value(
        version=3,
        generation=2,
        leader="m1",
        current_state_timestamp=5000,
        members=[member("m1", client_id="c", client_host="h", subscription=subscription)],
    )
    assert encoded == golden
    assert group_metadata_key("g1") == h("0002 | 0002 6731")
    assert value_of(group_metadata_key("g1"), golden) == GroupMetadataValue(
        3,
        "consumer",
        2,
        "range",
        "m1",
        5000,
        (MemberMetadata("m1", None, "c", "h", 300_000, 45_000, subscription, b""),),
    )


def test_group_metadata_value_v4_golden_bytes_of_an_empty_group() -> None:
    # protocolType "" (compact: 01), generation 0, protocol and leader null (00), ts 7000, no members (01),
    # no tagged fields (00): what newEmptyGroupMetadataRecord writes, in the flexible version.
    golden = h("0004 | 01 | 00000000 | 00 | 00 | 0000000000001b58 | 01 | 00")
    encoded = group_metadata_value(
        version=4, protocol_type="", generation=0, protocol=None, current_state_timestamp=7000
    )
    assert encoded == golden
    assert value_of(group_metadata_key("g"), golden) == GroupMetadataValue(4, "", 0, None, None, 7000, ())


def test_consumer_group_records_golden_bytes() -> None:
    key, value = consumer_group_metadata("cg", 9, metadata_hash=0x4D)
    assert key == h("0003 | 0002 6367")
    assert value == h("0000 | 00000009 | 01 00 08 000000000000004d")  # MetadataHash is tag 0
    assert value_of(key, value) == ConsumerGroupMetadataValue(9)

    key, value = consumer_group_member("cg", "m", ["t"])
    assert key == h("0005 | 0002 6367 | 0001 6d")
    # InstanceId, RackId null; ClientId "client", ClientHost "/10.0.0.2"; topics ["t"]; regex null;
    # RebalanceTimeoutMs 300000; ServerAssignor "uniform"; no tagged fields
    golden = (
        "0000 | 00 | 00 | 07 636c69656e74 | 0a 2f31302e302e302e32 | 02 02 74 | 00 | 000493e0"
        " | 08 756e69666f726d | 00"
    )
    assert value == h(golden)
    assert decode_key(key) == ConsumerGroupRecordKey(5, "cg", member_id="m")
    assert value_of(key, value) == ConsumerGroupMemberMetadataValue(
        None, None, "client", "/10.0.0.2", ("t",), None, 300_000, "uniform"
    )


def test_consumer_protocol_subscription_golden_bytes() -> None:
    golden = h("0001 | 00000002 | 0001 61 | 0001 62 | ffffffff | 00000001 | 0001 61 | 00000001 | 00000000")
    assert consumer_subscription(["a", "b"], owned_partitions=[("a", [0])]) == golden
    assert decode_subscription_topics(golden) == ("a", "b")


# --------------------------------------------------------------------------------------------- all versions


@pytest.mark.parametrize("version", range(5))
def test_every_offset_commit_value_version(version: int) -> None:
    value = offset_commit_value(
        42, version=version, leader_epoch=7, metadata="meta", commit_timestamp=11, expire_timestamp=99
    )
    assert value_of(offset_commit_key("g", "t", 1), value) == OffsetCommitValue(
        version,
        42,
        7 if version >= 3 else -1,
        "meta",
        11,
        99 if version == 1 else -1,
    )


@pytest.mark.parametrize("version", range(5))
def test_every_group_metadata_value_version_with_members(version: int) -> None:
    members = [
        member("m1", group_instance_id="static-1", subscription=b"\x01\x02", assignment=b"\x03"),
        member("m2", rebalance_timeout=60_000, session_timeout=10_000),
    ]
    value = group_metadata_value(
        version=version, generation=5, leader="m1", current_state_timestamp=1234, members=members
    )
    decoded = value_of(group_metadata_key("g"), value)
    assert isinstance(decoded, GroupMetadataValue)
    assert (decoded.version, decoded.protocol_type, decoded.generation, decoded.protocol, decoded.leader) == (
        version,
        "consumer",
        5,
        "range",
        "m1",
    )
    assert decoded.current_state_timestamp == (1234 if version >= 2 else -1)
    first, second = decoded.members
    assert first.group_instance_id == ("static-1" if version >= 3 else None)
    assert (first.subscription, first.assignment) == (b"\x01\x02", b"\x03")
    assert (second.rebalance_timeout, second.session_timeout) == (60_000 if version >= 1 else -1, 10_000)


def test_group_metadata_v4_skips_tagged_fields_of_the_value_and_of_members() -> None:
    value = group_metadata_value(version=4, members=[member("m1")], extra_tags={0: b"abc", 9: b""})
    decoded = value_of(group_metadata_key("g"), value)
    assert isinstance(decoded, GroupMetadataValue)
    assert decoded.members[0].member_id == "m1"
    # a tagged field inside the member struct: patch the member's empty tag section (its last byte before
    # the value's own tag section) into one tag of 3 bytes
    plain = group_metadata_value(version=4, members=[member("m1")])
    patched = plain[:-2] + bytes([1, 5, 3]) + b"xyz" + plain[-1:]
    decoded = value_of(group_metadata_key("g"), patched)
    assert isinstance(decoded, GroupMetadataValue)
    assert decoded.members[0].assignment == b""


def test_kip_848_records() -> None:
    key, value = target_assignment_metadata("cg", 4)
    assert value_of(key, value) == ConsumerGroupTargetAssignmentMetadataValue(4)
    key, value = current_member_assignment("cg", "m", member_epoch=4, state=2, previous_member_epoch=3)
    assert decode_key(key) == ConsumerGroupRecordKey(8, "cg", member_id="m")
    assert value_of(key, value) == ConsumerGroupCurrentMemberAssignmentValue(4, 3, 2)
    key, value = regular_expression("cg", "orders-.*", ["orders-eu", "orders-us"])
    assert decode_key(key) == ConsumerGroupRecordKey(16, "cg", regular_expression="orders-.*")
    assert value_of(key, value) == ConsumerGroupRegularExpressionValue(
        ("orders-eu", "orders-us"), 7, 1_763_700_000_000
    )
    for key, value in (target_assignment_member("cg", "m"), partition_metadata("cg")):
        decoded_key = decode_key(key)
        assert isinstance(decoded_key, ConsumerGroupRecordKey)
        assert value_of(key, value) == OpaqueValue(decoded_key.record_type, 0)


def test_tombstones_decode_to_none() -> None:
    assert value_of(offset_commit_key("g", "t", 0), None) is None
    assert value_of(group_metadata_key("g"), None) is None
    assert value_of(consumer_group_metadata("cg", 1)[0], None) is None


@pytest.mark.parametrize("record_type", [9, 15, 17, 255, 32767, -1])
def test_unknown_record_types_are_not_decoded(record_type: int) -> None:
    key = record_type.to_bytes(2, "big", signed=True) + b"\x00\x01g\xff\xff"
    assert decode_key(key) == UnknownRecordKey(record_type)
    assert decode_value(UnknownRecordKey(record_type), b"\x00\x00garbage") is None


# --------------------------------------------------------------------------------------------- subscriptions


@pytest.mark.parametrize("version", range(4))
def test_subscription_topics_of_every_version_written_by_kafka_python(version: int) -> None:
    subscription = ConsumerProtocolSubscription(
        version=version,
        topics=["orders", "payments"],
        user_data=b"\x00\x01",
        owned_partitions=[ConsumerProtocolSubscription.TopicPartition(topic="orders", partitions=[0, 2])],
        generation_id=12,
        rack_id="rack-a",
    )
    data = subscription.encode()
    assert decode_subscription_topics(data) == ("orders", "payments")
    assert (
        consumer_subscription(
            ["orders", "payments"],
            version=version,
            user_data=b"\x00\x01",
            owned_partitions=[("orders", [0, 2])],
            generation_id=12,
            rack_id="rack-a",
        )
        == data
    )


def test_subscription_of_a_future_version_is_read_as_its_v0_prefix() -> None:
    data = consumer_subscription(["a"], version=3, rack_id="r")
    future = (9).to_bytes(2, "big") + data[2:] + b"\x00\x00\x00\x05fields"
    assert decode_subscription_topics(future) == ("a",)


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"\x00",
        h("ffff | 00000000 | ffffffff"),
        h("0000 | 00000002 | 0001 61"),
        h("0000 | ffffffff"),
        h("0000 | 00000001 | 0001 61 | 00000005 6162"),
    ],
    ids=[
        "empty",
        "half-version",
        "negative-version",
        "truncated-topics",
        "null-topics",
        "truncated-user-data",
    ],
)
def test_malformed_subscriptions_are_errors(data: bytes) -> None:
    with pytest.raises(CoordinatorSchemaError):
        decode_subscription_topics(data)


# --------------------------------------------------------------------------------------------- corruption


def test_truncated_keys_and_values_at_every_length_are_errors() -> None:
    key = offset_commit_key("group", "topic", 3)
    value = offset_commit_value(1, version=4, metadata="meta", extra_tags={1: b"x"})
    for length in range(len(key)):
        with pytest.raises(CoordinatorSchemaError):
            decode_key(key[:length])
    decoded_key = decode_key(key)
    for length in range(len(value)):
        with pytest.raises(CoordinatorSchemaError):
            decode_value(decoded_key, value[:length])
    gm = group_metadata_value(version=3, members=[member("m1", subscription=b"abc")])
    for length in range(len(gm)):
        with pytest.raises(CoordinatorSchemaError):
            decode_value(GroupMetadataKey("g"), gm[:length])


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        (
            offset_commit_key("g", "t", 0),
            h("0005 | 00"),
            "unknown OffsetCommitValue version 5 (valid versions: 0-4)",
        ),
        (offset_commit_key("g", "t", 0), h("ffff | 00"), "unknown OffsetCommitValue version -1"),
        (group_metadata_key("g"), h("0009"), "unknown GroupMetadataValue version 9"),
        (
            consumer_group_metadata("g", 1)[0],
            h("0001 | 00000001 | 00"),
            "ConsumerGroupMetadataValue version 1",
        ),
        (
            offset_commit_key("g", "t", 0),
            h("0000 | 0000000000000001 | 0400 | 00"),
            "metadata: needs 1024 bytes",
        ),
        (offset_commit_key("g", "t", 0), h("0000 | 0000000000000001 | ffff"), "non-nullable field metadata"),
        (
            group_metadata_key("g"),
            h("0003 | 0000 | 00000000 | ffff | ffff | 0000000000000000 | 7fffffff"),
            "members",
        ),
        (
            offset_commit_key("g", "t", 0),
            h("0004 | 0000000000000001 | 00000000 | 00"),
            "non-nullable field metadata",
        ),
        (
            offset_commit_key("g", "t", 0),
            h("0004 | 0000000000000001 | 00000000 | ffffffffff"),
            "longer than 5",
        ),
        (
            offset_commit_key("g", "t", 0),
            h("0004 | 0000000000000001 | 00000000 | 818002") + bytes(40000),
            "metadata: string length 32768 exceeds 32767",
        ),
    ],
    ids=[
        "version-too-high",
        "negative-version",
        "group-version",
        "kip-848-version",
        "string-too-long",
        "null-string",
        "huge-array",
        "null-compact-string",
        "bad-varint",
        "compact-string-too-long",
    ],
)
def test_malformed_values_are_errors_naming_what_is_wrong(key: bytes, value: bytes, message: str) -> None:
    with pytest.raises(CoordinatorSchemaError, match=message.replace("(", r"\(").replace(")", r"\)")):
        value_of(key, value)


@pytest.mark.parametrize(
    ("key", "message"),
    [
        (None, "has no key"),
        (b"", "record type"),
        (h("0001 | 0005 61"), "group: needs 5 bytes"),
        (h("0002 | ffff"), "null"),
    ],
)
def test_malformed_keys_are_errors(key: bytes | None, message: str) -> None:
    with pytest.raises(CoordinatorSchemaError, match=message):
        decode_key(key)


def test_a_five_byte_varint_is_read_as_a_java_int() -> None:
    # 80 80 80 80 20 is 2**33, which overflows Java's int to 0: a compact length of -1, a null string
    value = h("0004 | 01 | 00000000 | 8080808020 | 00 | 0000000000000000 | 01 | 00")
    decoded = value_of(group_metadata_key("g"), value)
    assert isinstance(decoded, GroupMetadataValue)
    assert decoded.protocol is None


def test_trailing_bytes_after_a_struct_are_ignored_as_by_kafka() -> None:
    value = offset_commit_value(5, version=3) + b"\x00\x01trailing"
    assert value_of(offset_commit_key("g", "t", 0), value) == OffsetCommitValue(
        3, 5, -1, "", 1_763_700_000_000, -1
    )


def test_invalid_utf8_decodes_with_replacement_characters_as_java() -> None:
    key = h("0002 | 0002 ff67")
    assert decode_key(key) == GroupMetadataKey("\ufffdg")


# --------------------------------------------------------------------------------------------- kafka-python


def kafka_python_struct(schema: dict[str, Any], name: str) -> tuple[StructField, type[DataContainer]]:
    """kafka-python's generic codec for one schema (it snake-cases field names)."""
    struct_field = StructField({"name": name, "type": "data", **schema})
    data_class = type(name, (DataContainer,), {"_struct": struct_field})
    struct_field.set_data_class(data_class)
    return struct_field, data_class


@given(
    version=st.integers(0, 4),
    offset=INT64,
    leader_epoch=INT32,
    metadata=TEXT,
    commit_timestamp=INT64,
    expire_timestamp=INT64,
)
def test_offset_commit_values_written_by_kafka_python(
    version: int, offset: int, leader_epoch: int, metadata: str, commit_timestamp: int, expire_timestamp: int
) -> None:
    codec, data_class = kafka_python_struct(OFFSET_COMMIT_VALUE, "OffsetCommitValue")
    flexible = version >= 4
    written = data_class(
        version=version,
        offset=offset,
        leader_epoch=leader_epoch,
        metadata=metadata,
        commit_timestamp=commit_timestamp,
        expire_timestamp=expire_timestamp,
    )
    data = version.to_bytes(2, "big") + codec.encode(
        written, version=version, compact=flexible, tagged=flexible
    )
    decoded = value_of(offset_commit_key("g", "t", 0), data)
    assert decoded == OffsetCommitValue(
        version,
        offset,
        leader_epoch if version >= 3 else -1,
        metadata,
        commit_timestamp,
        expire_timestamp if version == 1 else -1,
    )
    ours = offset_commit_value(
        offset,
        version=version,
        leader_epoch=leader_epoch,
        metadata=metadata,
        commit_timestamp=commit_timestamp,
        expire_timestamp=expire_timestamp,
    )
    assert ours == data


members_strategy = st.lists(
    st.builds(
        member,
        TEXT,
        subscription=st.binary(max_size=20),
        assignment=st.binary(max_size=20),
        group_instance_id=OPT_TEXT,
        client_id=TEXT,
        client_host=TEXT,
        rebalance_timeout=INT32,
        session_timeout=INT32,
    ),
    max_size=3,
)


@given(
    version=st.integers(0, 4),
    protocol_type=TEXT,
    generation=INT32,
    protocol=OPT_TEXT,
    leader=OPT_TEXT,
    current_state_timestamp=INT64,
    members=members_strategy,
)
def test_group_metadata_values_round_trip_and_match_kafka_python(
    version: int,
    protocol_type: str,
    generation: int,
    protocol: str | None,
    leader: str | None,
    current_state_timestamp: int,
    members: list[dict[str, Any]],
) -> None:
    data = group_metadata_value(
        version=version,
        protocol_type=protocol_type,
        generation=generation,
        protocol=protocol,
        leader=leader,
        current_state_timestamp=current_state_timestamp,
        members=members,
    )
    decoded = value_of(group_metadata_key("g"), data)
    assert decoded == GroupMetadataValue(
        version,
        protocol_type,
        generation,
        protocol,
        leader,
        current_state_timestamp if version >= 2 else -1,
        tuple(
            MemberMetadata(
                m["memberId"],
                m["groupInstanceId"] if version >= 3 else None,
                m["clientId"],
                m["clientHost"],
                m["rebalanceTimeout"] if version >= 1 else -1,
                m["sessionTimeout"],
                m["subscription"],
                m["assignment"],
            )
            for m in members
        ),
    )
    codec, _ = kafka_python_struct(GROUP_METADATA_VALUE, "GroupMetadataValue")
    flexible = version >= 4
    theirs = codec.decode(io.BytesIO(data[2:]), version=version, compact=flexible, tagged=flexible)
    assert (theirs.protocol_type, theirs.generation, theirs.protocol, theirs.leader) == (
        protocol_type,
        generation,
        protocol,
        leader,
    )
    assert [m.member_id for m in theirs.members] == [m["memberId"] for m in members]


@given(
    group=TEXT,
    topic=TEXT,
    partition=INT32,
    record_type=st.sampled_from([0, 1]),
)
def test_offset_commit_keys_round_trip(group: str, topic: str, partition: int, record_type: int) -> None:
    key = offset_commit_key(group, topic, partition, record_type=record_type)
    assert decode_key(key) == OffsetCommitKey(record_type, group, topic, partition)


@given(
    topics=st.lists(TEXT, max_size=5),
    regex=OPT_TEXT,
    tags=st.dictionaries(st.integers(0, 300), st.binary(max_size=10), max_size=3),
)
def test_kip_848_member_metadata_round_trips_with_unknown_tags(
    topics: list[str], regex: str | None, tags: dict[int, bytes]
) -> None:
    key, _ = consumer_group_member("cg", "m", topics)
    values = {
        "InstanceId": None,
        "RackId": "r",
        "ClientId": "c",
        "ClientHost": "h",
        "SubscribedTopicNames": topics,
        "SubscribedTopicRegex": regex,
        "RebalanceTimeoutMs": 5,
        "ServerAssignor": None,
    }
    from unit.coordinator_records import encode_value

    value = encode_value(CONSUMER_GROUP_MEMBER_METADATA_VALUE, values, version=0, extra_tags=tags)
    assert value_of(key, value) == ConsumerGroupMemberMetadataValue(
        None, "r", "c", "h", tuple(topics), regex, 5, None
    )


@given(
    topics=st.lists(TEXT, max_size=5), version=st.integers(0, 3), user_data=st.none() | st.binary(max_size=8)
)
def test_subscription_topics_round_trip(topics: list[str], version: int, user_data: bytes | None) -> None:
    data = consumer_subscription(topics, version=version, user_data=user_data)
    assert decode_subscription_topics(data) == tuple(topics)
