"""Committed-offset expiry (KIP-211, as the Kafka 4.x group coordinator implements it), evaluated at a run's
logical ``now`` (docs/retention.md, "Offset expiry"; ``OffsetMetadataManager.cleanupExpiredOffsets``,
``OffsetExpirationConditionImpl``, ``ClassicGroup`` / ``ConsumerGroup.offsetExpirationCondition``).

Offsets of subscribed topics never expire; an explicit expire timestamp wins, else
``now − base >= offsets.retention.minutes × 60000`` (note ``>=``); a pending transactional commit blocks
expiry. Where a snapshot lacks what Kafka knows, the safe reading is taken (an unknown commit timestamp
never expires, an unknown KIP-848 subscription counts as subscribed): keeping an offset can only hold
consumed retention back, expiring one wrongly could delete unread data."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from kafka_segments.state import CommittedOffset, GroupOffsets, GroupType

CONSUMER_PROTOCOL = "consumer"


class ExpiryBase(Enum):
    """What an offset's expiry counts from (``None`` condition: nothing expires)."""

    STATE_TIMESTAMP = "state timestamp"
    """Classic Empty group: when it became Empty (commit timestamp if unknown)."""
    COMMIT_TIMESTAMP = "commit timestamp"


@dataclass(frozen=True, slots=True)
class OffsetExpiry:
    """Whether one committed offset has expired at ``now``, and when it would."""

    expired: bool
    expires_at_ms: int | None
    """The first ``now`` at which it counts as expired; ``None`` when it never expires as things stand."""
    why: str
    """The rule that decided, for reports."""


def expiry_base(group: GroupOffsets) -> ExpiryBase | None:
    """The group's expiration condition (``None``: none of its offsets expire)."""
    if group.group_type is GroupType.CONSUMER:
        return ExpiryBase.COMMIT_TIMESTAMP
    if group.is_standalone:
        return ExpiryBase.COMMIT_TIMESTAMP
    if group.state == "Empty":
        return ExpiryBase.STATE_TIMESTAMP
    if (
        group.protocol_type == CONSUMER_PROTOCOL
        and group.subscribed_topics is not None
        and group.state == "Stable"
    ):
        return ExpiryBase.COMMIT_TIMESTAMP
    return None


def is_subscribed(group: GroupOffsets, topic: str) -> bool:
    """Kafka's ``isSubscribedToTopic`` for the group (an Empty group subscribes to nothing)."""
    if group.state == "Empty":
        return False
    if group.subscribed_topics is not None:
        return topic in group.subscribed_topics
    if group.group_type is GroupType.CONSUMER:
        return True  # unknown subscription: keep its offsets (the safe reading)
    return group.protocol_type == CONSUMER_PROTOCOL


def offset_expiry(
    group: GroupOffsets, offset: CommittedOffset, *, now_ms: int, retention_ms: int
) -> OffsetExpiry:
    """Whether ``offset`` of ``group`` has expired at ``now_ms`` (``retention_ms``: offsets.retention)."""
    base = expiry_base(group)
    if base is None:
        return OffsetExpiry(False, None, f"group state {group.state}: Kafka expires none of its offsets")
    if is_subscribed(group, offset.topic):
        return OffsetExpiry(False, None, f"the group subscribes to {offset.topic}")
    if offset.pending_transaction:
        return OffsetExpiry(False, None, "a transactional offset commit is pending")
    if offset.expire_timestamp_ms is not None:
        at = offset.expire_timestamp_ms
        return OffsetExpiry(now_ms >= at, at, "explicit expire timestamp")
    start, label = _base_timestamp(group, offset, base)
    if start is None:
        return OffsetExpiry(False, None, "commit timestamp unknown: never expired")
    at = start + retention_ms
    return OffsetExpiry(now_ms >= at, at, f"{label} {start} + offsets.retention {retention_ms} ms")


def _base_timestamp(group: GroupOffsets, offset: CommittedOffset, base: ExpiryBase) -> tuple[int | None, str]:
    if base is ExpiryBase.STATE_TIMESTAMP:
        if group.state_timestamp_ms is not None:
            return group.state_timestamp_ms, "Empty since"
        return offset.commit_timestamp_ms, "committed at (state timestamp unknown)"
    return offset.commit_timestamp_ms, "committed at"
