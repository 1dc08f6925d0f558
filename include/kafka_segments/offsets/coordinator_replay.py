"""Replaying ``__consumer_offsets`` partitions into group states, as Kafka's group coordinator loads them.

One ``PartitionReplay`` per partition takes its batches in offset order (``CoordinatorLoaderImpl``): control
batches carry COMMIT/ABORT markers of their producer; every record of a data batch is decoded
(``coordinator_schema``) and applied with the batch's producer id. The rules, from
``GroupMetadataManager`` / ``GroupMetadataStore`` and ``OffsetMetadataManager.replay`` (Kafka 4.x):

* Offsets: a later record for the same (group, topic, partition) replaces an earlier one; a tombstone deletes
  the committed offset **and** every pending transactional offset of that partition. A record from a batch
  with a producer id (``!= -1``; the coordinator writes its own records without one and TxnOffsetCommit in
  the transaction's batches) is held pending for that producer; COMMIT moves the producer's pending offsets
  to the committed ones unless a committed offset was written later in the log (``recordOffset``
  comparison), ABORT drops them; markers of producers without pending offsets are ignored. Until its
  marker, the previous committed offset stays and is flagged ``pending_transaction`` (KIP-211).
* A non-tombstone offset commit of a group that does not exist creates a "simple" classic group: state
  ``Empty``, no protocol type (what ``DescribeGroups`` reports for consumers using ``assign()``).
* GroupMetadata (classic): the group is rebuilt from the record (``GroupMetadataStore.replay``): ``Empty``
  without members, else ``Stable``; protocol type ``""`` means none; ``currentStateTimestamp`` -1 means
  unknown; subscribed topics as ``ClassicGroup.computeSubscribedTopics`` (consumer protocol only: no
  members -> none; else the union of the members' subscriptions for the selected protocol; unknown when
  no protocol is selected or a subscription cannot be parsed). A tombstone removes the group only: its
  offsets stay stored but are invisible (OffsetFetch of a group that does not exist returns nothing),
  and reappear if a later commit recreates the group.
* KIP-848 consumer groups (types 3-8, 16): group epoch, members' subscriptions, target assignment epoch,
  members' epochs and states, resolved regular expressions; a record for a group that is a simple classic
  group replaces it. The state is ``ConsumerGroup.maybeUpdateGroupState``'s: Empty without members,
  Assigning when the group epoch is above the target assignment epoch, Reconciling while a member is not
  STABLE at the target assignment epoch, else Stable.

Damage: a key that cannot be decoded (or a bad control record) cannot be attributed to a group, so it fails
the whole replay with a ``CoordinatorRecordError`` naming partition, offset and segment (Kafka fails the
partition's load). A value that cannot be decoded, or a record Kafka's replay would reject (e.g. a group
tombstone while members remain), fails only its group: it is reported in ``errors`` with the reason and
location, and its later records are ignored. Unknown record types are skipped and counted.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from kafka_segments.errors import LocatedError
from kafka_segments.offsets import coordinator_schema as cs
from kafka_segments.records.batch import NO_PRODUCER_ID, BatchHeader
from kafka_segments.records.control import ControlKey, ControlRecordError, ControlRecordType
from kafka_segments.records.log import iter_batches
from kafka_segments.records.record import Record
from kafka_segments.state import CommittedOffset, GroupError, GroupOffsets, GroupType, OffsetSnapshot

CONSUMER_PROTOCOL_TYPE = "consumer"
LEAVE_GROUP_MEMBER_EPOCH = -1
MEMBER_STATE_STABLE = 0
_UNKNOWN = -1
_PartitionKey = tuple[str, str, int]  # group, topic, partition


class CoordinatorRecordError(LocatedError):
    """A ``__consumer_offsets`` record that cannot be attributed to a group: the replay stops.

    Attributes:
        reason: what is wrong.
        location: ``<partition> offset <n> (segment <object>)``.
        partition: the ``__consumer_offsets`` partition (``<topic>-<n>``).
        offset: the record's offset.
        segment: the segment the record was read from, when known.
    """

    def __init__(self, reason: str, *, partition: str, offset: int, segment: str | None = None) -> None:
        self.partition = partition
        self.offset = offset
        self.segment = segment
        super().__init__(reason, location=_where(partition, offset, segment))


def _where(partition: str, offset: int, segment: str | None) -> str:
    return f"{partition} offset {offset}" + (f" (segment {segment})" if segment else "")


class _GroupReplayError(Exception):
    """Kafka's replay would reject this record (an ``IllegalStateException`` in the loader)."""


