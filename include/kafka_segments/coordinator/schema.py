"""The message schemas ``kafka-dump-log.sh`` decodes coordinator values with, as data: a ``Schema`` per
message, a ``Field`` per field, with the versions, nullability and tags of Kafka's JSON definitions
(``group-coordinator/src/main/resources/common/message/*.json`` at Kafka 4.1). The reader that walks them is
``coordinator.dump_log.read_message``.

``CONSUMER_GROUP_VALUES`` holds the values of the KIP-848 consumer-group records, by record type (3-8, 16):
``ConsumerGroupMetadataValue`` (with 4.1's ``MetadataHash``), ``ConsumerGroupPartitionMetadataValue``,
``ConsumerGroupMemberMetadataValue``, ``ConsumerGroupTargetAssignmentMetadataValue``,
``ConsumerGroupTargetAssignmentMemberValue``, ``ConsumerGroupCurrentMemberAssignmentValue`` and
``ConsumerGroupRegularExpressionValue``: one valid version (0), flexible from version 0."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Field:
    """One field of a message schema: ``versions`` / ``nullable`` as the schema's ``"N+"``, ``"N"``,
    ``"N-M"`` or ``"none"``; ``tag`` for a tagged field (written in JSON only when not ``default``).
    ``type`` is a primitive (``int8`` ... ``int64``, ``uuid``, ``string``, ``bytes``), ``[]<type>`` for an
    array, or a struct's name (``fields`` not empty) for a nested struct."""

    name: str
    type: str
    versions: str = "0+"
    nullable: str = "none"
    tag: int | None = None
    default: object = None
    fields: tuple[Field, ...] = ()


@dataclass(frozen=True, slots=True)
class Schema:
    name: str
    valid: str
    flexible: str
    fields: tuple[Field, ...]


@dataclass(frozen=True, slots=True)
class RecordSchemas:
    """One coordinator record type (a ``coordinator-key`` / ``coordinator-value`` pair of Kafka's JSON
    definitions, the type being their ``apiKey``): the key struct, read after the ``int16`` record type and
    never flexible, and the value schema, read after its ``int16`` version."""

    key: Schema
    value: Schema


GROUP_ID = Field("groupId", "string", "0")
MEMBER_ID = Field("memberId", "string", "0")


def coordinator_key(name: str, *fields: Field) -> Schema:
    """A ``coordinator-key`` message: valid version 0, not flexible."""
    return Schema(name, "0", "none", fields)


def in_versions(spec: str, version: int) -> bool:
    if spec == "none":
        return False
    if spec.endswith("+"):
        return version >= int(spec[:-1])
    low, _, high = spec.partition("-")
    return int(low) <= version <= int(high or low)


def value_v0(name: str, *fields: Field) -> Schema:
    """A ``coordinator-value`` message with one valid version (0), flexible from version 0."""
    return Schema(name, "0", "0+", fields)


TOPIC_PARTITIONS = (Field("topicId", "uuid"), Field("partitions", "[]int32"))
"""A ``TopicPartitions`` struct (topic id, partition numbers), shared by the consumer and share groups."""
_CLASSIC_MEMBER_METADATA = (
    Field("sessionTimeoutMs", "int32"),
    Field(
        "supportedProtocols",
        "[]ClassicProtocol",
        fields=(Field("name", "string"), Field("metadata", "bytes")),
    ),
)
_TOPIC_METADATA = (
    Field("topicId", "uuid"),
    Field("topicName", "string"),
    Field("numPartitions", "int32"),
    Field(
        "partitionMetadata",
        "[]PartitionMetadata",
        fields=(Field("partition", "int32"), Field("racks", "[]string")),
    ),
)
CONSUMER_GROUP_VALUES: dict[int, Schema] = {
    3: value_v0(
        "ConsumerGroupMetadataValue",
        Field("epoch", "int32"),
        Field("metadataHash", "int64", tag=0, default=0),
    ),
    4: value_v0(
        "ConsumerGroupPartitionMetadataValue",
        Field("topics", "[]TopicMetadata", fields=_TOPIC_METADATA),
    ),
    5: value_v0(
        "ConsumerGroupMemberMetadataValue",
        Field("instanceId", "string", nullable="0+"),
        Field("rackId", "string", nullable="0+"),
        Field("clientId", "string"),
        Field("clientHost", "string"),
        Field("subscribedTopicNames", "[]string"),
        Field("subscribedTopicRegex", "string", nullable="0+"),
        Field("rebalanceTimeoutMs", "int32"),
        Field("serverAssignor", "string", nullable="0+"),
        Field(
            "classicMemberMetadata",
            "ClassicMemberMetadata",
            nullable="0+",
            tag=0,
            default=None,
            fields=_CLASSIC_MEMBER_METADATA,
        ),
    ),
    6: value_v0("ConsumerGroupTargetAssignmentMetadataValue", Field("assignmentEpoch", "int32")),
    7: value_v0(
        "ConsumerGroupTargetAssignmentMemberValue",
        Field("topicPartitions", "[]TopicPartition", fields=TOPIC_PARTITIONS),
    ),
    8: value_v0(
        "ConsumerGroupCurrentMemberAssignmentValue",
        Field("memberEpoch", "int32"),
        Field("previousMemberEpoch", "int32"),
        Field("state", "int8"),
        Field("assignedPartitions", "[]TopicPartitions", fields=TOPIC_PARTITIONS),
        Field("partitionsPendingRevocation", "[]TopicPartitions", fields=TOPIC_PARTITIONS),
    ),
    16: value_v0(
        "ConsumerGroupRegularExpressionValue",
        Field("topics", "[]string"),
        Field("version", "int64"),
        Field("timestamp", "int64"),
    ),
}
