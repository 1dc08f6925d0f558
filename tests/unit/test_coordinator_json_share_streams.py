"""``kafka-dump-log.sh --offsets-decoder`` lines for the share-group (KIP-932, types 10-15) and
streams-group (KIP-1071, types 17, 19-23) records, ``--share-group-state-decoder`` lines for
``__share_group_state``, and the presence of nullable struct fields.

The records are written by the test-side encoder (``unit.coordinator_records``) from its transcriptions of
Kafka 4.1's JSON definitions (``unit.coordinator_records_groups``); the expected lines follow the generated
``*JsonConverter.write`` methods ``CoordinatorRecordJsonConverters`` calls (camelCase names in schema order, a
tagged field only when not its default, null for a null nullable field, a uuid as ``Uuid.toString``, int8,
int16 and uint16 as numbers). Types 9 and 18 (the share and streams partition metadata KIP-1101 removed) are
unknown to Kafka 4.1 and print as such."""

from __future__ import annotations

import struct
from collections.abc import Mapping
from typing import Any

import pytest
from kafka_segments.coordinator.dump_log import (
    DELETE,
    parse_offsets_record,
    parse_share_group_state_record,
)
from unit.coordinator_records import (
    CONSUMER_GROUP_MEMBER_METADATA_VALUE,
    GROUP_KEY,
    GROUP_MEMBER_KEY,
    T0,
    Schema,
    _f,
    encode_key,
    encode_value,
    uvarint,
)
from unit.coordinator_records_groups import RECORDS, SHARE_PARTITION_KEY, SHARE_STATE_RECORDS

TOPIC_ID = bytes(range(16))
TOPIC_ID_TEXT = "AAECAwQFBgcICQoLDA0ODw"
ZERO_ID_TEXT = "AAAAAAAAAAAAAAAAAAAAAA"
GROUP = {"GroupId": "g"}
MEMBER = {"GroupId": "g", "MemberId": "m1"}


def _record(
    record_type: int, key: Mapping[str, Any], value: Mapping[str, Any] | None
) -> tuple[bytes, bytes | None]:
    key_schema, value_schema = RECORDS[record_type]
    encoded = None if value is None else encode_value(value_schema, value, version=0)
    return encode_key(record_type, key_schema, key), encoded


def _line(
    record_type: int, key: Mapping[str, Any], value: Mapping[str, Any] | None
) -> tuple[str, str | None]:
    return parse_offsets_record(*_record(record_type, key, value), offset=0)


def _tasks(*partitions: int) -> list[dict[str, Any]]:
    return [{"SubtopologyId": "0", "Partitions": list(partitions)}]


TASKS_TEXT = '[{"subtopologyId":"0","partitions":[0,1]}]'
ENDPOINT = {"Host": "app-1", "Port": 65_535}
STREAMS_MEMBER = {
    "InstanceId": None,
    "RackId": "r1",
    "ClientId": "c",
    "ClientHost": "/10.0.0.4",
    "RebalanceTimeoutMs": 300_000,
    "TopologyEpoch": 1,
    "ProcessId": "p-1",
    "UserEndpoint": ENDPOINT,
    "ClientTags": [{"Key": "zone", "Value": "a"}],
}
STREAMS_MEMBER_TEXT = (
    '{"instanceId":null,"rackId":"r1","clientId":"c","clientHost":"/10.0.0.4","rebalanceTimeoutMs":300000,'
    '"topologyEpoch":1,"processId":"p-1","userEndpoint":%s,"clientTags":[{"key":"zone","value":"a"}]}'
)
TOPIC_INFO = {
    "Name": "app-store-changelog",
    "Partitions": 0,
    "ReplicationFactor": 3,
    "TopicConfigs": [{"key": "cleanup.policy", "value": "compact"}],
}
SUBTOPOLOGY = {
    "SubtopologyId": "0",
    "SourceTopics": ["in"],
    "SourceTopicRegex": [],
    "StateChangelogTopics": [TOPIC_INFO],
    "RepartitionSinkTopics": [],
    "RepartitionSourceTopics": [],
    "CopartitionGroups": [{"SourceTopics": [0], "SourceTopicRegex": [], "RepartitionSourceTopics": []}],
}

