"""The streams-group (KIP-1071) records of ``__consumer_offsets``, as data, at Kafka 4.1
(``group-coordinator/src/main/resources/common/message/StreamsGroup*{Key,Value}.json``).

``STREAMS_GROUP_RECORDS``, by record type (the ``apiKey``): 17 group metadata (with KIP-1101's
``MetadataHash`` and the tagged ``ValidatedTopologyEpoch``), 19 member metadata (its ``UserEndpoint`` a
nullable struct, its port a ``uint16``), 20 target assignment metadata, 21 target assignment member, 22
current member assignment, 23 topology. Type 18 (``StreamsGroupPartitionMetadata``) is not here: KIP-1101
replaced it with the metadata hash and Kafka 4.1 has no definition of it, so its dump-log prints it as an
unknown record type. Later Kafka versions add tagged fields (``LastAssignmentConfigs``, tag 1 of the group
metadata); 4.1 does not know them, so they are skipped as unknown tags, as 4.1 does."""

from __future__ import annotations

from kafka_segments.coordinator.schema import (
    GROUP_ID,
    MEMBER_ID,
    Field,
    RecordSchemas,
    coordinator_key,
    value_v0,
)

_KEY_VALUE = (Field("key", "string"), Field("value", "string"))
_TASK_IDS = (Field("subtopologyId", "string"), Field("partitions", "[]int32"))
_TOPIC_INFO = (
    Field("name", "string"),
    Field("partitions", "int32"),
    Field("replicationFactor", "int16"),
    Field("topicConfigs", "[]TopicConfig", fields=_KEY_VALUE),
)
_COPARTITION_GROUP = (
    Field("sourceTopics", "[]int16"),
    Field("sourceTopicRegex", "[]int16"),
    Field("repartitionSourceTopics", "[]int16"),
)
_SUBTOPOLOGY = (
    Field("subtopologyId", "string"),
    Field("sourceTopics", "[]string"),
    Field("sourceTopicRegex", "[]string"),
    Field("stateChangelogTopics", "[]TopicInfo", fields=_TOPIC_INFO),
    Field("repartitionSinkTopics", "[]string"),
    Field("repartitionSourceTopics", "[]TopicInfo", fields=_TOPIC_INFO),
    Field("copartitionGroups", "[]CopartitionGroup", fields=_COPARTITION_GROUP),
)


def _tasks(*names: str) -> tuple[Field, ...]:
    return tuple(Field(name, "[]TaskIds", fields=_TASK_IDS) for name in names)


_ASSIGNED_TASKS = ("activeTasks", "standbyTasks", "warmupTasks")

STREAMS_GROUP_RECORDS: dict[int, RecordSchemas] = {
    17: RecordSchemas(
        coordinator_key("StreamsGroupMetadataKey", GROUP_ID),
        value_v0(
            "StreamsGroupMetadataValue",
            Field("epoch", "int32"),
            Field("metadataHash", "int64"),
            Field("validatedTopologyEpoch", "int32", tag=0, default=-1),
        ),
    ),
    19: RecordSchemas(
        coordinator_key("StreamsGroupMemberMetadataKey", GROUP_ID, MEMBER_ID),
        value_v0(
            "StreamsGroupMemberMetadataValue",
            Field("instanceId", "string", nullable="0+"),
            Field("rackId", "string", nullable="0+"),
            Field("clientId", "string"),
            Field("clientHost", "string"),
            Field("rebalanceTimeoutMs", "int32"),
            Field("topologyEpoch", "int32"),
            Field("processId", "string"),
            Field(
                "userEndpoint",
                "Endpoint",
                nullable="0+",
                fields=(Field("host", "string"), Field("port", "uint16")),
            ),
            Field("clientTags", "[]KeyValue", fields=_KEY_VALUE),
        ),
    ),
    20: RecordSchemas(
        coordinator_key("StreamsGroupTargetAssignmentMetadataKey", GROUP_ID),
        value_v0("StreamsGroupTargetAssignmentMetadataValue", Field("assignmentEpoch", "int32")),
    ),
    21: RecordSchemas(
        coordinator_key("StreamsGroupTargetAssignmentMemberKey", GROUP_ID, MEMBER_ID),
        value_v0("StreamsGroupTargetAssignmentMemberValue", *_tasks(*_ASSIGNED_TASKS)),
    ),
    22: RecordSchemas(
        coordinator_key("StreamsGroupCurrentMemberAssignmentKey", GROUP_ID, MEMBER_ID),
        value_v0(
            "StreamsGroupCurrentMemberAssignmentValue",
            Field("memberEpoch", "int32"),
            Field("previousMemberEpoch", "int32"),
            Field("state", "int8"),
            *_tasks(*_ASSIGNED_TASKS),
            *_tasks(*(f"{name}PendingRevocation" for name in _ASSIGNED_TASKS)),
        ),
    ),
    23: RecordSchemas(
        coordinator_key("StreamsGroupTopologyKey", GROUP_ID),
        value_v0(
            "StreamsGroupTopologyValue",
            Field("epoch", "int32"),
            Field("subtopologies", "[]Subtopology", fields=_SUBTOPOLOGY),
        ),
    ),
}
