"""A run's life: register → write objects under unique keys → stage a manifest → commit with one
conditional PUT → rewrite the checkpoint files → record the outcome.

The commit is the create-if-absent PUT of manifest ``base + 1`` (``If-None-Match: *`` on S3, a hard link on
a local disk). Nothing a run writes is visible before it: readers follow the head manifest, and the run's
objects have unique names no manifest lists yet. What happens on each crash point:

====================================  ========================================================================
crash (or failure) …                  what ``recover`` / a rerun does
====================================  ========================================================================
before ``run.json``                   nothing to do.
after ``run.json``, while writing     the run never commits: once any later commit takes ``base + 1`` (or
objects or staging the manifest       ``recover`` fences an abandoned run by committing it) its objects are
                                      swept.
during the commit PUT (killed)        the PUT is atomic: ``base + 1`` exists with this run id (committed)
                                      or not (as above).
lost response of the commit PUT       read back ``base + 1``: ours → committed; another run's → conflict;
                                      absent or unreadable → ``CommitStateUnknownError``; ``commit_run`` again
                                      (it checks before it writes) or ``recover`` settles it.
after the commit, before the          ``recover`` (and every later commit) rewrites them from the head.
checkpoint files / outcome
====================================  ========================================================================

A conflict (``CommitConflictError``) means another run committed first: nothing of this run is visible,
re-plan from the new head. "State unknown" is never resolved by a blind retry: ``commit_run`` always reads
``base + 1`` back before it writes.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from kafka_segments.errors import (
    CommitConflictError,
    CommitStateUnknownError,
    ConditionalWriteConflictError,
    InvalidObjectKeyError,
    ObjectAlreadyExistsError,
    ObjectNotFoundError,
    ObjectStoreError,
    RunStateError,
    StoreAccessError,
)
from kafka_segments.lake.checkpoint_files import write_checkpoint_files
from kafka_segments.lake.codec import manifest_from_json, manifest_to_json
from kafka_segments.lake.history import head_version, location_of, read_manifest, try_read_manifest
from kafka_segments.lake.layout import manifest_key, new_run_id, segment_key, staged_manifest_key
from kafka_segments.lake.runs import (
    Clock,
    Outcome,
    RunEnd,
    RunRecord,
    read_outcome,
    read_run,
    register_run,
    wall_clock_ms,
    write_outcome,
)
from kafka_segments.lake.scan import summarize_segment
from kafka_segments.segment.files import FileKind
from kafka_segments.state import (
    Manifest,
    PartitionState,
    RetiredObject,
    SegmentEntry,
    SegmentOrigin,
    sort_partitions,
)
from kafka_segments.storage.base import Create, ObjectStore, Overwrite
from kafka_segments.topic_partition import TopicPartition

REMOVED_VERSION = "<version removed by gc>"
"""``CommitResolution.taken_by`` for a version that exists no more (the head is past it)."""


@dataclass(frozen=True, slots=True)
class CommitResolution:
    """What became of a run's commit."""

    run_id: str
    version: int
    """The version the run could commit (``base + 1``)."""
    committed: bool
    """True when that version exists and was committed by this run."""
    taken_by: str | None
    """The run that committed that version, ``None`` when it does not exist yet (the run may still commit)."""


