"""Decoding the records of ``__consumer_offsets`` with Kafka's group-coordinator message schemas.

Record layout (``CoordinatorRecordSerde``): key = ``int16 record type`` + key struct; value = ``int16 value
version`` + value struct, or null (a tombstone). Record types (``GroupCoordinatorRecordSerde``): 0 and 1
OffsetCommit (same key layout; 0 is the legacy type), 2 GroupMetadata (classic groups), 3-8 KIP-848 consumer
groups, 16 consumer-group regular expressions; the rest (share and streams groups, future types) are
"unknown" here and the coordinator loader skips them too (``UnknownRecordTypeException`` is logged and
ignored by ``CoordinatorLoaderImpl``). Kafka 4.0-4.2 read type 0 values as OffsetCommitValue v0-4; 4.3 reads
them as ``LegacyOffsetCommitValue`` (version 0 only, the bytes of OffsetCommitValue v0, the only version
ever written under type 0). This reader accepts OffsetCommitValue v0-4 under both types.

Encodings, as Kafka's generated ``read`` methods (``MessageUtil`` / ``ByteBufferAccessor``): big-endian
ints; in non-flexible versions strings are ``int16 length + UTF-8`` (nullable: negative = null), bytes are
``int32 length + data``, arrays ``int32 count``; flexible versions use compact forms (unsigned varint of
length + 1, 0 = null) and end every struct with a tagged-field section (unsigned varint count, then per
field: tag, size, data). None of the tagged fields matters here, so all are skipped by their size. A
non-nullable field serialized as null, a length running past the end, an array longer than the bytes left
and a value version outside the schema's ``validVersions`` are errors (``CoordinatorRecordSerde`` raises
``UnknownRecordVersionException`` for the last). Bytes left after a struct are ignored, as by Kafka.
Invalid UTF-8 decodes with U+FFFD, as Java's ``new String(bytes, UTF_8)``.

Schemas: ``group-coordinator/src/main/resources/common/message/*.json`` and
``clients/src/main/resources/common/message/ConsumerProtocolSubscription.json``.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

OFFSET_COMMIT_LEGACY = 0
OFFSET_COMMIT = 1
GROUP_METADATA = 2
CONSUMER_GROUP_METADATA = 3
CONSUMER_GROUP_PARTITION_METADATA = 4
CONSUMER_GROUP_MEMBER_METADATA = 5
CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA = 6
CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER = 7
CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT = 8
CONSUMER_GROUP_REGULAR_EXPRESSION = 16

_CONSUMER_GROUP_TYPES = frozenset({3, 4, 5, 6, 7, 8, 16})
_KEYS_WITH_MEMBER = frozenset({5, 7, 8})
_INT8, _INT16, _INT32, _INT64 = (struct.Struct(f">{c}") for c in "bhiq")
_MAX_STRING_LENGTH = 0x7FFF


class CoordinatorSchemaError(ValueError):
    """Bytes that do not follow the schema (the message says which field); callers add the location."""


# ---------------------------------------------------------------------------------------------------- values


@dataclass(frozen=True, slots=True)
class OffsetCommitKey:
    """``OffsetCommitKey`` / ``LegacyOffsetCommitKey`` (record types 1 / 0)."""

    record_type: int
    group: str
    topic: str
    partition: int


@dataclass(frozen=True, slots=True)
class GroupMetadataKey:
    """``GroupMetadataKey`` (record type 2): a classic group."""

    group: str


@dataclass(frozen=True, slots=True)
class ConsumerGroupRecordKey:
    """The key of a KIP-848 consumer-group record (types 3-8, 16): the group, and the member id (types 5, 7,
    8) or the regular expression (type 16)."""

    record_type: int
    group: str
    member_id: str | None = None
    regular_expression: str | None = None


@dataclass(frozen=True, slots=True)
class UnknownRecordKey:
    """A record type this reader does not know; its key and value are not decoded."""

    record_type: int


CoordinatorKey = OffsetCommitKey | GroupMetadataKey | ConsumerGroupRecordKey | UnknownRecordKey


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


# ---------------------------------------------------------------------------------------------------- reader


class _Reader:
    """Kafka's ``Readable`` over one key or value: primitive reads that name the field when they fail."""

    __slots__ = ("_data", "_pos")

    def __init__(self, data: bytes) -> None:
        self._data = data
        self._pos = 0

    @property
    def remaining(self) -> int:
        return len(self._data) - self._pos

    def _take(self, size: int, field: str) -> bytes:
        if size > self.remaining:
            raise CoordinatorSchemaError(
                f"{field}: needs {size} bytes at byte {self._pos} but only {self.remaining} remain"
            )
        chunk = self._data[self._pos : self._pos + size]
        self._pos += size
        return chunk

    def skip(self, size: int, field: str) -> None:
        self._take(size, field)

    def _fixed(self, codec: struct.Struct, field: str) -> int:
        value: int = codec.unpack(self._take(codec.size, field))[0]
        return value

    def int8(self, field: str) -> int:
        return self._fixed(_INT8, field)

    def int16(self, field: str) -> int:
        return self._fixed(_INT16, field)

    def int32(self, field: str) -> int:
        return self._fixed(_INT32, field)

    def int64(self, field: str) -> int:
        return self._fixed(_INT64, field)

    def uvarint(self, field: str) -> int:
        """``ByteUtils.readUnsignedVarint``: at most 5 bytes, read as a signed Java int."""
        value = 0
        for shift in range(0, 35, 7):
            byte = self._take(1, field)[0]
            value |= (byte & 0x7F) << shift
            if not byte & 0x80:
                value &= 0xFFFFFFFF
                return value - (1 << 32) if value >= 1 << 31 else value
        raise CoordinatorSchemaError(
            f"{field}: unsigned varint at byte {self._pos - 5} is longer than 5 bytes"
        )

    def _length(self, field: str, *, flexible: bool, wide: bool) -> int:
        if flexible:
            return self.uvarint(field) - 1
        return self.int32(field) if wide else self.int16(field)

    def nullable_string(self, field: str, *, flexible: bool) -> str | None:
        length = self._length(field, flexible=flexible, wide=False)
        if length < 0:
            return None
        if length > _MAX_STRING_LENGTH:
            raise CoordinatorSchemaError(f"{field}: string length {length} exceeds {_MAX_STRING_LENGTH}")
        return self._take(length, field).decode("utf-8", errors="replace")

    def string(self, field: str, *, flexible: bool) -> str:
        value = self.nullable_string(field, flexible=flexible)
        if value is None:
            raise CoordinatorSchemaError(f"non-nullable field {field} was serialized as null")
        return value

    def nullable_bytes(self, field: str, *, flexible: bool) -> bytes | None:
        length = self._length(field, flexible=flexible, wide=True)
        return None if length < 0 else self._take(length, field)

    def bytes(self, field: str, *, flexible: bool) -> bytes:
        value = self.nullable_bytes(field, flexible=flexible)
        if value is None:
            raise CoordinatorSchemaError(f"non-nullable field {field} was serialized as null")
        return value

    def array_length(self, field: str, *, flexible: bool) -> int:
        count = self._length(field, flexible=flexible, wide=True)
        if count < 0:
            raise CoordinatorSchemaError(f"non-nullable field {field} was serialized as null")
        if count > self.remaining:
            raise CoordinatorSchemaError(
                f"{field}: tried to allocate a collection of size {count}, "
                f"but there are only {self.remaining} bytes remaining"
            )
        return count

    def strings(self, field: str, *, flexible: bool) -> tuple[str, ...]:
        count = self.array_length(field, flexible=flexible)
        return tuple(self.string(field, flexible=flexible) for _ in range(count))

    def skip_tagged_fields(self, struct_name: str) -> None:
        """Skip a flexible struct's tagged-field section (every tag, known or not, by its size)."""
        count = self.uvarint(f"{struct_name} tagged field count")
        for _ in range(count):
            tag = self.uvarint(f"{struct_name} tag")
            size = self.uvarint(f"{struct_name} tag {tag} size")
            if size < 0:
                raise CoordinatorSchemaError(f"{struct_name} tag {tag}: negative size {size}")
            self.skip(size, f"{struct_name} tag {tag}")


