"""``export_lake``: the committed state as a plain Kafka log directory."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from kafka_segments.checkpoint import parse_offset_checkpoint, read_offset_checkpoint
from kafka_segments.demo import SAMPLE_INDEX_INTERVAL_BYTES, sample_topic
from kafka_segments.errors import SegmentObjectMismatchError
from kafka_segments.lake.checkpoint_files import checkpoint_file_contents
from kafka_segments.lake.export import export_lake
from kafka_segments.lake.layout import LOG_START_OFFSET_CHECKPOINT_KEY
from kafka_segments.lake.reader import partition_state, read_segment, resolve_manifest
from kafka_segments.lake.roots import read_root
from kafka_segments.records.log import iter_batches
from kafka_segments.segment.files import FileKind, segment_file_name
from kafka_segments.segment.writer import SegmentFiles, write_segment
from kafka_segments.storage import LocalStore, ObjectStore
from kafka_segments.topic_partition import TopicPartition
from kit import FakeClock

from lake.read_helpers import (
    EMPTY_PARTITION_LEO,
    ORDERS_0,
    PAYMENTS_0,
    PAYMENTS_1,
    PAYMENTS_LOG_START,
    commit_states,
    orders_segments,
    payments_segments,
    rich_lake,
)

pytestmark = pytest.mark.lake

INDEX_SUFFIXES = (".index", ".timeindex", ".txnindex")


def exported_files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def rewritten(segments: list[SegmentFiles]) -> list[SegmentFiles]:
    """What our writer makes of the same logs, transactions carried from one segment to the next."""
    result: list[SegmentFiles] = []
    ongoing: dict[int, int] = {}
    for files in segments:
        batches = [bytes(entry.raw) for entry in iter_batches(files.log)]
        written = write_segment(batches, base_offset=files.base_offset, ongoing_txns=ongoing)
        ongoing = dict(written.ongoing_txns)
        result.append(written)
    return result


def expected_files(tp: TopicPartition, segments: list[SegmentFiles]) -> dict[str, bytes]:
    return {f"{tp.dir_name}/{name}": data for files in segments for name, data in files.files().items()}


def test_export_round_trip(store: ObjectStore, clock: FakeClock, tmp_path: Path) -> None:
    manifest = rich_lake(store, clock)
    target = tmp_path / "export"

    report = export_lake(store, target)

    files = exported_files(target)
    for state in manifest.partitions:
        for entry in state.segments:
            name = f"{state.topic_partition.dir_name}/{segment_file_name(entry.base_offset, FileKind.LOG)}"
            assert files[name] == read_segment(store, entry)
    assert not [name for name in files if "-2025" in name.split("/")[-1]]  # run ids never leak into names
    assert report.version == 1
    assert report.files == len(files)
    assert report.bytes == sum(len(data) for data in files.values())
    assert [(p.topic, p.partition, p.segments) for p in report.partitions] == [
        ("orders", 0, 2),
        ("orders", 1, 2),
        ("payments", 0, 3),
        ("payments", 1, 1),
    ]
    assert report.to_dict()["target"] == str(target)
    assert report.to_text().splitlines()[-1] == (
        f"exported version 1 of {store.describe()} to {target}: 4 partition(s), {len(files)} files, "
        f"{report.bytes} bytes"
    )


def test_indexes_are_rebuilt_as_the_writer_builds_them(
    local_store: LocalStore, clock: FakeClock, tmp_path: Path
) -> None:
    rich_lake(local_store, clock)

    export_lake(local_store, tmp_path / "out")

    files = exported_files(tmp_path / "out")
    expected: dict[str, bytes] = {}
    for tp, segments in orders_segments().items():
        expected |= expected_files(tp, rewritten(segments))
    expected |= expected_files(PAYMENTS_0, payments_segments())
    assert {name: data for name, data in files.items() if not name.startswith("payments-1/")} == expected | {
        "log-start-offset-checkpoint": files["log-start-offset-checkpoint"],
        "cleaner-offset-checkpoint": files["cleaner-offset-checkpoint"],
    }
    # the transaction of producer 77 starts in segment 6 and aborts in segment 10: carried across segments
    assert "payments-0/00000000000000000010.txnindex" in files
    assert "payments-0/00000000000000000006.txnindex" not in files


def test_index_interval_is_an_option(local_store: LocalStore, clock: FakeClock, tmp_path: Path) -> None:
    rich_lake(local_store, clock)

    export_lake(local_store, tmp_path / "out", index_interval_bytes=SAMPLE_INDEX_INTERVAL_BYTES)

    files = exported_files(tmp_path / "out")
    for sample in sample_topic():
        for name, data in sample.objects().items():
            assert files[name] == data, name  # the sample was written with that interval


def test_a_partition_without_segments_gets_an_empty_active_segment(
    local_store: LocalStore, clock: FakeClock, tmp_path: Path
) -> None:
    rich_lake(local_store, clock)

    export_lake(local_store, tmp_path / "out")

    stem = f"{PAYMENTS_1.dir_name}/{EMPTY_PARTITION_LEO:020d}"
    files = {k: v for k, v in exported_files(tmp_path / "out").items() if k.startswith("payments-1/")}
    assert files == {f"{stem}.log": b"", f"{stem}.index": b"", f"{stem}.timeindex": b""}


def test_checkpoint_files_follow_kafkas_rule(
    local_store: LocalStore, clock: FakeClock, tmp_path: Path
) -> None:
    first = rich_lake(local_store, clock)
    payments = partition_state(local_store, read_root(local_store, first.version), PAYMENTS_0)
    after_retention = dataclasses.replace(payments, log_start_offset=6, segments=payments.segments[1:])
    commit_states(local_store, [*first.partitions[:2], after_retention, *first.partitions[3:]], clock=clock)

    export_lake(local_store, tmp_path / "v1", version=1)
    export_lake(local_store, tmp_path / "v2")

    assert read_offset_checkpoint(tmp_path / "v1" / "log-start-offset-checkpoint") == {
        PAYMENTS_0: PAYMENTS_LOG_START
    }
    assert read_offset_checkpoint(tmp_path / "v1" / "cleaner-offset-checkpoint") == {ORDERS_0: 20}
    # log start offset 6 = the first segment's base offset: Kafka does not list it
    assert read_offset_checkpoint(tmp_path / "v2" / "log-start-offset-checkpoint") == {}
    assert (tmp_path / "v2" / "log-start-offset-checkpoint").read_bytes() == b"0\n0\n"
    assert not (tmp_path / "v2" / "payments-0" / "00000000000000000000.log").exists()
    # the lake's own file lists the segment-less partition (its folder may hold retired objects); Kafka's
    # rule with the exported empty segment at the log end offset does not
    lake_file = checkpoint_file_contents(resolve_manifest(local_store))[LOG_START_OFFSET_CHECKPOINT_KEY]
    assert parse_offset_checkpoint(lake_file) == {PAYMENTS_1: EMPTY_PARTITION_LEO}


def test_a_non_empty_target_is_refused(local_store: LocalStore, clock: FakeClock, tmp_path: Path) -> None:
    rich_lake(local_store, clock)
    target = tmp_path / "out"
    target.mkdir()
    (target / "notes.txt").write_text("mine")

    with pytest.raises(FileExistsError, match=f"export target {target} is not empty"):
        export_lake(local_store, target)
    assert exported_files(target) == {"notes.txt": b"mine"}

    (tmp_path / "file").write_text("x")
    with pytest.raises(FileExistsError, match="exists and is not a directory"):
        export_lake(local_store, tmp_path / "file")


def test_an_empty_target_directory_is_fine(local_store: LocalStore, clock: FakeClock, tmp_path: Path) -> None:
    rich_lake(local_store, clock)
    (tmp_path / "out").mkdir()

    assert export_lake(local_store, tmp_path / "out").files == len(exported_files(tmp_path / "out"))


def test_a_failed_export_leaves_nothing_behind(
    local_store: LocalStore, clock: FakeClock, tmp_path: Path
) -> None:
    manifest = rich_lake(local_store, clock)
    local_store.delete(manifest.partitions[2].segments[-1].key)  # payments-0, after orders was written
    (tmp_path / "empty").mkdir()

    for target in (tmp_path / "new" / "deeper", tmp_path / "empty"):
        with pytest.raises(SegmentObjectMismatchError, match="is missing"):
            export_lake(local_store, target)
    assert not (tmp_path / "new").exists()
    assert list((tmp_path / "empty").iterdir()) == []
