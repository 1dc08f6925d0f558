"""The keys of ``__consumer_offsets`` records (``CoordinatorRecordSerde``): the record type, and the key
struct that names the group. Types (``GroupCoordinatorRecordSerde``): 0 and 1 OffsetCommit, 2 GroupMetadata,
3-8 KIP-848 consumer groups, 16 regular expressions; others are "unknown" and skipped, as
``CoordinatorLoaderImpl`` does. Schemas: ``group-coordinator/src/main/resources/common/message/*Key.json``."""

from __future__ import annotations

from dataclasses import dataclass

from kafka_segments.coordinator.fields import CoordinatorSchemaError, FieldReader

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


def decode_key(data: bytes | None) -> CoordinatorKey:
    """The record type and key struct of a ``__consumer_offsets`` record key.

    Raises:
        CoordinatorSchemaError: no key, or the key does not follow its type's schema.
    """
    if data is None:
        raise CoordinatorSchemaError("the record has no key (every coordinator record has one)")
    reader = FieldReader(bytes(data))
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
