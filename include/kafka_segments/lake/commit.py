"""A run's life: register → write objects under unique keys → stage a manifest (``lake.staging``) → commit
with one conditional PUT → rewrite the checkpoint files → record the outcome (docs/lake.md, "The commit
protocol", with the crash table).

The commit is the create-if-absent PUT of manifest ``base + 1``. A lost response is settled by reading it
back: ours → committed; another run's → ``CommitConflictError``; absent or unreadable →
``CommitStateUnknownError``, never a blind retry."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

from kafka_segments.clock import Clock, wall_clock_ms
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
from kafka_segments.lake.codec import manifest_to_json
from kafka_segments.lake.format2 import FORMAT_2, write_version
from kafka_segments.lake.history import head_version, read_manifest
from kafka_segments.lake.layout import manifest_key
from kafka_segments.lake.roots import VersionRoot, parse_root, read_root, root_of, try_read_root
from kafka_segments.lake.run_folder import read_outcome, read_run, read_staged_manifest, write_outcome
from kafka_segments.lake.runs import Outcome, RunEnd, RunOutcome, RunRecord
from kafka_segments.state import Manifest
from kafka_segments.storage.base import Create, ObjectStore

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


def resolve_commit(store: ObjectStore, run_id: str) -> CommitResolution:
    """Whether ``run_id`` committed, by reading its only possible version back.

    When gc already removed that version (the head is past it), the run's recorded outcome decides whether it
    was this run; the version is reported as taken either way (the run can no longer commit)."""
    run = read_run(store, run_id)
    existing = try_read_root(store, run.commit_version)
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
    """``commit_run_version``, returning the committed manifest (read back whole)."""
    return read_manifest(store, commit_run_version(store, run_id, clock=clock))


def commit_run_version(store: ObjectStore, run_id: str, *, clock: Clock = wall_clock_ms) -> int:
    """Commit the run's staged manifest; return the committed version. Reads the version's root (to find
    it taken) and, of the base, the partitions the staged manifest lists: not the whole lake.

    Idempotent: a run that already committed gets its version back.

    Raises:
        CommitConflictError: another run took the version (nothing of this run is visible).
        CommitStateUnknownError: the PUT's outcome could not be read back; call again or ``recover``.
        RunStateError: the run was aborted, has no staged manifest, or its manifest lists objects that do
            not exist (nothing is committed then).
    """

    def put(run: RunRecord) -> VersionRoot:
        staged = read_staged_manifest(store, run_id)
        _check_base_is_head(store, run)
        base = None if run.base_version is None else read_root(store, run.base_version)
        _check_new_objects_exist(store, run, staged, base)
        stamped = _stamp(staged, clock())
        data = commit_manifest(store, stamped, parent=base)
        if stamped.format_version == FORMAT_2:
            return parse_root(store, run.commit_version, data)
        return root_of(stamped, store)

    return _commit(store, run_id, put, clock=clock)


RootBuilder = Callable[[int], bytes]
"""The root a run commits, given its ``committed_at_ms``."""


def commit_run_root(
    store: ObjectStore, run_id: str, root: RootBuilder, *, clock: Clock = wall_clock_ms
) -> int:
    """Commit a format 2 root whose pieces the run wrote itself, without staging a manifest (the streamed
    bootstrap, ``lake.bootstrap``): the same checks, conditional PUT and read-back as
    ``commit_run_version``; return the committed version.

    Raises:
        CommitConflictError, CommitStateUnknownError, RunStateError: as ``commit_run_version``.
    """

    def put(run: RunRecord) -> VersionRoot:
        _check_base_is_head(store, run)
        data = root(clock())
        put_version(store, run.commit_version, run.run_id, data)
        return parse_root(store, run.commit_version, data)

    return _commit(store, run_id, put, clock=clock)


def _commit(store: ObjectStore, run_id: str, put: Callable[[RunRecord], VersionRoot], *, clock: Clock) -> int:
    """The commit protocol around ``put`` (which checks that the run's base is the head, writes version
    ``base + 1`` and returns its root)."""
    run = read_run(store, run_id)
    outcome = read_outcome(store, run_id)
    if outcome is not None and outcome.outcome is Outcome.ABORTED:
        raise RunStateError(f"run {run_id!r} was aborted: {outcome.reason}", location=store.describe())
    existing = try_read_root(store, run.commit_version)
    if existing is not None:
        return _settle_existing(store, run, existing, clock=clock)
    try:
        committed = put(run)
    except CommitConflictError as conflict:
        # The run can never commit now: record it, as when the version was found taken up front.
        write_outcome(store, RunEnd(run.run_id, RunOutcome.LOST, None, clock(), conflict.reason))
        raise
    finish_commit(store, run.commit_version, run.run_id, clock=clock, root=committed)
    return run.commit_version


def _settle_existing(store: ObjectStore, run: RunRecord, existing: VersionRoot, *, clock: Clock) -> int:
    if existing.run_id == run.run_id:
        finish_commit(store, existing.version, run.run_id, clock=clock, root=existing)
        return existing.version
    write_outcome(
        store,
        RunEnd(
            run.run_id,
            RunOutcome.LOST,
            None,
            clock(),
            f"version {existing.version} was committed by run {existing.run_id}",
        ),
    )
    raise CommitConflictError(
        f"run {run.run_id!r} lost: version {existing.version} was committed by run {existing.run_id!r}; "
        "re-plan from the new head",
        location=store.location(manifest_key(existing.version)),
    )


def _check_base_is_head(store: ObjectStore, run: RunRecord) -> None:
    head = head_version(store)
    if head != run.base_version:
        raise CommitConflictError(
            f"run {run.run_id!r} builds on version {run.base_version} but the head is {head}; re-plan",
            location=store.location(manifest_key(run.commit_version)),
        )


HEAD_CHECK_LIMIT = 32
"""Up to this many new objects are checked with one HEAD each; more with one listing of the lake."""


def _check_new_objects_exist(
    store: ObjectStore, run: RunRecord, staged: Manifest, base: VersionRoot | None
) -> None:
    new_keys = sorted(staged.live_keys() - _base_keys(base, staged))
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


def _base_keys(root: VersionRoot | None, staged: Manifest) -> frozenset[str]:
    """The base's live keys of the partitions ``staged`` lists (all, unless it carries the others)."""
    if root is None:
        return frozenset()
    listed = {state.topic_partition for state in staged.partitions}
    states = root.load(listed.__contains__ if staged.carries_parent else None)
    return frozenset(segment.key for state in states for segment in state.segments)


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


