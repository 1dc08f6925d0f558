"""Bringing each topic's table to the lake's head, version by version (docs/tables.md, "Sync").

The table's property ``kafka-segments.lake-version`` is the version it shows. A sync walks the retained
versions after it, in order; for each it compares the topic's partition states with the previous version's,
and in the partitions that changed writes the segments' files the version lacks and drops those it no
longer has, in one Iceberg commit whose snapshot summary records the version (time travel by lake version:
the last snapshot at or below it). A version that changes nothing of the topic adds no snapshot; the
property still moves. Versions gc removed are skipped, each run of them with one line.

Derived data, so crash-safe by construction: files are written before the commit that references them, under
names that are their identity (a retry rewrites the same file), and the property moves in the same commit.
A crash anywhere leaves the table at a version it fully shows; the next sync goes on from there."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from typing import Any

from kafka_segments.config import Config
from kafka_segments.errors import PartitionNotFoundError, TableError
from kafka_segments.lake.history import manifest_versions
from kafka_segments.lake.roots import VersionRoot, read_root, try_read_root
from kafka_segments.reading.errors import VersionGoneError
from kafka_segments.reading.options import View
from kafka_segments.storage import open_store
from kafka_segments.storage.base import ObjectStore
from kafka_segments.tables.catalog import CatalogSettings, open_catalog
from kafka_segments.tables.changes import (
    PartitionFiles,
    VersionChange,
    changed_partitions,
    partition_digests,
    version_change,
)
from kafka_segments.tables.expiry import expire_gone_snapshots
from kafka_segments.tables.files import name_of, write_data_file
from kafka_segments.tables.json_values import JsonValues
from kafka_segments.tables.orphans import DEFAULT_MIN_AGE_MS, REPORT_ONLY, FileRemoval, remove_unreferenced
from kafka_segments.tables.report import SkippedVersions, TablesSyncReport, TableSync, VersionSync
from kafka_segments.tables.schema import (
    DEFAULT_NAMESPACE,
    LAKE_PROPERTY,
    LAKE_VERSION_PROPERTY,
    TABLE_PROPERTIES,
    TOPIC_PROPERTY,
    VIEW_PROPERTY,
    iceberg_schema,
    partition_spec,
    sort_order,
    table_name,
)
from kafka_segments.tables.settings import (
    compacted_topics,
    configured_catalog,
    configured_namespace,
    configured_topics,
    topic_json_values,
)

GONE = "removed by gc before the table showed it"


def sync_tables(
    lake: str | os.PathLike[str] | ObjectStore,
    *,
    topics: Sequence[str] | None = None,
    catalog: CatalogSettings | None = None,
    namespace: str | None = None,
    config: Config | None = None,
    delete_files: bool = False,
    file_min_age_ms: int = DEFAULT_MIN_AGE_MS,
) -> TablesSyncReport:
    """Bring the table of each of ``topics`` to the lake's head. Not given, the topics, the catalog and the
    namespace come from ``config`` (``kafka_segments.table.*``); without it every topic of the head but
    Kafka's internal ones, the embedded catalog and ``kafka_segments``. After expiry, each table's files
    no kept snapshot references and older than ``file_min_age_ms`` are deleted with ``delete_files``, only
    reported without (``tables.orphans``).

    Raises:
        TableError: the catalog cannot be opened, a table is not this lake's topic, a commit conflicts.
        PartitionNotFoundError: a topic asked for that neither the lake's head nor the catalog has.
        LakeError, ObjectStoreError: reading the lake failed.
    """
    store = lake if isinstance(lake, ObjectStore) else open_store(lake)
    versions = manifest_versions(store)
    if not versions:
        return TablesSyncReport(store.describe(), None, ())
    head = read_root(store, versions[-1])
    if catalog is None:
        catalog = CatalogSettings() if config is None else configured_catalog(config)
    if namespace is None:
        namespace = DEFAULT_NAMESPACE if config is None else configured_namespace(config)
    iceberg = open_catalog(store, catalog)
    _ensure_namespace(iceberg, namespace)
    chosen = _topics(topics, head.topics, config)
    _check_topics(store, iceberg, chosen, head, namespace=namespace)
    compacted = set() if config is None else set(compacted_topics(config, chosen))
    synced = tuple(
        sync_topic(
            store,
            iceberg,
            topic,
            versions=versions,
            namespace=namespace,
            view=view,
            json_values=None if config is None else topic_json_values(config, topic),
            removal=FileRemoval(delete_files, file_min_age_ms),
        )
        for topic in chosen
        for view in ((View.ALL, View.LATEST) if topic in compacted else (View.ALL,))
    )
    return TablesSyncReport(store.describe(), versions[-1], synced)


def sync_topic(
    store: ObjectStore,
    catalog: Any,
    topic: str,
    *,
    versions: Sequence[int],
    namespace: str,
    view: View = View.ALL,
    json_values: JsonValues | None = None,
    removal: FileRemoval = REPORT_ONLY,
) -> TableSync:
    """Bring ``topic``'s table (``view=latest``: its ``_latest`` table) to the last of ``versions`` (the
    lake's retained versions, ascending); with ``json_values`` its files have ``value_json``. Then expire
    the snapshots of versions gc removed and remove (``removal.delete``; else report) unreferenced files."""
    table, created = open_table(store, catalog, topic, namespace=namespace, view=view)
    shown = recorded_version(table)
    pending = [v for v in versions if v > (shown or 0)]
    skipped: list[SkippedVersions] = []
    if shown is not None and pending and pending[0] > shown + 1:
        skipped.append(SkippedVersions(shown + 1, pending[0] - 1, GONE))
    files = current_files(table)
    previous = _digests_at(store, shown, topic)
    done: list[VersionSync] = []
    last = shown
    for version in pending:
        root = try_read_root(store, version)
        if root is None:
            skipped.append(SkippedVersions(version, version, GONE))
            continue
        digests = partition_digests(root, topic)
        partitions = changed_partitions(digests, previous, files)
        try:
            change = version_change(store, root, topic, partitions, files, view=view)
        except VersionGoneError as exc:
            skipped.append(SkippedVersions(version, version, f"its segments are gone ({exc.reason})"))
            continue
        done.append(_apply(store, table, change, version=version, files=files, json_values=json_values))
        previous, last = digests, version
    if last != recorded_version(table) and last is not None:
        _commit(table, version=last, drop=(), add=())
    expired = expire_gone_snapshots(table, versions)
    unreferenced = remove_unreferenced(store, table.refresh(), removal)
    return TableSync(
        topic,
        ".".join(table.name()),
        created,
        shown,
        last,
        tuple(done),
        tuple(_merged(skipped)),
        view=view.value,
        expired=expired,
        unreferenced=unreferenced,
    )


def _apply(
    store: ObjectStore,
    table: Any,
    change: VersionChange,
    *,
    version: int,
    files: PartitionFiles,
    json_values: JsonValues | None,
) -> VersionSync:
    """Write ``change``'s files and commit them with the version (no commit when the rows stay the same)."""
    written = [(wanted, write_data_file(store, table, wanted, json_values)) for wanted in change.to_write]
    added = [(wanted, done.data_file) for wanted, done in written if done is not None]
    snapshot_id = None
    if added or change.to_drop:
        _commit(table, version=version, drop=change.to_drop, add=[data_file for _, data_file in added])
        snapshot_id = table.current_snapshot().snapshot_id
        for data_file in change.to_drop:
            files.get(data_file.partition[0], {}).pop(name_of(data_file.file_path), None)
        for wanted, data_file in added:
            files.setdefault(wanted.partition, {})[wanted.name] = data_file
    return VersionSync(
        version,
        change.partitions,
        files_added=len(added),
        files_removed=len(change.to_drop),
        rows_added=sum(int(data_file.record_count) for _, data_file in added),
        snapshot_id=snapshot_id,
        json_conflicts=sum(done.json_conflicts for _, done in written if done is not None),
    )


