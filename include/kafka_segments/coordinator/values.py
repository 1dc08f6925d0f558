"""The values of ``__consumer_offsets`` records, decoded by their key's record type (``coordinator.keys``).

A value version outside the schema's ``validVersions`` is an error (``UnknownRecordVersionException``).
OffsetCommitValue v0-4 is accepted under both types 0 and 1 (Kafka 4.3 reads type 0 as
``LegacyOffsetCommitValue``, the bytes of v0). Schemas:
``group-coordinator/src/main/resources/common/message/*Value.json``."""

from __future__ import annotations

from dataclasses import dataclass

from kafka_segments.coordinator.fields import CoordinatorSchemaError, FieldReader
from kafka_segments.coordinator.keys import (
    CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT,
    CONSUMER_GROUP_MEMBER_METADATA,
    CONSUMER_GROUP_METADATA,
    CONSUMER_GROUP_PARTITION_METADATA,
    CONSUMER_GROUP_REGULAR_EXPRESSION,
    CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER,
    CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA,
    CoordinatorKey,
    GroupMetadataKey,
    OffsetCommitKey,
    UnknownRecordKey,
)


@dataclass(frozen=True, slots=True)
class OffsetCommitValue:
    """``OffsetCommitValue`` v0-4; ``leader_epoch`` (v3+) and ``expire_timestamp`` (v1 only) are -1 when
    absent, as the schema's defaults."""

    version: int
    offset: int
    leader_epoch: int
    metadata: str
    commit_timestamp: int
    expire_timestamp: int


@dataclass(frozen=True, slots=True)
class MemberMetadata:
    """``GroupMetadataValue.MemberMetadata``; ``rebalance_timeout`` is -1 before v1."""

    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout: int
    session_timeout: int
    subscription: bytes
    assignment: bytes


@dataclass(frozen=True, slots=True)
class GroupMetadataValue:
    """``GroupMetadataValue`` v0-4; ``current_state_timestamp`` is -1 before v2."""

    version: int
    protocol_type: str
    generation: int
    protocol: str | None
    leader: str | None
    current_state_timestamp: int
    members: tuple[MemberMetadata, ...]


@dataclass(frozen=True, slots=True)
class ConsumerGroupMetadataValue:
    """``ConsumerGroupMetadataValue`` (type 3): the group epoch."""

    epoch: int


@dataclass(frozen=True, slots=True)
class ConsumerGroupMemberMetadataValue:
    """``ConsumerGroupMemberMetadataValue`` (type 5): a member's subscription."""

    instance_id: str | None
    rack_id: str | None
    client_id: str
    client_host: str
    subscribed_topic_names: tuple[str, ...]
    subscribed_topic_regex: str | None
    rebalance_timeout_ms: int
    server_assignor: str | None


@dataclass(frozen=True, slots=True)
class ConsumerGroupTargetAssignmentMetadataValue:
    """``ConsumerGroupTargetAssignmentMetadataValue`` (type 6): the target assignment epoch."""

    assignment_epoch: int


@dataclass(frozen=True, slots=True)
class ConsumerGroupCurrentMemberAssignmentValue:
    """``ConsumerGroupCurrentMemberAssignmentValue`` (type 8); ``state`` is ``MemberState``'s byte (0
    STABLE, 1 UNREVOKED_PARTITIONS, 2 UNRELEASED_PARTITIONS). The partitions are checked, not kept."""

    member_epoch: int
    previous_member_epoch: int
    state: int


@dataclass(frozen=True, slots=True)
class ConsumerGroupRegularExpressionValue:
    """``ConsumerGroupRegularExpressionValue`` (type 16): the topics a subscribed regex resolved to."""

    topics: tuple[str, ...]
    version: int
    timestamp: int


@dataclass(frozen=True, slots=True)
class OpaqueValue:
    """A value of a known type whose content is not needed (types 4 and 7): only its version is checked."""

    record_type: int
    version: int


