"""``kafka-dump-log.sh --offsets-decoder`` lines for the KIP-848 consumer-group records (types 3-8, 16).

The values are written by the test-side encoder (``unit.coordinator_records``) from its transcriptions of
``group-coordinator/src/main/resources/common/message/ConsumerGroup*Value.json`` at Kafka 4.1
(``test_the_transcriptions_agree_with_the_library`` keeps them in step with the library's); the expected
lines follow the generated ``*JsonConverter.write`` methods ``CoordinatorRecordJsonConverters`` calls: JSON
field names in schema order, ``{"version":"0","data":{...}}``, a tagged field only when not its default, a
null nullable field as ``null``, a uuid as ``Uuid.toString`` (URL-safe base64, no padding), int8 as a
number, bytes as base64."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kafka_segments.coordinator.dump_log import DELETE, parse_offsets_record
from unit.coordinator_records import (
    CONSUMER_GROUP_MEMBER_METADATA_VALUE,
    CONSUMER_GROUP_METADATA_VALUE,
    CURRENT_MEMBER_ASSIGNMENT_VALUE,
    GROUP_KEY,
    GROUP_MEMBER_KEY,
    GROUP_REGEX_KEY,
    PARTITION_METADATA_VALUE,
    REGEX_VALUE,
    TARGET_ASSIGNMENT_MEMBER_VALUE,
    TARGET_ASSIGNMENT_METADATA_VALUE,
    Schema,
    _f,
    encode_key,
    encode_struct,
    encode_value,
    uvarint,
)

TOPIC_ID = bytes(range(16))
TOPIC_ID_TEXT = "AAECAwQFBgcICQoLDA0ODw"
ZERO_ID_TEXT = "AAAAAAAAAAAAAAAAAAAAAA"
TOPIC_PARTITIONS = [_f("TopicId", "uuid"), _f("Partitions", "[]int32")]
CLASSIC_MEMBER_METADATA = [
    _f("SessionTimeoutMs", "int32"),
    _f("SupportedProtocols", "[]ClassicProtocol", fields=[_f("Name", "string"), _f("Metadata", "bytes")]),
]


def _line(key: bytes, value: bytes | None) -> tuple[str, str | None]:
    return parse_offsets_record(key, value, offset=0)


def _value(schema: Schema, values: Mapping[str, Any], **extra: Any) -> bytes:
    return encode_value(schema, values, version=0, **extra)


def test_group_metadata_prints_the_epoch_and_a_metadata_hash_only_when_set() -> None:
    key = encode_key(3, GROUP_KEY, {"GroupId": "g"})

    assert _line(key, _value(CONSUMER_GROUP_METADATA_VALUE, {"Epoch": 5})) == (
        '{"type":"3","data":{"groupId":"g"}}',
        '{"version":"0","data":{"epoch":5}}',
    )
    assert _line(key, _value(CONSUMER_GROUP_METADATA_VALUE, {"Epoch": 5, "MetadataHash": -7}))[1] == (
        '{"version":"0","data":{"epoch":5,"metadataHash":-7}}'
    )
    assert _line(key, None)[1] == DELETE


def test_partition_metadata_prints_topics_with_uuids_and_racks() -> None:
    topics = [
        {
            "TopicId": TOPIC_ID,
            "TopicName": "orders",
            "NumPartitions": 2,
            "PartitionMetadata": [{"Partition": 0, "Racks": ["r1", "r2"]}],
        },
        {"TopicId": bytes(16), "TopicName": "t", "NumPartitions": 1, "PartitionMetadata": []},
    ]

    _, value = _line(
        encode_key(4, GROUP_KEY, {"GroupId": "g"}), _value(PARTITION_METADATA_VALUE, {"Topics": topics})
    )

    assert value == (
        '{"version":"0","data":{"topics":['
        f'{{"topicId":"{TOPIC_ID_TEXT}","topicName":"orders","numPartitions":2,'
        '"partitionMetadata":[{"partition":0,"racks":["r1","r2"]}]},'
        f'{{"topicId":"{ZERO_ID_TEXT}","topicName":"t","numPartitions":1,"partitionMetadata":[]}}]}}}}'
    )


MEMBER_VALUES = {
    "InstanceId": None,
    "RackId": "rack-a",
    "ClientId": "client",
    "ClientHost": "/10.0.0.2",
    "SubscribedTopicNames": ["orders", "payments"],
    "SubscribedTopicRegex": None,
    "RebalanceTimeoutMs": 300_000,
    "ServerAssignor": "uniform",
}
MEMBER_LINE = (
    '{"version":"0","data":{"instanceId":null,"rackId":"rack-a","clientId":"client","clientHost":'
    '"/10.0.0.2","subscribedTopicNames":["orders","payments"],"subscribedTopicRegex":null,'
    '"rebalanceTimeoutMs":300000,"serverAssignor":"uniform"'
)


def test_member_metadata_prints_nulls_and_leaves_out_a_null_classic_member_metadata() -> None:
    key = encode_key(5, GROUP_MEMBER_KEY, {"GroupId": "g", "MemberId": "m1"})

    assert _line(key, _value(CONSUMER_GROUP_MEMBER_METADATA_VALUE, MEMBER_VALUES)) == (
        '{"type":"5","data":{"groupId":"g","memberId":"m1"}}',
        MEMBER_LINE + "}}",
    )


def test_member_metadata_prints_a_classic_member_s_tagged_protocols() -> None:
    classic = {"SessionTimeoutMs": 45_000, "SupportedProtocols": [{"Name": "range", "Metadata": b"\x00\x01"}]}
    nested = b"\x01" + encode_struct(CLASSIC_MEMBER_METADATA, classic, version=0, flexible=True)
    value = _value(CONSUMER_GROUP_MEMBER_METADATA_VALUE, MEMBER_VALUES, extra_tags={0: nested})

    _, line = _line(encode_key(5, GROUP_MEMBER_KEY, {"GroupId": "g", "MemberId": "m1"}), value)

    assert line == (
        MEMBER_LINE + ',"classicMemberMetadata":{"sessionTimeoutMs":45000,'
        '"supportedProtocols":[{"name":"range","metadata":"AAE="}]}}}'
    )


def test_target_assignment_records_print_the_epoch_and_the_member_s_partitions() -> None:
    metadata = _line(
        encode_key(6, GROUP_KEY, {"GroupId": "g"}),
        _value(TARGET_ASSIGNMENT_METADATA_VALUE, {"AssignmentEpoch": 4}),
    )
    member = _line(
        encode_key(7, GROUP_MEMBER_KEY, {"GroupId": "g", "MemberId": "m1"}),
        _value(
            TARGET_ASSIGNMENT_MEMBER_VALUE, {"TopicPartitions": [{"TopicId": TOPIC_ID, "Partitions": [0, 2]}]}
        ),
    )

    assert metadata == ('{"type":"6","data":{"groupId":"g"}}', '{"version":"0","data":{"assignmentEpoch":4}}')
    assert member == (
        '{"type":"7","data":{"groupId":"g","memberId":"m1"}}',
        f'{{"version":"0","data":{{"topicPartitions":[{{"topicId":"{TOPIC_ID_TEXT}","partitions":[0,2]}}]}}}}',
    )


def test_current_member_assignment_prints_the_state_byte_and_both_partition_lists() -> None:
    values = {
        "MemberEpoch": 9,
        "PreviousMemberEpoch": 8,
        "State": 1,
        "AssignedPartitions": [{"TopicId": TOPIC_ID, "Partitions": [1]}],
        "PartitionsPendingRevocation": [{"TopicId": bytes(16), "Partitions": [0, 3]}],
    }

    key_line, value_line = _line(
        encode_key(8, GROUP_MEMBER_KEY, {"GroupId": "g", "MemberId": "m1"}),
        _value(CURRENT_MEMBER_ASSIGNMENT_VALUE, values),
    )

    assert key_line == '{"type":"8","data":{"groupId":"g","memberId":"m1"}}'
    assert value_line == (
        '{"version":"0","data":{"memberEpoch":9,"previousMemberEpoch":8,"state":1,"assignedPartitions":'
        f'[{{"topicId":"{TOPIC_ID_TEXT}","partitions":[1]}}],"partitionsPendingRevocation":'
        f'[{{"topicId":"{ZERO_ID_TEXT}","partitions":[0,3]}}]}}}}'
    )


def test_regular_expression_prints_the_resolved_topics() -> None:
    key = encode_key(16, GROUP_REGEX_KEY, {"GroupId": "g", "RegularExpression": "ord.*"})
    value = _value(REGEX_VALUE, {"Topics": ["orders"], "Version": 7, "Timestamp": 1_785_773_250_466})

    assert _line(key, value) == (
        '{"type":"16","data":{"groupId":"g","regularExpression":"ord.*"}}',
        '{"version":"0","data":{"topics":["orders"],"version":7,"timestamp":1785773250466}}',
    )


def test_an_unknown_tag_is_skipped_and_a_bad_version_is_an_error() -> None:
    key = encode_key(6, GROUP_KEY, {"GroupId": "g"})
    value = _value(
        TARGET_ASSIGNMENT_METADATA_VALUE, {"AssignmentEpoch": 4}, extra_tags={5: uvarint(3) + b"xyz"}
    )

    assert _line(key, value)[1] == '{"version":"0","data":{"assignmentEpoch":4}}'
    assert _line(key, b"\x00\x01" + bytes(8)) == (
        "Error at offset 0, skipping. Can't read version 1 of ConsumerGroupTargetAssignmentMetadataValue",
        None,
    )


def _fields(fields: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return [
        (
            spec["name"][0].lower() + spec["name"][1:],
            spec["type"],
            spec["versions"],
            spec.get("tag"),
            tuple(_fields(spec.get("fields", []))),
        )
        for spec in fields
    ]


def _library_fields(fields: tuple[Any, ...], *, written: set[str]) -> list[tuple[Any, ...]]:
    return [
        (
            field.name,
            field.type,
            field.versions,
            field.tag,
            tuple(_library_fields(field.fields, written=written)),
        )
        for field in fields
        if field.tag is None or field.name in written
    ]


def test_the_transcriptions_agree_with_the_library() -> None:
    """The test writer's KIP-848 value schemas and ``coordinator.schema``'s (Kafka 4.1) list the same
    fields, types, versions and tags, so neither drifts to another Kafka version unnoticed (the encoder and
    the decoder stay separate code). The writer leaves out only the tagged nullable struct it writes as raw
    tagged bytes (``ClassicMemberMetadata``)."""
    from kafka_segments.coordinator.schema import CONSUMER_GROUP_VALUES

    written = {"metadataHash"}
    ours = {
        3: CONSUMER_GROUP_METADATA_VALUE,
        4: PARTITION_METADATA_VALUE,
        5: CONSUMER_GROUP_MEMBER_METADATA_VALUE,
        6: TARGET_ASSIGNMENT_METADATA_VALUE,
        7: TARGET_ASSIGNMENT_MEMBER_VALUE,
        8: CURRENT_MEMBER_ASSIGNMENT_VALUE,
        16: REGEX_VALUE,
    }
    assert set(ours) == set(CONSUMER_GROUP_VALUES)
    for record_type, schema in ours.items():
        library = CONSUMER_GROUP_VALUES[record_type]
        assert (schema["validVersions"], schema["flexibleVersions"]) == (library.valid, library.flexible)
        assert _fields(schema["fields"]) == _library_fields(library.fields, written=written), library.name
