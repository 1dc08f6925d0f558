"""What a sync did, per table: the lake versions it published (files added and removed, rows written, the
Iceberg snapshot), the versions it skipped and why; as text lines and as JSON."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kafka_segments.tables.orphans import UnreferencedFiles


@dataclass(frozen=True, slots=True)
class VersionSync:
    """One lake version brought to the table."""

    version: int
    partitions: tuple[int, ...]
    """The partitions whose state changed (their files were compared)."""
    files_added: int
    files_removed: int
    rows_added: int
    snapshot_id: int | None
    """The Iceberg snapshot showing this version; ``None``: the table's rows did not change."""
    json_conflicts: int = 0
    """``value_json`` fields left null because the value's type conflicts with the field's."""


@dataclass(frozen=True, slots=True)
class SkippedVersions:
    """Lake versions ``first``..``last`` the table never shows, and why (gc removed them)."""

    first: int
    last: int
    reason: str

    @property
    def label(self) -> str:
        return f"{self.first}" if self.first == self.last else f"{self.first}-{self.last}"


@dataclass(frozen=True, slots=True)
class TableSync:
    """One topic's table after a sync."""

    topic: str
    table: str
    created: bool
    from_version: int | None
    """The lake version the table showed before (``None``: none)."""
    to_version: int | None
    versions: tuple[VersionSync, ...]
    skipped: tuple[SkippedVersions, ...]
    view: str = "all"
    """``all`` (the log) or ``latest`` (the compacted view)."""
    expired: int = 0
    """Snapshots expired: they showed only lake versions gc removed (``tables.expiry``)."""
    unreferenced: UnreferencedFiles | None = None
    """The files no kept snapshot references, deleted or (a dry run) to delete (``tables.orphans``)."""

    @property
    def label(self) -> str:
        """What its lines start with: the topic (``<topic>_latest`` for the compacted view's table)."""
        return self.topic if self.view == "all" else f"{self.topic}_latest"

    def lines(self) -> list[str]:
        lines = [f"{self.label}: table {self.table} created"] if self.created else []
        for skipped in self.skipped:
            lines.append(f"{self.label}: lake version {skipped.label} skipped: {skipped.reason}")
        for done in self.versions:
            if done.snapshot_id is None:
                continue
            lines.append(
                f"{self.label}: lake version {done.version}: +{done.files_added} file(s) "
                f"({done.rows_added} rows), -{done.files_removed} file(s) in partition(s) "
                f"{', '.join(map(str, done.partitions))}; snapshot {done.snapshot_id}"
            )
        if not any(done.snapshot_id is not None for done in self.versions):
            lines.append(f"{self.label}: {self.table} up to date at lake version {self.to_version}")
        conflicts = sum(done.json_conflicts for done in self.versions)
        if conflicts:
            lines.append(
                f"{self.label}: {conflicts} JSON field value(s) null: their type conflicts with the field's"
            )
        if self.expired:
            lines.append(
                f"{self.label}: expired {self.expired} snapshot(s) showing only lake versions gc removed"
            )
        return lines + self._unreferenced_lines()

    def _unreferenced_lines(self) -> list[str]:
        files = self.unreferenced
        if files is None:
            return []
        if files.skipped is not None:
            return [f"{self.label}: unreferenced files not removed: {files.skipped}"]
        lines = []
        if files.keys:
            done = "would delete (a dry run; --execute deletes)" if files.dry_run else "deleted"
            count = f"{len(files.keys)} file(s) ({files.size} bytes)"
            lines.append(f"{self.label}: {done} {count} no kept snapshot references")
        if files.younger and not files.dry_run:  # a dry run's text says only what it would delete
            lines.append(
                f"{self.label}: {files.younger} unreferenced file(s) kept: younger than the grace period"
            )
        return lines

    def to_json(self) -> dict[str, Any]:
        return {
            "topic": self.topic,
            "table": self.table,
            "view": self.view,
            "created": self.created,
            "from_version": self.from_version,
            "to_version": self.to_version,
            "versions": [
                {
                    "version": done.version,
                    "partitions": list(done.partitions),
                    "files_added": done.files_added,
                    "files_removed": done.files_removed,
                    "rows_added": done.rows_added,
                    "snapshot_id": done.snapshot_id,
                    "json_conflicts": done.json_conflicts,
                }
                for done in self.versions
            ],
            "skipped": [{"first": s.first, "last": s.last, "reason": s.reason} for s in self.skipped],
            "expired_snapshots": self.expired,
            "unreferenced_files": None if self.unreferenced is None else self.unreferenced.to_json(),
        }


@dataclass(frozen=True, slots=True)
class TablesSyncReport:
    """Every table a sync brought to the lake's head."""

    lake: str
    head: int | None
    tables: tuple[TableSync, ...]

    def lines(self) -> list[str]:
        if self.head is None:
            return [f"{self.lake}: nothing committed yet, no table to sync"]
        return [line for table in self.tables for line in table.lines()]

    def to_json(self) -> dict[str, Any]:
        return {"lake": self.lake, "head": self.head, "tables": [table.to_json() for table in self.tables]}
