"""Replaying ``__consumer_offsets`` into group states, as Kafka's group coordinator loads a partition
(``GroupMetadataStore.replay``, ``OffsetMetadataManager.replay`` / ``replayEndTransactionMarker``,
``ClassicGroup.computeSubscribedTopics``, ``ConsumerGroup.maybeUpdateGroupState``)."""

from __future__ import annotations

import pickle
import struct
import zlib
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from kafka_segments.coordinator.replay import CoordinatorRecordError, replay_log
from kafka_segments.coordinator.snapshot import ReplayResult, build_snapshot
from kafka_segments.state import CommittedOffset, GroupError, GroupOffsets, GroupType
from unit.coordinator_records import (
    LEADER_CHANGE_KEY,
    T0,
    CoordinatorLog,
    consumer_group_member,
    consumer_group_metadata,
    consumer_subscription,
    current_member_assignment,
    group_metadata_key,
    group_metadata_value,
    member,
    offset_commit_key,
    offset_commit_value,
    partition_metadata,
    regular_expression,
    target_assignment_member,
    target_assignment_metadata,
)

pytestmark = pytest.mark.unit

PARTITION = "__consumer_offsets-7"


def replay(log: CoordinatorLog) -> ReplayResult:
    return replay_log(log.data(), partition=PARTITION, segment="00000000000000000000.log")


def commit(group: str, topic: str, partition: int, offset: int, **value: int) -> tuple[bytes, bytes]:
    return offset_commit_key(group, topic, partition), offset_commit_value(offset, **value)


def tombstone(group: str, topic: str, partition: int) -> tuple[bytes, None]:
    return offset_commit_key(group, topic, partition), None


def group_of(result: ReplayResult, group_id: str) -> GroupOffsets:
    matches = [group for group in result.groups if group.group_id == group_id]
    assert len(matches) == 1, f"{group_id} not in {[g.group_id for g in result.groups]}"
    return matches[0]


def offsets_of(result: ReplayResult, group_id: str) -> dict[tuple[str, int], int]:
    return {(o.topic, o.partition): o.offset for o in group_of(result, group_id).offsets}


def classic(group: str, *topics_per_member: list[str], **value: Any) -> tuple[bytes, bytes]:
    members = [
        member(f"m{i}", subscription=consumer_subscription(topics))
        for i, topics in enumerate(topics_per_member)
    ]
    return group_metadata_key(group), group_metadata_value(members=members, **value)


def legacy_message(magic: int, offset: int, key: bytes, value: bytes | None) -> bytes:
    """One uncompressed message of the v0/v1 message format (what brokers before 0.11 wrote)."""
    body = struct.pack(">bb", magic, 0) + (struct.pack(">q", T0) if magic == 1 else b"")
    for field in (key, value):
        body += struct.pack(">i", -1) if field is None else struct.pack(">i", len(field)) + field
    return struct.pack(">qiI", offset, 4 + len(body), zlib.crc32(body)) + body


# --------------------------------------------------------------------------------------------- offsets


def test_later_commits_override_earlier_ones_for_the_same_partition() -> None:
    log = CoordinatorLog()
    log.append(commit("g", "orders", 0, 10), commit("g", "orders", 1, 5))
    log.append(commit("g", "orders", 0, 20, commit_timestamp=T0 + 9))
    result = replay(log)
    assert offsets_of(result, "g") == {("orders", 0): 20, ("orders", 1): 5}
    assert group_of(result, "g").offsets[0].commit_timestamp_ms == T0 + 9


def test_an_offset_tombstone_deletes_only_that_partitions_offset() -> None:
    log = CoordinatorLog()
    log.append(commit("g", "orders", 0, 10), commit("g", "orders", 1, 5))
    log.append(tombstone("g", "orders", 0))
    assert offsets_of(replay(log), "g") == {("orders", 1): 5}
    log.append(tombstone("g", "orders", 1))
    assert offsets_of(replay(log), "g") == {}  # the simple group stays until its own tombstone


