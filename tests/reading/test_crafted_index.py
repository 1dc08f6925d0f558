"""Issue 38: a `.index` crafted to point into a record value that holds a valid Kafka batch (its CRC-32C
right, chaining exactly to the next real batch) cannot make a split read return other rows. Before, such a
position passed every check a span's task makes from its own bytes: the whole read gave the carrier's
offset twice (the real record and the forged one), and a read starting at that offset gave the forged
value instead of the real one. Now a reader splits only at the entries of a `.index` whose sha256 the
manifest pins, recorded when the index was checked against the `.log`'s batch headers as the segment
entered the lake (`lake.index_pin`): a crafted index is never pinned, and one replaced after the commit is
not the pinned one. On a local lake and on S3, staged by a run and adopted."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

import pytest
from kafka_segments.lake import begin_run, stage_segment
from kafka_segments.lake.adopt_run import adopt
from kafka_segments.lake.codec import read_segment, segment_to_dict
from kafka_segments.lake.index_pin import checked_index_sha256
from kafka_segments.lake.json_document import Reader
from kafka_segments.lake.layout import index_keys
from kafka_segments.lake.reader import resolve_manifest
from kafka_segments.lake.scan import sha256_hex, summarize_segment
from kafka_segments.reading import plan_read
from kafka_segments.records.builder import build_batch
from kafka_segments.records.record import Record
from kafka_segments.segment.files import FileKind
from kafka_segments.segment.offset_index import OffsetIndex, OffsetPosition
from kafka_segments.segment.writer import SegmentFiles, write_segment
from kafka_segments.storage import ObjectStore
from kit import FakeClock

from reading.split_helpers import TP, commit_partition, rows
from reading.test_split_read import _recommit

pytestmark = pytest.mark.lake

TS = 1_763_700_000_000
CARRIER = 40
"""The offset of the record whose value holds the forged batch."""
FORGED = build_batch([Record(CARRIER, TS, b"k40", b"forged")])
"""A valid batch at the carrier's offset: its last byte, the record's header count (0), is the carrier
record's own header count, which follows its value."""


def carrier_files() -> tuple[SegmentFiles, int]:
    """A segment of 40 plain batches, the carrier (one record whose value is ``FORGED`` but its last byte),
    then 40 more; with its own `.index` (an entry every 512 bytes), and the position of the forged batch."""
    before = [build_batch([Record(o, TS + o, f"k{o}".encode(), bytes(100))]) for o in range(CARRIER)]
    assert FORGED[-1] == 0
    carrier = build_batch([Record(CARRIER, TS + CARRIER, b"k40", FORGED[:-1])])
    after = [build_batch([Record(o, TS + o, f"k{o}".encode(), bytes(100))]) for o in range(CARRIER + 1, 81)]
    files = write_segment([*before, carrier, *after], index_interval_bytes=512)
    forged_at = sum(map(len, before)) + len(carrier) - len(FORGED)
    assert files.log[forged_at : forged_at + len(FORGED)] == FORGED
    return files, forged_at


def crafted_index(forged_at: int, *, offset: int) -> bytes:
    """A `.index` of one entry: ``offset`` at the forged batch's position."""
    return OffsetIndex(0, (OffsetPosition(offset, forged_at),)).to_bytes()


def stage(store: ObjectStore, files: Mapping[FileKind, bytes]) -> None:
    clock = FakeClock()
    run, base = begin_run(store, now_ms=clock(), operation="test", clock=clock)
    entry = stage_segment(store, run, topic_partition=TP, base_offset=0, files=files, clock=clock)
    commit_partition(store, run, base, TP, [entry], clock=clock)


SPLIT = {"subscribe": TP.topic, "maxBytesPerPartition": "6000"}
FROM_CARRIER = {"assign": '{"events": [0]}', "startingOffsets": f'{{"events": {{"0": {CARRIER}}}}}'}


def check_unsplit_rows(store: ObjectStore) -> None:
    """Whole, and from the carrier's offset on, a split read gives the rows of the unsplit one: each offset
    once, the carrier's with its real value."""
    whole = rows(store, {"subscribe": TP.topic})
    assert [row["offset"] for row in whole] == list(range(81))
    assert whole[CARRIER]["value"] == FORGED[:-1]
    assert rows(store, SPLIT) == whole
    assert (
        rows(store, {**FROM_CARRIER, "maxBytesPerPartition": SPLIT["maxBytesPerPartition"]})
        == whole[CARRIER:]
    )