def _commit(table: Any, *, version: int, drop: Iterable[Any], add: Iterable[Any]) -> None:
    """One Iceberg commit: the files dropped and added (a snapshot recording ``version``, when there are
    any) and the table's version property.

    Raises:
        TableError: the catalog refused the commit (another sync committed meanwhile).
    """
    properties = {LAKE_VERSION_PROPERTY: str(version)}
    drop, add = list(drop), list(add)
    try:
        with table.transaction() as transaction:
            if drop or add:
                with transaction.update_snapshot(snapshot_properties=properties).overwrite() as files:
                    for data_file in drop:
                        files.delete_data_file(data_file)
                    for data_file in add:
                        files.append_data_file(data_file)
            transaction.set_properties(properties)
    except Exception as exc:
        from pyiceberg.exceptions import CommitFailedException

        if isinstance(exc, CommitFailedException):
            raise TableError(
                f"another writer committed to the table meanwhile ({exc}); sync again",
                location=".".join(table.name()),
            ) from exc
        raise


def open_table(
    store: ObjectStore, catalog: Any, topic: str, *, namespace: str, view: View = View.ALL
) -> tuple[Any, bool]:
    """``topic``'s table of ``view`` (created when missing) and whether it was created.

    Raises:
        TableError: a table of that name that holds another lake's or topic's rows, or another view.
    """
    from pyiceberg.exceptions import NoSuchTableError

    identifier = (namespace, table_name(topic, view=view))
    expected = {LAKE_PROPERTY: store.describe(), TOPIC_PROPERTY: topic, VIEW_PROPERTY: view.value}
    try:
        table = catalog.load_table(identifier)
    except NoSuchTableError:
        properties = {**TABLE_PROPERTIES, **expected}
        table = catalog.create_table(
            identifier,
            schema=iceberg_schema(),
            partition_spec=partition_spec(),
            sort_order=sort_order(),
            properties=properties,
        )
        return table, True
    owner = {name: table.properties.get(name) for name in expected}
    if owner != expected:
        raise TableError(
            f"the table holds {owner[TOPIC_PROPERTY]!r} ({owner[VIEW_PROPERTY]}) of "
            f"{owner[LAKE_PROPERTY]!r}, not {topic!r} ({view.value}) of this lake",
            location=".".join(identifier),
        )
    return table, False


