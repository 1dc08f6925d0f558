"""Manifest format 2 (``lake.format2``, docs/metadata-format-2.md): ``upgrade`` commits a format 1 head
(built with the previous release's writer: ``manifest_files.format_1_commits``) again as a
root plus pieces, readers read both formats, a later commit writes the pieces of the partitions it changed
and no others, tampered pieces are refused naming the object, and gc and recover keep what retained
versions reference and sweep the rest like any run's objects."""

from __future__ import annotations

import json

import pytest
from kafka_segments.errors import ManifestFormatError
from kafka_segments.lake.format2 import CHUNK_MAX, PIECES_PREFIX, cut_chunks, piece_run_id
from kafka_segments.lake.gc import collect_garbage
from kafka_segments.lake.history import head_version, read_manifest
from kafka_segments.lake.layout import manifest_key
from kafka_segments.lake.upgrade import upgrade
from kafka_segments.segment.writer import write_segment
from kafka_segments.state import MANIFEST_FORMAT_2, MANIFEST_FORMAT_VERSION
from kafka_segments.storage import ObjectStore, Overwrite
from kafka_segments.topic_partition import TopicPartition
from kit import FakeClock, upload_segment
from manifest_files import format_1_commits

from lake.retention_helpers import config, run, single_record_batch, topic_yaml, upload_fifteen_records

pytestmark = pytest.mark.lake

NOW = 1_000_000
KEEP = topic_yaml(retention_ms=-1)


def _lake(store: ObjectStore, clock: FakeClock, partitions: int) -> list[TopicPartition]:
    tps = [TopicPartition("t", p) for p in range(partitions)]
    for tp in tps:
        upload_fifteen_records(store, tp=tp, segment_ts=[10, 20, 30])
    with format_1_commits():  # a lake the previous release made, for ``upgrade`` to upgrade
        run(store, config(KEEP), now_ms=NOW, clock=clock)
    return tps


def _append(store: ObjectStore, tp: TopicPartition, base: int = 15) -> None:
    """One more segment of 5 records after the fifteen."""
    batches = [single_record_batch(offset, ts=40) for offset in range(base, base + 5)]
    upload_segment(store, tp, write_segment(batches, base_offset=base))


def _pieces(store: ObjectStore) -> set[str]:
    return {meta.key for meta in store.list(PIECES_PREFIX)}


def test_upgrade_commits_the_same_state_as_format_2(store: ObjectStore, clock: FakeClock) -> None:
    _lake(store, clock, 3)
    before = read_manifest(store, 1)
    result = upgrade(store, clock=clock)

    assert (result.from_format, result.to_format, result.version) == (1, 2, 2)
    after = read_manifest(store, 2)
    root = json.loads(store.get(manifest_key(2)))
    assert (root["format_version"], after.format_version) == (MANIFEST_FORMAT_2, MANIFEST_FORMAT_2)
    assert after.partitions == before.partitions
    assert (after.retired, after.now_ms) == (before.retired, before.now_ms)
    assert read_manifest(store, 1).format_version == MANIFEST_FORMAT_VERSION  # the old version stays readable
    assert {piece_run_id(key) for key in _pieces(store)} == {result.run_id}
    assert upgrade(store, clock=clock).version is None  # already format 2: nothing to do


def test_a_commit_writes_the_pieces_of_the_partitions_it_changed_only(
    store: ObjectStore, clock: FakeClock
) -> None:
    tps = _lake(store, clock, 6)
    upgrade(store, clock=clock)
    before = _pieces(store)
    _append(store, tps[2])
    result = run(store, config(KEEP), now_ms=NOW + 1, clock=clock)

    assert result.committed_version == 3
    written = _pieces(store) - before
    folders = {key[len(PIECES_PREFIX) :].split("/")[0] for key in written}
    assert folders == {tps[2].dir_name}
    assert len(written) == 2  # its partition manifest and its one chunk
    head = read_manifest(store, 3)
    assert head.format_version == MANIFEST_FORMAT_2
    assert [len(state.segments) for state in head.partitions] == [3, 3, 4, 3, 3, 3]


