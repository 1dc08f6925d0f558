"""The demo lake's consumer groups, written as the ``__consumer_offsets`` partitions a broker would hold.

``billing`` is caught up and commits inside transactions (one aborted: its offsets are dropped on replay);
``analytics`` lags (stuck at offset 25 of ``clickstream-1``), holding consumed retention back; ``audit`` has
been Empty for 9.5 days, so its offsets expired (KIP-211, ``ClassicGroup.offsetExpirationCondition``).
Records use the versions a Kafka 4.x broker writes (``coordinator.writer``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from kafka_segments.coordinator.replay import replay_log
from kafka_segments.coordinator.snapshot import build_snapshot
from kafka_segments.coordinator.writer import (
    CoordinatorRecord,
    GroupMember,
    GroupMetadata,
    OffsetCommit,
    consumer_assignment,
    consumer_subscription,
    group_metadata_record,
    offset_commit_record,
    partition_for_group,
)
from kafka_segments.demo.log import (
    DAY_MS,
    HOUR_MS,
    MINUTE_MS,
    PLAIN,
    Message,
    PartitionLog,
    Producer,
    partition_objects,
)
from kafka_segments.offsets.sources import LAKE_SOURCE
from kafka_segments.state import OffsetSnapshot

CONSUMER_OFFSETS = "__consumer_offsets"
CLICKSTREAM = "clickstream"
CLICKSTREAM_PARTITIONS = 3

BILLING = "billing"
ANALYTICS = "analytics"
AUDIT = "audit"

FINAL_OFFSETS: Mapping[str, tuple[int, ...]] = {
    BILLING: (235, 236, 238),
    ANALYTICS: (170, 25, 130),
    AUDIT: (12, 8, 20),
}
"""Each group's committed offset per ``clickstream`` partition once the log is replayed."""
AUDIT_EMPTY_FOR_MS = 9 * DAY_MS + 12 * HOUR_MS
BILLING_TRANSACTIONS = Producer(producer_id=7001, epoch=0)
MARKER_DELAY_MS = 50
"""How long after its offsets the transaction coordinator writes a COMMIT/ABORT marker."""


@dataclass(frozen=True, slots=True)
class _Commit:
    """One commit of a group: its offsets for clickstream's partitions, at ``age_ms`` before ``now``."""

    age_ms: int
    offsets: tuple[int, ...]


def consumer_offsets_objects(now_ms: int) -> dict[str, bytes]:
    """Every object of the demo's ``__consumer_offsets`` partitions."""
    objects: dict[str, bytes] = {}
    for group, builder in _BUILDERS.items():
        log = builder(_GroupLog(now_ms, until_ms=now_ms)).log
        objects.update(partition_objects(CONSUMER_OFFSETS, partition_for_group(group), log))
    return objects


def consumer_offsets_snapshot(now_ms: int, *, at_ms: int) -> OffsetSnapshot:
    """The groups as the ``lake`` source would have read them at ``at_ms``: the same partitions holding only
    what had been written by then (an open transaction stays pending)."""
    results = []
    for group, builder in _BUILDERS.items():
        log = builder(_GroupLog(now_ms, until_ms=at_ms)).log
        partition = f"{CONSUMER_OFFSETS}-{partition_for_group(group)}"
        data = b"".join(segment.log for segment in log.segments())
        results.append(replay_log(data, partition=partition))
    return build_snapshot(results, taken_at_ms=at_ms, source=LAKE_SOURCE)


class _GroupLog:
    """A group's ``__consumer_offsets`` partition written up to ``until_ms`` (later writes are skipped)."""

    def __init__(self, now_ms: int, *, until_ms: int) -> None:
        self.now_ms = now_ms
        self.until_ms = until_ms
        self.log = PartitionLog()

    def write(
        self,
        records: list[CoordinatorRecord],
        *,
        age_ms: int,
        producer: Producer = PLAIN,
        transactional: bool = False,
    ) -> None:
        at_ms = self.now_ms - age_ms
        if at_ms <= self.until_ms:
            messages = [Message(at_ms, record.key, record.value) for record in records]
            self.log.append(messages, producer=producer, transactional=transactional)

    def end_transaction(self, producer: Producer, *, commit: bool, age_ms: int) -> None:
        at_ms = self.now_ms - age_ms
        if at_ms <= self.until_ms:
            self.log.end_transaction(producer, commit=commit, timestamp_ms=at_ms)

    def group(self, metadata: GroupMetadata, *, age_ms: int) -> None:
        self.write([group_metadata_record(metadata)], age_ms=age_ms)

    def commit(
        self, group: str, commit: _Commit, *, producer: Producer = PLAIN, transactional: bool = False
    ) -> None:
        at_ms = self.now_ms - commit.age_ms
        records = [
            offset_commit_record(OffsetCommit(group, CLICKSTREAM, partition, offset, at_ms, leader_epoch=4))
            for partition, offset in enumerate(commit.offsets)
        ]
        self.write(records, age_ms=commit.age_ms, producer=producer, transactional=transactional)