# ------------------------------------------------------------------------------------------------------ keys


def decode_key(data: bytes | None) -> CoordinatorKey:
    """The record type and key struct of a ``__consumer_offsets`` record key.

    Raises:
        CoordinatorSchemaError: no key, or the key does not follow its type's schema.
    """
    if data is None:
        raise CoordinatorSchemaError("the record has no key (every coordinator record has one)")
    reader = _Reader(bytes(data))
    record_type = reader.int16("record type")
    if record_type in (OFFSET_COMMIT_LEGACY, OFFSET_COMMIT):
        group = reader.string("group", flexible=False)
        topic = reader.string("topic", flexible=False)
        return OffsetCommitKey(record_type, group, topic, reader.int32("partition"))
    if record_type == GROUP_METADATA:
        return GroupMetadataKey(reader.string("group", flexible=False))
    if record_type in _CONSUMER_GROUP_TYPES:
        group = reader.string("GroupId", flexible=False)
        if record_type in _KEYS_WITH_MEMBER:
            return ConsumerGroupRecordKey(
                record_type, group, member_id=reader.string("MemberId", flexible=False)
            )
        if record_type == CONSUMER_GROUP_REGULAR_EXPRESSION:
            regex = reader.string("RegularExpression", flexible=False)
            return ConsumerGroupRecordKey(record_type, group, regular_expression=regex)
        return ConsumerGroupRecordKey(record_type, group)
    return UnknownRecordKey(record_type)