GOLDEN: list[tuple[int, Mapping[str, Any], Mapping[str, Any], str, str]] = [
    (
        10,
        MEMBER,
        {"RackId": None, "ClientId": "client", "ClientHost": "/10.0.0.3", "SubscribedTopicNames": ["orders"]},
        '{"groupId":"g","memberId":"m1"}',
        '{"rackId":null,"clientId":"client","clientHost":"/10.0.0.3","subscribedTopicNames":["orders"]}',
    ),
    (11, GROUP, {"Epoch": 5, "MetadataHash": -7}, '{"groupId":"g"}', '{"epoch":5,"metadataHash":-7}'),
    (12, GROUP, {"AssignmentEpoch": 4}, '{"groupId":"g"}', '{"assignmentEpoch":4}'),
    (
        13,
        MEMBER,
        {"TopicPartitions": [{"TopicId": TOPIC_ID, "Partitions": [0, 2]}]},
        '{"groupId":"g","memberId":"m1"}',
        f'{{"topicPartitions":[{{"topicId":"{TOPIC_ID_TEXT}","partitions":[0,2]}}]}}',
    ),
    (
        14,
        MEMBER,
        {
            "MemberEpoch": 9,
            "PreviousMemberEpoch": 8,
            "State": 0,
            "AssignedPartitions": [{"TopicId": TOPIC_ID, "Partitions": [1]}],
        },
        '{"groupId":"g","memberId":"m1"}',
        '{"memberEpoch":9,"previousMemberEpoch":8,"state":0,"assignedPartitions":'
        f'[{{"topicId":"{TOPIC_ID_TEXT}","partitions":[1]}}]}}',
    ),
    (
        15,
        GROUP,
        {
            "InitializingTopics": [],
            "InitializedTopics": [{"TopicId": TOPIC_ID, "TopicName": "orders", "Partitions": [0, 1]}],
            "DeletingTopics": [{"TopicId": bytes(16), "TopicName": "old"}],
        },
        '{"groupId":"g"}',
        f'{{"initializingTopics":[],"initializedTopics":[{{"topicId":"{TOPIC_ID_TEXT}","topicName":"orders",'
        f'"partitions":[0,1]}}],"deletingTopics":[{{"topicId":"{ZERO_ID_TEXT}","topicName":"old"}}]}}',
    ),
    (17, GROUP, {"Epoch": 3, "MetadataHash": 42}, '{"groupId":"g"}', '{"epoch":3,"metadataHash":42}'),
    (
        19,
        MEMBER,
        STREAMS_MEMBER,
        '{"groupId":"g","memberId":"m1"}',
        STREAMS_MEMBER_TEXT % '{"host":"app-1","port":65535}',
    ),
    (20, GROUP, {"AssignmentEpoch": 6}, '{"groupId":"g"}', '{"assignmentEpoch":6}'),
    (
        21,
        MEMBER,
        {"ActiveTasks": _tasks(0, 1), "StandbyTasks": [], "WarmupTasks": []},
        '{"groupId":"g","memberId":"m1"}',
        f'{{"activeTasks":{TASKS_TEXT},"standbyTasks":[],"warmupTasks":[]}}',
    ),
    (
        22,
        MEMBER,
        {
            "MemberEpoch": 7,
            "PreviousMemberEpoch": 6,
            "State": 1,
            "ActiveTasks": _tasks(0, 1),
            "StandbyTasks": [],
            "WarmupTasks": [],
            "ActiveTasksPendingRevocation": [],
            "StandbyTasksPendingRevocation": _tasks(0, 1),
            "WarmupTasksPendingRevocation": [],
        },
        '{"groupId":"g","memberId":"m1"}',
        f'{{"memberEpoch":7,"previousMemberEpoch":6,"state":1,"activeTasks":{TASKS_TEXT},"standbyTasks":[],'
        f'"warmupTasks":[],"activeTasksPendingRevocation":[],"standbyTasksPendingRevocation":{TASKS_TEXT},'
        '"warmupTasksPendingRevocation":[]}',
    ),
    (
        23,
        GROUP,
        {"Epoch": 1, "Subtopologies": [SUBTOPOLOGY]},
        '{"groupId":"g"}',
        '{"epoch":1,"subtopologies":[{"subtopologyId":"0","sourceTopics":["in"],"sourceTopicRegex":[],'
        '"stateChangelogTopics":[{"name":"app-store-changelog","partitions":0,"replicationFactor":3,'
        '"topicConfigs":[{"key":"cleanup.policy","value":"compact"}]}],"repartitionSinkTopics":[],'
        '"repartitionSourceTopics":[],"copartitionGroups":[{"sourceTopics":[0],"sourceTopicRegex":[],'
        '"repartitionSourceTopics":[]}]}]}',
    ),
]


