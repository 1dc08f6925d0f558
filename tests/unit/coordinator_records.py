"""The test-side writer of ``__consumer_offsets`` records, built from Kafka's JSON message schemas.

Import as ``from unit.coordinator_records import ...``. The schemas below are transcriptions of
``group-coordinator/src/main/resources/common/message/*.json`` and
``clients/src/main/resources/common/message/ConsumerProtocolSubscription.json`` at Kafka 4.1 (fields,
``versions``, ``nullableVersions``, tags); a generic encoder writes any of them at any version,
non-flexible or flexible (compact lengths + tagged fields), as Kafka's generated ``write`` methods do. It
shares no code with the library's decoder, so the two check each other; the golden-bytes tests check both
against hand-written bytes.

``CoordinatorLog`` assigns offsets and builds batches with the project's ``build_batch`` /
``build_end_transaction_marker``, giving ``.log`` bytes or a ``SegmentFiles`` for the lake.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kafka_segments.records.builder import build_batch
from kafka_segments.records.control import (
    ControlKey,
    ControlRecordType,
    EndTransactionMarker,
    build_end_transaction_marker,
)
from kafka_segments.records.record import Record
from kafka_segments.segment.writer import SegmentFiles, write_segment

T0 = 1_763_700_000_000

Schema = dict[str, Any]


def _f(name: str, type_: str, versions: str = "0+", **extra: Any) -> dict[str, Any]:
    return {"name": name, "type": type_, "versions": versions, **extra}


# ---------------------------------------------------------------------------------------------- schemas

OFFSET_COMMIT_KEY: Schema = {
    "flexibleVersions": "none",
    "fields": [_f("group", "string", "0"), _f("topic", "string", "0"), _f("partition", "int32", "0")],
}
OFFSET_COMMIT_VALUE: Schema = {
    "validVersions": "0-4",
    "flexibleVersions": "4+",
    "fields": [
        _f("offset", "int64"),
        _f("leaderEpoch", "int32", "3+", default=-1),
        _f("metadata", "string"),
        _f("commitTimestamp", "int64"),
        _f("expireTimestamp", "int64", "1", default=-1),
    ],
}
GROUP_METADATA_KEY: Schema = {"flexibleVersions": "none", "fields": [_f("group", "string", "0")]}
MEMBER_METADATA_FIELDS = [
    _f("memberId", "string"),
    _f("groupInstanceId", "string", "3+", nullableVersions="3+", default=None),
    _f("clientId", "string"),
    _f("clientHost", "string"),
    _f("rebalanceTimeout", "int32", "1+", default=-1),
    _f("sessionTimeout", "int32"),
    _f("subscription", "bytes"),
    _f("assignment", "bytes"),
]
GROUP_METADATA_VALUE: Schema = {
    "validVersions": "0-4",
    "flexibleVersions": "4+",
    "fields": [
        _f("protocolType", "string"),
        _f("generation", "int32"),
        _f("protocol", "string", nullableVersions="0+"),
        _f("leader", "string", nullableVersions="0+"),
        _f("currentStateTimestamp", "int64", "2+", default=-1),
        _f("members", "[]MemberMetadata", fields=MEMBER_METADATA_FIELDS),
    ],
}
GROUP_KEY: Schema = {"flexibleVersions": "none", "fields": [_f("GroupId", "string", "0")]}
GROUP_MEMBER_KEY: Schema = {
    "flexibleVersions": "none",
    "fields": [_f("GroupId", "string", "0"), _f("MemberId", "string", "0")],
}
GROUP_REGEX_KEY: Schema = {
    "flexibleVersions": "none",
    "fields": [_f("GroupId", "string", "0"), _f("RegularExpression", "string", "0")],
}
CONSUMER_GROUP_METADATA_VALUE: Schema = {
    "validVersions": "0",
    "flexibleVersions": "0+",
    "fields": [
        _f("Epoch", "int32"),
        _f("MetadataHash", "int64", default=0, taggedVersions="0+", tag=0),
    ],
}
CONSUMER_GROUP_MEMBER_METADATA_VALUE: Schema = {
    "validVersions": "0",
    "flexibleVersions": "0+",
    "fields": [
        _f("InstanceId", "string", nullableVersions="0+"),
        _f("RackId", "string", nullableVersions="0+"),
        _f("ClientId", "string"),
        _f("ClientHost", "string"),
        _f("SubscribedTopicNames", "[]string"),
        _f("SubscribedTopicRegex", "string", nullableVersions="0+"),
        _f("RebalanceTimeoutMs", "int32", default=-1),
        _f("ServerAssignor", "string", nullableVersions="0+"),
    ],
}
TARGET_ASSIGNMENT_METADATA_VALUE: Schema = {
    "validVersions": "0",
    "flexibleVersions": "0+",
    "fields": [_f("AssignmentEpoch", "int32")],
}
TOPIC_PARTITIONS_FIELDS = [_f("TopicId", "uuid"), _f("Partitions", "[]int32")]
CURRENT_MEMBER_ASSIGNMENT_VALUE: Schema = {
    "validVersions": "0",
    "flexibleVersions": "0+",
    "fields": [
        _f("MemberEpoch", "int32"),
        _f("PreviousMemberEpoch", "int32"),
        _f("State", "int8"),
        _f("AssignedPartitions", "[]TopicPartitions", fields=TOPIC_PARTITIONS_FIELDS),
        _f("PartitionsPendingRevocation", "[]TopicPartitions", fields=TOPIC_PARTITIONS_FIELDS),
    ],
}
TARGET_ASSIGNMENT_MEMBER_VALUE: Schema = {
    "validVersions": "0",
    "flexibleVersions": "0+",
    "fields": [_f("TopicPartitions", "[]TopicPartition", fields=TOPIC_PARTITIONS_FIELDS)],
}
PARTITION_METADATA_VALUE: Schema = {
    "validVersions": "0",
    "flexibleVersions": "0+",
    "fields": [
        _f(
            "Topics",
            "[]TopicMetadata",
            fields=[
                _f("TopicId", "uuid"),
                _f("TopicName", "string"),
                _f("NumPartitions", "int32"),
                _f(
                    "PartitionMetadata",
                    "[]PartitionMetadata",
                    fields=[_f("Partition", "int32"), _f("Racks", "[]string")],
                ),
            ],
        )
    ],
}
REGEX_VALUE: Schema = {
    "validVersions": "0",
    "flexibleVersions": "0+",
    "fields": [_f("Topics", "[]string"), _f("Version", "int64"), _f("Timestamp", "int64")],
}
CONSUMER_PROTOCOL_SUBSCRIPTION: Schema = {
    "validVersions": "0-3",
    "flexibleVersions": "none",
    "fields": [
        _f("Topics", "[]string"),
        _f("UserData", "bytes", nullableVersions="0+", default=None),
        _f(
            "OwnedPartitions",
            "[]TopicPartition",
            "1+",
            fields=[_f("Topic", "string", "1+"), _f("Partitions", "[]int32", "1+")],
        ),
        _f("GenerationId", "int32", "2+", default=-1),
        _f("RackId", "string", "3+", nullableVersions="3+", default=None),
    ],
}


# ---------------------------------------------------------------------------------------------- encoder


def in_versions(spec: str | None, version: int) -> bool:
    """Whether ``version`` is in a schema version range (``"0+"``, ``"1"``, ``"0-4"``, ``"none"``)."""
    if spec is None or spec == "none":
        return False
    if spec.endswith("+"):
        return version >= int(spec[:-1])
    low, _, high = spec.partition("-")
    return int(low) <= version <= int(high or low)


def uvarint(value: int) -> bytes:
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


_FIXED = {"int8": ">b", "int16": ">h", "uint16": ">H", "int32": ">i", "int64": ">q"}


def _length(length: int, *, flexible: bool, wide: bool) -> bytes:
    """A length (-1 = null) in the non-flexible (int16 / int32) or compact (uvarint of length + 1) form."""
    if flexible:
        return uvarint(length + 1)
    return struct.pack(">i" if wide else ">h", length)


def _encode_field(type_: str, value: Any, spec: Mapping[str, Any], version: int, flexible: bool) -> bytes:
    if type_ in _FIXED:
        return struct.pack(_FIXED[type_], value)
    if type_ == "uuid":
        return bytes(value)
    if type_ in ("string", "bytes"):
        if value is None:
            if not in_versions(spec.get("nullableVersions"), version):
                raise ValueError(f"{spec['name']} is not nullable at version {version}")
            return _length(-1, flexible=flexible, wide=type_ == "bytes")
        data = value.encode() if type_ == "string" else bytes(value)
        return _length(len(data), flexible=flexible, wide=type_ == "bytes") + data
    if type_.startswith("[]"):
        return _encode_array(type_[2:], value, spec, version, flexible)
    if "fields" in spec:
        return _encode_nested(value, spec, version, flexible)
    raise ValueError(f"unknown type {type_}")


def _encode_array(inner: str, value: Any, spec: Mapping[str, Any], version: int, flexible: bool) -> bytes:
    if value is None:
        if not in_versions(spec.get("nullableVersions"), version):
            raise ValueError(f"{spec['name']} is not nullable at version {version}")
        return _length(-1, flexible=flexible, wide=True)
    parts = [_length(len(value), flexible=flexible, wide=True)]
    for item in value:
        if inner in _FIXED or inner in ("string", "bytes", "uuid"):
            parts.append(_encode_field(inner, item, spec, version, flexible))
        else:
            parts.append(encode_struct(spec["fields"], item, version=version, flexible=flexible))
    return b"".join(parts)


def _encode_nested(value: Any, spec: Mapping[str, Any], version: int, flexible: bool) -> bytes:
    """A struct-typed field (not an array). Nullable: an int8 presence first (-1 null, 1 present), as
    ``MessageDataGenerator`` writes an untagged nullable struct; a tagged one is written by
    ``encode_struct`` (an unsigned varint 1 before the struct, and nothing at all when null)."""
    nullable = in_versions(spec.get("nullableVersions"), version)
    if value is None:
        if not nullable:
            raise ValueError(f"{spec['name']} is not nullable at version {version}")
        return struct.pack(">b", -1)
    body = encode_struct(spec["fields"], value, version=version, flexible=flexible)
    return (struct.pack(">b", 1) if nullable else b"") + body


def encode_struct(
    fields: Sequence[Mapping[str, Any]],
    values: Mapping[str, Any],
    *,
    version: int,
    flexible: bool,
    extra_tags: Mapping[int, bytes] | None = None,
) -> bytes:
    """One struct at ``version``: its fields in schema order (absent values take the schema default), and
    in flexible versions its tagged-field section (tagged fields whose value differs from the default, plus
    ``extra_tags`` as raw unknown tags), tags ascending."""
    body: list[bytes] = []
    tags: dict[int, bytes] = dict(extra_tags or {})
    for spec in fields:
        if not in_versions(spec["versions"], version):
            continue
        value = values.get(spec["name"], spec.get("default"))
        if "tag" in spec:
            if flexible and value != spec.get("default"):
                tags[spec["tag"]] = _encode_tagged(value, spec, version)
            continue
        body.append(_encode_field(spec["type"], value, spec, version, flexible))
    if flexible:
        body.append(uvarint(len(tags)))
        for tag in sorted(tags):
            body.append(uvarint(tag) + uvarint(len(tags[tag])) + tags[tag])
    elif extra_tags:
        raise ValueError("tagged fields need a flexible version")
    return b"".join(body)


def _encode_tagged(value: Any, spec: Mapping[str, Any], version: int) -> bytes:
    """A tagged field's payload; a nullable struct's starts with an unsigned varint 1 (its presence)."""
    if "fields" in spec and not spec["type"].startswith("[]"):
        presence = uvarint(1) if in_versions(spec.get("nullableVersions"), version) else b""
        return presence + encode_struct(spec["fields"], value, version=version, flexible=True)
    return _encode_field(spec["type"], value, spec, version, True)


def encode_key(record_type: int, schema: Schema, values: Mapping[str, Any]) -> bytes:
    """``int16 record type`` + key struct (keys are never flexible)."""
    return struct.pack(">h", record_type) + encode_struct(schema["fields"], values, version=0, flexible=False)


def encode_value(
    schema: Schema, values: Mapping[str, Any], *, version: int, extra_tags: Mapping[int, bytes] | None = None
) -> bytes:
    """``int16 value version`` + value struct (flexible as the schema says for that version)."""
    flexible = in_versions(schema["flexibleVersions"], version)
    body = encode_struct(schema["fields"], values, version=version, flexible=flexible, extra_tags=extra_tags)
    return struct.pack(">h", version) + body


# ---------------------------------------------------------------------------------------------- records


def offset_commit_key(group: str, topic: str, partition: int, *, record_type: int = 1) -> bytes:
    return encode_key(
        record_type, OFFSET_COMMIT_KEY, {"group": group, "topic": topic, "partition": partition}
    )


def offset_commit_value(
    offset: int,
    *,
    version: int = 3,
    commit_timestamp: int = T0,
    metadata: str = "",
    leader_epoch: int = -1,
    expire_timestamp: int = -1,
    extra_tags: Mapping[int, bytes] | None = None,
) -> bytes:
    values = {
        "offset": offset,
        "leaderEpoch": leader_epoch,
        "metadata": metadata,
        "commitTimestamp": commit_timestamp,
        "expireTimestamp": expire_timestamp,
    }
    return encode_value(OFFSET_COMMIT_VALUE, values, version=version, extra_tags=extra_tags)


def group_metadata_key(group: str) -> bytes:
    return encode_key(2, GROUP_METADATA_KEY, {"group": group})


def member(
    member_id: str,
    *,
    subscription: bytes = b"",
    assignment: bytes = b"",
    group_instance_id: str | None = None,
    client_id: str = "client",
    client_host: str = "/10.0.0.1",
    rebalance_timeout: int = 300_000,
    session_timeout: int = 45_000,
) -> dict[str, Any]:
    return {
        "memberId": member_id,
        "groupInstanceId": group_instance_id,
        "clientId": client_id,
        "clientHost": client_host,
        "rebalanceTimeout": rebalance_timeout,
        "sessionTimeout": session_timeout,
        "subscription": subscription,
        "assignment": assignment,
    }


def group_metadata_value(
    *,
    version: int = 3,
    protocol_type: str = "consumer",
    generation: int = 1,
    protocol: str | None = "range",
    leader: str | None = None,
    current_state_timestamp: int = -1,
    members: Sequence[Mapping[str, Any]] = (),
    extra_tags: Mapping[int, bytes] | None = None,
) -> bytes:
    values = {
        "protocolType": protocol_type,
        "generation": generation,
        "protocol": protocol,
        "leader": leader,
        "currentStateTimestamp": current_state_timestamp,
        "members": list(members),
    }
    return encode_value(GROUP_METADATA_VALUE, values, version=version, extra_tags=extra_tags)


def consumer_subscription(
    topics: Sequence[str],
    *,
    version: int = 1,
    user_data: bytes | None = None,
    owned_partitions: Sequence[tuple[str, Sequence[int]]] = (),
    generation_id: int = -1,
    rack_id: str | None = None,
) -> bytes:
    """A classic consumer's ``ConsumerProtocolSubscription`` (what a member's ``subscription`` holds)."""
    values = {
        "Topics": list(topics),
        "UserData": user_data,
        "OwnedPartitions": [{"Topic": t, "Partitions": list(p)} for t, p in owned_partitions],
        "GenerationId": generation_id,
        "RackId": rack_id,
    }
    return encode_value(CONSUMER_PROTOCOL_SUBSCRIPTION, values, version=version)


def consumer_group_metadata(group: str, epoch: int, *, metadata_hash: int = 0) -> tuple[bytes, bytes]:
    value = encode_value(
        CONSUMER_GROUP_METADATA_VALUE, {"Epoch": epoch, "MetadataHash": metadata_hash}, version=0
    )
    return encode_key(3, GROUP_KEY, {"GroupId": group}), value


def consumer_group_member(
    group: str, member_id: str, topics: Sequence[str], *, regex: str | None = None
) -> tuple[bytes, bytes]:
    values = {
        "InstanceId": None,
        "RackId": None,
        "ClientId": "client",
        "ClientHost": "/10.0.0.2",
        "SubscribedTopicNames": list(topics),
        "SubscribedTopicRegex": regex,
        "RebalanceTimeoutMs": 300_000,
        "ServerAssignor": "uniform",
    }
    key = encode_key(5, GROUP_MEMBER_KEY, {"GroupId": group, "MemberId": member_id})
    return key, encode_value(CONSUMER_GROUP_MEMBER_METADATA_VALUE, values, version=0)


def target_assignment_metadata(group: str, assignment_epoch: int) -> tuple[bytes, bytes]:
    value = encode_value(TARGET_ASSIGNMENT_METADATA_VALUE, {"AssignmentEpoch": assignment_epoch}, version=0)
    return encode_key(6, GROUP_KEY, {"GroupId": group}), value


def target_assignment_member(group: str, member_id: str) -> tuple[bytes, bytes]:
    values = {"TopicPartitions": [{"TopicId": bytes(16), "Partitions": [0]}]}
    key = encode_key(7, GROUP_MEMBER_KEY, {"GroupId": group, "MemberId": member_id})
    return key, encode_value(TARGET_ASSIGNMENT_MEMBER_VALUE, values, version=0)


def current_member_assignment(
    group: str, member_id: str, *, member_epoch: int, state: int = 0, previous_member_epoch: int = -1
) -> tuple[bytes, bytes]:
    values = {
        "MemberEpoch": member_epoch,
        "PreviousMemberEpoch": previous_member_epoch,
        "State": state,
        "AssignedPartitions": [{"TopicId": bytes(range(16)), "Partitions": [0, 1]}],
        "PartitionsPendingRevocation": [],
    }
    key = encode_key(8, GROUP_MEMBER_KEY, {"GroupId": group, "MemberId": member_id})
    return key, encode_value(CURRENT_MEMBER_ASSIGNMENT_VALUE, values, version=0)


def partition_metadata(group: str) -> tuple[bytes, bytes]:
    topics = [{"TopicId": bytes(16), "TopicName": "orders", "NumPartitions": 3, "PartitionMetadata": []}]
    return encode_key(4, GROUP_KEY, {"GroupId": group}), encode_value(
        PARTITION_METADATA_VALUE, {"Topics": topics}, version=0
    )


def regular_expression(group: str, regex: str, topics: Sequence[str]) -> tuple[bytes, bytes]:
    key = encode_key(16, GROUP_REGEX_KEY, {"GroupId": group, "RegularExpression": regex})
    values = {"Topics": list(topics), "Version": 7, "Timestamp": T0}
    return key, encode_value(REGEX_VALUE, values, version=0)


# ---------------------------------------------------------------------------------------------- logs

KeyValue = tuple[bytes | None, bytes | None]


@dataclass
class CoordinatorLog:
    """A ``__consumer_offsets`` partition log written batch by batch, offsets assigned in order."""

    base_offset: int = 0
    timestamp: int = T0
    batches: list[bytes] = field(default_factory=list)
    next_offset: int = -1

    def __post_init__(self) -> None:
        if self.next_offset < 0:
            self.next_offset = self.base_offset

    def append(self, *records: KeyValue, producer_id: int = -1, producer_epoch: int = 0) -> int:
        """One data batch of ``records`` (transactional when ``producer_id`` is set); its first offset."""
        first = self.next_offset
        batch_records = [
            Record(first + i, self.timestamp, key, value) for i, (key, value) in enumerate(records)
        ]
        transactional = producer_id != -1
        self.batches.append(
            build_batch(
                batch_records,
                producer_id=producer_id,
                producer_epoch=producer_epoch if transactional else -1,
                base_sequence=0 if transactional else -1,
                is_transactional=transactional,
            )
        )
        self.next_offset += len(records)
        return first

    def marker(self, producer_id: int, *, commit: bool, producer_epoch: int = 0) -> int:
        """A COMMIT or ABORT marker of ``producer_id``. Returns its offset."""
        offset = self.next_offset
        control = ControlRecordType.COMMIT if commit else ControlRecordType.ABORT
        self.batches.append(
            build_end_transaction_marker(
                EndTransactionMarker(control, coordinator_epoch=0),
                offset=offset,
                timestamp=self.timestamp,
                producer_id=producer_id,
                producer_epoch=producer_epoch,
            )
        )
        self.next_offset += 1
        return offset

    def control(self, key: bytes, *, producer_id: int = 7) -> int:
        """A control batch with one record of any key (e.g. a LEADER_CHANGE or a damaged control key)."""
        offset = self.next_offset
        record = Record(offset, self.timestamp, key, b"\x00\x00")
        self.batches.append(
            build_batch(
                [record], producer_id=producer_id, producer_epoch=0, is_transactional=True, is_control=True
            )
        )
        self.next_offset += 1
        return offset

    def data(self) -> bytes:
        return b"".join(self.batches)

    def segment(self) -> SegmentFiles:
        return write_segment(self.batches, base_offset=self.base_offset)


LEADER_CHANGE_KEY = ControlKey(0, int(ControlRecordType.LEADER_CHANGE)).build()
