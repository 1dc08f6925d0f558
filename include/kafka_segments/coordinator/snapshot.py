"""From the replays of the ``__consumer_offsets`` partitions (``coordinator.replay``) to one snapshot.

A group lives in one partition (``partitionFor(groupId)``, ``GroupCoordinatorService``), so the partitions'
groups together are the snapshot; a group found in several partitions, or failed in any, is reported in the
snapshot's ``errors`` instead."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from kafka_segments.state import GroupError, GroupOffsets, OffsetSnapshot


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