@dataclass(slots=True)
class _Offset:
    record_offset: int
    value: cs.OffsetCommitValue


@dataclass(slots=True)
class _ClassicGroup:
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
class _Member:
    subscribed_topics: tuple[str, ...] = ()
    member_epoch: int = 0
    state: int = MEMBER_STATE_STABLE


@dataclass(slots=True)
class _ConsumerGroup:
    epoch: int = 0
    assignment_epoch: int = 0
    members: dict[str, _Member] = field(default_factory=dict)
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


@dataclass(frozen=True, slots=True)
class ReplayResult:
    """The groups one partition holds at its end, and what the replay skipped."""

    partition: str
    groups: tuple[GroupOffsets, ...]
    errors: tuple[GroupError, ...]
    records: int
    skipped_record_types: tuple[tuple[int, int], ...]
    """(record type, count) of the records of unknown types."""
    hidden_offsets: int
    """Committed offsets of groups that no longer exist (Kafka does not show them)."""
    open_producers: tuple[int, ...]
    """Producers with transactional offsets still waiting for their marker."""


class PartitionReplay:
    """The group coordinator's state of one ``__consumer_offsets`` partition, built batch by batch."""

    def __init__(self, partition: str) -> None:
        self.partition = partition
        self._groups: dict[str, _ClassicGroup | _ConsumerGroup] = {}
        self._offsets: dict[_PartitionKey, _Offset] = {}
        self._pending: dict[int, dict[_PartitionKey, _Offset]] = {}
        self._open: dict[_PartitionKey, set[int]] = {}
        self._failed: dict[str, str] = {}
        self._skipped: Counter[int] = Counter()
        self._records = 0

    def replay_batch(
        self, header: BatchHeader, records: Iterable[Record], *, segment: str | None = None
    ) -> None:
        """Apply one batch (its records at or above the log start offset, in offset order).

        Raises:
            CoordinatorRecordError: a record key or control record cannot be decoded.
        """
        for record in records:
            self._records += 1
            if header.is_control:
                self._control(header.producer_id, record, segment)
            else:
                self._data(header.producer_id, record, segment)

    def _control(self, producer_id: int, record: Record, segment: str | None) -> None:
        try:
            control_type = ControlKey.parse(record.key).type
        except ControlRecordError as exc:
            raise CoordinatorRecordError(
                str(exc), partition=self.partition, offset=record.offset, segment=segment
            ) from None
        if control_type in (ControlRecordType.COMMIT, ControlRecordType.ABORT):
            self._end_transaction(producer_id, commit=control_type == ControlRecordType.COMMIT)

    def _data(self, producer_id: int, record: Record, segment: str | None) -> None:
        try:
            key = cs.decode_key(record.key)
        except cs.CoordinatorSchemaError as exc:
            reason = f"undecodable record key: {exc}"
            raise CoordinatorRecordError(
                reason, partition=self.partition, offset=record.offset, segment=segment
            ) from None
        if isinstance(key, cs.UnknownRecordKey):
            self._skipped[key.record_type] += 1
            return
        if key.group in self._failed:
            return
        try:
            value = cs.decode_value(key, record.value)
            self._apply(key, value, record.offset, producer_id)
        except (cs.CoordinatorSchemaError, _GroupReplayError) as exc:
            where = _where(self.partition, record.offset, segment)
            self._failed[key.group] = f"record at {where} cannot be replayed: {exc}"

    def _apply(
        self, key: cs.CoordinatorKey, value: cs.CoordinatorValue | None, offset: int, producer_id: int
    ) -> None:
        if isinstance(key, cs.OffsetCommitKey):
            self._offset_commit(key, value, offset, producer_id)
        elif isinstance(key, cs.GroupMetadataKey):
            self._group_metadata(key.group, value)
        elif isinstance(key, cs.ConsumerGroupRecordKey):
            self._consumer_group_record(key, value)

    # ----------------------------------------------------------------------------------------------- offsets

    def _offset_commit(
        self, key: cs.OffsetCommitKey, value: cs.CoordinatorValue | None, offset: int, producer_id: int
    ) -> None:
        where = (key.group, key.topic, key.partition)
        if value is None:
            self._offsets.pop(where, None)
            for producer in self._open.pop(where, set()):
                self._pending.get(producer, {}).pop(where, None)
            return
        if not isinstance(value, cs.OffsetCommitValue):
            raise _GroupReplayError(f"an offset commit key with a {type(value).__name__} value")
        self._groups.setdefault(key.group, _ClassicGroup())
        if producer_id == NO_PRODUCER_ID:
            self._offsets[where] = _Offset(offset, value)
        else:
            self._pending.setdefault(producer_id, {})[where] = _Offset(offset, value)
            self._open.setdefault(where, set()).add(producer_id)

    def _end_transaction(self, producer_id: int, *, commit: bool) -> None:
        """``OffsetMetadataManager.replayEndTransactionMarker``."""
        pending = self._pending.pop(producer_id, None)
        if pending is None:
            return
        for where, entry in pending.items():
            producers = self._open.get(where)
            if producers is not None:
                producers.discard(producer_id)
                if not producers:
                    del self._open[where]
            existing = self._offsets.get(where)
            if commit and (existing is None or entry.record_offset > existing.record_offset):
                self._offsets[where] = entry

    # ------------------------------------------------------------------------------------------------ groups

    def _group_metadata(self, group: str, value: cs.CoordinatorValue | None) -> None:
        if value is None:
            self._groups.pop(group, None)
        elif isinstance(value, cs.GroupMetadataValue):
            self._groups[group] = _classic_group(value)
        else:
            raise _GroupReplayError(f"a group metadata key with a {type(value).__name__} value")

    def _consumer_group(self, group: str, *, create: bool) -> _ConsumerGroup | None:
        """``getOrMaybeCreatePersistedConsumerGroup``; ``None`` when absent and not created."""
        existing = self._groups.get(group)
        if isinstance(existing, _ConsumerGroup):
            return existing
        if existing is None and not create:
            return None
        if existing is not None and not existing.is_simple:
            raise _GroupReplayError(f"group {group!r} is a classic group, not a consumer group")
        consumer_group = _ConsumerGroup()
        self._groups[group] = consumer_group
        return consumer_group

    def _consumer_group_record(
        self, key: cs.ConsumerGroupRecordKey, value: cs.CoordinatorValue | None
    ) -> None:
        group = self._consumer_group(key.group, create=value is not None)
        if group is None:
            return
        if value is None:
            self._consumer_group_tombstone(key, group)
        elif isinstance(value, cs.ConsumerGroupMetadataValue):
            group.epoch = value.epoch
        elif isinstance(value, cs.ConsumerGroupTargetAssignmentMetadataValue):
            group.assignment_epoch = value.assignment_epoch
        elif isinstance(value, cs.ConsumerGroupRegularExpressionValue) and key.regular_expression is not None:
            group.regexes[key.regular_expression] = value.topics
        elif key.member_id is not None:
            _update_member(group, key, value)

    def _consumer_group_tombstone(self, key: cs.ConsumerGroupRecordKey, group: _ConsumerGroup) -> None:
        member = group.members.get(key.member_id) if key.member_id is not None else None
        if key.record_type == cs.CONSUMER_GROUP_METADATA:
            if group.members or group.target_members or group.assignment_epoch != -1:
                raise _GroupReplayError(
                    f"a tombstone deletes group {key.group!r} before its members, target assignment and "
                    "assignment epoch were deleted"
                )
            del self._groups[key.group]
        elif key.record_type == cs.CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA:
            if group.target_members:
                raise _GroupReplayError(
                    "a tombstone deletes the target assignment while members still have one"
                )
            group.assignment_epoch = -1
        elif key.record_type == cs.CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER and key.member_id is not None:
            group.target_members.discard(key.member_id)
        elif key.record_type == cs.CONSUMER_GROUP_REGULAR_EXPRESSION and key.regular_expression is not None:
            group.regexes.pop(key.regular_expression, None)
        elif key.record_type == cs.CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT and member is not None:
            member.member_epoch = LEAVE_GROUP_MEMBER_EPOCH
        elif (
            key.record_type == cs.CONSUMER_GROUP_MEMBER_METADATA
            and key.member_id is not None
            and member is not None
        ):
            if member.member_epoch != LEAVE_GROUP_MEMBER_EPOCH or key.member_id in group.target_members:
                raise _GroupReplayError(
                    f"a tombstone deletes member {key.member_id!r} before its assignments were deleted"
                )
            del group.members[key.member_id]

    # ------------------------------------------------------------------------------------------------ result

    def result(self) -> ReplayResult:
        """The groups the partition holds now (each with its visible committed offsets)."""
        by_group: dict[str, list[CommittedOffset]] = {}
        hidden = 0
        for (group, topic, partition), entry in self._offsets.items():
            if group in self._failed:
                continue
            if group not in self._groups:
                hidden += 1
            elif entry.value.offset >= 0:
                by_group.setdefault(group, []).append(self._committed(group, topic, partition, entry.value))
        groups = tuple(
            _group_offsets(group_id, state, by_group.get(group_id, []))
            for group_id, state in sorted(self._groups.items())
            if group_id not in self._failed
        )
        errors = tuple(GroupError(group, reason) for group, reason in sorted(self._failed.items()))
        return ReplayResult(
            partition=self.partition,
            groups=groups,
            errors=errors,
            records=self._records,
            skipped_record_types=tuple(sorted(self._skipped.items())),
            hidden_offsets=hidden,
            open_producers=tuple(sorted(producer for producer, offsets in self._pending.items() if offsets)),
        )

    def _committed(
        self, group: str, topic: str, partition: int, value: cs.OffsetCommitValue
    ) -> CommittedOffset:
        return CommittedOffset(
            topic=topic,
            partition=partition,
            offset=value.offset,
            commit_timestamp_ms=_known(value.commit_timestamp),
            expire_timestamp_ms=_known(value.expire_timestamp),
            pending_transaction=(group, topic, partition) in self._open,
        )