def commit_manifest(store: ObjectStore, manifest: Manifest, *, parent: VersionRoot | None = None) -> bytes:
    """The commit itself: one create-if-absent PUT of ``manifest``'s version; returns the bytes put
    (``parent``: the parent version's root, when already read).

    Raises:
        CommitConflictError: the version exists and another run made it.
        CommitStateUnknownError: the PUT failed ambiguously and the version could not be read back.
    """
    if manifest.format_version != FORMAT_2:
        data = manifest_to_json(manifest)
    elif parent is not None and parent.format_version == FORMAT_2:
        data = write_version(store, manifest, parent_lines=parent.line_documents())
    else:
        data = write_version(store, manifest)
    put_version(store, manifest.version, manifest.run_id, data)
    return data


def put_version(store: ObjectStore, version: int, run_id: str, data: bytes) -> None:
    """The one create-if-absent PUT of ``version``'s object ``data`` by run ``run_id``, settled by reading
    it back when its outcome is ambiguous.

    Raises:
        CommitConflictError: the version exists and another run made it.
        CommitStateUnknownError: the PUT failed ambiguously and the version could not be read back.
    """
    key = manifest_key(version)
    try:
        store.put(key, data, mode=Create())
    except ObjectAlreadyExistsError:
        _read_back(store, version, run_id, ambiguous=False)
    except (StoreAccessError, InvalidObjectKeyError, ConditionalWriteConflictError):
        raise  # refused before anything was written: not ambiguous (409: retry commit_run, it checks first)
    except ObjectStoreError as exc:
        try:
            _read_back(store, version, run_id, ambiguous=True)
        except ObjectStoreError as read_error:
            raise CommitStateUnknownError(
                f"commit of version {version} by run {run_id!r} failed ({exc.reason}) and "
                f"could not be read back ({read_error.reason}); run `kafka-segments recover` first",
                location=store.location(key),
            ) from exc


def _read_back(store: ObjectStore, version: int, run_id: str, *, ambiguous: bool) -> None:
    key = manifest_key(version)
    existing = try_read_root(store, version)
    if existing is None:
        if ambiguous:
            raise CommitStateUnknownError(
                f"commit of version {version} by run {run_id!r} failed and the version is "
                "not there (yet); commit the run again (it checks first) or run `kafka-segments recover`",
                location=store.location(key),
            )
        raise CommitStateUnknownError(
            f"version {version} exists but could not be read", location=store.location(key)
        )
    if existing.run_id != run_id:
        raise CommitConflictError(
            f"version {version} was committed by run {existing.run_id!r} first; "
            f"nothing of run {run_id!r} is visible; re-plan from the new head",
            location=store.location(key),
        )


def finish_commit(
    store: ObjectStore,
    version: int,
    run_id: str,
    *,
    clock: Clock = wall_clock_ms,
    root: VersionRoot | None = None,
) -> None:
    """The idempotent steps after run ``run_id`` committed ``version``: the checkpoint files (while it is
    the head; from its root's summaries, ``root`` when already read) and the run's outcome."""
    if head_version(store) == version:
        write_checkpoint_files(store, read_root(store, version) if root is None else root)
    write_outcome(store, RunEnd(run_id, RunOutcome.COMMITTED, version, clock()))


def abort_run(
    store: ObjectStore,
    run_id: str,
    *,
    reason: str,
    outcome: RunOutcome = RunOutcome.ABORTED,
    clock: Clock = wall_clock_ms,
) -> None:
    """Record that the run gives up, as ``outcome`` with ``reason`` beside it. Its objects are swept once
    it can no longer commit (another commit took its version); aborting does not delete anything itself.

    Raises:
        RunStateError: the run already committed.
    """
    resolution = resolve_commit(store, run_id)
    if resolution.committed:
        raise RunStateError(
            f"run {run_id!r} already committed version {resolution.version}", location=store.describe()
        )
    if outcome is RunOutcome.COMMITTED:
        raise ValueError("a run that gives up cannot end as committed")
    write_outcome(store, RunEnd(run_id, outcome, None, clock(), reason))