def begin_run(
    store: ObjectStore,
    *,
    now_ms: int,
    operation: str,
    dry_run: bool = False,
    run_id: str | None = None,
    clock: Clock = wall_clock_ms,
) -> tuple[RunRecord, Manifest | None]:
    """Register a run on the current head and return it with its base manifest.

    Registering an already registered run (a retried task with the same ``run_id``) returns its stored
    record and the manifest it started from, so it still commits the version it was planned against.
    Runs register through ``lake.transaction.LakeTransaction.begin`` (recovery's fences register here).
    """
    head = head_version(store)
    wanted = RunRecord(
        run_id=run_id or new_run_id(wall_ms=clock()),
        operation=operation,
        base_version=head,
        started_at_ms=clock(),
        now_ms=now_ms,
        dry_run=dry_run,
    )
    record = register_run(store, wanted)
    base = None if record.base_version is None else read_manifest(store, record.base_version)
    return record, base


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
    same bytes is fine (a retried task), different bytes are a ``RunStateError`` (never overwrite).
    """
    log = files.get(FileKind.LOG)
    if log is None:
        raise ValueError("a segment needs its FileKind.LOG bytes")
    log_key = segment_key(topic_partition, base_offset, FileKind.LOG, run_id=run.run_id)
    summary = summarize_segment(log, key=location_of(store, log_key), base_offset=base_offset)
    etag = ""
    for kind in sorted(files, key=lambda kind: kind is FileKind.LOG):
        key = segment_key(topic_partition, base_offset, kind, run_id=run.run_id)
        etag = _create_or_same(store, key, files[kind])
    return summary.entry(
        key=log_key,
        base_offset=base_offset,
        etag=etag,
        last_modified_ms=clock() if last_modified_ms is None else last_modified_ms,
        origin=SegmentOrigin.WRITTEN,
        run_id=run.run_id,
    )


def _create_or_same(store: ObjectStore, key: str, data: bytes) -> str:
    try:
        return store.put(key, data, mode=Create()).etag
    except ObjectAlreadyExistsError:
        if store.get(key) != data:
            raise RunStateError(
                "object already exists with other bytes; a run never overwrites an object",
                location=location_of(store, key),
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
) -> Manifest:
    """The manifest ``run`` proposes: ``partitions`` (complete: every partition of the new state) and the
    retired objects of ``base`` still waiting for gc plus ``newly_retired``.

    ``present_keys`` (the keys the run's listing found) lets retired entries whose objects are already gone
    drop out; without it every retired entry is carried forward.
    """
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
            location=location_of(store, staged_manifest_key(run.run_id)),
        )
    key = staged_manifest_key(run.run_id)
    data = manifest_to_json(manifest)
    manifest_from_json(data, location=location_of(store, key))  # refuse now what the commit would refuse
    store.put(key, data, mode=Overwrite())


def read_staged_manifest(store: ObjectStore, run_id: str) -> Manifest:
    key = staged_manifest_key(run_id)
    try:
        data = store.get(key)
    except ObjectNotFoundError:
        raise RunStateError(
            f"run {run_id!r} has no staged manifest", location=location_of(store, key)
        ) from None
    return manifest_from_json(data, location=location_of(store, key))


def resolve_commit(store: ObjectStore, run_id: str) -> CommitResolution:
    """Whether ``run_id`` committed, by reading its only possible version back.

    When gc already removed that version (the head is past it), the run's recorded outcome decides whether it
    was this run; the version is reported as taken either way (the run can no longer commit).
    """
    run = read_run(store, run_id)
    existing = try_read_manifest(store, run.commit_version)
    if existing is None:
        head = head_version(store)
        if head is None or head < run.commit_version:
            return CommitResolution(run_id, run.commit_version, committed=False, taken_by=None)
        outcome = read_outcome(store, run_id)
        committed = outcome is not None and outcome.outcome is Outcome.COMMITTED
        taken_by = run_id if committed else REMOVED_VERSION
        return CommitResolution(run_id, run.commit_version, committed=committed, taken_by=taken_by)
    return CommitResolution(
        run_id=run_id,
        version=run.commit_version,
        committed=existing.run_id == run_id,
        taken_by=existing.run_id,
    )


def commit_run(store: ObjectStore, run_id: str, *, clock: Clock = wall_clock_ms) -> Manifest:
    """Commit the run's staged manifest; return the committed manifest.

    Idempotent: a run that already committed gets its committed manifest back.

    Raises:
        CommitConflictError: another run took the version (nothing of this run is visible).
        CommitStateUnknownError: the PUT's outcome could not be read back; call again or ``recover``.
        RunStateError: the run was aborted, has no staged manifest, or its manifest lists objects that do
            not exist (nothing is committed then).
    """
    run = read_run(store, run_id)
    outcome = read_outcome(store, run_id)
    if outcome is not None and outcome.outcome is Outcome.ABORTED:
        raise RunStateError(f"run {run_id!r} was aborted: {outcome.reason}", location=store.describe())
    existing = try_read_manifest(store, run.commit_version)
    if existing is not None:
        return _settle_existing(store, run, existing, clock=clock)
    staged = read_staged_manifest(store, run_id)
    try:
        _check_base_is_head(store, run)
        _check_new_objects_exist(store, run, staged)
        committed = commit_manifest(store, _stamp(staged, clock()))
    except CommitConflictError as conflict:
        # The run can never commit now: record it, as when the version was found taken up front.
        write_outcome(store, RunEnd(run.run_id, Outcome.ABORTED, None, clock(), conflict.reason))
        raise
    finish_commit(store, committed, clock=clock)
    return committed


def _settle_existing(store: ObjectStore, run: RunRecord, existing: Manifest, *, clock: Clock) -> Manifest:
    if existing.run_id == run.run_id:
        finish_commit(store, existing, clock=clock)
        return existing
    write_outcome(
        store,
        RunEnd(
            run.run_id,
            Outcome.ABORTED,
            None,
            clock(),
            f"version {existing.version} was committed by run {existing.run_id}",
        ),
    )
    raise CommitConflictError(
        f"run {run.run_id!r} lost: version {existing.version} was committed by run {existing.run_id!r}; "
        "re-plan from the new head",
        location=location_of(store, manifest_key(existing.version)),
    )


def _check_base_is_head(store: ObjectStore, run: RunRecord) -> None:
    head = head_version(store)
    if head != run.base_version:
        raise CommitConflictError(
            f"run {run.run_id!r} builds on version {run.base_version} but the head is {head}; re-plan",
            location=location_of(store, manifest_key(run.commit_version)),
        )


HEAD_CHECK_LIMIT = 32
"""Up to this many new objects are checked with one HEAD each; more with one listing of the lake."""


def _check_new_objects_exist(store: ObjectStore, run: RunRecord, staged: Manifest) -> None:
    base_keys = read_manifest(store, run.base_version).live_keys() if run.base_version else frozenset()
    new_keys = sorted(staged.live_keys() - base_keys)
    if len(new_keys) > HEAD_CHECK_LIMIT:
        listed = {meta.key for meta in store.list()}
        missing = [key for key in new_keys if key not in listed]
    else:
        missing = [key for key in new_keys if not _exists(store, key)]
    if missing:
        raise RunStateError(
            f"run {run.run_id!r} cannot commit: {len(missing)} object(s) its manifest lists do not exist: "
            + ", ".join(missing[:5]),
            location=store.describe(),
        )


def _exists(store: ObjectStore, key: str) -> bool:
    try:
        store.head(key)
    except ObjectNotFoundError:
        return False
    return True


def _stamp(manifest: Manifest, committed_at_ms: int) -> Manifest:
    retired = tuple(
        dataclasses.replace(r, retired_at_ms=committed_at_ms)
        if r.retired_in_version == manifest.version
        else r
        for r in manifest.retired
    )
    return dataclasses.replace(manifest, committed_at_ms=committed_at_ms, retired=retired)


def commit_manifest(store: ObjectStore, manifest: Manifest) -> Manifest:
    """The commit itself: one create-if-absent PUT of ``manifest``'s version; returns what is committed.

    Raises:
        CommitConflictError: the version exists and another run made it.
        CommitStateUnknownError: the PUT failed ambiguously and the version could not be read back.
    """
    key = manifest_key(manifest.version)
    try:
        store.put(key, manifest_to_json(manifest), mode=Create())
    except ObjectAlreadyExistsError:
        return _read_back(store, manifest, ambiguous=False)
    except (StoreAccessError, InvalidObjectKeyError, ConditionalWriteConflictError):
        raise  # refused before anything was written: not ambiguous (409: retry commit_run, it checks first)
    except ObjectStoreError as exc:
        try:
            return _read_back(store, manifest, ambiguous=True)
        except ObjectStoreError as read_error:
            raise CommitStateUnknownError(
                f"commit of version {manifest.version} by run {manifest.run_id!r} failed ({exc.reason}) and "
                f"could not be read back ({read_error.reason}); run `kafka-segments recover` first",
                location=location_of(store, key),
            ) from exc
    return manifest


def _read_back(store: ObjectStore, manifest: Manifest, *, ambiguous: bool) -> Manifest:
    key = manifest_key(manifest.version)
    existing = try_read_manifest(store, manifest.version)
    if existing is None:
        if ambiguous:
            raise CommitStateUnknownError(
                f"commit of version {manifest.version} by run {manifest.run_id!r} failed and the version is "
                "not there (yet); commit the run again (it checks first) or run `kafka-segments recover`",
                location=location_of(store, key),
            )
        raise CommitStateUnknownError(
            f"version {manifest.version} exists but could not be read", location=location_of(store, key)
        )
    if existing.run_id != manifest.run_id:
        raise CommitConflictError(
            f"version {manifest.version} was committed by run {existing.run_id!r} first; "
            f"nothing of run {manifest.run_id!r} is visible; re-plan from the new head",
            location=location_of(store, key),
        )
    return existing


def finish_commit(store: ObjectStore, manifest: Manifest, *, clock: Clock = wall_clock_ms) -> None:
    """The idempotent steps after a commit: checkpoint files (while it is the head) and the run outcome."""
    if head_version(store) == manifest.version:
        write_checkpoint_files(store, manifest)
    write_outcome(store, RunEnd(manifest.run_id, Outcome.COMMITTED, manifest.version, clock()))


def abort_run(store: ObjectStore, run_id: str, *, reason: str, clock: Clock = wall_clock_ms) -> None:
    """Record that the run gives up. Its objects are swept once it can no longer commit (another commit
    took its version); aborting does not delete anything itself.

    Raises:
        RunStateError: the run already committed.
    """
    resolution = resolve_commit(store, run_id)
    if resolution.committed:
        raise RunStateError(
            f"run {run_id!r} already committed version {resolution.version}", location=store.describe()
        )
    write_outcome(store, RunEnd(run_id, Outcome.ABORTED, None, clock(), reason))
