"""Encoding ``__consumer_offsets`` records as Kafka's group coordinator writes them (the mirror image of
``coordinator.keys`` and ``coordinator.values``).

Versions as ``GroupCoordinatorRecordHelpers`` writes them: OffsetCommit under record type 1, value v3, or v1
with an explicit expire timestamp (``offsetCommitValueVersion``); GroupMetadata under type 2, value v3;
tombstones have a null value. Schemas: ``group-coordinator/src/main/resources/common/message/*.json`` and
``clients/src/main/resources/common/message/ConsumerProtocol*.json`` (none of these versions is flexible).
A group's partition is ``GroupCoordinatorService.partitionFor`` (Java's ``String.hashCode``)."""

from __future__ import annotations

import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from kafka_segments.errors import LocatedError

OFFSET_COMMIT_RECORD_TYPE = 1
GROUP_METADATA_RECORD_TYPE = 2
OFFSET_COMMIT_VALUE_VERSION = 3
OFFSET_COMMIT_VALUE_VERSION_WITH_EXPIRY = 1
GROUP_METADATA_VALUE_VERSION = 3
CONSUMER_PROTOCOL_VERSION = 3
CONSUMER_PROTOCOL_TYPE = "consumer"
DEFAULT_OFFSETS_TOPIC_PARTITIONS = 50
NO_LEADER_EPOCH = -1
NO_TIMESTAMP = -1

_MAX_STRING_BYTES = 0x7FFF
_INT16, _INT32, _INT64 = (struct.Struct(f">{c}") for c in "hiq")


class CoordinatorEncodeError(LocatedError, ValueError):
    """A value that Kafka's generated writer would refuse (``location`` names the schema field)."""


# ---------------------------------------------------------------------------------------------------- values


@dataclass(frozen=True, slots=True)
class CoordinatorRecord:
    """One ``__consumer_offsets`` record: its key and value bytes (``value`` ``None`` = tombstone)."""

    key: bytes
    value: bytes | None


@dataclass(frozen=True, slots=True)
class OffsetCommit:
    """A committed offset as the coordinator stores it (``OffsetAndMetadata``)."""

    group: str
    topic: str
    partition: int
    offset: int
    commit_timestamp_ms: int
    metadata: str = ""
    leader_epoch: int = NO_LEADER_EPOCH
    expire_timestamp_ms: int | None = None
    """Set only by old clients asking for a per-commit retention: the value is then written as v1."""


@dataclass(frozen=True, slots=True)
class GroupMember:
    """A classic group member (``GroupMetadataValue.MemberMetadata``)."""

    member_id: str
    client_id: str
    client_host: str
    subscription: bytes
    """The member's protocol metadata (for consumers: ``consumer_subscription``)."""
    assignment: bytes
    """What the leader assigned it (for consumers: ``consumer_assignment``)."""
    group_instance_id: str | None = None
    rebalance_timeout_ms: int = 300_000
    session_timeout_ms: int = 45_000


@dataclass(frozen=True, slots=True)
class GroupMetadata:
    """A classic group's state as ``newGroupMetadataRecord`` writes it after a rebalance.

    An empty group keeps its protocol type, has no protocol, leader or members, and
    ``current_state_timestamp_ms`` is when it became Empty (the base of its offsets' expiry, KIP-211)."""

    group: str
    protocol_type: str = CONSUMER_PROTOCOL_TYPE
    generation: int = 0
    protocol: str | None = None
    leader: str | None = None
    current_state_timestamp_ms: int = NO_TIMESTAMP
    members: tuple[GroupMember, ...] = ()


# ---------------------------------------------------------------------------------------------------- writer