def test_legacy_record_type_0_commits_are_offset_commits() -> None:
    log = CoordinatorLog()
    log.append((offset_commit_key("g", "t", 0, record_type=0), offset_commit_value(3, version=0)))
    log.append((offset_commit_key("g", "t", 0, record_type=1), offset_commit_value(4, version=1)))
    assert offsets_of(replay(log), "g") == {("t", 0): 4}


def test_offsets_without_group_metadata_form_a_standalone_group() -> None:
    log = CoordinatorLog()
    log.append(commit("simple", "orders", 2, 99))
    assert group_of(replay(log), "simple") == GroupOffsets(
        group_id="simple",
        state="Empty",
        protocol_type=None,
        state_timestamp_ms=None,
        subscribed_topics=None,
        offsets=(CommittedOffset("orders", 2, 99, commit_timestamp_ms=T0),),
        group_type=GroupType.CLASSIC,
    )


@pytest.mark.parametrize(("version", "expire"), [(0, None), (1, T0 + 500), (2, None), (3, None), (4, None)])
def test_only_value_v1_carries_an_expire_timestamp(version: int, expire: int | None) -> None:
    log = CoordinatorLog()
    log.append(commit("g", "t", 0, 1, version=version, expire_timestamp=T0 + 500))
    assert group_of(replay(log), "g").offsets[0].expire_timestamp_ms == expire


def test_negative_committed_offsets_are_not_shown_as_the_admin_client_does() -> None:
    log = CoordinatorLog()
    log.append(commit("g", "t", 0, -1), commit("g", "t", 1, 0))
    assert offsets_of(replay(log), "g") == {("t", 1): 0}


def test_message_format_v0_and_v1_records_of_old_brokers_are_replayed() -> None:
    data = legacy_message(
        0, 0, offset_commit_key("g", "t", 0, record_type=0), offset_commit_value(5, version=0)
    )
    data += legacy_message(1, 1, offset_commit_key("g", "t", 1), offset_commit_value(6, version=1))
    data += legacy_message(1, 2, *classic("g", current_state_timestamp=T0, version=1))
    result = replay_log(data, partition=PARTITION)
    assert offsets_of(result, "g") == {("t", 0): 5, ("t", 1): 6}
    assert group_of(result, "g").protocol_type == "consumer"


# --------------------------------------------------------------------------------------------- groups


def test_a_classic_group_with_members_loads_as_stable_with_their_subscriptions() -> None:
    log = CoordinatorLog()
    log.append(
        classic("billing", ["orders", "payments"], ["orders", "refunds"], current_state_timestamp=T0 - 5)
    )
    log.append(commit("billing", "orders", 0, 7))
    assert group_of(replay(log), "billing") == GroupOffsets(
        group_id="billing",
        state="Stable",
        protocol_type="consumer",
        state_timestamp_ms=T0 - 5,
        subscribed_topics=("orders", "payments", "refunds"),
        offsets=(CommittedOffset("orders", 0, 7, commit_timestamp_ms=T0),),
    )


def test_a_classic_group_without_members_loads_as_empty_subscribed_to_nothing() -> None:
    log = CoordinatorLog()
    log.append(classic("g", current_state_timestamp=T0 - 1000, protocol=None))
    group = group_of(replay(log), "g")
    assert (group.state, group.protocol_type, group.state_timestamp_ms, group.subscribed_topics) == (
        "Empty",
        "consumer",
        T0 - 1000,
        (),
    )


@pytest.mark.parametrize("version", [0, 1])
def test_old_group_metadata_versions_have_no_state_timestamp(version: int) -> None:
    log = CoordinatorLog()
    log.append(classic("g", version=version, current_state_timestamp=T0))
    assert group_of(replay(log), "g").state_timestamp_ms is None