@pytest.mark.parametrize(("record_type", "key", "value", "key_data", "value_data"), GOLDEN, ids=str)
def test_share_and_streams_records_print_as_kafka_4_1_dump_log(
    record_type: int, key: Mapping[str, Any], value: Mapping[str, Any], key_data: str, value_data: str
) -> None:
    assert _line(record_type, key, value) == (
        f'{{"type":"{record_type}","data":{key_data}}}',
        f'{{"version":"0","data":{value_data}}}',
    )


@pytest.mark.parametrize(("record_type", "key"), [(10, MEMBER), (11, GROUP), (19, MEMBER), (23, GROUP)])
def test_a_tombstone_prints_its_key_and_delete(record_type: int, key: Mapping[str, Any]) -> None:
    key_text = '{"groupId":"g","memberId":"m1"}' if "MemberId" in key else '{"groupId":"g"}'

    assert _line(record_type, key, None) == (f'{{"type":"{record_type}","data":{key_text}}}', DELETE)


def test_the_hand_written_bytes_of_a_share_group_metadata_record() -> None:
    """The encoder against bytes written out by hand: int16 type 11 + a non-flexible string key; int16
    version 0 + int32 epoch + int64 hash + an empty tagged-field section."""
    key = b"\x00\x0b" + b"\x00\x01g"
    value = b"\x00\x00" + b"\x00\x00\x00\x05" + struct.pack(">q", -7) + b"\x00"

    assert _record(11, GROUP, {"Epoch": 5, "MetadataHash": -7}) == (key, value)
    assert (
        parse_offsets_record(key, value, offset=3)[1]
        == '{"version":"0","data":{"epoch":5,"metadataHash":-7}}'
    )


@pytest.mark.parametrize("record_type", [9, 18])
def test_the_partition_metadata_records_kip_1101_removed_are_unknown_in_4_1(record_type: int) -> None:
    key = encode_key(record_type, GROUP_KEY, GROUP)

    assert parse_offsets_record(key, b"\x00\x00\x00\x00", offset=12) == (
        f"Unknown record type {record_type} at offset 12, skipping.",
        None,
    )


def test_an_unknown_value_version_and_bad_bytes_are_errors() -> None:
    key, value = _record(12, GROUP, {"AssignmentEpoch": 4})
    assert value is not None

    assert parse_offsets_record(key, b"\x00\x01" + value[2:], offset=5) == (
        "Error at offset 5, skipping. Can't read version 1 of ShareGroupTargetAssignmentMetadataValue",
        None,
    )
    line, payload = parse_offsets_record(key, value[:4], offset=6)
    assert line.startswith("Error at offset 6, skipping. assignmentEpoch: needs 4 bytes")
    assert payload is None
    assert parse_offsets_record(encode_key(12, GROUP_KEY, GROUP)[:3], value, offset=7)[0].startswith(
        "Error at offset 7, skipping. groupId: needs 2 bytes"
    )