class _Writer:
    """Kafka's ``Writable`` for one non-flexible struct: primitive writes that name the field they refuse."""

    __slots__ = ("_parts", "_struct")

    def __init__(self, struct_name: str) -> None:
        self._struct = struct_name
        self._parts: list[bytes] = []

    def _fixed(self, codec: struct.Struct, value: int, field: str) -> None:
        try:
            self._parts.append(codec.pack(value))
        except struct.error as exc:
            raise self.error(field, f"{value} does not fit in {codec.size * 8} bits") from exc

    def int16(self, value: int, field: str) -> None:
        self._fixed(_INT16, value, field)

    def int32(self, value: int, field: str) -> None:
        self._fixed(_INT32, value, field)

    def int64(self, value: int, field: str) -> None:
        self._fixed(_INT64, value, field)

    def nullable_string(self, value: str | None, field: str) -> None:
        if value is None:
            self._parts.append(_INT16.pack(-1))
            return
        data = value.encode("utf-8")
        if len(data) > _MAX_STRING_BYTES:
            raise self.error(field, f"is too long to be serialized ({len(data)} bytes, at most 32767)")
        self._parts.append(_INT16.pack(len(data)) + data)

    def string(self, value: str, field: str) -> None:
        self.nullable_string(value, field)

    def nullable_bytes(self, value: bytes | None, field: str) -> None:
        if value is None:
            self._parts.append(_INT32.pack(-1))
            return
        self._parts.append(_INT32.pack(len(value)) + bytes(value))

    def array_length(self, count: int, field: str) -> None:
        self.int32(count, field)

    def topic_partitions(self, partitions: Mapping[str, Sequence[int]], field: str) -> None:
        """An array of ``{Topic: string, Partitions: [int32]}`` in the mapping's order."""
        self.array_length(len(partitions), field)
        for topic, numbers in partitions.items():
            self.string(topic, f"{field}.Topic")
            self.array_length(len(numbers), f"{field}.Partitions")
            for number in numbers:
                self.int32(number, f"{field}.Partitions")

    def error(self, field: str, reason: str) -> CoordinatorEncodeError:
        return CoordinatorEncodeError(reason, location=f"{self._struct}.{field}")

    def done(self) -> bytes:
        return b"".join(self._parts)


# ------------------------------------------------------------------------------------------------ offsets


def offset_commit_key(group: str, topic: str, partition: int) -> bytes:
    """``OffsetCommitKey`` under record type 1."""
    writer = _Writer("OffsetCommitKey")
    writer.int16(OFFSET_COMMIT_RECORD_TYPE, "record type")
    writer.string(group, "group")
    writer.string(topic, "topic")
    writer.int32(partition, "partition")
    return writer.done()


def offset_commit_value(commit: OffsetCommit) -> bytes:
    """``OffsetCommitValue``: v1 when the commit has an explicit expire timestamp, else v3."""
    if commit.expire_timestamp_ms is not None:
        writer = _Writer("OffsetCommitValue")
        writer.int16(OFFSET_COMMIT_VALUE_VERSION_WITH_EXPIRY, "version")
        writer.int64(commit.offset, "offset")
        writer.string(commit.metadata, "metadata")
        writer.int64(commit.commit_timestamp_ms, "commitTimestamp")
        writer.int64(commit.expire_timestamp_ms, "expireTimestamp")
        return writer.done()
    writer = _Writer("OffsetCommitValue")
    writer.int16(OFFSET_COMMIT_VALUE_VERSION, "version")
    writer.int64(commit.offset, "offset")
    writer.int32(commit.leader_epoch, "leaderEpoch")
    writer.string(commit.metadata, "metadata")
    writer.int64(commit.commit_timestamp_ms, "commitTimestamp")
    return writer.done()


def offset_commit_record(commit: OffsetCommit) -> CoordinatorRecord:
    """``newOffsetCommitRecord``."""
    key = offset_commit_key(commit.group, commit.topic, commit.partition)
    return CoordinatorRecord(key, offset_commit_value(commit))


def offset_commit_tombstone(group: str, topic: str, partition: int) -> CoordinatorRecord:
    """``newOffsetCommitTombstoneRecord``: the offset was deleted or expired."""
    return CoordinatorRecord(offset_commit_key(group, topic, partition), None)


# ------------------------------------------------------------------------------------------------- groups


def group_metadata_key(group: str) -> bytes:
    """``GroupMetadataKey`` under record type 2."""
    writer = _Writer("GroupMetadataKey")
    writer.int16(GROUP_METADATA_RECORD_TYPE, "record type")
    writer.string(group, "group")
    return writer.done()