@pytest.mark.parametrize(
    ("protocol_type", "protocol", "subscription", "expected"),
    [
        ("connect", "default", consumer_subscription(["t"]), None),  # not the consumer protocol
        ("consumer", None, consumer_subscription(["t"]), None),  # no protocol selected
        ("consumer", "range", b"\x00", None),  # unparseable: Kafka logs and treats it as unknown
        ("consumer", "range", consumer_subscription(["b", "a"], version=3, rack_id="r"), ("a", "b")),
    ],
)
def test_classic_subscriptions_follow_compute_subscribed_topics(
    protocol_type: str, protocol: str | None, subscription: bytes, expected: tuple[str, ...] | None
) -> None:
    log = CoordinatorLog()
    value = group_metadata_value(
        protocol_type=protocol_type, protocol=protocol, members=[member("m", subscription=subscription)]
    )
    log.append((group_metadata_key("g"), value))
    group = group_of(replay(log), "g")
    assert (group.state, group.protocol_type, group.subscribed_topics) == ("Stable", protocol_type, expected)


def test_an_empty_protocol_type_means_a_standalone_group() -> None:
    log = CoordinatorLog()
    log.append((group_metadata_key("g"), group_metadata_value(protocol_type="", protocol=None, generation=0)))
    group = group_of(replay(log), "g")
    assert (group.protocol_type, group.is_standalone, group.state) == (None, True, "Empty")


def test_a_later_group_record_replaces_the_group() -> None:
    log = CoordinatorLog()
    log.append(classic("g", ["a"]))
    log.append(classic("g", current_state_timestamp=T0))
    group = group_of(replay(log), "g")
    assert (group.state, group.subscribed_topics, group.state_timestamp_ms) == ("Empty", (), T0)


def test_a_group_tombstone_hides_its_offsets_until_the_group_is_recreated() -> None:
    log = CoordinatorLog()
    log.append(classic("g"), commit("g", "t", 0, 5), commit("other", "t", 0, 1))
    log.append((group_metadata_key("g"), None))
    result = replay(log)
    assert [g.group_id for g in result.groups] == ["other"]
    assert result.hidden_offsets == 1  # OffsetFetch of a group that does not exist returns nothing
    log.append(commit("g", "t", 1, 9))  # recreates a simple group: the stored offsets are visible again
    assert offsets_of(replay(log), "g") == {("t", 0): 5, ("t", 1): 9}


# --------------------------------------------------------------------------------------------- transactions


def test_a_committed_transaction_applies_its_offsets() -> None:
    log = CoordinatorLog()
    log.append(commit("g", "t", 0, 10))
    log.append(commit("g", "t", 0, 20), commit("g", "t", 1, 3), producer_id=42)
    log.marker(42, commit=True)
    result = replay(log)
    assert offsets_of(result, "g") == {("t", 0): 20, ("t", 1): 3}
    assert not any(o.pending_transaction for o in group_of(result, "g").offsets)
    assert result.open_producers == ()


def test_an_aborted_transaction_leaves_the_previous_offsets() -> None:
    log = CoordinatorLog()
    log.append(commit("g", "t", 0, 10))
    log.append(commit("g", "t", 0, 20), producer_id=42)
    log.marker(42, commit=False)
    result = replay(log)
    assert offsets_of(result, "g") == {("t", 0): 10}
    assert group_of(result, "g").offsets[0].pending_transaction is False


def test_an_open_transaction_keeps_the_previous_offset_and_flags_it_pending() -> None:
    log = CoordinatorLog()
    log.append(commit("g", "t", 0, 10), commit("g", "t", 1, 1))
    log.append(commit("g", "t", 0, 20), commit("g", "t", 2, 30), producer_id=42)
    result = replay(log)
    assert group_of(result, "g").offsets == (
        CommittedOffset("t", 0, 10, commit_timestamp_ms=T0, pending_transaction=True),
        CommittedOffset("t", 1, 1, commit_timestamp_ms=T0),
    )  # t-2 has no committed offset yet: nothing to show
    assert result.open_producers == (42,)


def test_a_transactional_commit_creates_the_group_even_before_its_marker() -> None:
    log = CoordinatorLog()
    log.append(commit("txn-only", "t", 0, 20), producer_id=42)
    log.marker(42, commit=False)
    assert group_of(replay(log), "txn-only").offsets == ()


