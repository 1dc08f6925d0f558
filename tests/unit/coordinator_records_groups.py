"""The test-side schemas of the share-group (KIP-932) and streams-group (KIP-1071) records of
``__consumer_offsets`` and of ``__share_group_state``, for ``unit.coordinator_records``' encoder.

Transcriptions of Kafka's JSON definitions as of 4.1
(``group-coordinator/src/main/resources/common/message/{ShareGroup,StreamsGroup}*{Key,Value}.json``,
``share-coordinator/.../Share{Snapshot,Update}{Key,Value}.json``): field names, types, versions, nullable
versions, tags and defaults as Kafka writes them. They share no code
with the library's decoder (``kafka_segments.coordinator.schema_share`` / ``_streams``);
``test_coordinator_json_share_streams`` checks the two agree field by field.

``RECORDS`` maps each record type (the key's ``apiKey``) to ``(key schema, value schema)``;
``SHARE_STATE_RECORDS`` does the same for ``__share_group_state``."""

from __future__ import annotations

from unit.coordinator_records import GROUP_KEY, GROUP_MEMBER_KEY, Schema, _f


def _v0(*fields: dict[str, object]) -> Schema:
    return {"validVersions": "0", "flexibleVersions": "0+", "fields": list(fields)}


TOPIC_PARTITIONS = [_f("TopicId", "uuid"), _f("Partitions", "[]int32")]
TOPIC_PARTITIONS_INFO = [_f("TopicId", "uuid"), _f("TopicName", "string"), _f("Partitions", "[]int32")]
TOPIC_INFO = [_f("TopicId", "uuid"), _f("TopicName", "string")]

SHARE_GROUP_MEMBER_METADATA_VALUE = _v0(
    _f("RackId", "string", nullableVersions="0+"),
    _f("ClientId", "string"),
    _f("ClientHost", "string"),
    _f("SubscribedTopicNames", "[]string"),
)
SHARE_GROUP_METADATA_VALUE = _v0(_f("Epoch", "int32"), _f("MetadataHash", "int64"))
SHARE_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE = _v0(_f("AssignmentEpoch", "int32"))
SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE = _v0(
    _f("TopicPartitions", "[]TopicPartition", fields=TOPIC_PARTITIONS)
)
SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE = _v0(
    _f("MemberEpoch", "int32"),
    _f("PreviousMemberEpoch", "int32"),
    _f("State", "int8"),
    _f("AssignedPartitions", "[]TopicPartitions", fields=TOPIC_PARTITIONS),
)
SHARE_GROUP_STATE_PARTITION_METADATA_VALUE = _v0(
    _f("InitializingTopics", "[]TopicPartitionsInfo", fields=TOPIC_PARTITIONS_INFO),
    _f("InitializedTopics", "[]TopicPartitionsInfo", fields=TOPIC_PARTITIONS_INFO),
    _f("DeletingTopics", "[]TopicInfo", fields=TOPIC_INFO),
)