def test_a_tampered_piece_is_refused_naming_it(store: ObjectStore, clock: FakeClock) -> None:
    _lake(store, clock, 1)
    upgrade(store, clock=clock)
    chunk = next(key for key in _pieces(store) if "/chunks/" in key)
    data = store.get(chunk).replace(b'"record_count":5', b'"record_count":6', 1)
    store.put(chunk, data, mode=Overwrite())
    with pytest.raises(ManifestFormatError, match=r"sha256 its name carries") as raised:
        read_manifest(store, 2)
    assert chunk in str(raised.value)


def test_gc_keeps_referenced_pieces_and_sweeps_replaced_ones(store: ObjectStore, clock: FakeClock) -> None:
    tps = _lake(store, clock, 3)
    upgrade(store, clock=clock)
    _append(store, tps[0])
    run(store, config(KEEP), now_ms=NOW + 1, clock=clock)
    _append(store, tps[1])
    run(store, config(KEEP), now_ms=NOW + 2, clock=clock)
    assert head_version(store) == 4

    later = 2**53  # past every object's modification time (the clock is fake, the stores' times are not)
    report = collect_garbage(store, now_ms=later, dry_run=False, retain_manifests=1, orphan_min_age_ms=0)
    assert report.ok
    assert read_manifest(store, 4).partitions  # every piece of the head is still there
    kept = _pieces(store)
    assert {key[len(PIECES_PREFIX) :].split("/")[0] for key in kept} == {tp.dir_name for tp in tps}
    swept = {orphan.key for orphan in report.swept}
    assert swept  # version 2's and 3's pieces that version 4 replaced
    assert all(key.startswith(PIECES_PREFIX) for key in swept)
    assert swept.isdisjoint(kept)


def test_chunks_are_cut_where_a_segment_says_so() -> None:
    from kafka_segments.lake.format2 import CHUNK_CUT
    from kafka_segments.state import SegmentEntry, SegmentOrigin

    def entry(base: int) -> SegmentEntry:
        return SegmentEntry(
            key=f"t-0/{base:020d}.log", base_offset=base, last_offset=base, size=1, sha256="0", etag="0",
            record_count=1, batch_count=1, max_timestamp_ms=0, first_batch_max_timestamp_ms=0,
            last_modified_ms=0, origin=SegmentOrigin.ADOPTED, run_id="r",
        )  # fmt: skip

    segments = [entry(base) for base in range(0, 5000, 2)]
    chunks = cut_chunks(segments)
    assert [s for chunk in chunks for s in chunk] == segments
    assert all(1 <= len(chunk) <= CHUNK_MAX for chunk in chunks)
    assert len(chunks) > 1
    # appending or dropping from the head leaves the other chunks as they were
    assert cut_chunks([*segments, entry(6000)])[:-1] == chunks[:-1]
    assert cut_chunks(segments[len(chunks[0]) :]) == chunks[1:]
    assert CHUNK_CUT < CHUNK_MAX


@pytest.mark.parametrize("partitions", [4, 16])
def test_what_a_one_partition_commit_writes_does_not_grow_with_the_lake(
    store: ObjectStore, clock: FakeClock, partitions: int
) -> None:
    """Format 1 rewrites every partition's entries on every commit; format 2 writes one partition's pieces
    and a root of one line per partition (~850 bytes with its summary), whatever the partitions hold."""
    tps = _lake(store, clock, partitions)
    upgrade(store, clock=clock)
    before = _pieces(store)
    _append(store, tps[0])
    run(store, config(KEEP), now_ms=NOW + 1, clock=clock)

    written = _pieces(store) - before
    piece_bytes = sum(len(store.get(key)) for key in written)
    root_bytes = len(store.get(manifest_key(3)))
    format_1 = len(store.get(manifest_key(1)))  # the same lake's whole manifest in format 1
    assert len(written) == 2
    assert piece_bytes < 3 * format_1 / partitions  # about one partition's share
    assert root_bytes < 1_000 * partitions + 600
