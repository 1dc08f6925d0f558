"""Building blocks of the gc and recover tests: runs that write, adopt, retire and commit segments, and a
store whose batched deletes fail for chosen keys."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence

from forwarding_store import ForwardingStore
from kafka_segments.errors import DeleteObjectsError
from kafka_segments.lake import (
    Manifest,
    PartitionState,
    RunRecord,
    SegmentEntry,
    SegmentOrigin,
    abort_run,
    begin_run,
    build_manifest,
    commit_run,
    retire,
    stage_manifest,
    stage_segment,
)
from kafka_segments.lake.codec import manifest_to_json
from kafka_segments.lake.gc_record import GC_RECORD_KEY
from kafka_segments.lake.history import read_head
from kafka_segments.lake.run_folder import INPUT_MANIFEST, write_run_bytes
from kafka_segments.lake.scan import summarize_segment
from kafka_segments.segment.files import FileKind
from kafka_segments.storage import ObjectStore
from kafka_segments.topic_partition import TopicPartition
from kit import FakeClock, make_segment, upload_segment

TP = TopicPartition("orders", 0)
DELAY_MS = 60_000
"""The ``file.delete.delay.ms`` of every retirement in these tests."""


def start(
    store: ObjectStore, clock: FakeClock, *, operation: str = "test"
) -> tuple[RunRecord, Manifest | None]:
    """Register a run on the current head."""
    return begin_run(store, now_ms=clock(), operation=operation, clock=clock)


def write(store: ObjectStore, clock: FakeClock, run: RunRecord, base_offset: int) -> SegmentEntry:
    """Stage a new segment (``.log``, ``.index``, ``.timeindex``) under the run's unique names."""
    files = make_segment(base_offset)
    return stage_segment(
        store,
        run,
        topic_partition=TP,
        base_offset=base_offset,
        files=files.by_kind(),
        clock=clock,
    )


def adopt(store: ObjectStore, clock: FakeClock, run: RunRecord, base_offset: int) -> SegmentEntry:
    """Upload a segment under Kafka's plain names (with its indexes) and return its adopted entry."""
    files = make_segment(base_offset)
    key = upload_segment(store, TP, files)
    return summarize_segment(files.log, key=key, base_offset=base_offset).entry(
        key=key,
        base_offset=base_offset,
        etag=store.head(key).etag,
        last_modified_ms=clock(),
        origin=SegmentOrigin.ADOPTED,
        run_id=run.run_id,
    )


def commit(
    store: ObjectStore,
    clock: FakeClock,
    run: RunRecord,
    base: Manifest | None,
    segments: Sequence[SegmentEntry],
    *,
    retired: Sequence[SegmentEntry] = (),
    cleaner_checkpoint: int | None = None,
) -> Manifest:
    """Stage and commit the run's manifest: ``segments`` live, ``retired`` retired (retention.ms)."""
    stage(store, run, base, segments, retired=retired, cleaner_checkpoint=cleaner_checkpoint)
    return commit_run(store, run.run_id, clock=clock)


def stage(
    store: ObjectStore,
    run: RunRecord,
    base: Manifest | None,
    segments: Sequence[SegmentEntry],
    *,
    retired: Sequence[SegmentEntry] = (),
    cleaner_checkpoint: int | None = None,
) -> Manifest:
    """Stage (without committing) the manifest ``commit`` would commit, and return it."""
    state = PartitionState(
        TP,
        segments[0].base_offset,
        segments[-1].next_offset,
        tuple(segments),
        cleaner_checkpoint=cleaner_checkpoint,
        run_id=run.run_id,
    )
    newly = [retire(s, TP, run, reason="retention.ms", delete_delay_ms=DELAY_MS) for s in retired]
    manifest = build_manifest(run, base=base, partitions=[state], newly_retired=newly)
    stage_manifest(store, run, manifest)
    return manifest


def append(store: ObjectStore, clock: FakeClock, *, retire_oldest: int = 0) -> Manifest:
    """One committed run: write a new segment after the live ones and retire the ``retire_oldest`` first."""
    run, base = start(store, clock)
    live = list(base.partitions[0].segments) if base is not None else []
    entry = write(store, clock, run, live[-1].next_offset if live else 0)
    return commit(store, clock, run, base, [*live[retire_oldest:], entry], retired=live[:retire_oldest])


def keys(store: ObjectStore) -> set[str]:
    """The lake's objects, less gc's own record of its last pass (``lake.gc_record``)."""
    return {meta.key for meta in store.list() if meta.key != GC_RECORD_KEY}


def run_keys(store: ObjectStore, run_id: str) -> set[str]:
    """The segment objects named with ``run_id``."""
    return {key for key in keys(store) if f"-{run_id}." in key}


def mtimes(store: ObjectStore, object_keys: Iterable[str]) -> list[int]:
    """The ``last_modified_ms`` of each object, ascending."""
    return sorted(store.head(key).last_modified_ms for key in object_keys)


def head_of(store: ObjectStore) -> Manifest:
    head = read_head(store)
    if head is None:
        raise AssertionError("the lake has no manifest")
    return head


class FailingDeletes(ForwardingStore):
    """An ``ObjectStore`` whose ``delete_many`` deletes everything but ``fail`` and then raises
    ``DeleteObjectsError`` for those keys, named as ``<name_prefix><key>`` (S3 names keys with its prefix)."""

    def __init__(self, inner: ObjectStore, fail: Iterable[str], *, name_prefix: str = "") -> None:
        super().__init__(inner)
        self.fail = frozenset(fail)
        self.name_prefix = name_prefix

    def delete_many(self, keys: Iterable[str]) -> None:
        wanted = list(keys)
        self.inner.delete_many([key for key in wanted if key not in self.fail])
        failed = {self.name_prefix + key: "AccessDenied" for key in wanted if key in self.fail}
        if failed:
            raise DeleteObjectsError(
                f"{len(failed)} object(s) not deleted", location=self.describe(), failed=failed
            )


def crashed_run(
    store: ObjectStore,
    clock: FakeClock,
    topic_partition: TopicPartition,
    *,
    base_offset: int,
    ended: bool = True,
) -> str:
    """A run that adopted ``topic_partition`` (its ``input-manifest.json``), staged a segment there at
    ``base_offset`` (its ``.log`` only) and failed without a commit (its outcome says so; not ``ended``:
    it stopped there, without an outcome); that key."""
    run, base = start(store, clock, operation="run")
    assert base is not None
    adopted = [state for state in base.partitions if state.topic_partition == topic_partition]
    write_run_bytes(
        store,
        run.run_id,
        INPUT_MANIFEST,
        manifest_to_json(dataclasses.replace(base, partitions=tuple(adopted))),
    )
    files = make_segment(base_offset, batches=1)
    entry = stage_segment(
        store,
        run,
        topic_partition=topic_partition,
        base_offset=base_offset,
        files={FileKind.LOG: files.log},
        clock=clock,
    )
    if ended:
        abort_run(store, run.run_id, reason="crashed in a compaction round", clock=clock)
    return entry.key