CoordinatorValue = (
    OffsetCommitValue
    | GroupMetadataValue
    | ConsumerGroupMetadataValue
    | ConsumerGroupMemberMetadataValue
    | ConsumerGroupTargetAssignmentMetadataValue
    | ConsumerGroupCurrentMemberAssignmentValue
    | ConsumerGroupRegularExpressionValue
    | OpaqueValue
)


# -------------------------------------------------------------------------------------------------- decoding


def decode_value(key: CoordinatorKey, data: bytes | None) -> CoordinatorValue | None:
    """The value of a record whose key is ``key``: ``None`` for a tombstone.

    Raises:
        CoordinatorSchemaError: unknown value version, or bytes that do not follow the schema.
    """
    if data is None or isinstance(key, UnknownRecordKey):
        return None
    reader = FieldReader(bytes(data))
    version = reader.int16("value version")
    if isinstance(key, OffsetCommitKey):
        _check_version("OffsetCommitValue", version, 4)
        return _offset_commit_value(reader, version)
    if isinstance(key, GroupMetadataKey):
        _check_version("GroupMetadataValue", version, 4)
        return _group_metadata_value(reader, version)
    return _consumer_group_value(key.record_type, reader, version)


def _check_version(name: str, version: int, highest: int) -> None:
    if not 0 <= version <= highest:
        valid = "0" if highest == 0 else f"0-{highest}"
        raise CoordinatorSchemaError(f"unknown {name} version {version} (valid versions: {valid})")


def _offset_commit_value(reader: FieldReader, version: int) -> OffsetCommitValue:
    flexible = version >= 4
    offset = reader.int64("offset")
    leader_epoch = reader.int32("leaderEpoch") if version >= 3 else -1
    metadata = reader.string("metadata", flexible=flexible)
    commit_timestamp = reader.int64("commitTimestamp")
    expire_timestamp = reader.int64("expireTimestamp") if version == 1 else -1
    if flexible:
        reader.skip_tagged_fields("OffsetCommitValue")
    return OffsetCommitValue(version, offset, leader_epoch, metadata, commit_timestamp, expire_timestamp)


def _group_metadata_value(reader: FieldReader, version: int) -> GroupMetadataValue:
    flexible = version >= 4
    protocol_type = reader.string("protocolType", flexible=flexible)
    generation = reader.int32("generation")
    protocol = reader.nullable_string("protocol", flexible=flexible)
    leader = reader.nullable_string("leader", flexible=flexible)
    current_state_timestamp = reader.int64("currentStateTimestamp") if version >= 2 else -1
    count = reader.array_length("members", flexible=flexible)
    members = tuple(_member_metadata(reader, version) for _ in range(count))
    if flexible:
        reader.skip_tagged_fields("GroupMetadataValue")
    return GroupMetadataValue(
        version, protocol_type, generation, protocol, leader, current_state_timestamp, members
    )


def _member_metadata(reader: FieldReader, version: int) -> MemberMetadata:
    flexible = version >= 4
    member_id = reader.string("memberId", flexible=flexible)
    group_instance_id = reader.nullable_string("groupInstanceId", flexible=flexible) if version >= 3 else None
    client_id = reader.string("clientId", flexible=flexible)
    client_host = reader.string("clientHost", flexible=flexible)
    rebalance_timeout = reader.int32("rebalanceTimeout") if version >= 1 else -1
    session_timeout = reader.int32("sessionTimeout")
    subscription = reader.bytes("subscription", flexible=flexible)
    assignment = reader.bytes("assignment", flexible=flexible)
    if flexible:
        reader.skip_tagged_fields("MemberMetadata")
    return MemberMetadata(
        member_id,
        group_instance_id,
        client_id,
        client_host,
        rebalance_timeout,
        session_timeout,
        subscription,
        assignment,
    )


