"""The groups of one ``__consumer_offsets`` partition as the coordinator holds them while replaying, and what
a snapshot shows of each: classic groups as ``GroupMetadataStore.replay`` rebuilds them (subscribed topics
as ``ClassicGroup.computeSubscribedTopics``; a group created by an offset commit is a "simple" group), and
KIP-848 consumer groups with their state as ``ConsumerGroup.maybeUpdateGroupState`` computes it."""

from __future__ import annotations

from dataclasses import dataclass, field

from kafka_segments.coordinator.fields import CoordinatorSchemaError
from kafka_segments.coordinator.keys import (
    CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER,
    ConsumerGroupRecordKey,
)
from kafka_segments.coordinator.values import (
    ConsumerGroupCurrentMemberAssignmentValue,
    ConsumerGroupMemberMetadataValue,
    CoordinatorValue,
    GroupMetadataValue,
    decode_subscription_topics,
)
from kafka_segments.state import CommittedOffset, GroupOffsets, GroupType

CONSUMER_PROTOCOL_TYPE = "consumer"
LEAVE_GROUP_MEMBER_EPOCH = -1
MEMBER_STATE_STABLE = 0
_UNKNOWN = -1


@dataclass(slots=True)
class ClassicGroup:
    """A classic group (``ClassicGroup``): what a snapshot shows of it, and whether it is a simple group."""

    state: str = "Empty"
    protocol_type: str | None = None
    state_timestamp_ms: int | None = None
    subscribed_topics: tuple[str, ...] | None = None
    has_members: bool = False

    @property
    def is_simple(self) -> bool:
        """``ClassicGroup.isSimpleGroup``: no protocol type and no members."""
        return self.protocol_type is None and not self.has_members


@dataclass(slots=True)
class ConsumerGroupMember:
    """A KIP-848 member: its subscribed topics, its epoch and its ``MemberState`` byte."""

    subscribed_topics: tuple[str, ...] = ()
    member_epoch: int = 0
    state: int = MEMBER_STATE_STABLE


@dataclass(slots=True)
class ConsumerGroup:
    """A KIP-848 consumer group (``ConsumerGroup``): its epochs, its members, the members with a target
    assignment and its resolved regular expressions."""

    epoch: int = 0
    assignment_epoch: int = 0
    members: dict[str, ConsumerGroupMember] = field(default_factory=dict)
    target_members: set[str] = field(default_factory=set)
    regexes: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def state(self) -> str:
        if not self.members:
            return "Empty"
        if self.epoch > self.assignment_epoch:
            return "Assigning"
        for member in self.members.values():
            if member.state != MEMBER_STATE_STABLE or member.member_epoch != self.assignment_epoch:
                return "Reconciling"
        return "Stable"

    def subscribed_topics(self) -> tuple[str, ...]:
        topics = {topic for member in self.members.values() for topic in member.subscribed_topics}
        topics.update(topic for resolved in self.regexes.values() for topic in resolved)
        return tuple(sorted(topics))


def update_member(group: ConsumerGroup, key: ConsumerGroupRecordKey, value: CoordinatorValue) -> None:
    """Types 5, 7, 8 with a value (``getOrMaybeCreateMember(memberId, true)`` for 5 and 8)."""
    member_id = key.member_id if key.member_id is not None else ""
    if key.record_type == CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER:
        group.target_members.add(member_id)
        return
    member = group.members.setdefault(member_id, ConsumerGroupMember())
    if isinstance(value, ConsumerGroupMemberMetadataValue):
        member.subscribed_topics = value.subscribed_topic_names
    elif isinstance(value, ConsumerGroupCurrentMemberAssignmentValue):
        member.member_epoch = value.member_epoch
        member.state = value.state


def classic_group(value: GroupMetadataValue) -> ClassicGroup:
    """A classic group as ``GroupMetadataStore.replay`` loads it from its GroupMetadataValue."""
    protocol_type = value.protocol_type or None
    return ClassicGroup(
        state="Stable" if value.members else "Empty",
        protocol_type=protocol_type,
        state_timestamp_ms=known_timestamp(value.current_state_timestamp),
        subscribed_topics=_classic_subscription(value, protocol_type),
        has_members=bool(value.members),
    )


def _classic_subscription(value: GroupMetadataValue, protocol_type: str | None) -> tuple[str, ...] | None:
    """``ClassicGroup.computeSubscribedTopics`` (``None`` = unknown)."""
    if protocol_type != CONSUMER_PROTOCOL_TYPE:
        return None
    if not value.members:
        return ()
    if value.protocol is None:
        return None
    topics: set[str] = set()
    for member in value.members:
        try:
            topics.update(decode_subscription_topics(member.subscription))
        except CoordinatorSchemaError:
            return None  # Kafka logs a warning: "not aware of the subscribed topics"
    return tuple(sorted(topics))


def group_offsets(
    group_id: str, group: ClassicGroup | ConsumerGroup, offsets: list[CommittedOffset]
) -> GroupOffsets:
    """What a snapshot shows of ``group``, with its committed ``offsets``."""
    ordered = tuple(sorted(offsets, key=lambda o: (o.topic, o.partition)))
    if isinstance(group, ConsumerGroup):
        return GroupOffsets(
            group_id=group_id,
            state=group.state(),
            protocol_type=CONSUMER_PROTOCOL_TYPE,
            state_timestamp_ms=None,
            subscribed_topics=group.subscribed_topics(),
            offsets=ordered,
            group_type=GroupType.CONSUMER,
        )
    return GroupOffsets(
        group_id=group_id,
        state=group.state,
        protocol_type=group.protocol_type,
        state_timestamp_ms=group.state_timestamp_ms,
        subscribed_topics=group.subscribed_topics,
        offsets=ordered,
        group_type=GroupType.CLASSIC,
    )


def known_timestamp(timestamp: int) -> int | None:
    """``None`` for a record's -1 ("unknown") timestamp."""
    return None if timestamp == _UNKNOWN else timestamp