def group_metadata_value(metadata: GroupMetadata) -> bytes:
    """``GroupMetadataValue`` v3."""
    writer = _Writer("GroupMetadataValue")
    writer.int16(GROUP_METADATA_VALUE_VERSION, "version")
    writer.string(metadata.protocol_type, "protocolType")
    writer.int32(metadata.generation, "generation")
    writer.nullable_string(metadata.protocol, "protocol")
    writer.nullable_string(metadata.leader, "leader")
    writer.int64(metadata.current_state_timestamp_ms, "currentStateTimestamp")
    writer.array_length(len(metadata.members), "members")
    for member in metadata.members:
        _write_member(writer, member)
    return writer.done()


def _write_member(writer: _Writer, member: GroupMember) -> None:
    writer.string(member.member_id, "members.memberId")
    writer.nullable_string(member.group_instance_id, "members.groupInstanceId")
    writer.string(member.client_id, "members.clientId")
    writer.string(member.client_host, "members.clientHost")
    writer.int32(member.rebalance_timeout_ms, "members.rebalanceTimeout")
    writer.int32(member.session_timeout_ms, "members.sessionTimeout")
    writer.nullable_bytes(member.subscription, "members.subscription")
    writer.nullable_bytes(member.assignment, "members.assignment")


def group_metadata_record(metadata: GroupMetadata) -> CoordinatorRecord:
    """``newGroupMetadataRecord``."""
    return CoordinatorRecord(group_metadata_key(metadata.group), group_metadata_value(metadata))


def group_metadata_tombstone(group: str) -> CoordinatorRecord:
    """``newGroupMetadataTombstoneRecord``: the group was deleted."""
    return CoordinatorRecord(group_metadata_key(group), None)


# -------------------------------------------------------------------------------------- consumer protocol


def consumer_subscription(
    topics: Sequence[str],
    *,
    owned_partitions: Mapping[str, Sequence[int]] | None = None,
    generation_id: int = -1,
    rack_id: str | None = None,
    user_data: bytes | None = None,
) -> bytes:
    """A classic consumer's ``ConsumerProtocolSubscription`` v3 (a member's ``subscription``)."""
    writer = _Writer("ConsumerProtocolSubscription")
    writer.int16(CONSUMER_PROTOCOL_VERSION, "version")
    writer.array_length(len(topics), "Topics")
    for topic in topics:
        writer.string(topic, "Topics")
    writer.nullable_bytes(user_data, "UserData")
    writer.topic_partitions(owned_partitions or {}, "OwnedPartitions")
    writer.int32(generation_id, "GenerationId")
    writer.nullable_string(rack_id, "RackId")
    return writer.done()


def consumer_assignment(partitions: Mapping[str, Sequence[int]], *, user_data: bytes | None = None) -> bytes:
    """A classic consumer's ``ConsumerProtocolAssignment`` v3 (a member's ``assignment``)."""
    writer = _Writer("ConsumerProtocolAssignment")
    writer.int16(CONSUMER_PROTOCOL_VERSION, "version")
    writer.topic_partitions(partitions, "AssignedPartitions")
    writer.nullable_bytes(user_data, "UserData")
    return writer.done()


# ----------------------------------------------------------------------------------------------- placement


def java_string_hash(text: str) -> int:
    """Java's ``String.hashCode``: ``s[0]*31^(n-1) + ... + s[n-1]`` over UTF-16 code units, in int32."""
    data = text.encode("utf-16-be", errors="surrogatepass")
    value = 0
    for index in range(0, len(data), 2):
        value = (31 * value + (data[index] << 8 | data[index + 1])) & 0xFFFFFFFF
    return value - (1 << 32) if value >= 1 << 31 else value


def partition_for_group(group_id: str, *, partitions: int = DEFAULT_OFFSETS_TOPIC_PARTITIONS) -> int:
    """The ``__consumer_offsets`` partition holding ``group_id`` (``GroupCoordinatorService.partitionFor``).

    Raises:
        CoordinatorEncodeError: ``partitions`` < 1 (``offsets.topic.num.partitions`` is at least 1).
    """
    if partitions < 1:
        raise CoordinatorEncodeError(
            f"needs at least 1 partition, got {partitions}", location="offsets.topic.num.partitions"
        )
    hashed = java_string_hash(group_id)
    return (0 if hashed == -(1 << 31) else abs(hashed)) % partitions
