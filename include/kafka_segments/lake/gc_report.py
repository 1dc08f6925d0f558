"""What one ``collect_garbage`` pass (``kafka_segments.lake.gc``) deleted, or would delete, and what it left,
and why: as JSON values and as text."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kafka_segments.lake.layout import manifest_key
from kafka_segments.lake.run_folder import run_file_key
from kafka_segments.lake.run_folders import ExpiredRun
from kafka_segments.lake.sweep import DeleteFailure, format_wall_ms


@dataclass(frozen=True, slots=True)
class RetiredItem:
    """A retired object of the head manifest and what gc did (or would do) with it."""

    key: str
    reason: str
    retired_in_version: int
    delete_after_ms: int
    keys: tuple[str, ...] = ()
    """For a due object: the keys deleted (or to delete): the ``.log`` and its index objects present."""
    held_by_version: int | None = None
    """For a held object: the newest retained version that lists it as live."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "reason": self.reason,
            "retired_in_version": self.retired_in_version,
            "delete_after_ms": self.delete_after_ms,
            "keys": list(self.keys),
            "held_by_version": self.held_by_version,
        }


@dataclass(frozen=True, slots=True)
class OrphanItem:
    """An object named with a run id that no retained manifest references, and why it goes or stays."""

    key: str
    run_id: str
    why: str

    def to_dict(self) -> dict[str, str]:
        return {"key": self.key, "run_id": self.run_id, "why": self.why}


@dataclass(frozen=True, slots=True)
class GcReport:
    """What one ``collect_garbage`` pass deleted (``dry_run``: would delete) and what it left, and why."""

    now_ms: int
    dry_run: bool
    head_version: int | None
    retained_versions: tuple[int, ...]
    deleted: tuple[RetiredItem, ...]
    """Retired objects deleted (or due, in a dry run)."""
    waiting: tuple[RetiredItem, ...]
    """Retired objects whose ``delete_after_ms`` has not come yet."""
    held: tuple[RetiredItem, ...]
    """Due retired objects that a retained manifest still lists as live."""
    already_gone: tuple[str, ...]
    """Retired keys whose objects are all gone already (the next commit drops them from ``retired``)."""
    swept: tuple[OrphanItem, ...]
    orphans_left: tuple[OrphanItem, ...]
    deleted_manifests: tuple[int, ...]
    failures: tuple[DeleteFailure, ...]
    run_folder_retention_ms: int | None = None
    """``None``: every run folder is kept."""
    expired_runs: tuple[ExpiredRun, ...] = ()
    """Folders of runs that ended longer ago than ``run_folder_retention_ms``, deleted (or to delete)."""
    listing: str | None = None
    """Format 2: how the pass listed the lake (scoped, or whole and why: ``lake.gc_listing``)."""

    @property
    def deleted_keys(self) -> tuple[str, ...]:
        """Every key deleted (or to delete): objects, then manifests, then run folders."""
        objects = [key for item in self.deleted for key in item.keys] + [item.key for item in self.swept]
        folders = [key for run in self.expired_runs for key in run.keys]
        return (*objects, *(manifest_key(version) for version in self.deleted_manifests), *folders)

    @property
    def ok(self) -> bool:
        """True when nothing failed."""
        return not self.failures

    def to_dict(self) -> dict[str, Any]:
        return {
            "now_ms": self.now_ms,
            "dry_run": self.dry_run,
            "head_version": self.head_version,
            "retained_versions": list(self.retained_versions),
            "deleted": [item.to_dict() for item in self.deleted],
            "waiting": [item.to_dict() for item in self.waiting],
            "held": [item.to_dict() for item in self.held],
            "already_gone": list(self.already_gone),
            "swept": [item.to_dict() for item in self.swept],
            "orphans_left": [item.to_dict() for item in self.orphans_left],
            "deleted_manifests": list(self.deleted_manifests),
            "failures": [failure.to_dict() for failure in self.failures],
            "run_folder_retention_ms": self.run_folder_retention_ms,
            "expired_runs": [run.to_dict() for run in self.expired_runs],
            "listing": self.listing,
        }

    def to_text(self) -> str:
        """A human-readable summary: counts per category, then one line per object."""
        verb = "would delete" if self.dry_run else "deleted"
        sweep = "to sweep" if self.dry_run else "swept"
        title = "gc (dry run: nothing deleted)" if self.dry_run else "gc"
        lines = [
            f"{title} at {format_wall_ms(self.now_ms)}: head version {self.head_version}, "
            f"retained manifests {_versions_text(self.retained_versions)}",
            *([] if self.listing is None else [f"listing: {self.listing}"]),
            f"retired objects: {len(self.deleted)} {verb}, {len(self.waiting)} waiting, "
            f"{len(self.held)} held, {len(self.already_gone)} already gone",
            *(
                f"  {verb}  {i.key} ({i.reason}, retired in version {i.retired_in_version})"
                for i in self.deleted
            ),
            *(
                f"  waiting  {i.key} ({i.reason}) until {format_wall_ms(i.delete_after_ms)}"
                for i in self.waiting
            ),
            *(f"  held  {i.key} ({i.reason}): live in version {i.held_by_version}" for i in self.held),
            f"orphans: {len(self.swept)} {sweep}, {len(self.orphans_left)} left",
            *(f"  {sweep}  {i.key}: {i.why}" for i in self.swept),
            *(f"  left  {i.key}: {i.why}" for i in self.orphans_left),
            f"old manifests: {verb} {_versions_text(self.deleted_manifests)}",
            *self._run_folder_lines(verb),
            f"failures: {len(self.failures)}",
            *(f"  failed  {failure.key}: {failure.error}" for failure in self.failures),
        ]
        return "\n".join(lines)

    def _run_folder_lines(self, verb: str) -> list[str]:
        if self.run_folder_retention_ms is None:
            return ["run folders: all kept (no run folder retention)"]
        return [
            f"run folders: {len(self.expired_runs)} {verb} "
            f"(runs that ended over {self.run_folder_retention_ms} ms ago)",
            *(
                f"  {verb}  {run_file_key(run.run_id, '')} ({len(run.keys)} object(s), last changed "
                f"{format_wall_ms(run.last_modified_ms)})"
                for run in self.expired_runs
            ),
        ]


def _versions_text(versions: tuple[int, ...]) -> str:
    if not versions:
        return "none"
    if list(versions) == list(range(versions[0], versions[-1] + 1)) and len(versions) > 2:
        return f"{versions[0]}-{versions[-1]} ({len(versions)})"
    return ", ".join(str(version) for version in versions)
