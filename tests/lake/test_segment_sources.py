"""How a lake round reads the segments it decodes (``pipeline.compaction.sources``): the object version the
manifest names, checked by its batches' CRC-32C and the entry's facts as it is decoded — and, when any of that
fails, read again with its sha256 checked, for the round to decode itself."""

from __future__ import annotations

import dataclasses
import threading
from typing import ClassVar

import numpy as np
import pytest
from kafka_segments.compaction.decoded import decode_segment
from kafka_segments.lake.reader import resolve_manifest
from kafka_segments.pipeline.compaction.sources import plain_source, streamed_source
from kafka_segments.records import CompressionType, Record, build_batch
from kafka_segments.records.fast import scan_header_table
from kafka_segments.records.fast.prefault import ArenaPrefaulter
from kafka_segments.segment.writer import SegmentFiles, write_segment
from kafka_segments.state import SegmentEntry
from kafka_segments.storage import LocalStore, ObjectStore
from kafka_segments.topic_partition import TopicPartition
from kit import FakeClock, make_segment
from unit.compaction_helpers import NOW, legacy_message, legacy_wrapper

from lake.read_helpers import PartitionSpec, ReadRecordingStore, Seg, commit_lake

pytestmark = pytest.mark.lake

TP = TopicPartition("orders", 0)
MAX_TIMESTAMP_LOW_BYTE = 42
"""A batch's byte only its CRC-32C covers: the low byte of maxTimestamp (bytes 35..42 of the header)."""


def lake_entry(
    store: ObjectStore, clock: FakeClock, files: SegmentFiles | None = None
) -> tuple[SegmentEntry, bytes]:
    files = files or make_segment(0, batches=5, records_per_batch=3)
    manifest = commit_lake(store, {TP: PartitionSpec([Seg.of(files, adopted=True)])}, clock=clock)
    assert manifest.partitions[0].segments[0] == resolve_manifest(store).partitions[0].segments[0]
    return manifest.partitions[0].segments[0], files.log


def test_a_streamed_source_reads_the_manifests_version_and_decodes_it(
    store: ObjectStore, clock: FakeClock
) -> None:
    entry, log = lake_entry(store, clock)
    recording = ReadRecordingStore(store, flip_at=None)

    source = streamed_source(recording, entry)

    assert bytes(source.data) == log
    assert recording.calls == [(entry.etag, False)]  # pinned by the etag, not hashed, not S3's CRC either
    assert source.decoded is not None
    want = decode_segment(plain_source(store, entry))
    assert source.decoded.columns.offset.tolist() == want.columns.offset.tolist()
    assert source.decoded.key_id.tolist() == want.key_id.tolist()


@pytest.mark.parametrize("batch", [0, -1], ids=["first-batch", "last-batch"])
def test_a_damaged_transfer_is_read_again_with_its_sha256_checked(
    store: ObjectStore, clock: FakeClock, batch: int
) -> None:
    entry, log = lake_entry(store, clock)
    position = int(scan_header_table(log).position[batch])
    flaky = ReadRecordingStore(store, flip_at=position + MAX_TIMESTAMP_LOW_BYTE)

    source = streamed_source(flaky, entry)

    assert bytes(source.data) == log  # the plain read's bytes, not the damaged ones
    assert source.decoded is None  # the round decodes them itself
    assert flaky.calls == [(entry.etag, False)]


@pytest.mark.parametrize(
    "field",
    ["last_offset", "record_count", "batch_count", "max_timestamp_ms", "first_batch_max_timestamp_ms"],
)
def test_headers_that_differ_from_the_entry_are_read_again(
    store: ObjectStore, clock: FakeClock, field: str
) -> None:
    entry, log = lake_entry(store, clock)
    other = dataclasses.replace(entry, **{field: getattr(entry, field) + 1})

    source = streamed_source(store, other)

    assert bytes(source.data) == log
    assert source.decoded is None


def test_a_regrown_object_serves_the_described_prefix(store: ObjectStore, clock: FakeClock) -> None:
    entry, log = lake_entry(store, clock)
    store.put(entry.key, log + make_segment(15).log)  # a broker sync appended batches after adoption

    source = streamed_source(store, entry, buffer=np.zeros(entry.size, dtype=np.uint8))

    assert bytes(source.data) == log
    assert source.decoded is None