@pytest.mark.parametrize("offset", [CARRIER, CARRIER + 1])
def test_an_index_crafted_after_the_commit_changes_no_row(store: ObjectStore, offset: int) -> None:
    files, forged_at = carrier_files()
    stage(store, {FileKind.LOG: files.log, FileKind.INDEX: files.offset_index})
    segment = resolve_manifest(store).partitions[0].segments[0]
    assert segment.index_sha256 == sha256_hex(files.offset_index)
    assert len(plan_read(store, SPLIT).tasks) > 1  # the pinned index splits it
    store.put(index_keys(segment.key)[0], crafted_index(forged_at, offset=offset))
    check_unsplit_rows(store)
    assert len(plan_read(store, SPLIT).tasks) == 1  # not the pinned bytes: one task


def test_an_index_crafted_before_the_commit_is_not_pinned(store: ObjectStore) -> None:
    files, forged_at = carrier_files()
    stage(store, {FileKind.LOG: files.log, FileKind.INDEX: crafted_index(forged_at, offset=CARRIER)})
    check_unsplit_rows(store)
    assert resolve_manifest(store).partitions[0].segments[0].index_sha256 is None
    assert len(plan_read(store, SPLIT).tasks) == 1


@pytest.mark.parametrize("crafted", [False, True])
def test_adoption_pins_only_an_index_that_holds(store: ObjectStore, *, crafted: bool) -> None:
    files, forged_at = carrier_files()
    index = crafted_index(forged_at, offset=CARRIER) if crafted else files.offset_index
    store.put(f"{TP.topic}-0/00000000000000000000.index", index)
    store.put(f"{TP.topic}-0/00000000000000000000.log", files.log)
    adopt(store, now_ms=TS)
    check_unsplit_rows(store)
    segment = resolve_manifest(store).partitions[0].segments[0]
    assert segment.index_sha256 == (None if crafted else sha256_hex(index))
    assert (len(plan_read(store, SPLIT).tasks) > 1) is not crafted


def test_an_index_holds_only_where_batches_start_and_its_offsets_are_theirs() -> None:
    files, forged_at = carrier_files()
    table = summarize_segment(files.log, key="t", base_offset=0).table
    good = files.offset_index
    assert checked_index_sha256(good, table, base_offset=0) == sha256_hex(good)
    entries = OffsetIndex(0, ()).to_bytes()
    assert checked_index_sha256(entries, table, base_offset=0) is None  # no entry: nothing to pin
    lies = {
        "inside a value": [(CARRIER, forged_at)],
        "shifted": [(5, int(table.position[5]) + 1)],
        "past the end": [(80, len(files.log))],
        "offset below its batch's predecessor": [(4, int(table.position[5]))],
        "offsets of later batches": [
            (9, int(table.position[5])),
            (10, int(table.position[6])),
        ],
    }
    for name, lie in lies.items():
        data = OffsetIndex(0, tuple(OffsetPosition(o, p) for o, p in lie)).to_bytes()
        assert checked_index_sha256(data, table, base_offset=0) is None, name
    assert checked_index_sha256(b"\0" * 7, table, base_offset=0) is None  # does not parse


def test_a_manifest_before_the_field_reads_the_segment_whole(store: ObjectStore) -> None:
    files, _ = carrier_files()
    stage(store, {FileKind.LOG: files.log, FileKind.INDEX: files.offset_index})
    state = resolve_manifest(store).partitions[0]
    pinned = state.segments[0]
    written = segment_to_dict(pinned)
    assert written["index_sha256"] == pinned.index_sha256
    old = {name: value for name, value in written.items() if name != "index_sha256"}
    assert read_segment(Reader(old, location="m")).index_sha256 is None
    pinless = dataclasses.replace(pinned, index_sha256=None)
    assert segment_to_dict(pinless) == old  # written as a manifest before the field
    _recommit(store, dataclasses.replace(state, segments=(pinless,)))
    assert len(plan_read(store, SPLIT).tasks) == 1
    check_unsplit_rows(store)
