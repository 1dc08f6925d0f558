"""KIP-68 consumed retention: the smallest committed offset M of the groups that count, per partition
(docs/retention.md, "Consumed retention (KIP-68)"; Kafka never shipped KIP-68, this is the project's
reading). Offsets expire by KIP-211 at ``now`` first. A counting group without an offset for the partition
pins M to the log start offset; if any group's offsets could not be read, M = −1 and nothing is deleted."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import Enum

from kafka_segments.config.model import TopicConfig
from kafka_segments.retention.expiry import is_subscribed, offset_expiry
from kafka_segments.state import GroupOffsets, OffsetSnapshot


class ConsumedStatus(Enum):
    """Why consumed retention does (or does not) apply to a partition."""

    DISABLED = "disabled"
    """retention.commitoffset.enable is false, or the policy has no ``delete``."""
    NO_SNAPSHOT = "no offsets snapshot"
    UNREADABLE_GROUPS = "offsets of some groups could not be read"
    NO_GROUPS = "no consumer group counts for the topic"
    ACTIVE = "active"


@dataclass(frozen=True, slots=True)
class GroupPosition:
    """One counting group's position in a partition."""

    group_id: str
    committed_offset: int | None
    """Its unexpired committed offset for the partition; ``None`` when it has none (pins M)."""
    position: int
    """What it contributes to M: the committed offset, or the log start offset."""
    expires_at_ms: int | None
    """When that offset would expire by KIP-211 (``None``: not as things stand)."""
    required: bool = False


@dataclass(frozen=True, slots=True)
class ConsumedBound:
    """KIP-68 for one partition: M and the groups behind it."""

    status: ConsumedStatus
    min_offset: int | None = None
    """M when ``ACTIVE``; ``-1`` when groups were unreadable; ``None`` otherwise."""
    groups: tuple[GroupPosition, ...] = ()
    """The counting groups, lowest position first."""
    unreadable_groups: tuple[str, ...] = ()

    @property
    def holder(self) -> GroupPosition | None:
        """The group at M (the one holding consumed retention back)."""
        return self.groups[0] if self.status is ConsumedStatus.ACTIVE and self.groups else None


@dataclass(frozen=True, slots=True)
class _TopicOffsets:
    """One group's unexpired offsets for one topic."""

    group: GroupOffsets
    offsets: dict[int, tuple[int, int | None]] = field(default_factory=dict)
    """partition → (offset, expires_at_ms)."""


class ConsumedIndex:
    """A snapshot's unexpired offsets by topic, evaluated once at ``now`` (KIP-211)."""

    def __init__(self, snapshot: OffsetSnapshot, *, now_ms: int, retention_ms: int) -> None:
        self.snapshot = snapshot
        self.unreadable = tuple(sorted({error.group_id for error in snapshot.errors}))
        self._by_topic: dict[str, dict[str, _TopicOffsets]] = defaultdict(dict)
        self._counting: dict[tuple[str, tuple[str, ...]], dict[str, _TopicOffsets | None]] = {}
        for group in snapshot.groups:
            for offset in group.offsets:
                expiry = offset_expiry(group, offset, now_ms=now_ms, retention_ms=retention_ms)
                if expiry.expired:
                    continue
                entry = self._by_topic[offset.topic].setdefault(group.group_id, _TopicOffsets(group))
                entry.offsets[offset.partition] = (offset.offset, expiry.expires_at_ms)

    def committed(self, topic: str, partition: int) -> Iterable[tuple[str, int]]:
        """``(group id, unexpired committed offset)`` of every group with one for the partition."""
        for group_id, entry in self._by_topic.get(topic, {}).items():
            found = entry.offsets.get(partition)
            if found is not None:
                yield group_id, found[0]

    def counting_groups(self, topic: str, required: tuple[str, ...]) -> dict[str, _TopicOffsets | None]:
        """The groups that count for ``topic`` (``None`` value: a required group absent from the snapshot);
        the same for every partition of the topic, so worked out once."""
        key = (topic, required)
        found = self._counting.get(key)
        if found is None:
            found = self._counting[key] = self._count(topic, required)
        return found

    def _count(self, topic: str, required: tuple[str, ...]) -> dict[str, _TopicOffsets | None]:
        counting: dict[str, _TopicOffsets | None] = dict(self._by_topic.get(topic, {}))
        for group in self.snapshot.groups:
            if group.group_id not in counting and _subscription_contains(group, topic):
                counting[group.group_id] = _TopicOffsets(group)
        for group_id in required:
            if group_id not in counting:
                known = self.snapshot.group(group_id)
                counting[group_id] = None if known is None else _TopicOffsets(known)
        return counting


class ConsumedIndexes:
    """The snapshot's ``ConsumedIndex`` per ``offsets.retention`` value (topics of one broker share one)."""

    def __init__(self, snapshot: OffsetSnapshot, *, now_ms: int) -> None:
        self.snapshot = snapshot
        self.now_ms = now_ms
        self._indexes: dict[int, ConsumedIndex] = {}

    def for_topic(self, config: TopicConfig) -> ConsumedIndex:
        retention_ms = config.offsets_retention_ms
        index = self._indexes.get(retention_ms)
        if index is None:
            index = ConsumedIndex(self.snapshot, now_ms=self.now_ms, retention_ms=retention_ms)
            self._indexes[retention_ms] = index
        return index


def _subscription_contains(group: GroupOffsets, topic: str) -> bool:
    return (
        group.subscribed_topics is not None
        and topic in group.subscribed_topics
        and is_subscribed(group, topic)
    )


def consumed_bound(
    index: ConsumedIndex | None, config: TopicConfig, *, partition: int, log_start_offset: int
) -> ConsumedBound:
    """M for one partition of ``config.topic``."""
    if not (config.consumed_retention_enabled and config.delete):
        return ConsumedBound(ConsumedStatus.DISABLED)
    if index is None:
        return ConsumedBound(ConsumedStatus.NO_SNAPSHOT)
    counting = index.counting_groups(config.topic, config.required_groups)
    positions = sorted(
        (
            _position(group_id, entry, partition, log_start_offset, group_id in config.required_groups)
            for group_id, entry in counting.items()
        ),
        key=lambda item: (item.position, item.group_id),
    )
    if index.unreadable:
        return ConsumedBound(
            ConsumedStatus.UNREADABLE_GROUPS, -1, tuple(positions), unreadable_groups=index.unreadable
        )
    if not positions:
        return ConsumedBound(ConsumedStatus.NO_GROUPS)
    return ConsumedBound(ConsumedStatus.ACTIVE, positions[0].position, tuple(positions))


def _position(
    group_id: str, entry: _TopicOffsets | None, partition: int, log_start_offset: int, required: bool
) -> GroupPosition:
    found = None if entry is None else entry.offsets.get(partition)
    if found is None:
        return GroupPosition(group_id, None, log_start_offset, None, required)
    offset, expires_at_ms = found
    return GroupPosition(group_id, offset, offset, expires_at_ms, required)
