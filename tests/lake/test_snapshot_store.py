"""Offset snapshots in the lake, on a local directory and on S3: content-addressed, immutable, idempotent to
store, checked against their hash when read; one pin per logical time, and the first writer's pin wins (also
when writers race). Also the source dispatch that takes snapshots (file, lake, kafka://)."""

from __future__ import annotations

import hashlib
import threading
from dataclasses import replace
from pathlib import Path

import pytest
from kafka_segments.errors import InvalidFileNameError, NoCommittedStateError
from kafka_segments.lake.adopt_run import adopt
from kafka_segments.offsets.kafka_source import InvalidKafkaSourceError
from kafka_segments.offsets.snapshot_codec import snapshot_to_json
from kafka_segments.offsets.snapshot_fields import SnapshotFormatError
from kafka_segments.offsets.snapshot_store import (
    OFFSETS_PREFIX,
    InvalidSnapshotIdError,
    SnapshotIntegrityError,
    SnapshotNotFoundError,
    SnapshotPin,
    list_pins,
    list_snapshots,
    parse_pin_key,
    parse_snapshot_key,
    pin_key,
    pin_snapshot,
    read_pin,
    read_pinned_snapshot,
    read_snapshot,
    snapshot_key,
    store_snapshot,
)
from kafka_segments.offsets.sources import (
    InvalidSnapshotSourceError,
    filter_snapshot,
    source_kind,
    take_snapshot,
)
from kafka_segments.segment.files import segment_file_name
from kafka_segments.state import CommittedOffset, GroupError, GroupOffsets, GroupType, OffsetSnapshot
from kafka_segments.storage import ObjectStore, Overwrite
from kit import T0
from unit.coordinator_records import (
    CoordinatorLog,
    group_metadata_key,
    group_metadata_value,
    offset_commit_key,
    offset_commit_value,
)

pytestmark = pytest.mark.lake


def make_snapshot(*, offset: int = 1200, taken_at_ms: int = T0) -> OffsetSnapshot:
    billing = GroupOffsets(
        group_id="billing",
        state="Stable",
        protocol_type="consumer",
        state_timestamp_ms=T0 - 10_000,
        subscribed_topics=("clickstream",),
        offsets=(
            CommittedOffset("clickstream", 1, 40, commit_timestamp_ms=T0 - 500),
            CommittedOffset("clickstream", 0, offset, commit_timestamp_ms=T0 - 1000),
        ),
    )
    audit = GroupOffsets("audit", "Empty", None, None, None, (), group_type=GroupType.CONSUMER)
    return OffsetSnapshot(
        taken_at_ms=taken_at_ms,
        source="file",
        groups=(billing, audit),
        errors=(GroupError("fraud", "COORDINATOR_NOT_AVAILABLE"),),
    )


def test_a_snapshot_is_stored_under_the_sha256_of_its_canonical_json(store: ObjectStore) -> None:
    snapshot = make_snapshot()

    stored = store_snapshot(store, snapshot)

    data = store.get(stored.key)
    assert data == snapshot_to_json(snapshot)
    assert stored.snapshot_id == hashlib.sha256(data).hexdigest()
    assert stored.key == f"_kafka_segments/offsets/{stored.snapshot_id}.json"
    assert parse_snapshot_key(stored.key) == stored.snapshot_id
    assert read_snapshot(store, stored.snapshot_id) == stored.snapshot
    assert [g.group_id for g in stored.snapshot.groups] == ["audit", "billing"]  # canonical order


def test_storing_the_same_snapshot_again_is_a_no_op(store: ObjectStore) -> None:
    first = store_snapshot(store, make_snapshot())
    etag = store.head(first.key).etag

    again = store_snapshot(store, make_snapshot())
    reordered = store_snapshot(
        store, replace(make_snapshot(), groups=tuple(reversed(make_snapshot().groups)))
    )

    assert again == first
    assert reordered.snapshot_id == first.snapshot_id
    assert store.head(first.key).etag == etag
    assert list_snapshots(store) == [first.snapshot_id]


def test_different_snapshots_get_different_ids_and_are_all_listed(store: ObjectStore) -> None:
    first = store_snapshot(store, make_snapshot(offset=1200))
    second = store_snapshot(store, make_snapshot(offset=1201))
    pin_snapshot(store, now_ms=T0, snapshot_id=first.snapshot_id, source="file")

    assert first.snapshot_id != second.snapshot_id
    assert list_snapshots(store) == sorted([first.snapshot_id, second.snapshot_id])  # pins are not snapshots