def test_a_null_user_endpoint_prints_null_and_a_port_is_unsigned() -> None:
    """``UserEndpoint`` is a nullable struct outside the tagged fields: an int8 presence (-1 null, 1 set)."""
    _, line = _line(19, MEMBER, {**STREAMS_MEMBER, "UserEndpoint": None})

    assert line == '{"version":"0","data":' + STREAMS_MEMBER_TEXT % "null" + "}"
    present = _record(19, MEMBER, STREAMS_MEMBER)[1]
    null = _record(19, MEMBER, {**STREAMS_MEMBER, "UserEndpoint": None})[1]
    assert present is not None
    assert b"\x04p-1\x01\x06app-1\xff\xff\x00" in present
    assert null is not None
    assert b"\x04p-1\xff\x02" in null


def test_streams_metadata_prints_the_validated_topology_epoch_when_set_and_skips_later_tags() -> None:
    key, value = _record(17, GROUP, {"Epoch": 3, "MetadataHash": 42, "ValidatedTopologyEpoch": 2})
    assert parse_offsets_record(key, value, offset=0)[1] == (
        '{"version":"0","data":{"epoch":3,"metadataHash":42,"validatedTopologyEpoch":2}}'
    )
    # Tag 1 (LastAssignmentConfigs, added after 4.1): a compact array of one {Key, Value} struct, skipped.
    later = uvarint(2) + b"\x02k\x02v\x00"
    schema = RECORDS[17][1]
    value = encode_value(schema, {"Epoch": 3, "MetadataHash": 42}, version=0, extra_tags={1: later})

    assert (
        parse_offsets_record(key, value, offset=0)[1]
        == '{"version":"0","data":{"epoch":3,"metadataHash":42}}'
    )


CLASSIC_MEMBER_METADATA = [
    _f("SessionTimeoutMs", "int32"),
    _f("SupportedProtocols", "[]ClassicProtocol", fields=[_f("Name", "string"), _f("Metadata", "bytes")]),
]
MEMBER_WITH_CLASSIC: Schema = {
    **CONSUMER_GROUP_MEMBER_METADATA_VALUE,
    "fields": [
        *CONSUMER_GROUP_MEMBER_METADATA_VALUE["fields"],
        _f(
            "ClassicMemberMetadata",
            "ClassicMemberMetadata",
            nullableVersions="0+",
            default=None,
            taggedVersions="0+",
            tag=0,
            fields=CLASSIC_MEMBER_METADATA,
        ),
    ],
}
MEMBER_VALUES = {
    "InstanceId": None,
    "RackId": None,
    "ClientId": "c",
    "ClientHost": "/h",
    "SubscribedTopicNames": [],
    "SubscribedTopicRegex": None,
    "RebalanceTimeoutMs": 1,
    "ServerAssignor": None,
}
MEMBER_PREFIX = (
    '{"version":"0","data":{"instanceId":null,"rackId":null,"clientId":"c","clientHost":"/h",'
    '"subscribedTopicNames":[],"subscribedTopicRegex":null,"rebalanceTimeoutMs":1,"serverAssignor":null'
)


def test_a_tagged_nullable_struct_has_an_unsigned_varint_presence() -> None:
    """``MessageDataGenerator`` writes a tagged nullable struct as its size + 1, an unsigned varint 1, the
    struct; it reads an unsigned varint and takes zero or less as null. So a tag 0 payload of one zero byte
    is a null ``classicMemberMetadata`` (left out, its default), not a struct to read."""
    key = encode_key(5, GROUP_MEMBER_KEY, MEMBER)
    classic = {"SessionTimeoutMs": 45_000, "SupportedProtocols": [{"Name": "range", "Metadata": b"\x00"}]}
    written = encode_value(
        MEMBER_WITH_CLASSIC, {**MEMBER_VALUES, "ClassicMemberMetadata": classic}, version=0
    )
    null_by_presence = encode_value(MEMBER_WITH_CLASSIC, MEMBER_VALUES, version=0, extra_tags={0: b"\x00"})

    assert parse_offsets_record(key, written, offset=0)[1] == (
        MEMBER_PREFIX + ',"classicMemberMetadata":{"sessionTimeoutMs":45000,'
        '"supportedProtocols":[{"name":"range","metadata":"AA=="}]}}}'
    )
    assert parse_offsets_record(key, null_by_presence, offset=0)[1] == MEMBER_PREFIX + "}}"


