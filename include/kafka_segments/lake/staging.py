"""A run's writes before its commit: register the run, write its segments' objects under the run's unique
names, and stage the manifest it proposes (in its run folder, invisible to readers). The commit itself and
what happens on each crash point are ``kafka_segments.lake.commit``'s."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace

from kafka_segments.clock import Clock, wall_clock_ms
from kafka_segments.errors import ObjectAlreadyExistsError, RunStateError
from kafka_segments.lake.history import head_version, read_manifest
from kafka_segments.lake.index_pin import checked_index_sha256
from kafka_segments.lake.layout import new_run_id, segment_key
from kafka_segments.lake.run_folder import STAGED_MANIFEST, register_run, run_file_key, write_staged_manifest
from kafka_segments.lake.runs import RunRecord, RunRequest
from kafka_segments.lake.scan import summarize_segment
from kafka_segments.lake.time_pin import checked_time_index_sha256
from kafka_segments.segment.files import FileKind
from kafka_segments.state import (
    MANIFEST_FORMAT_2,
    Manifest,
    PartitionState,
    RetiredObject,
    SegmentEntry,
    SegmentOrigin,
    sort_partitions,
)
from kafka_segments.storage.base import Create, MappingStore, ObjectStore
from kafka_segments.topic_partition import TopicPartition

COMMIT_FORMAT = MANIFEST_FORMAT_2
"""The manifest format every commit writes (docs/metadata-format-2.md, "Migration"): a new lake's first
version, and the first commit on a format 1 head (which writes every partition's pieces once). No command
or option writes another; tests that need a lake in the previous release's format 1 set this module
attribute for the commits that build it (``format_1_commits`` in tests/manifest_files.py; the metadata
bench measures format 1 the same way)."""


def begin_run(
    store: ObjectStore,
    *,
    now_ms: int,
    operation: str,
    dry_run: bool = False,
    run_id: str | None = None,
    request: RunRequest | None = None,
    clock: Clock = wall_clock_ms,
    read_base: bool = True,
) -> tuple[RunRecord, Manifest | None]:
    """Register a run on the current head and return it with its base manifest (``None``: the lake has
    none, or ``read_base`` is false: a transaction reads what it needs of its base later).

    Registering an already registered run (a retried task with the same ``run_id``) returns its stored
    record and the manifest it started from, so it still commits the version it was planned against.
    Runs register through ``lake.transaction.LakeTransaction.begin`` (recovery's fences register here)."""
    wanted = RunRecord(
        run_id=run_id or new_run_id(wall_ms=clock()),
        operation=operation,
        base_version=head_version(store),
        started_at_ms=clock(),
        now_ms=now_ms,
        dry_run=dry_run,
        request=request or RunRequest(),
    )
    record = register_run(store, wanted)
    if not read_base or record.base_version is None:
        return record, None
    return record, read_manifest(store, record.base_version)


def stage_segment(
    store: ObjectStore,
    run: RunRecord,
    *,
    topic_partition: TopicPartition,
    base_offset: int,
    files: Mapping[FileKind, bytes],
    last_modified_ms: int | None = None,
    clock: Clock = wall_clock_ms,
) -> SegmentEntry:
    """Write a new segment's objects under the run's unique names and return its manifest entry.

    ``last_modified_ms`` is the segment's mtime as Kafka would see it (a cleaned segment takes its last
    source segment's, ``Cleaner.cleanSegments``); default: the wall clock now.

    The indexes go first and the ``.log`` last. Every object is created only if absent; finding one with the
    same bytes is fine (a retried task), different bytes are a ``RunStateError`` (never overwrite). The
    ``.log`` is checked before anything is written; its sha256 is the etag of a local store (which hashes
    what it writes), else hashed here: one hash per byte written."""
    log = files.get(FileKind.LOG)
    if log is None:
        raise ValueError("a segment needs its FileKind.LOG bytes")
    log_key = segment_key(topic_partition, base_offset, FileKind.LOG, run_id=run.run_id)
    etag_is_sha256 = isinstance(store, MappingStore)
    summary = summarize_segment(
        log,
        key=store.location(log_key),
        base_offset=base_offset,
        sha256=_SHA256_OF_ETAG if etag_is_sha256 else None,
    )
    etag = ""
    for kind in sorted(files, key=lambda kind: kind is FileKind.LOG):
        key = segment_key(topic_partition, base_offset, kind, run_id=run.run_id)
        etag = _create_or_same(store, key, files[kind])
    if etag_is_sha256:
        summary = replace(summary, sha256=etag)
    time_index = files.get(FileKind.TIME_INDEX)
    index = files.get(FileKind.INDEX)
    return summary.entry(
        key=log_key,
        base_offset=base_offset,
        etag=etag,
        last_modified_ms=clock() if last_modified_ms is None else last_modified_ms,
        origin=SegmentOrigin.WRITTEN,
        run_id=run.run_id,
        time_index_sha256=None
        if time_index is None
        else checked_time_index_sha256(time_index, summary.table, base_offset=base_offset),
        index_sha256=None
        if index is None
        else checked_index_sha256(index, summary.table, base_offset=base_offset),
    )


_SHA256_OF_ETAG = "(the etag)"
"""``summarize_segment``'s sha256 until the ``.log`` is written and its etag known (``stage_segment``)."""


def _create_or_same(store: ObjectStore, key: str, data: bytes) -> str:
    try:
        return store.put(key, data, mode=Create()).etag
    except ObjectAlreadyExistsError:
        if store.get(key) != data:
            raise RunStateError(
                "object already exists with other bytes; a run never overwrites an object",
                location=store.location(key),
            ) from None
        return store.head(key).etag


def retire(
    segment: SegmentEntry,
    topic_partition: TopicPartition,
    run: RunRecord,
    *,
    reason: str,
    delete_delay_ms: int,
) -> RetiredObject:
    """The ``RetiredObject`` for a segment this run removes from the live set (stamped at commit)."""
    return RetiredObject(
        key=segment.key,
        topic_partition=topic_partition,
        retired_in_version=run.commit_version,
        retired_at_ms=0,
        delete_delay_ms=delete_delay_ms,
        reason=reason,
    )


def build_manifest(
    run: RunRecord,
    *,
    base: Manifest | None,
    partitions: Iterable[PartitionState],
    newly_retired: Iterable[RetiredObject] = (),
    present_keys: frozenset[str] | set[str] | None = None,
    format_version: int | None = None,
    carries_parent: bool = False,
) -> Manifest:
    """The manifest ``run`` proposes: ``partitions`` (complete: every partition of the new state) and the
    retired objects of ``base`` still waiting for gc plus ``newly_retired``.

    ``present_keys`` (the keys the run's listing found) lets retired entries whose objects are already gone
    drop out; without it every retired entry is carried forward. ``format_version``: the format the commit
    writes (default: ``COMMIT_FORMAT``, whatever the base's). ``carries_parent``:
    ``partitions`` are the ones the run read; the commit carries the base's others (``Manifest``)."""
    carried = [
        retired
        for retired in (base.retired if base is not None else ())
        if present_keys is None or retired.key in present_keys
    ]
    return Manifest(
        version=run.commit_version,
        parent_version=run.base_version,
        run_id=run.run_id,
        operation=run.operation,
        committed_at_ms=0,
        now_ms=run.now_ms,
        partitions=sort_partitions(list(partitions)),
        retired=(*carried, *newly_retired),
        format_version=format_version or COMMIT_FORMAT,
        carries_parent=carries_parent,
    )


def stage_manifest(store: ObjectStore, run: RunRecord, manifest: Manifest) -> None:
    """Store the manifest the run will commit (in its run folder: invisible to readers).

    Raises:
        RunStateError: ``manifest`` does not build on the run's base version or names another run.
        ManifestFormatError: ``manifest`` breaks an invariant of the format (overlapping segments, …).
    """
    if manifest.run_id != run.run_id or manifest.parent_version != run.base_version:
        raise RunStateError(
            f"staged manifest (run {manifest.run_id!r}, parent {manifest.parent_version}) does not build on "
            f"run {run.run_id!r} at version {run.base_version}",
            location=store.location(run_file_key(run.run_id, STAGED_MANIFEST)),
        )
    write_staged_manifest(store, manifest)