# ---------------------------------------------------------------------------------------------------- values


def decode_value(key: CoordinatorKey, data: bytes | None) -> CoordinatorValue | None:
    """The value of a record whose key is ``key``: ``None`` for a tombstone.

    Raises:
        CoordinatorSchemaError: unknown value version, or bytes that do not follow the schema.
    """
    if data is None or isinstance(key, UnknownRecordKey):
        return None
    reader = _Reader(bytes(data))
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


def _offset_commit_value(reader: _Reader, version: int) -> OffsetCommitValue:
    flexible = version >= 4
    offset = reader.int64("offset")
    leader_epoch = reader.int32("leaderEpoch") if version >= 3 else -1
    metadata = reader.string("metadata", flexible=flexible)
    commit_timestamp = reader.int64("commitTimestamp")
    expire_timestamp = reader.int64("expireTimestamp") if version == 1 else -1
    if flexible:
        reader.skip_tagged_fields("OffsetCommitValue")
    return OffsetCommitValue(version, offset, leader_epoch, metadata, commit_timestamp, expire_timestamp)


def _group_metadata_value(reader: _Reader, version: int) -> GroupMetadataValue:
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


def _member_metadata(reader: _Reader, version: int) -> MemberMetadata:
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


def _consumer_group_value(record_type: int, reader: _Reader, version: int) -> CoordinatorValue:
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


def _member_subscription(reader: _Reader) -> ConsumerGroupMemberMetadataValue:
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


def _current_member_assignment(reader: _Reader) -> ConsumerGroupCurrentMemberAssignmentValue:
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
    reader = _Reader(bytes(data))
    version = reader.int16("ConsumerProtocolSubscription version")
    if version < 0:
        raise CoordinatorSchemaError(f"unsupported subscription version: {version}")
    topics = reader.strings("Topics", flexible=False)
    reader.nullable_bytes("UserData", flexible=False)
    return topics
