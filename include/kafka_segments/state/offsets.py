"""Consumer-group offset snapshots (docs/retention.md, "Consumer-offset snapshots"): one value type for every
source. Fields follow Kafka's group coordinator and Admin client (``GroupState`` names; timestamps in epoch
milliseconds, ``None`` when unknown)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

SNAPSHOT_FORMAT_VERSION = 1

GROUP_STATES = (
    "Unknown",
    "PreparingRebalance",
    "CompletingRebalance",
    "Stable",
    "Dead",
    "Empty",
    "Assigning",
    "Reconciling",
    "NotReady",
)
"""Kafka's ``GroupState`` names (``org.apache.kafka.common.GroupState``)."""


class GroupType(Enum):
    """Which coordinator protocol the group uses (Admin ``ConsumerGroupDescription.type``)."""

    CLASSIC = "classic"
    """The classic rebalance protocol (JoinGroup/SyncGroup), and standalone consumers."""
    CONSUMER = "consumer"
    """KIP-848 consumer groups."""


@dataclass(frozen=True, slots=True)
class CommittedOffset:
    """A group's committed offset for one partition."""

    topic: str
    partition: int
    offset: int
    commit_timestamp_ms: int | None = None
    expire_timestamp_ms: int | None = None
    """The explicit expire timestamp of an OffsetCommitValue v1 (overrides every other expiry rule)."""
    pending_transaction: bool = False
    """A transactional offset commit for this partition is still open (it blocks expiry, KIP-211)."""


@dataclass(frozen=True, slots=True)
class GroupOffsets:
    """One group's state and committed offsets."""

    group_id: str
    state: str
    """One of ``GROUP_STATES``."""
    protocol_type: str | None
    """``consumer`` for consumer groups; ``""`` or ``None`` for standalone consumers."""
    state_timestamp_ms: int | None
    """When the group entered its current state (GroupMetadataValue.currentStateTimestamp)."""
    subscribed_topics: tuple[str, ...] | None
    """The topics the group's members subscribe to (sorted), ``None`` when unknown."""
    offsets: tuple[CommittedOffset, ...]
    group_type: GroupType = GroupType.CLASSIC

    @property
    def is_standalone(self) -> bool:
        return not self.protocol_type


@dataclass(frozen=True, slots=True)
class GroupError:
    """A group whose offsets could not be read, and why (e.g. ``COORDINATOR_NOT_AVAILABLE``)."""

    group_id: str
    error: str


@dataclass(frozen=True, slots=True)
class OffsetSnapshot:
    """Every group's committed offsets at ``taken_at_ms``, from one source."""

    taken_at_ms: int
    source: str
    """``file``, ``lake`` or ``kafka://host:port``."""
    groups: tuple[GroupOffsets, ...]
    errors: tuple[GroupError, ...] = ()
    format_version: int = SNAPSHOT_FORMAT_VERSION

    def group(self, group_id: str) -> GroupOffsets | None:
        for group in self.groups:
            if group.group_id == group_id:
                return group
        return None
