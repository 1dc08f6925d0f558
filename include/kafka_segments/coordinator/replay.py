"""Replaying ``__consumer_offsets`` partitions into group states, as Kafka's group coordinator loads them
(``CoordinatorLoaderImpl``, ``GroupMetadataManager``, ``OffsetMetadataManager.replay``; Kafka 4.x).

Offsets: a later record replaces an earlier one; a tombstone deletes the committed and every pending
transactional offset of that partition. A record from a batch with a producer id is pending until its
COMMIT (unless a committed offset was written later in the log) or ABORT; until then the previous offset
stays, flagged ``pending_transaction``. A commit for an unknown group creates a "simple" classic group; a
group tombstone hides its offsets until a commit recreates the group.

Damage: a key that cannot be decoded fails the whole replay (``CoordinatorRecordError`` naming partition,
offset and segment), as Kafka fails the partition's load; a bad value, or a record Kafka's replay would
reject, fails only its group (reported in ``errors``). Unknown record types are skipped and counted."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from kafka_segments.coordinator.fields import CoordinatorSchemaError
from kafka_segments.coordinator.groups import (
    LEAVE_GROUP_MEMBER_EPOCH,
    ClassicGroup,
    ConsumerGroup,
    classic_group,
    group_offsets,
    known_timestamp,
    update_member,
)
from kafka_segments.coordinator.keys import (
    CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT,
    CONSUMER_GROUP_MEMBER_METADATA,
    CONSUMER_GROUP_METADATA,
    CONSUMER_GROUP_REGULAR_EXPRESSION,
    CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER,
    CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA,
    ConsumerGroupRecordKey,
    CoordinatorKey,
    GroupMetadataKey,
    OffsetCommitKey,
    UnknownRecordKey,
    decode_key,
)
from kafka_segments.coordinator.snapshot import ReplayResult
from kafka_segments.coordinator.values import (
    ConsumerGroupMetadataValue,
    ConsumerGroupRegularExpressionValue,
    ConsumerGroupTargetAssignmentMetadataValue,
    CoordinatorValue,
    GroupMetadataValue,
    OffsetCommitValue,
    decode_value,
)
from kafka_segments.errors import LocatedError
from kafka_segments.records.batch import NO_PRODUCER_ID, BatchHeader
from kafka_segments.records.control import ControlKey, ControlRecordError, ControlRecordType
from kafka_segments.records.log import iter_batches
from kafka_segments.records.record import Record
from kafka_segments.state import CommittedOffset, GroupError

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
    value: OffsetCommitValue


class PartitionReplay:
    """The group coordinator's state of one ``__consumer_offsets`` partition, built batch by batch."""

    def __init__(self, partition: str) -> None:
        self.partition = partition
        self._groups: dict[str, ClassicGroup | ConsumerGroup] = {}
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
            key = decode_key(record.key)
        except CoordinatorSchemaError as exc:
            reason = f"undecodable record key: {exc}"
            raise CoordinatorRecordError(
                reason, partition=self.partition, offset=record.offset, segment=segment
            ) from None
        if isinstance(key, UnknownRecordKey):
            self._skipped[key.record_type] += 1
            return
        if key.group in self._failed:
            return
        try:
            value = decode_value(key, record.value)
            self._apply(key, value, record.offset, producer_id)
        except (CoordinatorSchemaError, _GroupReplayError) as exc:
            where = _where(self.partition, record.offset, segment)
            self._failed[key.group] = f"record at {where} cannot be replayed: {exc}"

    def _apply(
        self, key: CoordinatorKey, value: CoordinatorValue | None, offset: int, producer_id: int
    ) -> None:
        if isinstance(key, OffsetCommitKey):
            self._offset_commit(key, value, offset, producer_id)
        elif isinstance(key, GroupMetadataKey):
            self._group_metadata(key.group, value)
        elif isinstance(key, ConsumerGroupRecordKey):
            self._consumer_group_record(key, value)

    # ----------------------------------------------------------------------------------------------- offsets

    def _offset_commit(
        self, key: OffsetCommitKey, value: CoordinatorValue | None, offset: int, producer_id: int
    ) -> None:
        where = (key.group, key.topic, key.partition)
        if value is None:
            self._offsets.pop(where, None)
            for producer in self._open.pop(where, set()):
                self._pending.get(producer, {}).pop(where, None)
            return
        if not isinstance(value, OffsetCommitValue):
            raise _GroupReplayError(f"an offset commit key with a {type(value).__name__} value")
        self._groups.setdefault(key.group, ClassicGroup())
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

    def _group_metadata(self, group: str, value: CoordinatorValue | None) -> None:
        if value is None:
            self._groups.pop(group, None)
        elif isinstance(value, GroupMetadataValue):
            self._groups[group] = classic_group(value)
        else:
            raise _GroupReplayError(f"a group metadata key with a {type(value).__name__} value")

    def _consumer_group(self, group: str, *, create: bool) -> ConsumerGroup | None:
        """``getOrMaybeCreatePersistedConsumerGroup``; ``None`` when absent and not created."""
        existing = self._groups.get(group)
        if isinstance(existing, ConsumerGroup):
            return existing
        if existing is None and not create:
            return None
        if existing is not None and not existing.is_simple:
            raise _GroupReplayError(f"group {group!r} is a classic group, not a consumer group")
        consumer_group = ConsumerGroup()
        self._groups[group] = consumer_group
        return consumer_group

    def _consumer_group_record(self, key: ConsumerGroupRecordKey, value: CoordinatorValue | None) -> None:
        group = self._consumer_group(key.group, create=value is not None)
        if group is None:
            return
        if value is None:
            self._consumer_group_tombstone(key, group)
        elif isinstance(value, ConsumerGroupMetadataValue):
            group.epoch = value.epoch
        elif isinstance(value, ConsumerGroupTargetAssignmentMetadataValue):
            group.assignment_epoch = value.assignment_epoch
        elif isinstance(value, ConsumerGroupRegularExpressionValue) and key.regular_expression is not None:
            group.regexes[key.regular_expression] = value.topics
        elif key.member_id is not None:
            update_member(group, key, value)

    def _consumer_group_tombstone(self, key: ConsumerGroupRecordKey, group: ConsumerGroup) -> None:
        member = group.members.get(key.member_id) if key.member_id is not None else None
        if key.record_type == CONSUMER_GROUP_METADATA:
            if group.members or group.target_members or group.assignment_epoch != -1:
                raise _GroupReplayError(
                    f"a tombstone deletes group {key.group!r} before its members, target assignment and "
                    "assignment epoch were deleted"
                )
            del self._groups[key.group]
        elif key.record_type == CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA:
            if group.target_members:
                raise _GroupReplayError(
                    "a tombstone deletes the target assignment while members still have one"
                )
            group.assignment_epoch = -1
        elif key.record_type == CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER and key.member_id is not None:
            group.target_members.discard(key.member_id)
        elif key.record_type == CONSUMER_GROUP_REGULAR_EXPRESSION and key.regular_expression is not None:
            group.regexes.pop(key.regular_expression, None)
        elif key.record_type == CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT and member is not None:
            member.member_epoch = LEAVE_GROUP_MEMBER_EPOCH
        elif (
            key.record_type == CONSUMER_GROUP_MEMBER_METADATA
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
            group_offsets(group_id, state, by_group.get(group_id, []))
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

    def _committed(self, group: str, topic: str, partition: int, value: OffsetCommitValue) -> CommittedOffset:
        return CommittedOffset(
            topic=topic,
            partition=partition,
            offset=value.offset,
            commit_timestamp_ms=known_timestamp(value.commit_timestamp),
            expire_timestamp_ms=known_timestamp(value.expire_timestamp),
            pending_transaction=(group, topic, partition) in self._open,
        )


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
