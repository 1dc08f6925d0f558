"""Recovery: finish or discard interrupted work, so a crash at any point leaves the lake at its last committed
state (docs/lake.md, "Recovery"; the crash table of "The commit protocol").

For every run without an outcome (one listing of the runs' folders tells which, so a settled run costs no
read), ``recover`` reads back the only version it could commit (``base + 1``) and finishes, discards, fences
or leaves it alone. A dry run is never fenced (a fence is a commit): once abandoned it is discarded. A head
manifest that is not valid raises before anything changes: recover does not guess. Every step is
idempotent: objects are swept before the outcome is written, so a crash in between is swept again. A
discarded run's objects are found in the pieces and the partitions its ``input-manifest.json`` names (it is
written before the run stages any segment); without one, in one listing of the whole lake."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum, StrEnum
from typing import Any

from kafka_segments.clock import Clock, wall_clock_ms
from kafka_segments.errors import ManifestFormatError
from kafka_segments.lake.checkpoint_files import checkpoint_files_match, write_checkpoint_files
from kafka_segments.lake.commit import finish_commit, resolve_commit
from kafka_segments.lake.format2 import PIECES_PREFIX
from kafka_segments.lake.history import (
    head_version,
    manifest_versions,
    read_manifest,
    try_read_manifest,
)
from kafka_segments.lake.roots import VersionRoot, read_root, try_read_root
from kafka_segments.lake.run_folder import (
    INPUT_MANIFEST,
    list_unsettled_runs,
    read_outcome,
    read_run,
    read_run_manifest,
    write_outcome,
)
from kafka_segments.lake.runs import RunEnd, RunOutcome, RunRecord
from kafka_segments.lake.sweep import (
    DeleteFailure,
    DeleteResult,
    References,
    objects_by_run,
    references,
    sweep_objects,
)
from kafka_segments.lake.transaction import LakeTransaction
from kafka_segments.state import Manifest
from kafka_segments.storage.base import ObjectMeta, ObjectStore
from kafka_segments.topic_partition import TopicPartition

FENCE_OPERATION = "fence"


class RecoverAction(StrEnum):
    """What ``recover`` did with a run that had no outcome."""

    FINISHED = "finished"
    DISCARDED = "discarded"
    FENCED = "fenced"
    IN_PROGRESS = "in-progress"
    UNREADABLE = "unreadable"


@dataclass(frozen=True, slots=True)
class RunRecovery:
    """One run without an outcome and what ``recover`` did with it."""

    run_id: str
    base_version: int | None
    action: RecoverAction
    detail: str
    deleted_keys: tuple[str, ...] = ()
    failures: tuple[DeleteFailure, ...] = ()
    fence_version: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "base_version": self.base_version,
            "action": self.action.value,
            "detail": self.detail,
            "deleted_keys": list(self.deleted_keys),
            "failures": [failure.to_dict() for failure in self.failures],
            "fence_version": self.fence_version,
        }


@dataclass(frozen=True, slots=True)
class RecoverReport:
    """What one ``recover`` pass found and did."""

    head_version: int | None
    """The head after recovery."""
    runs: tuple[RunRecovery, ...]
    fence_versions: tuple[int, ...]
    checkpoint_files_rewritten: bool

    @property
    def changed(self) -> bool:
        """True when the pass changed anything in the lake."""
        return self.checkpoint_files_rewritten or any(
            run.action not in (RecoverAction.IN_PROGRESS, RecoverAction.UNREADABLE) for run in self.runs
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "head_version": self.head_version,
            "runs": [run.to_dict() for run in self.runs],
            "fence_versions": list(self.fence_versions),
            "checkpoint_files_rewritten": self.checkpoint_files_rewritten,
        }

    def to_text(self) -> str:
        """A human-readable summary: counts per action, then one line per run and per deleted key."""
        counts = ", ".join(
            f"{sum(run.action is action for run in self.runs)} {action.value}" for action in RecoverAction
        )
        lines = [f"recover: head version {self.head_version}; runs without an outcome: {counts}"]
        for run in self.runs:
            lines.append(
                f"  {run.action.value}  {run.run_id} (base version {run.base_version}): {run.detail}"
            )
            lines += [f"    deleted  {key}" for key in run.deleted_keys]
            lines += [f"    failed  {failure.key}: {failure.error}" for failure in run.failures]
        fences = ", ".join(str(version) for version in self.fence_versions) or "none"
        lines.append(f"fence versions committed: {fences}")
        files = "rewritten from the head" if self.checkpoint_files_rewritten else "unchanged"
        lines.append(f"checkpoint files: {files}")
        return "\n".join(lines)


def recover(
    store: ObjectStore, *, abandon_after_ms: int = 3_600_000, clock: Clock = wall_clock_ms
) -> RecoverReport:
    """Finish or discard every run without an outcome, then bring the checkpoint files up to date.

    Args:
        abandon_after_ms: how long after its start (wall clock) a run that has not committed is fenced.

    Raises:
        ValueError: ``abandon_after_ms`` is negative.
        ManifestFormatError: the head manifest (or the manifest a run's version names) is not valid
            (``UnsupportedFormatVersionError`` for an unknown format version); the message names the object.
        CommitStateUnknownError: a fence commit's outcome could not be read back; run ``recover`` again.
        ObjectStoreError: the store failed (failed deletes are reported, not raised).
    """
    if abandon_after_ms < 0:
        raise ValueError(f"abandon_after_ms must be >= 0, got {abandon_after_ms}")
    head = _head_root(store)  # a garbage head raises here, before anything changes
    now_ms = clock()
    sweeper = _Sweeper(store)
    runs: list[RunRecovery] = []
    for run_id in list_unsettled_runs(store):
        result = _recover_run(
            store, run_id, sweeper, now_ms=now_ms, abandon_after_ms=abandon_after_ms, clock=clock
        )
        if result is not None:
            runs.append(result)
    if runs:  # a fence or a finished commit may have moved the head
        head = _head_root(store)
    rewritten = head is not None and not checkpoint_files_match(store, head)
    if head is not None and rewritten:
        write_checkpoint_files(store, head)
    return RecoverReport(
        head_version=None if head is None else head.version,
        runs=tuple(runs),
        fence_versions=tuple(run.fence_version for run in runs if run.fence_version is not None),
        checkpoint_files_rewritten=rewritten,
    )


class _Fate(Enum):
    COMMITTED = "committed"
    TAKEN = "taken"
    OPEN = "open"


@dataclass(frozen=True, slots=True)
class _Resolution:
    fate: _Fate
    detail: str


def _recover_run(  # noqa: PLR0911 - one return per RecoverAction, as the module docstring's table lists them
    store: ObjectStore, run_id: str, sweeper: _Sweeper, *, now_ms: int, abandon_after_ms: int, clock: Clock
) -> RunRecovery | None:
    try:
        if read_outcome(store, run_id) is not None:
            return None
        run = read_run(store, run_id)
    except ManifestFormatError as exc:
        return RunRecovery(run_id, None, RecoverAction.UNREADABLE, f"left alone: {exc}")
    resolution = _resolve(store, run)
    age_ms = now_ms - run.started_at_ms
    if run.dry_run and resolution.fate is _Fate.OPEN and age_ms >= abandon_after_ms:
        detail = (
            f"abandoned dry run: started {age_ms} ms ago (abandon_after_ms {abandon_after_ms}); never commits"
        )
        return _discard(store, run, sweeper, RecoverAction.DISCARDED, detail, clock=clock)
    if resolution.fate is _Fate.OPEN and age_ms >= abandon_after_ms:
        fence = _fence(store, run, clock=clock)
        if fence is not None:
            detail = (
                f"abandoned: started {age_ms} ms ago (abandon_after_ms {abandon_after_ms}) and never "
                f"committed; fenced by version {fence.version} (run {fence.run_id})"
            )
            return _discard(store, run, sweeper, RecoverAction.FENCED, detail, clock=clock, fence=fence)
        resolution = _resolve(store, run)  # another commit came first: it decides the run's fate
    if resolution.fate is _Fate.COMMITTED:
        return _finish(store, run, clock=clock)
    if resolution.fate is _Fate.TAKEN:
        return _discard(store, run, sweeper, RecoverAction.DISCARDED, resolution.detail, clock=clock)
    return RunRecovery(run.run_id, run.base_version, RecoverAction.IN_PROGRESS, resolution.detail)


def _resolve(store: ObjectStore, run: RunRecord) -> _Resolution:
    """What became of the run's only commit version."""
    resolution = resolve_commit(store, run.run_id)
    version = resolution.version
    if resolution.committed:
        return _Resolution(_Fate.COMMITTED, f"committed version {version}")
    if resolution.taken_by is not None:
        return _Resolution(_Fate.TAKEN, f"superseded by version {version} of run {resolution.taken_by}")
    head = head_version(store)
    if head is not None and head >= version:
        return _Resolution(
            _Fate.TAKEN, f"version {version} is taken (head is {head}) and its manifest was removed by gc"
        )
    return _Resolution(_Fate.OPEN, f"may still commit version {version}: left alone")


def _head_root(store: ObjectStore) -> VersionRoot | None:
    version = head_version(store)
    return None if version is None else read_root(store, version)


def _finish(store: ObjectStore, run: RunRecord, *, clock: Clock) -> RunRecovery:
    root = try_read_root(store, run.commit_version)
    if root is None:  # gc removed it since the read-back: it is not the head, only the outcome is missing
        write_outcome(store, RunEnd(run.run_id, RunOutcome.COMMITTED, run.commit_version, clock()))
        detail = f"committed version {run.commit_version} before it stopped; outcome written"
        return RunRecovery(run.run_id, run.base_version, RecoverAction.FINISHED, detail)
    is_head = head_version(store) == root.version
    finish_commit(store, root.version, run.run_id, clock=clock, root=root)
    files = "checkpoint files and outcome written" if is_head else "outcome written (no longer the head)"
    detail = f"committed version {root.version} before it stopped; {files}"
    return RunRecovery(run.run_id, run.base_version, RecoverAction.FINISHED, detail)


def _discard(
    store: ObjectStore,
    run: RunRecord,
    sweeper: _Sweeper,
    action: RecoverAction,
    detail: str,
    *,
    clock: Clock,
    fence: Manifest | None = None,
) -> RunRecovery:
    swept = sweeper.sweep(run.run_id)
    write_outcome(store, RunEnd(run.run_id, RunOutcome.ABORTED, None, clock(), detail))
    return RunRecovery(
        run_id=run.run_id,
        base_version=run.base_version,
        action=action,
        detail=f"{detail}; {len(swept.deleted)} object(s) deleted",
        deleted_keys=swept.deleted,
        failures=swept.failed,
        fence_version=None if fence is None else fence.version,
    )


def _fence(store: ObjectStore, target: RunRecord, *, clock: Clock) -> Manifest | None:
    """Commit the target's version as a no-change manifest; ``None`` when someone else committed first."""
    base = None if target.base_version is None else try_read_manifest(store, target.base_version)
    if target.base_version is not None and base is None:
        return None  # its base is gone: the head moved past it
    now_ms = target.now_ms if base is None else base.now_ms  # a fence changes nothing, not even the time
    fence = LakeTransaction.begin(store, now_ms=now_ms, operation=FENCE_OPERATION, clock=clock)
    if fence.run.commit_version != target.commit_version:
        fence.abort(f"not needed: the head moved past version {target.commit_version}")
        return None
    fence.stage(() if fence.base is None else fence.base.partitions, always=True)
    if fence.commit() is RunOutcome.LOST:
        return None
    return read_manifest(store, target.commit_version)


class _Sweeper:
    """Deletes a discarded run's unreferenced objects; lists the lake and reads the manifests once, lazily."""

    __slots__ = ("_keep", "_objects", "_store")

    def __init__(self, store: ObjectStore) -> None:
        self._store = store
        self._objects: dict[str, tuple[ObjectMeta, ...]] | None = None
        self._keep: References | None = None

    def sweep(self, run_id: str) -> DeleteResult:
        metas = self._run_objects(run_id)
        if not metas:
            return DeleteResult((), ())
        if self._keep is None:
            self._keep = self._references()
        return sweep_objects(self._store, metas, self._keep)

    def _run_objects(self, run_id: str) -> tuple[ObjectMeta, ...]:
        """The run's objects: from the pieces and the partitions its ``input-manifest.json`` names (written
        before it stages any segment), else (a run without one, or with one that cannot be read) from one
        listing of the whole lake, made once."""
        partitions = None if self._objects is not None else _input_partitions(self._store, run_id)
        if partitions is not None:
            folders = [PIECES_PREFIX, *sorted(tp.dir_name + "/" for tp in partitions)]
            return objects_by_run(meta for folder in folders for meta in self._store.list(folder)).get(
                run_id, ()
            )
        if self._objects is None:
            self._objects = objects_by_run(self._store.list())
        return self._objects.pop(run_id, ())

    def _references(self) -> References:
        """Every live segment of every present manifest, and the head's pending retired objects."""
        pieces: set[str] = set()
        versions = manifest_versions(self._store)
        manifests = [m for m in (self._read(v, pieces) for v in versions) if m is not None]
        return references(manifests, manifests[-1].retired if manifests else (), pieces=pieces)

    def _read(self, version: int, pieces: set[str]) -> Manifest | None:
        return try_read_manifest(self._store, version, referenced=pieces)


def _input_partitions(store: ObjectStore, run_id: str) -> frozenset[TopicPartition] | None:
    """The partitions the run adopted (``None``: it has no readable ``input-manifest.json``)."""
    try:
        manifest = read_run_manifest(store, run_id, INPUT_MANIFEST)
    except ManifestFormatError:
        return None
    return None if manifest is None else frozenset(state.topic_partition for state in manifest.partitions)