def _member(group: str, index: int, partitions: tuple[int, ...]) -> GroupMember:
    return GroupMember(
        member_id=f"{group}-{index}-5f1c2a9e",
        client_id=f"{group}-{index}",
        client_host=f"/10.20.0.{10 + index}",
        subscription=consumer_subscription([CLICKSTREAM]),
        assignment=consumer_assignment({CLICKSTREAM: list(partitions)}),
    )


def _stable(group: str, *, generation: int, at_ms: int, members: int) -> GroupMetadata:
    """A group after a rebalance: ``members`` consumers sharing clickstream's partitions."""
    assigned = [
        tuple(p for p in range(CLICKSTREAM_PARTITIONS) if p % members == index) for index in range(members)
    ]
    group_members = tuple(_member(group, index, assigned[index]) for index in range(members))
    return GroupMetadata(
        group,
        generation=generation,
        protocol="range",
        leader=group_members[0].member_id,
        current_state_timestamp_ms=at_ms,
        members=group_members,
    )


def _billing(out: _GroupLog) -> _GroupLog:
    joined = 10 * DAY_MS
    out.group(_stable(BILLING, generation=1, at_ms=out.now_ms - joined, members=1), age_ms=joined)
    transactions = (
        (_Commit(10 * DAY_MS - HOUR_MS, (40, 40, 40)), True),
        (_Commit(5 * DAY_MS, (150, 150, 150)), True),
        (_Commit(3 * MINUTE_MS, (239, 239, 239)), False),  # aborted: the processor crashed mid-batch
        (_Commit(2 * MINUTE_MS, FINAL_OFFSETS[BILLING]), True),
    )
    for index, (commit, committed) in enumerate(transactions):
        if index == 2:
            out.log.roll()
        out.commit(BILLING, commit, producer=BILLING_TRANSACTIONS, transactional=True)
        out.end_transaction(BILLING_TRANSACTIONS, commit=committed, age_ms=commit.age_ms - MARKER_DELAY_MS)
    return out


def _analytics(out: _GroupLog) -> _GroupLog:
    joined, rebalanced = 10 * DAY_MS, 3 * DAY_MS  # a second consumer joined 3 days ago
    out.group(_stable(ANALYTICS, generation=1, at_ms=out.now_ms - joined, members=1), age_ms=joined)
    out.commit(ANALYTICS, _Commit(9 * DAY_MS, (20, 20, 20)))
    out.commit(ANALYTICS, _Commit(6 * DAY_MS, (90, 25, 80)))
    out.group(_stable(ANALYTICS, generation=2, at_ms=out.now_ms - rebalanced, members=2), age_ms=rebalanced)
    out.commit(ANALYTICS, _Commit(HOUR_MS, FINAL_OFFSETS[ANALYTICS]))
    return out


def _audit(out: _GroupLog) -> _GroupLog:
    joined = 12 * DAY_MS
    out.group(_stable(AUDIT, generation=5, at_ms=out.now_ms - joined, members=1), age_ms=joined)
    out.commit(AUDIT, _Commit(11 * DAY_MS, (5, 3, 10)))
    out.commit(AUDIT, _Commit(10 * DAY_MS, FINAL_OFFSETS[AUDIT]))
    # the last member left: the group keeps its protocol type; protocol, leader and members are gone
    empty = GroupMetadata(AUDIT, generation=6, current_state_timestamp_ms=out.now_ms - AUDIT_EMPTY_FOR_MS)
    out.group(empty, age_ms=AUDIT_EMPTY_FOR_MS)
    return out


_BUILDERS: Mapping[str, Callable[[_GroupLog], _GroupLog]] = {
    BILLING: _billing,
    ANALYTICS: _analytics,
    AUDIT: _audit,
}
