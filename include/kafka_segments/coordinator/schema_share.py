"""The share-group (KIP-932) records, as data: the ``__consumer_offsets`` records of share groups, and the
``__share_group_state`` records of the share coordinator, at Kafka 4.1.

``SHARE_GROUP_RECORDS`` (``group-coordinator/src/main/resources/common/message/ShareGroup*{Key,Value}.json``),
by record type (the ``apiKey``): 10 member metadata, 11 group metadata (with KIP-1101's ``MetadataHash``), 12
target assignment metadata, 13 target assignment member, 14 current member assignment, 15 share-group state
partition metadata. Type 9 (``ShareGroupPartitionMetadata``) is not here: KIP-1101 replaced it with the
metadata hash and Kafka 4.1 has no definition of it, so its dump-log prints it as an unknown record type.

``SHARE_STATE_RECORDS``: what ``kafka-dump-log.sh --share-group-state-decoder`` decodes, 0 ``ShareSnapshot``
and 1 ``ShareUpdate`` (``share-coordinator/src/main/resources/common/message/Share{Snapshot,Update}*.json``).

Kafka marks these schemas "in development, subject to non-backwards-compatible changes"; the fields here are
taken as 4.1's from Kafka's source before and after the 4.1 branch (docs/inspect.md says how, and which
fields could not be pinned to the 4.1 release commit by commit)."""

from __future__ import annotations

from kafka_segments.coordinator.schema import (
    GROUP_ID,
    MEMBER_ID,
    TOPIC_PARTITIONS,
    Field,
    RecordSchemas,
    coordinator_key,
    value_v0,
)

_TOPIC_PARTITIONS_INFO = (
    Field("topicId", "uuid"),
    Field("topicName", "string"),
    Field("partitions", "[]int32"),
)
_TOPIC_INFO = (Field("topicId", "uuid"), Field("topicName", "string"))


SHARE_GROUP_RECORDS: dict[int, RecordSchemas] = {
    10: RecordSchemas(
        coordinator_key("ShareGroupMemberMetadataKey", GROUP_ID, MEMBER_ID),
        value_v0(
            "ShareGroupMemberMetadataValue",
            Field("rackId", "string", nullable="0+"),
            Field("clientId", "string"),
            Field("clientHost", "string"),
            Field("subscribedTopicNames", "[]string"),
        ),
    ),
    11: RecordSchemas(
        coordinator_key("ShareGroupMetadataKey", GROUP_ID),
        value_v0("ShareGroupMetadataValue", Field("epoch", "int32"), Field("metadataHash", "int64")),
    ),
    12: RecordSchemas(
        coordinator_key("ShareGroupTargetAssignmentMetadataKey", GROUP_ID),
        value_v0("ShareGroupTargetAssignmentMetadataValue", Field("assignmentEpoch", "int32")),
    ),
    13: RecordSchemas(
        coordinator_key("ShareGroupTargetAssignmentMemberKey", GROUP_ID, MEMBER_ID),
        value_v0(
            "ShareGroupTargetAssignmentMemberValue",
            Field("topicPartitions", "[]TopicPartition", fields=TOPIC_PARTITIONS),
        ),
    ),
    14: RecordSchemas(
        coordinator_key("ShareGroupCurrentMemberAssignmentKey", GROUP_ID, MEMBER_ID),
        value_v0(
            "ShareGroupCurrentMemberAssignmentValue",
            Field("memberEpoch", "int32"),
            Field("previousMemberEpoch", "int32"),
            Field("state", "int8"),
            Field("assignedPartitions", "[]TopicPartitions", fields=TOPIC_PARTITIONS),
        ),
    ),
    15: RecordSchemas(
        coordinator_key("ShareGroupStatePartitionMetadataKey", GROUP_ID),
        value_v0(
            "ShareGroupStatePartitionMetadataValue",
            Field("initializingTopics", "[]TopicPartitionsInfo", fields=_TOPIC_PARTITIONS_INFO),
            Field("initializedTopics", "[]TopicPartitionsInfo", fields=_TOPIC_PARTITIONS_INFO),
            Field("deletingTopics", "[]TopicInfo", fields=_TOPIC_INFO),
        ),
    ),
}

_SHARE_PARTITION_KEY = (GROUP_ID, Field("topicId", "uuid", "0"), Field("partition", "int32", "0"))
_STATE_BATCH = (
    Field("firstOffset", "int64"),
    Field("lastOffset", "int64"),
    Field("deliveryState", "int8"),
    Field("deliveryCount", "int16"),
)
SHARE_STATE_RECORDS: dict[int, RecordSchemas] = {
    0: RecordSchemas(
        coordinator_key("ShareSnapshotKey", *_SHARE_PARTITION_KEY),
        value_v0(
            "ShareSnapshotValue",
            Field("snapshotEpoch", "int32"),
            Field("stateEpoch", "int32"),
            Field("leaderEpoch", "int32"),
            Field("startOffset", "int64"),
            Field("createTimestamp", "int64"),
            Field("writeTimestamp", "int64"),
            Field("stateBatches", "[]StateBatch", fields=_STATE_BATCH),
        ),
    ),
    1: RecordSchemas(
        coordinator_key("ShareUpdateKey", *_SHARE_PARTITION_KEY),
        value_v0(
            "ShareUpdateValue",
            Field("snapshotEpoch", "int32"),
            Field("leaderEpoch", "int32"),
            Field("startOffset", "int64"),
            Field("stateBatches", "[]StateBatch", fields=_STATE_BATCH),
        ),
    ),
}
