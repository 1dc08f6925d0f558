"""The read side of the lake: checked segment reads, Kafka's visibility rule, and which manifest is read."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np
import pytest
from forwarding_store import ForwardingStore
from kafka_segments.errors import PreconditionFailedError, SegmentObjectMismatchError
from kafka_segments.lake.layout import manifest_key
from kafka_segments.lake.reader import (
    ManifestVersionNotFoundError,
    NoCommittedStateError,
    PartitionNotFoundError,
    format_ranges,
    iter_visible_batches,
    partition_state,
    pinned_range,
    read_segment,
    read_segment_version_into,
    resolve_manifest,
)
from kafka_segments.lake.roots import read_root
from kafka_segments.state import SegmentEntry
from kafka_segments.storage import LocalStore, ObjectMeta, ObjectStore
from kafka_segments.topic_partition import TopicPartition
from kit import FakeClock, make_segment

from lake.read_helpers import (
    PAYMENTS_0,
    PAYMENTS_LOG_START,
    PartitionSpec,
    ReadRecordingStore,
    Seg,
    all_records,
    commit_lake,
    commit_states,
    iter_visible_records,
    payments_segments,
    rich_lake,
)

pytestmark = pytest.mark.lake

TP = TopicPartition("orders", 0)


READERS = pytest.mark.parametrize("read", [read_segment], ids=["read_segment"])
Read = Callable[[ObjectStore, SegmentEntry], bytes]


def one_segment_lake(store: ObjectStore, clock: FakeClock, *, adopted: bool) -> tuple[bytes, str]:
    files = make_segment(0)
    manifest = commit_lake(store, {TP: PartitionSpec([Seg.of(files, adopted=adopted)])}, clock=clock)
    return files.log, manifest.partitions[0].segments[0].key


@READERS
@pytest.mark.parametrize("adopted", [True, False])
def test_read_segment_returns_the_bytes_the_manifest_describes(
    store: ObjectStore, clock: FakeClock, adopted: bool, read: Read
) -> None:
    log, _ = one_segment_lake(store, clock, adopted=adopted)
    entry = resolve_manifest(store).partitions[0].segments[0]
    assert read(store, entry) == log


@READERS
def test_a_regrown_object_still_serves_the_described_prefix(
    store: ObjectStore, clock: FakeClock, read: Read
) -> None:
    log, key = one_segment_lake(store, clock, adopted=True)
    store.put(key, log + make_segment(6).log)  # a broker sync appended batches after adoption

    assert read(store, resolve_manifest(store).partitions[0].segments[0]) == log


@READERS
def test_a_missing_object_is_a_mismatch_naming_the_key(
    store: ObjectStore, clock: FakeClock, read: Read
) -> None:
    _, key = one_segment_lake(store, clock, adopted=True)
    store.delete(key)
    entry = resolve_manifest(store).partitions[0].segments[0]

    with pytest.raises(SegmentObjectMismatchError, match="is missing") as caught:
        read(store, entry)
    assert key in str(caught.value)
    assert caught.value.location.endswith(key)


@READERS
def test_a_shorter_object_is_a_mismatch(store: ObjectStore, clock: FakeClock, read: Read) -> None:
    log, key = one_segment_lake(store, clock, adopted=True)
    store.put(key, log[:-5])
    entry = resolve_manifest(store).partitions[0].segments[0]

    with pytest.raises(SegmentObjectMismatchError, match=f"has {len(log) - 5} bytes, the manifest records"):
        read(store, entry)


@READERS
def test_changed_bytes_are_a_mismatch(store: ObjectStore, clock: FakeClock, read: Read) -> None:
    log, key = one_segment_lake(store, clock, adopted=False)
    changed = bytearray(log)
    changed[-1] ^= 0xFF
    store.put(key, bytes(changed))
    entry = resolve_manifest(store).partitions[0].segments[0]

    with pytest.raises(SegmentObjectMismatchError, match="changed: the sha256 of its first") as caught:
        read(store, entry)
    assert entry.sha256 in str(caught.value)
    assert key in str(caught.value)


def test_a_version_read_pins_the_manifests_etag_and_does_not_hash(
    store: ObjectStore, clock: FakeClock
) -> None:
    log, _ = one_segment_lake(store, clock, adopted=True)
    entry = resolve_manifest(store).partitions[0].segments[0]
    recording = ReadRecordingStore(store)
    out = np.zeros(entry.size + 3, dtype=np.uint8)
    seen: list[int] = []

    assert bytes(read_segment_version_into(recording, entry, out, progress=seen.append)) == log
    assert recording.calls == [(entry.etag, False)]
    assert seen[-1] == entry.size


@pytest.mark.parametrize("change", ["regrown", "replaced"])
def test_a_version_read_of_a_changed_object_is_a_precondition_failure(
    store: ObjectStore, clock: FakeClock, change: str
) -> None:
    """The caller then reads the described prefix with its sha256 checked (``read_segment``)."""
    log, key = one_segment_lake(store, clock, adopted=True)
    entry = resolve_manifest(store).partitions[0].segments[0]
    changed = bytearray(log)
    changed[-1] ^= 0xFF
    store.put(key, log + make_segment(6).log if change == "regrown" else bytes(changed))
    out = np.zeros(2 * len(log) + 64, dtype=np.uint8)

    with pytest.raises(PreconditionFailedError, match="the object changed") as caught:
        read_segment_version_into(store, entry, out)
    assert caught.value.location.endswith(key)
    if change == "regrown":
        assert read_segment(store, entry) == log


def test_a_version_read_of_a_missing_object_is_a_mismatch_naming_the_key(
    store: ObjectStore, clock: FakeClock
) -> None:
    _, key = one_segment_lake(store, clock, adopted=True)
    store.delete(key)
    entry = resolve_manifest(store).partitions[0].segments[0]

    with pytest.raises(SegmentObjectMismatchError, match="is missing") as caught:
        read_segment_version_into(store, entry, np.zeros(entry.size, dtype=np.uint8))
    assert key in str(caught.value)


def test_visible_records_start_at_the_log_start_offset_inside_a_batch(
    store: ObjectStore, clock: FakeClock
) -> None:
    rich_lake(store, clock)
    state = partition_state(store, read_root(store, resolve_manifest(store).version), PAYMENTS_0)

    batches = list(iter_visible_batches(store, state))
    records = list(iter_visible_records(store, state))

    first = batches[0]
    assert (first.header.base_offset, first.header.last_offset) == (2, 3)  # the batch holding offset 3
    assert [r.offset for r in first.records] == [PAYMENTS_LOG_START]
    assert first.header.position > 0  # batch 0-1 of the same segment is skipped
    assert first.segment.key == "payments-0/00000000000000000000.log"
    assert [r.offset for r in records] == list(range(PAYMENTS_LOG_START, state.log_end_offset))
    expected = [r for r in all_records(payments_segments()) if r.offset >= PAYMENTS_LOG_START]
    assert records == expected
    assert [b.segment.base_offset for b in batches] == [0, 0, 6, 6, 10, 10]


def test_segments_below_the_log_start_offset_are_not_read(local_store: LocalStore, clock: FakeClock) -> None:
    manifest = rich_lake(local_store, clock)
    state = partition_state(local_store, read_root(local_store, manifest.version), PAYMENTS_0)
    moved = dataclasses.replace(state, log_start_offset=state.log_end_offset)  # kept active segment only
    commit_states(local_store, [moved], clock=clock)
    for segment in state.segments:
        local_store.delete(segment.key)

    assert list(iter_visible_batches(local_store, moved)) == []


def test_resolve_manifest_without_a_commit_says_what_to_do(store: ObjectStore) -> None:
    with pytest.raises(NoCommittedStateError, match="no committed state yet — run `kafka-segments adopt`"):
        resolve_manifest(store)


def test_resolve_manifest_reads_the_head_or_an_older_version(
    local_store: LocalStore, clock: FakeClock
) -> None:
    first = rich_lake(local_store, clock)
    state = partition_state(local_store, read_root(local_store, first.version), PAYMENTS_0)
    second = commit_states(local_store, [dataclasses.replace(state, log_start_offset=6)], clock=clock)

    assert resolve_manifest(local_store) == second
    assert resolve_manifest(local_store, None).version == 2
    assert resolve_manifest(local_store, 1) == first


def test_a_version_removed_by_gc_lists_the_available_ones(local_store: LocalStore, clock: FakeClock) -> None:
    manifest = rich_lake(local_store, clock)
    for _ in range(3):
        commit_states(local_store, manifest.partitions, clock=clock)
    local_store.delete(manifest_key(1))
    local_store.delete(manifest_key(3))

    with pytest.raises(
        ManifestVersionNotFoundError, match=r"version 1 does not exist .*removed by gc"
    ) as caught:
        resolve_manifest(local_store, 1)
    assert "available versions: 2, 4" in str(caught.value)
    with pytest.raises(
        ManifestVersionNotFoundError, match=r"version 9 was never committed \(the head is version 4\)"
    ):
        resolve_manifest(local_store, 9)


def test_an_unknown_partition_names_what_exists(local_store: LocalStore, clock: FakeClock) -> None:
    manifest = rich_lake(local_store, clock)

    with pytest.raises(PartitionNotFoundError, match="topic 'payments' has partitions 0-1"):
        partition_state(local_store, read_root(local_store, manifest.version), TopicPartition("payments", 7))
    with pytest.raises(PartitionNotFoundError, match="topics: orders, payments"):
        partition_state(local_store, read_root(local_store, manifest.version), TopicPartition("nope", 0))


def test_format_ranges_collapses_runs() -> None:
    assert format_ranges([9, 1, 3, 4, 5]) == "1, 3-5, 9"
    assert format_ranges([2]) == "2"
    assert format_ranges([]) == ""


class RangeEtags(ForwardingStore):
    """Records every ``get_range``'s ``if_match`` and counts ``head`` calls (a store the lake never names)."""

    def __init__(self, inner: ObjectStore) -> None:
        super().__init__(inner)
        self.if_matches: list[str | None] = []
        self.heads = 0

    def get_range(self, key: str, *, start: int, end: int, if_match: str | None = None) -> bytes:
        self.if_matches.append(if_match)
        return super().get_range(key, start=start, end=end, if_match=if_match)

    def head(self, key: str) -> ObjectMeta:
        self.heads += 1
        return super().head(key)


def test_a_pinned_range_is_the_stores_conditional_ranged_read(store: ObjectStore, clock: FakeClock) -> None:
    log, key = one_segment_lake(store, clock, adopted=True)
    entry = resolve_manifest(store).partitions[0].segments[0]
    wrapped = RangeEtags(store)

    assert pinned_range(wrapped, entry, start=3, end=40) == log[3:40]
    assert (wrapped.if_matches, wrapped.heads) == ([entry.etag], 0)
    store.put(key, log[:-1] + b"!")
    with pytest.raises(PreconditionFailedError, match="the object changed"):
        pinned_range(wrapped, entry, start=3, end=40)
