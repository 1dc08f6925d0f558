"""Which committed state a read sees: the head, ``versionAsOf`` (a manifest version) or ``timestampAsOf``
(the last commit at or before it), and whether that state's segment objects still exist (docs/reading.md,
"Time travel").

An old version stays readable while gc keeps its manifest (``--retain-manifests``; a run's gc:
``kafka_segments.retain.manifests``) and its segments (retired ones for ``file.delete.delay.ms``); a read of
a version whose objects are gone is refused up front with ``VersionGoneError`` naming them and the commit
that retired them."""

from __future__ import annotations

from collections.abc import Sequence

from kafka_segments.errors import ManifestVersionNotFoundError, NoCommittedStateError
from kafka_segments.lake.history import manifest_versions
from kafka_segments.lake.reader import NO_STATE_HINT, format_ranges, resolve_root
from kafka_segments.lake.roots import VersionRoot, try_read_root
from kafka_segments.reading.errors import VersionGoneError
from kafka_segments.state import PartitionState, RetiredObject
from kafka_segments.storage.base import ObjectStore
from kafka_segments.timefmt import iso_utc


def root_as_of(store: ObjectStore, *, version: int | None, timestamp_ms: int | None) -> VersionRoot:
    """The root of the head, of version ``version``, or of the last version committed at or before
    ``timestamp_ms`` (the candidates' roots are read, none of their partitions).

    Raises:
        NoCommittedStateError: the lake has no manifest.
        ManifestVersionNotFoundError: ``version`` does not exist, or no retained manifest was committed at
            or before ``timestamp_ms`` (the message gives the oldest one's commit time).
    """
    if timestamp_ms is None:
        return resolve_root(store, version)
    versions = manifest_versions(store)
    if not versions:
        raise NoCommittedStateError(NO_STATE_HINT, location=store.describe())
    oldest: VersionRoot | None = None
    for candidate in reversed(versions):
        root = try_read_root(store, candidate)
        if root is None:
            continue
        if root.committed_at_ms <= timestamp_ms:
            return root
        oldest = root
    first = "" if oldest is None else f"; the oldest retained, version {oldest.version}, was committed at "
    first += "" if oldest is None else str(iso_utc(oldest.committed_at_ms))
    raise ManifestVersionNotFoundError(
        f"no retained manifest was committed at or before {iso_utc(timestamp_ms)} ({timestamp_ms}){first}; "
        f"available versions: {format_ranges(versions)}",
        location=store.describe(),
    )


def check_objects_exist(store: ObjectStore, version: int, states: Sequence[PartitionState]) -> None:
    """``VersionGoneError`` unless every segment object of ``states`` exists (one listing per partition).

    Raises:
        VersionGoneError: naming each missing object and, where a later manifest still says so, the commit
            that retired it and its ``file.delete.delay.ms``.
    """
    missing: list[str] = []
    for state in states:
        present = {meta.key for meta in store.list(state.topic_partition.dir_name + "/")}
        missing.extend(segment.key for segment in state.segments if segment.key not in present)
    if not missing:
        return
    retired = _retirements(store, after=version, keys=set(missing))
    gone = "; ".join(_why(key, retired.get(key)) for key in missing)
    raise VersionGoneError(
        f"version {version} can no longer be read: {len(missing)} of its segment object(s) are gone: {gone}",
        location=store.describe(),
    )


def _retirements(store: ObjectStore, *, after: int, keys: set[str]) -> dict[str, RetiredObject]:
    found: dict[str, RetiredObject] = {}
    for version in (v for v in manifest_versions(store) if v > after):
        root = try_read_root(store, version)
        for retired in root.retired if root is not None else ():
            if retired.key in keys:
                found.setdefault(retired.key, retired)
    return found


def _why(key: str, retired: RetiredObject | None) -> str:
    if retired is None:
        return f"{key} (deleted; no retained manifest says why: gc keeps only the newest manifests)"
    return (
        f"{key} (retired by version {retired.retired_in_version} at {iso_utc(retired.retired_at_ms)} "
        f"({retired.reason}); deleted by gc after file.delete.delay.ms={retired.delete_delay_ms})"
    )