def _update_member(group: _ConsumerGroup, key: cs.ConsumerGroupRecordKey, value: cs.CoordinatorValue) -> None:
    """Types 5, 7, 8 with a value (``getOrMaybeCreateMember(memberId, true)`` for 5 and 8)."""
    member_id = key.member_id if key.member_id is not None else ""
    if key.record_type == cs.CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER:
        group.target_members.add(member_id)
        return
    member = group.members.setdefault(member_id, _Member())
    if isinstance(value, cs.ConsumerGroupMemberMetadataValue):
        member.subscribed_topics = value.subscribed_topic_names
    elif isinstance(value, cs.ConsumerGroupCurrentMemberAssignmentValue):
        member.member_epoch = value.member_epoch
        member.state = value.state


def _classic_group(value: cs.GroupMetadataValue) -> _ClassicGroup:
    """A classic group as ``GroupMetadataStore.replay`` loads it from its GroupMetadataValue."""
    protocol_type = value.protocol_type or None
    return _ClassicGroup(
        state="Stable" if value.members else "Empty",
        protocol_type=protocol_type,
        state_timestamp_ms=_known(value.current_state_timestamp),
        subscribed_topics=_classic_subscription(value, protocol_type),
        has_members=bool(value.members),
    )


def _classic_subscription(value: cs.GroupMetadataValue, protocol_type: str | None) -> tuple[str, ...] | None:
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
            topics.update(cs.decode_subscription_topics(member.subscription))
        except cs.CoordinatorSchemaError:
            return None  # Kafka logs a warning: "not aware of the subscribed topics"
    return tuple(sorted(topics))