def recorded_version(table: Any) -> int | None:
    """The lake version ``table`` shows (``None``: not synced yet)."""
    value = table.properties.get(LAKE_VERSION_PROPERTY)
    return None if value is None else int(value)


def snapshot_as_of(table: Any, version: int) -> Any:
    """The ``pyiceberg`` snapshot of ``table`` that shows lake version ``version``: the last one recording a
    version at or below it (a version that changed nothing of the topic added none). ``None``: the table
    shows no version that old.

    Raises:
        TableError: ``version`` is past the version the table was synced to (sync first).
    """
    shown = recorded_version(table)
    if shown is None or version > shown:
        raise TableError(
            f"lake version {version} is past the version the table shows ({shown}): sync it first",
            location=".".join(table.name()),
        )
    recorded = [
        (int(snapshot.summary[LAKE_VERSION_PROPERTY]), snapshot)
        for snapshot in table.snapshots()
        if snapshot.summary is not None and LAKE_VERSION_PROPERTY in snapshot.summary
    ]
    older = [(shows, snapshot) for shows, snapshot in recorded if shows <= version]
    return max(older, key=lambda pair: pair[0])[1] if older else None


def current_files(table: Any) -> PartitionFiles:
    """The data files of the table's current snapshot, by partition and name."""
    files: PartitionFiles = {}
    if table.current_snapshot() is None:
        return files
    for task in table.scan().plan_files():
        data_file = task.file
        files.setdefault(int(data_file.partition[0]), {})[name_of(data_file.file_path)] = data_file
    return files


def _digests_at(store: ObjectStore, version: int | None, topic: str) -> dict[int, str]:
    """The topic's partition digests at the version the table shows ({} when unknown: every partition is
    compared file by file)."""
    root = None if version is None else try_read_root(store, version)
    return {} if root is None else partition_digests(root, topic)


def _topics(asked: Sequence[str] | None, present: Sequence[str], config: Config | None) -> tuple[str, ...]:
    if asked:
        return tuple(dict.fromkeys(asked))
    if config is not None:
        return configured_topics(config, present)
    return tuple(topic for topic in present if not topic.startswith("__"))


def _check_topics(
    store: ObjectStore, catalog: Any, topics: Sequence[str], head: VersionRoot, *, namespace: str
) -> None:
    """A topic neither the head nor the catalog has is a typo: refused before anything is written."""
    for topic in topics:
        if topic not in head.topics and not catalog.table_exists((namespace, table_name(topic))):
            raise PartitionNotFoundError(
                f"topic {topic!r} is not in the lake (version {head.version}: "
                f"{', '.join(head.topics) or 'no topic'}) and has no table",
                location=store.describe(),
            )


def _ensure_namespace(catalog: Any, namespace: str) -> None:
    catalog.create_namespace_if_not_exists(namespace)


def _merged(skipped: list[SkippedVersions]) -> list[SkippedVersions]:
    """Consecutive versions skipped for the same reason, as one line."""
    merged: list[SkippedVersions] = []
    for item in skipped:
        if merged and merged[-1].reason == item.reason and merged[-1].last + 1 == item.first:
            merged[-1] = SkippedVersions(merged[-1].first, item.last, item.reason)
        else:
            merged.append(item)
    return merged