def test_a_committed_transaction_does_not_override_a_later_regular_commit() -> None:
    log = CoordinatorLog()
    log.append(commit("g", "t", 0, 20), producer_id=42)
    log.append(commit("g", "t", 0, 25))  # written after the transactional one
    log.marker(42, commit=True)
    assert offsets_of(replay(log), "g") == {("t", 0): 25}


def test_an_offset_tombstone_also_drops_pending_transactional_offsets() -> None:
    log = CoordinatorLog()
    log.append(commit("g", "t", 0, 20), producer_id=42)
    log.append(tombstone("g", "t", 0))
    log.marker(42, commit=True)
    result = replay(log)
    assert offsets_of(result, "g") == {}
    assert result.open_producers == ()


def test_markers_apply_per_producer_and_other_control_records_are_ignored() -> None:
    log = CoordinatorLog()
    log.append(commit("g", "t", 0, 1), producer_id=1)
    log.append(commit("g", "t", 1, 2), producer_id=2)
    log.marker(3, commit=True)  # a producer without pending offsets
    log.control(LEADER_CHANGE_KEY, producer_id=1)  # not a transaction marker: producer 1 stays open
    log.marker(2, commit=True)
    result = replay(log)
    assert offsets_of(result, "g") == {("t", 1): 2}
    assert result.open_producers == (1,)


# --------------------------------------------------------------------------------------------- KIP-848


def consumer_group(log: CoordinatorLog, group: str, *, epoch: int, assignment_epoch: int) -> None:
    log.append(consumer_group_metadata(group, epoch), target_assignment_metadata(group, assignment_epoch))


def test_a_kip_848_group_has_the_union_of_its_members_and_regex_subscriptions() -> None:
    log = CoordinatorLog()
    consumer_group(log, "cg", epoch=3, assignment_epoch=3)
    log.append(
        consumer_group_member("cg", "m1", ["orders"]),
        consumer_group_member("cg", "m2", ["payments", "orders"], regex="logs-.*"),
        regular_expression("cg", "logs-.*", ["logs-a", "logs-b"]),
        current_member_assignment("cg", "m1", member_epoch=3),
        current_member_assignment("cg", "m2", member_epoch=3),
        partition_metadata("cg"),
        target_assignment_member("cg", "m1"),
        commit("cg", "orders", 0, 50),
    )
    assert group_of(replay(log), "cg") == GroupOffsets(
        group_id="cg",
        state="Stable",
        protocol_type="consumer",
        state_timestamp_ms=None,
        subscribed_topics=("logs-a", "logs-b", "orders", "payments"),
        offsets=(CommittedOffset("orders", 0, 50, commit_timestamp_ms=T0),),
        group_type=GroupType.CONSUMER,
    )


@pytest.mark.parametrize(
    ("epoch", "assignment_epoch", "member_epoch", "member_state", "expected"),
    [
        (4, 3, 3, 0, "Assigning"),
        (3, 3, 2, 0, "Reconciling"),
        (3, 3, 3, 1, "Reconciling"),
        (3, 3, 3, 0, "Stable"),
    ],
)
def test_kip_848_group_states(
    epoch: int, assignment_epoch: int, member_epoch: int, member_state: int, expected: str
) -> None:
    log = CoordinatorLog()
    consumer_group(log, "cg", epoch=epoch, assignment_epoch=assignment_epoch)
    log.append(
        consumer_group_member("cg", "m1", ["t"]),
        current_member_assignment("cg", "m1", member_epoch=member_epoch, state=member_state),
    )
    assert group_of(replay(log), "cg").state == expected