def _group_offsets(
    group_id: str, group: _ClassicGroup | _ConsumerGroup, offsets: list[CommittedOffset]
) -> GroupOffsets:
    ordered = tuple(sorted(offsets, key=lambda o: (o.topic, o.partition)))
    if isinstance(group, _ConsumerGroup):
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


def _known(timestamp: int) -> int | None:
    return None if timestamp == _UNKNOWN else timestamp


# ---------------------------------------------------------------------------------------------- entry points


def replay_log(data: bytes, *, partition: str, segment: str = "<memory>") -> ReplayResult:
    """Replay the batches of one ``.log`` segment's bytes (or several concatenated).

    Raises:
        CorruptRecordError: the log itself is damaged.
        CoordinatorRecordError: a record key or control record cannot be decoded.
    """
    replay = PartitionReplay(partition)
    for entry in iter_batches(data, segment=segment):
        replay.replay_batch(entry.header, entry.records, segment=segment)
    return replay.result()


def build_snapshot(results: Sequence[ReplayResult], *, taken_at_ms: int, source: str) -> OffsetSnapshot:
    """One snapshot from the partitions' replays. A group lives in one partition (``partitionFor(groupId)``);
    a group found in several, or failed in any, is reported in ``errors`` instead."""
    found: dict[str, list[tuple[str, GroupOffsets]]] = {}
    errors: dict[str, str] = {}
    for result in results:
        for group in result.groups:
            found.setdefault(group.group_id, []).append((result.partition, group))
        for error in result.errors:
            errors.setdefault(error.group_id, error.error)
    groups = []
    for group_id, places in sorted(found.items()):
        if group_id in errors:
            continue
        if len(places) > 1:
            partitions = ", ".join(partition for partition, _ in places)
            errors[group_id] = f"the group is found in several partitions ({partitions})"
            continue
        groups.append(places[0][1])
    return OffsetSnapshot(
        taken_at_ms=taken_at_ms,
        source=source,
        groups=tuple(groups),
        errors=tuple(GroupError(group_id, reason) for group_id, reason in sorted(errors.items())),
    )