STREAMS_GROUP_METADATA_VALUE = _v0(
    _f("Epoch", "int32"),
    _f("MetadataHash", "int64"),
    _f("ValidatedTopologyEpoch", "int32", taggedVersions="0+", tag=0, default=-1),
)
KEY_VALUE = [_f("Key", "string"), _f("Value", "string")]
STREAMS_GROUP_MEMBER_METADATA_VALUE = _v0(
    _f("InstanceId", "string", nullableVersions="0+"),
    _f("RackId", "string", nullableVersions="0+"),
    _f("ClientId", "string"),
    _f("ClientHost", "string"),
    _f("RebalanceTimeoutMs", "int32", default=-1),
    _f("TopologyEpoch", "int32"),
    _f("ProcessId", "string"),
    _f(
        "UserEndpoint",
        "Endpoint",
        nullableVersions="0+",
        default=None,
        fields=[_f("Host", "string"), _f("Port", "uint16")],
    ),
    _f("ClientTags", "[]KeyValue", fields=KEY_VALUE),
)
TASK_IDS = [_f("SubtopologyId", "string"), _f("Partitions", "[]int32")]
STREAMS_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE = _v0(_f("AssignmentEpoch", "int32"))
STREAMS_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE = _v0(
    _f("ActiveTasks", "[]TaskIds", fields=TASK_IDS),
    _f("StandbyTasks", "[]TaskIds", fields=TASK_IDS),
    _f("WarmupTasks", "[]TaskIds", fields=TASK_IDS),
)
STREAMS_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE = _v0(
    _f("MemberEpoch", "int32"),
    _f("PreviousMemberEpoch", "int32"),
    _f("State", "int8"),
    _f("ActiveTasks", "[]TaskIds", fields=TASK_IDS),
    _f("StandbyTasks", "[]TaskIds", fields=TASK_IDS),
    _f("WarmupTasks", "[]TaskIds", fields=TASK_IDS),
    _f("ActiveTasksPendingRevocation", "[]TaskIds", fields=TASK_IDS),
    _f("StandbyTasksPendingRevocation", "[]TaskIds", fields=TASK_IDS),
    _f("WarmupTasksPendingRevocation", "[]TaskIds", fields=TASK_IDS),
)
TOPIC_CONFIG = [_f("key", "string"), _f("value", "string")]
STREAMS_TOPIC_INFO = [
    _f("Name", "string"),
    _f("Partitions", "int32"),
    _f("ReplicationFactor", "int16"),
    _f("TopicConfigs", "[]TopicConfig", fields=TOPIC_CONFIG),
]
STREAMS_GROUP_TOPOLOGY_VALUE = _v0(
    _f("Epoch", "int32"),
    _f(
        "Subtopologies",
        "[]Subtopology",
        fields=[
            _f("SubtopologyId", "string"),
            _f("SourceTopics", "[]string"),
            _f("SourceTopicRegex", "[]string"),
            _f("StateChangelogTopics", "[]TopicInfo", fields=STREAMS_TOPIC_INFO),
            _f("RepartitionSinkTopics", "[]string"),
            _f("RepartitionSourceTopics", "[]TopicInfo", fields=STREAMS_TOPIC_INFO),
            _f(
                "CopartitionGroups",
                "[]CopartitionGroup",
                fields=[
                    _f("SourceTopics", "[]int16"),
                    _f("SourceTopicRegex", "[]int16"),
                    _f("RepartitionSourceTopics", "[]int16"),
                ],
            ),
        ],
    ),
)

RECORDS: dict[int, tuple[Schema, Schema]] = {
    10: (GROUP_MEMBER_KEY, SHARE_GROUP_MEMBER_METADATA_VALUE),
    11: (GROUP_KEY, SHARE_GROUP_METADATA_VALUE),
    12: (GROUP_KEY, SHARE_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE),
    13: (GROUP_MEMBER_KEY, SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE),
    14: (GROUP_MEMBER_KEY, SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE),
    15: (GROUP_KEY, SHARE_GROUP_STATE_PARTITION_METADATA_VALUE),
    17: (GROUP_KEY, STREAMS_GROUP_METADATA_VALUE),
    19: (GROUP_MEMBER_KEY, STREAMS_GROUP_MEMBER_METADATA_VALUE),
    20: (GROUP_KEY, STREAMS_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE),
    21: (GROUP_MEMBER_KEY, STREAMS_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE),
    22: (GROUP_MEMBER_KEY, STREAMS_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE),
    23: (GROUP_KEY, STREAMS_GROUP_TOPOLOGY_VALUE),
}

SHARE_PARTITION_KEY: Schema = {
    "flexibleVersions": "none",
    "fields": [_f("GroupId", "string", "0"), _f("TopicId", "uuid", "0"), _f("Partition", "int32", "0")],
}
STATE_BATCH = [
    _f("FirstOffset", "int64"),
    _f("LastOffset", "int64"),
    _f("DeliveryState", "int8"),
    _f("DeliveryCount", "int16"),
]
SHARE_SNAPSHOT_VALUE = _v0(
    _f("SnapshotEpoch", "int32"),
    _f("StateEpoch", "int32"),
    _f("LeaderEpoch", "int32"),
    _f("StartOffset", "int64"),
    _f("CreateTimestamp", "int64"),
    _f("WriteTimestamp", "int64"),
    _f("StateBatches", "[]StateBatch", fields=STATE_BATCH),
)
SHARE_UPDATE_VALUE = _v0(
    _f("SnapshotEpoch", "int32"),
    _f("LeaderEpoch", "int32"),
    _f("StartOffset", "int64"),
    _f("StateBatches", "[]StateBatch", fields=STATE_BATCH),
)
SHARE_STATE_RECORDS: dict[int, tuple[Schema, Schema]] = {
    0: (SHARE_PARTITION_KEY, SHARE_SNAPSHOT_VALUE),
    1: (SHARE_PARTITION_KEY, SHARE_UPDATE_VALUE),
}