def test_a_kip_848_group_deleted_in_kafkas_order_is_gone() -> None:
    log = CoordinatorLog()
    consumer_group(log, "cg", epoch=3, assignment_epoch=3)
    log.append(
        consumer_group_member("cg", "m1", ["t"]), current_member_assignment("cg", "m1", member_epoch=3)
    )
    log.append(target_assignment_member("cg", "m1"))
    key = lambda pair: pair[0]  # noqa: E731
    log.append(
        (key(current_member_assignment("cg", "m1", member_epoch=0)), None),
        (key(target_assignment_member("cg", "m1")), None),
        (key(consumer_group_member("cg", "m1", [])), None),
    )
    assert group_of(replay(log), "cg").state == "Empty"
    log.append(
        (key(target_assignment_metadata("cg", 0)), None), (key(consumer_group_metadata("cg", 0)), None)
    )
    assert replay(log).groups == ()


def test_a_kip_848_tombstone_kafka_would_reject_fails_only_that_group() -> None:
    log = CoordinatorLog()
    consumer_group(log, "cg", epoch=3, assignment_epoch=3)
    log.append(consumer_group_member("cg", "m1", ["t"]), commit("fine", "t", 0, 1))
    offset = log.append((consumer_group_metadata("cg", 0)[0], None))  # members still there
    result = replay(log)
    assert [g.group_id for g in result.groups] == ["fine"]
    assert result.errors[0].group_id == "cg"
    assert f"{PARTITION} offset {offset}" in result.errors[0].error


def test_a_simple_group_becomes_a_kip_848_group_and_keeps_its_offsets() -> None:
    log = CoordinatorLog()
    log.append(commit("g", "t", 0, 5))
    consumer_group(log, "g", epoch=1, assignment_epoch=1)
    group = group_of(replay(log), "g")
    assert (group.group_type, group.state, group.offsets[0].offset) == (GroupType.CONSUMER, "Empty", 5)


def test_kip_848_records_for_a_classic_group_with_members_fail_the_group() -> None:
    log = CoordinatorLog()
    log.append(classic("g", ["t"]))
    log.append(consumer_group_member("g", "m", ["t"]))
    result = replay(log)
    assert result.groups == ()
    assert "is a classic group, not a consumer group" in result.errors[0].error


# --------------------------------------------------------------------------------------------- damage


def test_unknown_record_types_are_skipped_and_counted() -> None:
    log = CoordinatorLog()
    log.append((b"\x00\x0b\x00\x01g", b"\x00\x00share"), (b"\x7f\xff", None), commit("g", "t", 0, 1))
    log.append((b"\x00\x0b\x00\x01h", None))
    result = replay(log)
    assert result.skipped_record_types == ((11, 2), (32767, 1))
    assert offsets_of(result, "g") == {("t", 0): 1}
    assert result.records == 4


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        (offset_commit_value(5)[:-3], "commitTimestamp: needs 8 bytes"),
        (b"\x00\x00" + (1).to_bytes(8, "big") + b"\x10\x00", "metadata: needs 4096 bytes"),
        (b"\x00\x07" + bytes(20), "unknown OffsetCommitValue version 7"),
    ],
    ids=["truncated", "bad-string-length", "unknown-version"],
)
def test_an_undecodable_value_fails_its_group_naming_partition_and_offset(value: bytes, reason: str) -> None:
    log = CoordinatorLog(base_offset=100)
    log.append(commit("bad", "t", 0, 1), commit("good", "t", 0, 2))
    offset = log.append((offset_commit_key("bad", "t", 0), value))
    log.append(
        commit("bad", "t", 1, 3), commit("good", "t", 0, 4)
    )  # later records of a failed group: ignored
    result = replay(log)
    assert [g.group_id for g in result.groups] == ["good"]
    assert offsets_of(result, "good") == {("t", 0): 4}
    [error] = result.errors
    assert error.group_id == "bad"
    assert f"{PARTITION} offset {offset}" in error.error
    assert reason in error.error


def test_a_failed_group_keeps_the_reason_of_its_first_bad_record() -> None:
    log = CoordinatorLog()
    first = log.append((offset_commit_key("bad", "t", 0), b"\x00\x09"))
    log.append((offset_commit_key("bad", "t", 0), b"\x00\x08"))
    [error] = replay(log).errors
    assert f"offset {first} " in error.error
    assert "version 9" in error.error