def _consumer_group_value(record_type: int, reader: FieldReader, version: int) -> CoordinatorValue:
    """The KIP-848 values: one valid version (0), flexible from version 0."""
    name = _CONSUMER_GROUP_VALUE_NAMES[record_type]
    _check_version(name, version, 0)
    value: CoordinatorValue
    if record_type == CONSUMER_GROUP_METADATA:
        value = ConsumerGroupMetadataValue(reader.int32("Epoch"))
    elif record_type == CONSUMER_GROUP_MEMBER_METADATA:
        value = _member_subscription(reader)
    elif record_type == CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA:
        value = ConsumerGroupTargetAssignmentMetadataValue(reader.int32("AssignmentEpoch"))
    elif record_type == CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT:
        value = _current_member_assignment(reader)
    elif record_type == CONSUMER_GROUP_REGULAR_EXPRESSION:
        topics = reader.strings("Topics", flexible=True)
        value = ConsumerGroupRegularExpressionValue(
            topics, reader.int64("Version"), reader.int64("Timestamp")
        )
    else:
        return OpaqueValue(record_type, version)
    reader.skip_tagged_fields(name)
    return value


_CONSUMER_GROUP_VALUE_NAMES = {
    CONSUMER_GROUP_METADATA: "ConsumerGroupMetadataValue",
    CONSUMER_GROUP_PARTITION_METADATA: "ConsumerGroupPartitionMetadataValue",
    CONSUMER_GROUP_MEMBER_METADATA: "ConsumerGroupMemberMetadataValue",
    CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA: "ConsumerGroupTargetAssignmentMetadataValue",
    CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER: "ConsumerGroupTargetAssignmentMemberValue",
    CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT: "ConsumerGroupCurrentMemberAssignmentValue",
    CONSUMER_GROUP_REGULAR_EXPRESSION: "ConsumerGroupRegularExpressionValue",
}


def _member_subscription(reader: FieldReader) -> ConsumerGroupMemberMetadataValue:
    return ConsumerGroupMemberMetadataValue(
        instance_id=reader.nullable_string("InstanceId", flexible=True),
        rack_id=reader.nullable_string("RackId", flexible=True),
        client_id=reader.string("ClientId", flexible=True),
        client_host=reader.string("ClientHost", flexible=True),
        subscribed_topic_names=reader.strings("SubscribedTopicNames", flexible=True),
        subscribed_topic_regex=reader.nullable_string("SubscribedTopicRegex", flexible=True),
        rebalance_timeout_ms=reader.int32("RebalanceTimeoutMs"),
        server_assignor=reader.nullable_string("ServerAssignor", flexible=True),
    )


def _current_member_assignment(reader: FieldReader) -> ConsumerGroupCurrentMemberAssignmentValue:
    member_epoch = reader.int32("MemberEpoch")
    previous_member_epoch = reader.int32("PreviousMemberEpoch")
    state = reader.int8("State")
    for field in ("AssignedPartitions", "PartitionsPendingRevocation"):
        for _ in range(reader.array_length(field, flexible=True)):
            reader.skip(16, f"{field} TopicId")  # uuid
            for _ in range(reader.array_length(f"{field} Partitions", flexible=True)):
                reader.int32(f"{field} Partitions")
            reader.skip_tagged_fields("TopicPartitions")
    return ConsumerGroupCurrentMemberAssignmentValue(member_epoch, previous_member_epoch, state)


# ----------------------------------------------------------------------------------------- consumer protocol


def decode_subscription_topics(data: bytes) -> tuple[str, ...]:
    """The topics of a classic consumer's ``ConsumerProtocolSubscription`` (a member's ``subscription``
    bytes when the group's protocol type is ``consumer``).

    As ``ClassicGroup.computeSubscribedTopics``: the int16 version header is read (negative is an error),
    then the body is read as version 0 (``Topics``, ``UserData``), the prefix every later version keeps, so
    the fields of versions 1-3 (owned partitions, generation, rack) are tolerated as trailing bytes.

    Raises:
        CoordinatorSchemaError: the bytes are not a subscription (Kafka then treats the group's subscribed
            topics as unknown).
    """
    reader = FieldReader(bytes(data))
    version = reader.int16("ConsumerProtocolSubscription version")
    if version < 0:
        raise CoordinatorSchemaError(f"unsupported subscription version: {version}")
    topics = reader.strings("Topics", flexible=False)
    reader.nullable_bytes("UserData", flexible=False)
    return topics
