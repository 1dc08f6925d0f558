"""Migration (issue 33, point 6; docs/metadata-format-2.md, "Migration"): a lake in format 1, written by the
previous release's writer (``manifest_files.format_1_commits``), keeps working; the new code's first commit
on it writes format 2 (every partition's pieces, once), later commits only what they change; the format 1
versions stay readable for time travel until gc retires them."""

from __future__ import annotations

import json

import pytest
from kafka_segments.lake.adopt_run import adopt
from kafka_segments.lake.format2 import PIECES_PREFIX
from kafka_segments.lake.gc import collect_garbage
from kafka_segments.lake.history import manifest_versions, read_manifest
from kafka_segments.lake.layout import manifest_key
from kafka_segments.lake.reader import resolve_manifest
from kafka_segments.lake.recover import recover
from kafka_segments.lake.staging import begin_run
from kafka_segments.lake.upgrade import upgrade
from kafka_segments.segment.writer import write_segment
from kafka_segments.state import MANIFEST_FORMAT_2
from kafka_segments.storage import ObjectStore
from kafka_segments.topic_partition import TopicPartition
from kit import FakeClock, upload_segment
from manifest_files import FORMAT_1, format_1_commits

from lake.retention_helpers import config, run, single_record_batch, topic_yaml, upload_fifteen_records

pytestmark = pytest.mark.lake

NOW = 1_000_000
KEEP = config(topic_yaml(retention_ms=-1))
TPS = [TopicPartition("t", p) for p in range(3)]


def _append(store: ObjectStore, tp: TopicPartition, base: int = 15) -> None:
    batches = [single_record_batch(offset, ts=40) for offset in range(base, base + 5)]
    upload_segment(store, tp, write_segment(batches, base_offset=base))


def _stored_format(store: ObjectStore, version: int) -> int:
    """The ``format_version`` the version's stored JSON says."""
    value = json.loads(store.get(manifest_key(version)))["format_version"]
    assert isinstance(value, int)
    return value


def _piece_folders(keys: set[str]) -> set[str]:
    return {key[len(PIECES_PREFIX) :].split("/")[0] for key in keys}


def _pieces(store: ObjectStore) -> set[str]:
    return {meta.key for meta in store.list(PIECES_PREFIX)}


def _format_1_lake(store: ObjectStore, clock: FakeClock) -> None:
    """Versions 1 (every partition adopted) and 2 (a segment more in ``t-0``), both in format 1."""
    for tp in TPS:
        upload_fifteen_records(store, tp=tp, segment_ts=[10, 20, 30])
    with format_1_commits():
        run(store, KEEP, now_ms=NOW, clock=clock)
        _append(store, TPS[0])
        run(store, KEEP, now_ms=NOW + 1, clock=clock)
    assert [_stored_format(store, v) for v in manifest_versions(store)] == [FORMAT_1, FORMAT_1]
    assert _pieces(store) == set()


def test_the_first_run_on_a_format_1_lake_commits_format_2_and_time_travel_reads_format_1(
    store: ObjectStore, clock: FakeClock
) -> None:
    _format_1_lake(store, clock)
    old = [read_manifest(store, version) for version in (1, 2)]

    _append(store, TPS[1])
    first = run(store, KEEP, now_ms=NOW + 2, clock=clock)

    assert first.committed_version == 3
    assert _stored_format(store, 3) == MANIFEST_FORMAT_2
    migrated = _pieces(store)
    assert _piece_folders(migrated) == {tp.dir_name for tp in TPS}  # every partition's pieces, once
    head = read_manifest(store, 3)
    assert [len(state.segments) for state in head.partitions] == [4, 4, 3]
    assert head.partitions[2] == old[1].partitions[2]  # what the run did not change is as it was
    # time travel: the format 1 versions read as they were written
    assert [resolve_manifest(store, version) for version in (1, 2)] == old
    assert [_stored_format(store, version) for version in (1, 2)] == [FORMAT_1, FORMAT_1]

    _append(store, TPS[2])
    run(store, KEEP, now_ms=NOW + 3, clock=clock)
    assert _piece_folders(_pieces(store) - migrated) == {TPS[2].dir_name}  # later: only what changed
    assert upgrade(store, clock=clock).version is None  # already format 2: nothing to do

    later = 2**53  # past every object's modification time (the clock is fake, the stores' times are not)
    report = collect_garbage(store, now_ms=later, dry_run=False, retain_manifests=1, orphan_min_age_ms=0)
    assert report.ok
    assert set(report.deleted_manifests) >= {1, 2}  # gc retires the format 1 versions like any other
    assert manifest_versions(store) == [4]
    assert [len(state.segments) for state in read_manifest(store, 4).partitions] == [4, 4, 4]


def test_adopt_on_a_format_1_lake_commits_format_2(store: ObjectStore, clock: FakeClock) -> None:
    """Every operation's commit writes format 2, not only a run's: here ``adopt``."""
    _format_1_lake(store, clock)
    _append(store, TPS[2])
    report = adopt(store, now_ms=NOW + 2, clock=clock)

    assert report.committed_version == 3
    assert _stored_format(store, 3) == MANIFEST_FORMAT_2
    assert _piece_folders(_pieces(store)) == {tp.dir_name for tp in TPS}
    assert [len(state.segments) for state in read_manifest(store, 3).partitions] == [4, 3, 4]


def test_recovers_fence_on_a_format_1_lake_commits_format_2(store: ObjectStore, clock: FakeClock) -> None:
    """A fence (recovery of a run that stopped before its commit) is the lake's first format 2 commit too:
    the same partitions, every partition's pieces."""
    _format_1_lake(store, clock)
    before = read_manifest(store, 2)
    stopped, _ = begin_run(store, now_ms=NOW + 2, operation="run", clock=clock)
    clock.advance(1)

    report = recover(store, abandon_after_ms=0, clock=clock)

    assert report.fence_versions == (3,)
    assert [r.run_id for r in report.runs] == [stopped.run_id]
    assert _stored_format(store, 3) == MANIFEST_FORMAT_2
    assert _piece_folders(_pieces(store)) == {tp.dir_name for tp in TPS}
    assert read_manifest(store, 3).partitions == before.partitions


def test_a_new_lake_starts_in_format_2(store: ObjectStore, clock: FakeClock) -> None:
    upload_fifteen_records(store, tp=TPS[0], segment_ts=[10, 20, 30])
    assert run(store, KEEP, now_ms=NOW, clock=clock).committed_version == 1
    assert _stored_format(store, 1) == MANIFEST_FORMAT_2