def _state(record_type: int, value: Mapping[str, Any] | None) -> tuple[str, str | None]:
    key = encode_key(record_type, SHARE_PARTITION_KEY, {"GroupId": "g", "TopicId": TOPIC_ID, "Partition": 3})
    encoded = None if value is None else encode_value(SHARE_STATE_RECORDS[record_type][1], value, version=0)
    return parse_share_group_state_record(key, encoded, offset=0)


BATCH = {"FirstOffset": 100, "LastOffset": 109, "DeliveryState": 2, "DeliveryCount": 1}
BATCH_TEXT = '[{"firstOffset":100,"lastOffset":109,"deliveryState":2,"deliveryCount":1}]'


def test_share_group_state_records_print_as_kafka_dump_log() -> None:
    key_data = f'{{"groupId":"g","topicId":"{TOPIC_ID_TEXT}","partition":3}}'
    snapshot = {
        "SnapshotEpoch": 1,
        "StateEpoch": 0,
        "LeaderEpoch": 2,
        "StartOffset": 100,
        "CreateTimestamp": T0,
        "WriteTimestamp": T0 + 1,
        "StateBatches": [BATCH],
    }
    update = {"SnapshotEpoch": 1, "LeaderEpoch": 2, "StartOffset": 105, "StateBatches": [BATCH]}

    assert _state(0, snapshot) == (
        f'{{"type":"0","data":{key_data}}}',
        '{"version":"0","data":{"snapshotEpoch":1,"stateEpoch":0,"leaderEpoch":2,"startOffset":100,'
        f'"createTimestamp":{T0},"writeTimestamp":{T0 + 1},"stateBatches":{BATCH_TEXT}}}}}',
    )
    assert _state(1, update) == (
        f'{{"type":"1","data":{key_data}}}',
        f'{{"version":"0","data":{{"snapshotEpoch":1,"leaderEpoch":2,"startOffset":105,"stateBatches":{BATCH_TEXT}}}}}',
    )
    assert _state(1, None) == (f'{{"type":"1","data":{key_data}}}', DELETE)


def test_share_group_state_skips_unknown_types_and_keyless_records() -> None:
    assert parse_share_group_state_record(b"\x00\x02\x00\x01g", b"", offset=4) == (
        "Unknown record type 2 at offset 4, skipping.",
        None,
    )
    assert parse_share_group_state_record(None, b"", offset=4)[0].startswith("Error at offset 4, skipping.")


def _fields(fields: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return [
        (
            spec["name"][0].lower() + spec["name"][1:],
            spec["type"],
            spec["versions"],
            spec.get("nullableVersions", "none"),
            spec.get("tag"),
            tuple(_fields(spec.get("fields", []))),
        )
        for spec in fields
    ]


def _library_fields(fields: tuple[Any, ...]) -> list[tuple[Any, ...]]:
    return [(f.name, f.type, f.versions, f.nullable, f.tag, tuple(_library_fields(f.fields))) for f in fields]


def test_the_transcriptions_agree_with_the_library() -> None:
    """The test writer's schemas and the library's tables (Kafka 4.1) list the same record types, key and
    value fields, types, versions, nullability and tags, so neither drifts to another Kafka version
    unnoticed."""
    from kafka_segments.coordinator.dump_log import GROUP_RECORDS
    from kafka_segments.coordinator.schema_share import SHARE_STATE_RECORDS as LIBRARY_STATE

    for ours, library in ((RECORDS, GROUP_RECORDS), (SHARE_STATE_RECORDS, LIBRARY_STATE)):
        assert set(ours) == set(library)
        for record_type, (key, value) in ours.items():
            schemas = library[record_type]
            assert _fields(key["fields"]) == _library_fields(schemas.key.fields), schemas.key.name
            assert (value["validVersions"], value["flexibleVersions"]) == (
                schemas.value.valid,
                schemas.value.flexible,
            )
            assert _fields(value["fields"]) == _library_fields(schemas.value.fields), schemas.value.name