def test_a_snapshot_changed_in_the_store_is_detected_by_its_hash(store: ObjectStore) -> None:
    stored = store_snapshot(store, make_snapshot())
    other = snapshot_to_json(make_snapshot(offset=7))  # valid JSON, other content
    store.put(stored.key, other, mode=Overwrite())

    with pytest.raises(SnapshotIntegrityError, match="changed outside") as on_read:
        read_snapshot(store, stored.snapshot_id)
    with pytest.raises(SnapshotIntegrityError, match="changed outside") as on_store:
        store_snapshot(store, make_snapshot())

    assert stored.key in on_read.value.location
    assert stored.key in on_store.value.location
    assert store.get(stored.key) == other  # nothing overwritten


def test_an_invalid_snapshot_is_never_stored(store: ObjectStore) -> None:
    bad = replace(
        make_snapshot(),
        groups=(GroupOffsets("g", "Stable", "consumer", None, None, (CommittedOffset("t", 0, -5),)),),
    )

    with pytest.raises(SnapshotFormatError, match=r"groups\[0\]\.offsets\[0\]\.offset: -5 is negative"):
        store_snapshot(store, bad)

    assert list(store.list(OFFSETS_PREFIX)) == []


def test_reading_a_missing_or_malformed_snapshot_id_is_refused(store: ObjectStore) -> None:
    missing = "0" * 64

    with pytest.raises(SnapshotNotFoundError, match=f"no offset snapshot {missing}"):
        read_snapshot(store, missing)
    with pytest.raises(InvalidSnapshotIdError):
        read_snapshot(store, "../manifests/00000000000000000001")
    with pytest.raises(InvalidSnapshotIdError):
        snapshot_key("A" * 64)


# ---------------------------------------------------------------------------------------------- pins


def test_a_pin_names_the_snapshot_for_a_logical_time(store: ObjectStore) -> None:
    stored = store_snapshot(store, make_snapshot())

    pin = pin_snapshot(store, now_ms=T0, snapshot_id=stored.snapshot_id, source="file", pinned_at_ms=T0 + 5)

    assert pin == SnapshotPin(now_ms=T0, snapshot_id=stored.snapshot_id, source="file", pinned_at_ms=T0 + 5)
    assert not pin.reused
    assert pin.key == "_kafka_segments/offsets/at/00000001763700000000.json"
    assert parse_pin_key(pin.key) == T0
    assert read_pin(store, T0) == pin
    assert read_pin(store, T0 + 1) is None
    assert list_pins(store) == [T0]
    pinned = read_pinned_snapshot(store, T0)
    assert pinned is not None
    assert pinned.snapshot == stored.snapshot
    assert read_pinned_snapshot(store, T0 + 1) is None


def test_the_first_pin_for_a_time_wins_and_later_ones_get_it_back(store: ObjectStore) -> None:
    first = store_snapshot(store, make_snapshot(offset=1))
    second = store_snapshot(store, make_snapshot(offset=2))
    pin_snapshot(store, now_ms=T0, snapshot_id=first.snapshot_id, source="lake", pinned_at_ms=T0)

    later = pin_snapshot(store, now_ms=T0, snapshot_id=second.snapshot_id, source="kafka://b:9092")

    assert later.reused
    assert (later.snapshot_id, later.source, later.pinned_at_ms) == (first.snapshot_id, "lake", T0)
    assert read_pin(store, T0) == later
    other_time = pin_snapshot(store, now_ms=T0 + 86_400_000, snapshot_id=second.snapshot_id, source="lake")
    assert not other_time.reused
    assert list_pins(store) == [T0, T0 + 86_400_000]


def test_concurrent_pins_for_one_time_agree_on_the_first_writer(store: ObjectStore) -> None:
    ids = [store_snapshot(store, make_snapshot(offset=i)).snapshot_id for i in range(6)]
    barrier = threading.Barrier(len(ids))
    results: list[SnapshotPin] = []
    failures: list[BaseException] = []

    def pin(snapshot_id: str) -> None:
        barrier.wait()
        try:
            results.append(pin_snapshot(store, now_ms=T0, snapshot_id=snapshot_id, source="race"))
        except BaseException as exc:  # reported below, not lost in the thread
            failures.append(exc)

    threads = [threading.Thread(target=pin, args=(snapshot_id,)) for snapshot_id in ids]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert failures == []
    winner = read_pin(store, T0)
    assert winner is not None
    assert {result.snapshot_id for result in results} == {winner.snapshot_id}
    assert sorted(result.reused for result in results) == [False] + [True] * (len(ids) - 1)


