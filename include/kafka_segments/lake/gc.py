"""Garbage collection: physically delete what the committed state no longer needs (docs/lake.md, "Garbage
collection": deletion is logical first, physical later).

Times are the wall clock, never a run's logical time: physical deletion protects readers in flight. The head
and retained manifests are read before the listing, so a run committing meanwhile is "in progress" for this
pass. Old manifests go first, then objects (indexes before their ``.log``): an interruption leaves every
object a remaining manifest lists, and the next pass finishes the job."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from kafka_segments.clock import Clock, wall_clock_ms
from kafka_segments.config.catalogue import DEFAULT_RETAIN_MANIFESTS
from kafka_segments.errors import ManifestFormatError, RunStateError
from kafka_segments.lake.format2 import FORMAT_2, is_piece_key
from kafka_segments.lake.gc_listing import GcListing, gc_listing, next_record
from kafka_segments.lake.gc_record import write_gc_record
from kafka_segments.lake.gc_report import GcReport, OrphanItem, RetiredItem
from kafka_segments.lake.gc_scope import partition_of
from kafka_segments.lake.history import manifest_versions
from kafka_segments.lake.layout import RUNS_PREFIX, is_meta_key, manifest_key, try_parse_segment_key
from kafka_segments.lake.roots import VersionRoot, read_root, try_read_root
from kafka_segments.lake.run_folder import read_run
from kafka_segments.lake.run_folders import (
    ExpiredRun,
    check_run_folder_retention,
    delete_run_folders,
    expired_run_folders,
)
from kafka_segments.lake.sweep import (
    DeleteFailure,
    References,
    delete_objects,
    object_run_id,
    references,
    with_index_siblings,
)
from kafka_segments.progress import Phase, phase
from kafka_segments.segment.files import FileKind
from kafka_segments.state import Manifest, RetiredObject
from kafka_segments.storage.base import ObjectMeta, ObjectStore


def collect_garbage(
    store: ObjectStore,
    *,
    now_ms: int | None = None,
    dry_run: bool = True,
    retain_manifests: int = DEFAULT_RETAIN_MANIFESTS,
    orphan_min_age_ms: int = 3_600_000,
    run_folder_retention_ms: int | None = None,
    full: bool = False,
    clock: Clock = wall_clock_ms,
) -> GcReport:
    """Delete due retired objects, orphans of runs that can no longer commit, and old manifests; with a
    ``run_folder_retention_ms``, also the folders of runs that ended that long ago (``lake.run_folders``).

    Args:
        now_ms: the wall-clock time to compare with (default ``clock()``).
        dry_run: report what would be deleted and delete nothing (the default).
        retain_manifests: how many of the newest manifest versions to keep (values below 1 mean 1).
        orphan_min_age_ms: how old an orphan must be before it is swept.
        run_folder_retention_ms: how long the folder of a run that ended is kept after its last change
            (``None``, the default: every folder is kept; at least one hour).
        full: list the whole lake even where a scoped listing would do (``lake.gc_listing``).

    Raises:
        ValueError: ``orphan_min_age_ms`` is negative, or ``run_folder_retention_ms`` is below one hour.
        ManifestFormatError: a retained manifest is not valid (nothing is deleted then: gc cannot know what
            it protects).
        ObjectStoreError: the store could not be read, or gc's record of the pass not written (failed
            deletes are reported, not raised).
    """
    if orphan_min_age_ms < 0:
        raise ValueError(f"orphan_min_age_ms must be >= 0, got {orphan_min_age_ms}")
    check_run_folder_retention(run_folder_retention_ms)
    now = clock() if now_ms is None else now_ms
    plan, listing = _plan(
        store,
        now_ms=now,
        retain=max(1, retain_manifests),
        orphan_min_age_ms=orphan_min_age_ms,
        run_folder_retention_ms=run_folder_retention_ms,
        full=full,
    )
    if dry_run:
        return plan
    done = _execute(store, plan)
    if done.ok and listing is not None:
        gone = [run.run_id for run in done.expired_runs]
        left = [orphan.run_id for orphan in done.orphans_left]
        write_gc_record(store, next_record(listing, left=left, gone=gone))
    return done


def _plan(
    store: ObjectStore,
    *,
    now_ms: int,
    retain: int,
    orphan_min_age_ms: int,
    run_folder_retention_ms: int | None,
    full: bool,
) -> tuple[GcReport, GcListing | None]:
    """The dry-run report: everything classified, nothing deleted; and the listing it came from (format 2)."""
    versions = manifest_versions(store)
    retained_versions = tuple(versions[-retain:])
    roots = _read_retained(store, retained_versions)
    scope = gc_listing(store, roots, full=full) if roots and roots[-1].format_version == FORMAT_2 else None
    everything = list(store.list()) if scope is None else scope.objects  # the run folders' verdicts too
    listing = [meta for meta in everything if not is_meta_key(meta.key) or is_piece_key(meta.key)]
    present = frozenset(meta.key for meta in listing)
    pieces: set[str] = set()
    examined = None if scope is None else scope.examined
    if examined is not None:
        listing = [meta for meta in listing if partition_of(meta.key) in examined]
    retained = [
        root.manifest(None if examined is None else examined.__contains__, referenced=pieces)
        for root in roots
    ]
    head = retained[-1] if retained else None
    due, waiting, held, gone, problems = _classify_retired(head, retained, present, now_ms)
    keep = references(retained, head.retired if head is not None else (), pieces=pieces)
    # Format 2: only the examined partitions' objects can be orphans (``lake.gc_scope``).
    sweep, left = _classify_orphans(store, listing, keep, retained, now_ms, orphan_min_age_ms)
    oldest_retained = retained_versions[0] if retained_versions else 0
    expired = _expired_runs(everything, retained, now_ms, run_folder_retention_ms)
    if scope is not None and not scope.whole:
        # A scoped pass keeps the folder of a run with objects still to sweep: they are found from it.
        busy = {orphan.run_id for orphan in (*sweep, *left)}
        expired = tuple(run for run in expired if run.run_id not in busy)
    report = GcReport(
        now_ms=now_ms,
        dry_run=True,
        head_version=head.version if head is not None else None,
        retained_versions=retained_versions,
        deleted=due,
        waiting=waiting,
        held=held,
        already_gone=gone,
        swept=sweep,
        orphans_left=left,
        deleted_manifests=tuple(version for version in versions if version < oldest_retained),
        failures=problems,
        run_folder_retention_ms=run_folder_retention_ms,
        expired_runs=expired,
        listing=None if scope is None else scope.note,
    )
    return report, scope


def _expired_runs(
    everything: list[ObjectMeta], retained: list[Manifest], now_ms: int, retention_ms: int | None
) -> tuple[ExpiredRun, ...]:
    if retention_ms is None:
        return ()
    kept = frozenset(manifest.run_id for manifest in retained)
    runs = [meta for meta in everything if meta.key.startswith(RUNS_PREFIX)]
    return expired_run_folders(runs, kept_run_ids=kept, now_ms=now_ms, retention_ms=retention_ms)


def _read_retained(store: ObjectStore, versions: tuple[int, ...]) -> list[VersionRoot]:
    """The retained versions' roots, oldest first. The head must be readable; an older one that vanished
    meanwhile (a concurrent gc with a newer head removed it) protects nothing any more."""
    if not versions:
        return []
    older = (try_read_root(store, version) for version in versions[:-1])
    kept = [root for root in older if root is not None]
    return [*kept, read_root(store, versions[-1])]


def _classify_retired(
    head: Manifest | None, retained: list[Manifest], present: frozenset[str], now_ms: int
) -> tuple[
    tuple[RetiredItem, ...],
    tuple[RetiredItem, ...],
    tuple[RetiredItem, ...],
    tuple[str, ...],
    tuple[DeleteFailure, ...],
]:
    holders = {key: manifest.version for manifest in retained for key in manifest.live_keys()}
    due: list[RetiredItem] = []
    waiting: list[RetiredItem] = []
    held: list[RetiredItem] = []
    gone: list[str] = []
    problems: list[DeleteFailure] = []
    for retired in _latest_retirements(head):
        name = None if is_meta_key(retired.key) else try_parse_segment_key(retired.key)
        if name is None or name.kind is not FileKind.LOG:
            problems.append(DeleteFailure(retired.key, "retired key is not a segment .log key: left alone"))
            continue
        keys = tuple(key for key in with_index_siblings(retired.key) if key in present)
        item = RetiredItem(retired.key, retired.reason, retired.retired_in_version, retired.delete_after_ms)
        if not keys:
            gone.append(retired.key)
        elif now_ms < retired.delete_after_ms:
            waiting.append(item)
        elif retired.key in holders:
            held.append(dataclasses.replace(item, held_by_version=holders[retired.key]))
        else:
            due.append(dataclasses.replace(item, keys=keys))
    return tuple(due), tuple(waiting), tuple(held), tuple(gone), tuple(problems)


def _latest_retirements(head: Manifest | None) -> list[RetiredObject]:
    """One entry per key (the one with the latest ``delete_after_ms``), in key order."""
    latest: dict[str, RetiredObject] = {}
    for retired in head.retired if head is not None else ():
        known = latest.get(retired.key)
        if known is None or retired.delete_after_ms > known.delete_after_ms:
            latest[retired.key] = retired
    return [latest[key] for key in sorted(latest)]


@dataclass(frozen=True, slots=True)
class _RunVerdict:
    finished: bool
    """True when the run can no longer commit (its objects may be swept)."""
    why: str


def _classify_orphans(
    store: ObjectStore,
    listing: list[ObjectMeta],
    keep: References,
    retained: list[Manifest],
    now_ms: int,
    min_age_ms: int,
) -> tuple[tuple[OrphanItem, ...], tuple[OrphanItem, ...]]:
    verdicts: dict[str, _RunVerdict] = {}
    sweep: list[OrphanItem] = []
    left: list[OrphanItem] = []
    for meta in listing:
        run_id = object_run_id(meta.key)
        if run_id is None or keep.covers(meta.key):
            continue
        if run_id not in verdicts:
            verdicts[run_id] = _run_verdict(store, run_id, retained)
        verdict = verdicts[run_id]
        age = now_ms - meta.last_modified_ms
        if not verdict.finished:
            left.append(OrphanItem(meta.key, run_id, verdict.why))
        elif age < min_age_ms:
            when = f"only {age} ms old" if age >= 0 else f"modified {-age} ms after now_ms"
            why = f"{verdict.why}; but {when} (orphan_min_age_ms {min_age_ms})"
            left.append(OrphanItem(meta.key, run_id, why))
        else:
            sweep.append(OrphanItem(meta.key, run_id, verdict.why))
    return tuple(sweep), tuple(left)


def _run_verdict(store: ObjectStore, run_id: str, retained: list[Manifest]) -> _RunVerdict:
    try:
        record = read_run(store, run_id)
    except RunStateError:
        return _RunVerdict(True, f"run {run_id} has no run record")
    except ManifestFormatError as exc:
        return _RunVerdict(False, f"run record unreadable, left alone: {exc}")
    version = record.commit_version
    head = retained[-1].version if retained else None
    if head is None or head < version:
        return _RunVerdict(False, f"in progress: run {run_id} may still commit version {version}")
    maker = next((manifest.run_id for manifest in retained if manifest.version == version), None)
    if maker == run_id:
        return _RunVerdict(True, f"run {run_id} committed version {version}; no retained manifest lists it")
    if maker is None:
        return _RunVerdict(
            True, f"run {run_id} can no longer commit: version {version} is taken (head {head})"
        )
    return _RunVerdict(True, f"run {run_id} lost: version {version} was committed by run {maker}")


def _execute(store: ObjectStore, plan: GcReport) -> GcReport:
    """Delete what ``plan`` lists: the old manifests first (no manifest left behind lists a deleted object),
    then index objects and orphans, then the ``.log`` objects whose indexes are all gone; report what was
    deleted and what failed. When a manifest cannot be deleted, no object is deleted in this pass."""
    with phase("gc: deleting", items=3, unit="steps") as progress:
        return _delete(store, plan, progress)


def _delete(store: ObjectStore, plan: GcReport, progress: Phase) -> GcReport:
    old = plan.deleted_manifests
    manifests = delete_objects(store, [manifest_key(version) for version in old])
    progress.advance(f"{len(old)} old manifest(s)")
    failed_manifests = manifests.failed_keys
    deleted_manifests = tuple(v for v in old if manifest_key(v) not in failed_manifests)
    if manifests.failed:
        return dataclasses.replace(
            plan,
            dry_run=False,
            deleted=(),
            swept=(),
            deleted_manifests=deleted_manifests,
            failures=(*plan.failures, *manifests.failed, *_withheld_for_manifests(plan)),
            expired_runs=(),
        )
    due = plan.deleted
    indexes = [key for item in due for key in item.keys if key != item.key]
    failed = _by_key(delete_objects(store, [*indexes, *(orphan.key for orphan in plan.swept)]).failed)
    progress.advance(f"{len(indexes)} index object(s), {len(plan.swept)} orphan(s)")
    with_log = [item for item in due if item.key in item.keys]
    logs = [item.key for item in with_log if not _any_failed(item, failed)]
    withheld = [
        DeleteFailure(item.key, "not deleted: its index objects could not all be deleted")
        for item in with_log
        if _any_failed(item, failed)
    ]
    failed.update(_by_key(delete_objects(store, logs).failed))
    progress.advance(f"{len(logs)} retired segment(s)")
    failed.update(_by_key(withheld))
    expired, folder_failures = delete_run_folders(store, plan.expired_runs)
    progress.advance(f"{len(expired)} run folder(s)")
    return dataclasses.replace(
        plan,
        dry_run=False,
        deleted=tuple(item for item in due if not _any_failed(item, failed)),
        swept=tuple(orphan for orphan in plan.swept if orphan.key not in failed),
        deleted_manifests=deleted_manifests,
        failures=(*plan.failures, *failed.values(), *folder_failures),
        expired_runs=expired,
    )


def _withheld_for_manifests(plan: GcReport) -> list[DeleteFailure]:
    reason = "not deleted: an old manifest that may list it could not be deleted; the next gc retries"
    return [DeleteFailure(item.key, reason) for item in plan.deleted] + [
        DeleteFailure(orphan.key, reason) for orphan in plan.swept
    ]


def _any_failed(item: RetiredItem, failed: Mapping[str, DeleteFailure]) -> bool:
    """Whether a key of ``item`` failed (a few dict look-ups: gc stays linear in the number of objects)."""
    return any(key in failed for key in item.keys)


def _by_key(failures: Iterable[DeleteFailure]) -> dict[str, DeleteFailure]:
    return {failure.key: failure for failure in failures}