def test_an_undecodable_group_metadata_value_fails_its_group() -> None:
    log = CoordinatorLog()
    log.append((group_metadata_key("g"), group_metadata_value(members=[member("m")])[:-6]))
    assert replay(log).errors[0].group_id == "g"


@pytest.mark.parametrize(
    ("key", "reason"),
    [
        (offset_commit_key("g", "t", 0)[:-1], "undecodable record key: partition: needs 4 bytes"),
        (b"\x00\x01\x00\x09g", "undecodable record key: group: needs 9 bytes"),
        (None, "the record has no key"),
    ],
    ids=["truncated", "bad-string-length", "no-key"],
)
def test_an_undecodable_key_fails_the_replay_naming_partition_offset_and_segment(
    key: bytes | None, reason: str
) -> None:
    log = CoordinatorLog(base_offset=50)
    log.append(commit("g", "t", 0, 1))
    offset = log.append((key, offset_commit_value(1)))
    with pytest.raises(CoordinatorRecordError) as raised:
        replay(log)
    error = raised.value
    assert (error.partition, error.offset, error.segment) == (PARTITION, offset, "00000000000000000000.log")
    assert reason in str(error)
    assert str(error).startswith(f"{PARTITION} offset {offset} (segment 00000000000000000000.log): ")
    copy = pickle.loads(pickle.dumps(error))  # errors cross process boundaries
    assert (type(copy), str(copy), copy.offset, copy.reason) == (
        type(error),
        str(error),
        offset,
        error.reason,
    )


def test_a_damaged_control_record_fails_the_replay() -> None:
    log = CoordinatorLog()
    offset = log.control(b"\x00")
    with pytest.raises(CoordinatorRecordError, match=f"offset {offset}.*control record key"):
        replay(log)


# --------------------------------------------------------------------------------------------- snapshot


def test_partitions_combine_into_one_snapshot() -> None:
    first, second = CoordinatorLog(), CoordinatorLog()
    first.append(commit("a", "t", 0, 1), commit("dup", "t", 0, 1))
    second.append(
        commit("b", "t", 0, 2), commit("dup", "t", 1, 1), (offset_commit_key("bad", "t", 0), b"\x00")
    )
    results = [
        replay_log(first.data(), partition="__consumer_offsets-0"),
        replay_log(second.data(), partition="__consumer_offsets-1"),
    ]
    snapshot = build_snapshot(results, taken_at_ms=T0, source="lake")
    assert (snapshot.taken_at_ms, snapshot.source) == (T0, "lake")
    assert [g.group_id for g in snapshot.groups] == ["a", "b"]
    assert [e.group_id for e in snapshot.errors] == ["bad", "dup"]
    assert snapshot.errors[1] == GroupError(
        "dup", "the group is found in several partitions (__consumer_offsets-0, __consumer_offsets-1)"
    )


# --------------------------------------------------------------------------------------------- property

KEYS = st.tuples(st.sampled_from(["g1", "g2"]), st.sampled_from(["t", "u"]), st.integers(0, 2))
OPS = st.lists(st.tuples(KEYS, st.none() | st.integers(0, 10**6)), min_size=1, max_size=30)


@given(ops=OPS, batch_size=st.integers(1, 5))
def test_replay_keeps_the_last_write_of_every_partition(
    ops: list[tuple[tuple[str, str, int], int | None]], batch_size: int
) -> None:
    log = CoordinatorLog()
    pairs = [(offset_commit_key(*key), None if v is None else offset_commit_value(v)) for key, v in ops]
    for start in range(0, len(pairs), batch_size):
        log.append(*pairs[start : start + batch_size])
    expected: dict[str, dict[tuple[str, int], int]] = {}
    groups: set[str] = set()
    for (group, topic, partition), value in ops:
        if value is None:
            expected.get(group, {}).pop((topic, partition), None)
        else:
            groups.add(group)
            expected.setdefault(group, {})[(topic, partition)] = value
    result = replay(log)
    assert sorted(g.group_id for g in result.groups) == sorted(groups)
    for group in groups:
        assert offsets_of(result, group) == expected.get(group, {})