def test_legacy_entries_are_checked_and_decoded_in_one_read(store: ObjectStore, clock: FakeClock) -> None:
    """v0/v1 entries are decoded at the end of the read (not in steps), checked all the same: one read."""
    raw = [
        legacy_message(0, 0, b"a", b"x"),
        legacy_wrapper(
            2, CompressionType.GZIP, legacy_message(1, 0, b"b", b"y") + legacy_message(1, 1, b"a", None)
        ),
        build_batch([Record(3, NOW, b"b", b"z")], base_offset=3),
    ]
    entry, log = lake_entry(store, clock, write_segment(raw, base_offset=0))
    recording = ReadRecordingStore(store, flip_at=None)

    source = streamed_source(recording, entry)

    assert source.decoded is not None
    assert source.decoded.columns.offset.tolist() == [0, 1, 2, 3]
    assert bytes(source.data) == log
    assert len(recording.calls) == 1


def test_a_caller_may_lend_the_buffers(store: ObjectStore, clock: FakeClock) -> None:
    entry, log = lake_entry(store, clock)
    buffer = np.zeros(entry.size + 100, dtype=np.uint8)
    arena = np.zeros(1 << 16, dtype=np.uint8)

    source = streamed_source(store, entry, buffer=buffer, arena=arena)

    assert source.decoded is not None
    assert np.shares_memory(np.frombuffer(source.data, dtype=np.uint8), buffer)
    assert bytes(source.data) == log


class RecordingPrefaulter(ArenaPrefaulter):
    made: ClassVar[list[RecordingPrefaulter]] = []

    def __init__(self, arena: np.ndarray, **options: int) -> None:
        super().__init__(arena, **options)
        self.marks: list[int] = []
        self.stopped = False
        RecordingPrefaulter.made.append(self)

    def advance(self, written: int) -> None:
        self.marks.append(written)
        super().advance(written)

    def stop(self, *, used: int | None = None) -> None:
        self.stopped = True
        super().stop(used=used)


@pytest.mark.parametrize("flip", [False, True], ids=["intact", "damaged-transfer"])
def test_a_fresh_buffer_is_faulted_in_ahead_and_the_arena_reused_step_after_step(
    store: ObjectStore, clock: FakeClock, monkeypatch: pytest.MonkeyPatch, flip: bool
) -> None:
    """A fresh input buffer's pages are faulted in on a helper thread as the transfer fills it (not a local
    lake's: it maps the file), and the helper is stopped before ``streamed_source`` returns, whatever the
    read's outcome. The arena is not: compressed steps inflate over one another at its start
    (``ArenaUse.REUSE``), so the decoded segment says where its records are. Lent buffers are left alone."""
    batches = [
        build_batch([Record(o, NOW, b"k%d" % o, b"v" * 300)], base_offset=o, compression=CompressionType.LZ4)
        for o in range(20)
    ]
    entry, log = lake_entry(store, clock, write_segment(batches, base_offset=0))
    monkeypatch.setattr(RecordingPrefaulter, "made", [])
    monkeypatch.setattr("kafka_segments.pipeline.compaction.sources.ArenaPrefaulter", RecordingPrefaulter)
    flaky = ReadRecordingStore(store, flip_at=len(log) - 1 if flip else None)

    source = streamed_source(flaky, entry)

    assert (source.decoded is None) is flip
    assert source.decoded is None or source.decoded.steps is not None
    assert bytes(source.data) == log
    transfer = RecordingPrefaulter.made  # the input buffer's alone
    assert [p.marks for p in transfer] == [[len(log)]]  # a recording store transfers even a local file
    assert all(p.stopped for p in RecordingPrefaulter.made)
    assert not [t for t in threading.enumerate() if t.name == "arena-prefault"]
    lent = np.zeros(len(log), dtype=np.uint8)
    streamed_source(store, entry, buffer=lent, arena=np.zeros(1 << 16, dtype=np.uint8))
    assert len(RecordingPrefaulter.made) == 1
    streamed_source(store, entry)  # a local lake maps the file: no input buffer to fault in
    assert len(RecordingPrefaulter.made) == (1 if isinstance(store, LocalStore) else 2)
