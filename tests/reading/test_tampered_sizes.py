"""A manifest ``size`` that is not its object's (issue 38, point 5), on a local lake and on S3: 2^40 bytes for
a segment of a few KB was a ``MemoryError`` (the local store allocated ``size`` bytes before reading), and
2^33 read a split segment's spans without complaint. Every reader now refuses with one
``SegmentObjectMismatchError`` naming the object and both sizes, before allocating more than the object:
``export``, ``dump``'s reader (``iter_visible_batches``), a run's compaction round (``streamed_source``: on
S3 it allocated ``size`` bytes for the transfer), ``read_lake`` whole and split into spans (what a
Spark task runs)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from cli_harness import cli
from kafka_segments.errors import SegmentObjectMismatchError
from kafka_segments.lake.export import export_lake
from kafka_segments.lake.reader import iter_visible_batches, resolve_manifest
from kafka_segments.pipeline.compaction.sources import streamed_source
from kafka_segments.reading import read_lake
from kafka_segments.storage import LocalStore, ObjectStore
from kit import FakeClock
from manifest_files import rewrite_version

from reading.split_helpers import TP, commit_events, event_batches

pytestmark = pytest.mark.lake

SIZES = [pytest.param(2**40, id="2^40"), pytest.param(2**33, id="2^33"), pytest.param(4000, id="shorter")]


def tamper_size(store: ObjectStore, size: int) -> tuple[str, int]:
    """A lake of two segments with ``.index`` files, the first recorded with ``size`` bytes in the head
    manifest; the first segment's key and real size."""
    head = commit_events(store, event_batches(7, count=300), cut=280, log_start=0, clock=FakeClock())
    state = head.partitions[0]
    first = state.segments[0]
    assert first.size > 4000  # "shorter" is shorter than the object
    segments = (dataclasses.replace(first, size=size), *state.segments[1:])
    rewrite_version(  # in its own format: a format 2 head gets pieces whose checksums hold
        store,
        head.version,
        lambda manifest: dataclasses.replace(
            manifest, partitions=(dataclasses.replace(state, segments=segments),)
        ),
    )
    return first.key, first.size


def refused(error: pytest.ExceptionInfo[SegmentObjectMismatchError], key: str, real: int, size: int) -> None:
    text = str(error.value)
    assert key in text
    assert f"{size}" in text
    assert f"has {real} bytes" in text


@pytest.mark.parametrize("size", SIZES)
def test_every_reader_refuses_a_size_that_is_not_the_objects(
    store: ObjectStore, tmp_path: Path, size: int
) -> None:
    key, real = tamper_size(store, size)
    state = resolve_manifest(store).partitions[0]

    with pytest.raises(SegmentObjectMismatchError) as exported:
        export_lake(store, tmp_path / "export")
    refused(exported, key, real, size)
    with pytest.raises(SegmentObjectMismatchError) as dumped:
        list(iter_visible_batches(store, state))
    refused(dumped, key, real, size)
    with pytest.raises(SegmentObjectMismatchError) as cleaned:
        streamed_source(store, state.segments[0])  # how a run's compaction round reads a segment
    refused(cleaned, key, real, size)
    for split in ({}, {"maxBytesPerPartition": "4000"}):
        with pytest.raises(SegmentObjectMismatchError) as read:
            list(read_lake(store, {"subscribe": TP.topic, **split}))
        refused(read, key, real, size)


@pytest.mark.parametrize(
    "command", [["export", "--to", "out"], ["dump", "--topic", TP.topic, "--partition", "0"]]
)
def test_the_command_line_names_both_sizes(tmp_path: Path, command: list[str]) -> None:
    lake = tmp_path / "lake"
    key, real = tamper_size(LocalStore(lake), 2**40)
    args = [str(tmp_path / part) if part == "out" else part for part in command]

    done = cli(args[0], "--lake", str(lake), *args[1:])

    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert done.stderr.splitlines()[-1] == (
        f"kafka-segments {command[0]}: {lake}/{key}: segment object {key!r} has {real} bytes, the manifest "
        f"records {2**40}"
    )
