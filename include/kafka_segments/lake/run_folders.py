"""Run folders past their retention: what ``gc --run-folder-retention-ms`` deletes (docs/lake.md, "Garbage
collection").

A lake keeps every run's folder (``_kafka_segments/runs/<run id>/``: its record, staged manifest, plan,
validation results, Data Docs and report) unless asked otherwise. With a retention, a folder goes once its
run has ended (``outcome.json``), no retained manifest was committed by that run (the head's report is what
the lake view shows), and nothing in it changed for the retention. The verdict comes from the listing alone:
no folder is read.

A folder is deleted in three batches: the run record first (from then on ``recover`` no longer sees the run),
then everything else but the outcome, the outcome last. An interruption leaves the outcome, so the next pass
finds the folder again; a folder without an outcome is never touched."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from kafka_segments.config.catalogue import MIN_RUN_FOLDER_RETENTION_MS
from kafka_segments.lake.layout import OUTCOME_NAME, RUN_RECORD_NAME, parse_run_folder_key, run_prefix
from kafka_segments.lake.sweep import DeleteFailure, delete_objects
from kafka_segments.storage.base import ObjectMeta, ObjectStore


@dataclass(frozen=True, slots=True)
class ExpiredRun:
    """The folder of a run that ended and whose retention has passed."""

    run_id: str
    last_modified_ms: int
    """When anything in the folder last changed (wall clock)."""
    keys: tuple[str, ...]
    """Every object in the folder, in deletion order (the run record first, the outcome last)."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "folder": run_prefix(self.run_id),
            "last_modified_ms": self.last_modified_ms,
            "keys": list(self.keys),
        }


def check_run_folder_retention(retention_ms: int | None) -> None:
    """Refuse a retention below ``MIN_RUN_FOLDER_RETENTION_MS`` (``None``: keep every folder): a run reads and
    writes its folder after its outcome (its report), so a shorter one could delete the folder of a run that
    is still reporting.

    Raises:
        ValueError: ``retention_ms`` is below one hour.
    """
    if retention_ms is not None and retention_ms < MIN_RUN_FOLDER_RETENTION_MS:
        raise ValueError(
            f"run_folder_retention_ms must be at least {MIN_RUN_FOLDER_RETENTION_MS} (1 hour), got "
            f"{retention_ms}: a run still writes its folder after it ends"
        )


def expired_run_folders(
    listing: Iterable[ObjectMeta], *, kept_run_ids: frozenset[str], now_ms: int, retention_ms: int
) -> tuple[ExpiredRun, ...]:
    """The folders of ``listing`` (a listing of the runs' folders) whose retention has passed, in run id
    order; the runs of ``kept_run_ids`` (those that committed a retained manifest) are never expired."""
    folders: dict[str, list[ObjectMeta]] = {}
    ended: set[str] = set()
    for meta in listing:
        parsed = parse_run_folder_key(meta.key)
        if parsed is not None:
            folders.setdefault(parsed[0], []).append(meta)
            if parsed[1] == OUTCOME_NAME:
                ended.add(parsed[0])
    expired = []
    for run_id in sorted(folders):
        metas = folders[run_id]
        newest = max(meta.last_modified_ms for meta in metas)
        if run_id in ended and run_id not in kept_run_ids and now_ms - newest >= retention_ms:
            expired.append(ExpiredRun(run_id, newest, _deletion_order(run_id, metas)))
    return tuple(expired)


def _deletion_order(run_id: str, metas: Sequence[ObjectMeta]) -> tuple[str, ...]:
    record, outcome = run_prefix(run_id) + RUN_RECORD_NAME, run_prefix(run_id) + OUTCOME_NAME
    others = sorted(meta.key for meta in metas if meta.key not in (record, outcome))
    present = {meta.key for meta in metas}
    return (*((record,) if record in present else ()), *others, outcome)


def delete_run_folders(
    store: ObjectStore, expired: Sequence[ExpiredRun]
) -> tuple[tuple[ExpiredRun, ...], tuple[DeleteFailure, ...]]:
    """Delete the folders of ``expired`` in three batches (run records, the rest, outcomes); a folder whose
    record or other objects could not all be deleted keeps its outcome for the next pass. Returns the
    folders deleted whole and the failures."""
    records = {run_prefix(run.run_id) + RUN_RECORD_NAME for run in expired}
    first = delete_objects(store, [key for run in expired for key in run.keys if key in records])
    second = delete_objects(store, [key for run in expired for key in run.keys[:-1] if key not in records])
    failed = {failure.key for failure in (*first.failed, *second.failed)}
    whole = [run for run in expired if not failed.intersection(run.keys)]
    third = delete_objects(store, [run.keys[-1] for run in whole])
    failed.update(failure.key for failure in third.failed)
    done = tuple(run for run in whole if run.keys[-1] not in failed)
    return done, (*first.failed, *second.failed, *third.failed)
