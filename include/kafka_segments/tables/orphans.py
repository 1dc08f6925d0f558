"""A table's files no kept snapshot needs, removed after expiry (docs/tables.md, "Unreferenced files").

After a sync expired the snapshots of versions gc removed (``tables.expiry``), the files under the table's
location that neither a remaining snapshot (its manifest list, manifests and live data files) nor the current
metadata (its file and the previous metadata files its log keeps) references are unreferenced: the Parquet
files of segments retention or compaction removed, and the files of syncs that did not commit. They are
deleted once older than a grace period (``min_age_ms``, like gc's ``--orphan-min-age-ms``: a concurrent sync
writes its files before its commit references them), and only when asked (``delete``); otherwise they are
reported. A table inside the lake (the default warehouse) is listed and cleaned through the lake's store;
one elsewhere through its own FileIO (``tables.orphans_file_io``)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from kafka_segments.clock import Clock, wall_clock_ms
from kafka_segments.storage.base import ObjectStore
from kafka_segments.storage.local import LocalStore
from kafka_segments.storage.s3 import S3Store
from kafka_segments.tables.orphans_file_io import delete_files, file_io_listing, identities

DEFAULT_MIN_AGE_MS = 3_600_000
"""An unreferenced file is deleted only once this old (gc's ``--orphan-min-age-ms`` default, 1 hour)."""


@dataclass(frozen=True, slots=True)
class FileRemoval:
    """Whether a sync deletes unreferenced files (else reports them) and how old they must be."""

    delete: bool = False
    min_age_ms: int = DEFAULT_MIN_AGE_MS


REPORT_ONLY = FileRemoval()
"""Nothing deleted: the unreferenced files are only reported."""


@dataclass(frozen=True, slots=True)
class UnreferencedFiles:
    """A table's files no kept snapshot references: deleted (or, in a dry run, that would be)."""

    keys: tuple[str, ...]
    """The lake's keys of the files deleted (a dry run: to delete); for a table outside the lake, their
    locations."""
    size: int
    younger: int
    """Unreferenced files kept because they are younger than the grace period."""
    dry_run: bool
    skipped: str | None = None
    """Why nothing was looked at (a table outside the lake)."""

    def to_json(self) -> dict[str, Any]:
        return {
            "dry_run": self.dry_run,
            "files": list(self.keys),
            "bytes": self.size,
            "younger_kept": self.younger,
            "skipped": self.skipped,
        }


def remove_unreferenced(
    store: ObjectStore,
    table: Any,
    removal: FileRemoval,
    *,
    clock: Clock = wall_clock_ms,
) -> UnreferencedFiles:
    """Delete (``removal.delete``; else only report) ``table``'s unreferenced files older than
    ``removal.min_age_ms``.

    Raises:
        ValueError: ``min_age_ms`` is negative.
        ObjectStoreError: listing or deleting failed (OSError: through a FileIO).
    """
    delete, min_age_ms = removal.delete, removal.min_age_ms
    if min_age_ms < 0:
        raise ValueError(f"min_age_ms must be >= 0, got {min_age_ms}")
    prefix = lake_key(store, table.location())
    if prefix is None:
        return _remove_by_file_io(table, delete=delete, min_age_ms=min_age_ms, now=clock())
    referenced = {lake_key(store, location) for location in referenced_locations(table)}
    now = clock()
    old, younger = [], 0
    for meta in store.list(prefix.rstrip("/") + "/"):
        if meta.key in referenced:
            continue
        if now - meta.last_modified_ms >= min_age_ms:
            old.append(meta)
        else:
            younger += 1
    keys = tuple(meta.key for meta in old)
    if delete and keys:
        store.delete_many(keys)
    return UnreferencedFiles(keys, sum(meta.size for meta in old), younger, dry_run=not delete)


def _remove_by_file_io(table: Any, *, delete: bool, min_age_ms: int, now: int) -> UnreferencedFiles:
    """As ``remove_unreferenced``, for a table outside the lake: through its own FileIO."""
    listing = file_io_listing(table)
    if listing is None:
        reason = f"its location {table.location()} is outside the lake and its FileIO cannot list"
        return UnreferencedFiles((), 0, 0, dry_run=not delete, skipped=reason)
    referenced = identities(referenced_locations(table))
    unreferenced = [listed for listed in listing if listed.identity not in referenced]
    old = [listed for listed in unreferenced if now - listed.modified_ms >= min_age_ms]
    if delete:
        delete_files(table, old)
    younger = len(unreferenced) - len(old)
    keys = tuple(listed.location for listed in old)
    return UnreferencedFiles(keys, sum(listed.size for listed in old), younger, dry_run=not delete)


def referenced_locations(table: Any) -> set[str]:
    """Every file ``table``'s current metadata needs: that metadata file and the previous ones its log
    keeps, and for every snapshot its manifest list, its manifests and their live data files."""
    metadata, io = table.metadata, table.io
    found = {table.metadata_location, *(entry.metadata_file for entry in metadata.metadata_log)}
    found.update(statistics.statistics_path for statistics in metadata.statistics)
    read: set[str] = set()
    for snapshot in metadata.snapshots:
        found.add(snapshot.manifest_list)
        for manifest in snapshot.manifests(io):
            found.add(manifest.manifest_path)
            if manifest.manifest_path not in read:
                read.add(manifest.manifest_path)
                found.update(_live_files(manifest.fetch_manifest_entry(io, discard_deleted=True)))
    return found


def _live_files(entries: Iterable[Any]) -> Iterable[str]:
    return (entry.data_file.file_path for entry in entries)


def lake_key(store: ObjectStore, location: str) -> str | None:
    """The key in ``store`` of a FileIO ``location`` (``file:``, a path, ``s3://``); ``None``: outside it."""
    parsed = urlparse(location)
    if isinstance(store, LocalStore) and parsed.scheme in ("", "file"):
        path = Path(unquote(parsed.path)).resolve()
        root = Path(store.root).resolve()
        return path.relative_to(root).as_posix() if path.is_relative_to(root) else None
    if isinstance(store, S3Store) and parsed.scheme in ("s3", "s3a"):
        key = parsed.path.lstrip("/")
        if parsed.netloc == store.bucket and key.startswith(store.prefix):
            return key[len(store.prefix) :]
    return None