def test_a_pin_must_name_a_stored_snapshot(store: ObjectStore) -> None:
    with pytest.raises(SnapshotNotFoundError, match="not stored"):
        pin_snapshot(store, now_ms=T0, snapshot_id="f" * 64, source="file")

    assert read_pin(store, T0) is None


def test_a_pin_time_must_fit_the_20_digit_name() -> None:
    assert pin_key(0) == "_kafka_segments/offsets/at/00000000000000000000.json"
    with pytest.raises(InvalidFileNameError):
        pin_key(-1)


def test_a_malformed_or_misplaced_pin_is_refused(store: ObjectStore) -> None:
    stored = store_snapshot(store, make_snapshot())
    pin_snapshot(store, now_ms=T0, snapshot_id=stored.snapshot_id, source="file")
    store.put(pin_key(T0 + 1), store.get(pin_key(T0)))  # the pin of another time, copied

    with pytest.raises(SnapshotFormatError, match=f"now_ms: the pin for {T0 + 1} says {T0}"):
        read_pin(store, T0 + 1)
    store.put(pin_key(T0 + 2), b'{"format_version": 1, "now_ms": 7')
    with pytest.raises(SnapshotFormatError, match="pin is not valid JSON"):
        read_pin(store, T0 + 2)


# ---------------------------------------------------------------------------------------------- sources


@pytest.mark.parametrize(
    ("source", "kind"),
    [("lake", "file"), ("kafka://b:9092", "kafka"), ("KAFKA://b:9092", "kafka"), ("offsets.json", "file")],
)
def test_a_source_string_names_its_kind(source: str, kind: str) -> None:
    expected = "lake" if source == "lake" else kind

    assert source_kind(source) == expected


@pytest.mark.parametrize("source", ["", "s3://bucket/offsets.json", "file:///offsets.json"])
def test_a_source_with_another_scheme_is_refused(source: str) -> None:
    with pytest.raises(InvalidSnapshotSourceError):
        source_kind(source)


def test_a_file_source_keeps_its_own_time_and_filters(tmp_path: Path, store: ObjectStore) -> None:
    path = tmp_path / "offsets.json"
    path.write_bytes(snapshot_to_json(make_snapshot()))

    snapshot = take_snapshot(
        store, source=str(path), taken_at_ms=5, groups=["billing", "fraud"], topics=["x"]
    )

    assert snapshot.taken_at_ms == T0
    assert [group.group_id for group in snapshot.groups] == ["billing"]
    assert snapshot.groups[0].offsets == ()  # kept for its state, without offsets of other topics
    assert [error.group_id for error in snapshot.errors] == ["fraud"]
    assert filter_snapshot(make_snapshot()) == make_snapshot()


def test_the_lake_source_needs_a_committed_manifest(store: ObjectStore) -> None:
    with pytest.raises(NoCommittedStateError, match="no committed manifest"):
        take_snapshot(store, source="lake")


def test_the_lake_source_reads_archived_consumer_offsets_as_of_their_newest_record(
    store: ObjectStore,
) -> None:
    log = CoordinatorLog(timestamp=T0 - 60_000)
    log.append(
        (group_metadata_key("billing"), group_metadata_value(current_state_timestamp=T0 - 3_600_000)),
        (
            offset_commit_key("billing", "clickstream", 0),
            offset_commit_value(1200, commit_timestamp=T0 - 70_000),
        ),
    )
    for kind, data in log.segment().by_kind().items():
        if data:
            store.put(f"__consumer_offsets-0/{segment_file_name(0, kind)}", data)
    adopt(store, now_ms=T0)

    snapshot = take_snapshot(store, source="lake")
    explicit = take_snapshot(store, source="lake", taken_at_ms=T0, topics=["orders"])

    assert (snapshot.source, snapshot.taken_at_ms) == ("lake", T0 - 60_000)
    billing = snapshot.group("billing")
    assert billing is not None
    assert [(o.topic, o.partition, o.offset) for o in billing.offsets] == [("clickstream", 0, 1200)]
    assert explicit.taken_at_ms == T0
    assert [group.offsets for group in explicit.groups] == [()]
    stored = store_snapshot(store, snapshot)
    assert read_snapshot(store, stored.snapshot_id) == stored.snapshot


def test_a_malformed_kafka_source_is_refused_before_connecting(store: ObjectStore) -> None:
    with pytest.raises(InvalidKafkaSourceError, match="is not host:port"):
        take_snapshot(store, source="kafka://no-port")
