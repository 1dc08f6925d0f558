"""``tables sync``: each topic's Iceberg table (read back with pyiceberg into Arrow) equals ``read_lake`` with
read_committed at every lake version it was synced at, on a local lake and on S3 (moto): the shared rich lake
(every codec, transactions that abort and stay open, tombstones, a log start offset inside a batch), then
retention dropping a segment, then a compaction round rewriting a partition. A second sync adds nothing; a
version gc removed is skipped with one line; a crash before the table's commit is caught up."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from counting_store import counting_store
from kafka_segments.errors import TableError
from kafka_segments.lake.adopt_run import adopt
from kafka_segments.lake.layout import manifest_key
from kafka_segments.lake.upgrade import upgrade
from kafka_segments.reading import read_lake
from kafka_segments.state import Manifest, PartitionState
from kafka_segments.storage import LocalStore, ObjectStore
from kafka_segments.tables import CatalogSettings, current_files, open_catalog, snapshot_as_of, sync_tables
from kafka_segments.tables import sync as sync_module
from kafka_segments.tables.schema import LAKE_VERSION_PROPERTY
from kit import FakeClock
from lake.compaction_run_helpers import TP, LakeLog, cleaned, kafka_test_config, run_at
from lake.read_helpers import ORDERS_0, commit_lake, commit_states, rich_specs
from s3_fixtures import new_s3_store
from unit.compaction_helpers import NOW

pytestmark = pytest.mark.lake

Rows = list[dict[str, Any]]


def _expected(store: ObjectStore, topic: str, version: int) -> Rows:
    options = {
        "subscribe": topic,
        "kafka.isolation.level": "read_committed",
        "includeHeaders": "true",
        "versionAsOf": str(version),
    }
    return pa.Table.from_batches(list(read_lake(store, options))).to_pylist()


def _table(store: ObjectStore, settings: CatalogSettings, topic: str) -> Any:
    return open_catalog(store, settings).load_table(("kafka_segments", topic))


def _rows_at(table: Any, version: int) -> Rows:
    """The table as of lake version ``version`` (``snapshot_as_of``)."""
    rows = table.scan(snapshot_id=snapshot_as_of(table, version).snapshot_id).to_arrow()
    return rows.sort_by([("partition", "ascending"), ("offset", "ascending")]).to_pylist()


def _check(
    store: ObjectStore, settings: CatalogSettings, topics: tuple[str, ...], versions: list[int]
) -> None:
    for topic in topics:
        table = _table(store, settings, topic)
        for version in versions:
            expected = _expected(store, topic, version)
            assert expected, (topic, version)
            assert _rows_at(table, version) == expected, (topic, version)


def _retention_drops_orders_0s_first_segment(
    store: ObjectStore, states: Sequence[PartitionState], clock: FakeClock
) -> Manifest:
    """Commit ``states`` again with orders-0's first segment deleted (retention) and its log start offset at
    the next segment's base offset."""
    [orders] = [s for s in states if s.topic_partition == ORDERS_0]
    trimmed = dataclasses.replace(
        orders, segments=orders.segments[1:], log_start_offset=orders.segments[1].base_offset
    )
    return commit_states(store, [trimmed if s is orders else s for s in states], clock=clock)


def _retention_and_sync_twice(store: ObjectStore, settings: CatalogSettings) -> None:
    clock = FakeClock()
    first = commit_lake(store, rich_specs(), clock=clock, operation="adopt")
    report = sync_tables(store, catalog=settings)
    assert [t.topic for t in report.tables] == ["orders", "payments"]
    assert all(t.created and t.to_version == first.version for t in report.tables)
    _check(store, settings, ("orders", "payments"), [first.version])

    clock.advance(60_000)
    orders = first.partition(ORDERS_0)
    assert orders is not None
    dropped = orders.segments[0]
    second = _retention_drops_orders_0s_first_segment(store, first.partitions, clock)
    report = sync_tables(store, catalog=settings)
    by_topic = {t.topic: t for t in report.tables}
    assert [
        (v.version, v.partitions, v.files_removed, v.files_added) for v in by_topic["orders"].versions
    ] == [(second.version, (0,), 1, 0)]
    assert by_topic["payments"].versions[0].snapshot_id is None  # unchanged: no snapshot, the version moves
    _check(store, settings, ("orders", "payments"), [first.version, second.version])
    orders_table = _table(store, settings, "orders")
    stem = dropped.key.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    assert not [name for name in current_files(orders_table).get(0, {}) if name.startswith(stem + ".")]
    assert orders_table.properties[LAKE_VERSION_PROPERTY] == str(second.version)
    payments_table = _table(store, settings, "payments")  # version 2 changed nothing of it: v1's snapshot
    assert snapshot_as_of(payments_table, second.version) == snapshot_as_of(payments_table, first.version)
    with pytest.raises(TableError, match=f"lake version {second.version + 1} is past the version the table"):
        snapshot_as_of(orders_table, second.version + 1)

    snapshots = {t: len(_table(store, settings, t).snapshots()) for t in ("orders", "payments")}
    again = sync_tables(store, catalog=settings)
    assert all(not t.versions and not t.created for t in again.tables)
    assert {t: len(_table(store, settings, t).snapshots()) for t in ("orders", "payments")} == snapshots
    assert again.lines() == [
        f"orders: kafka_segments.orders up to date at lake version {second.version}",
        f"payments: kafka_segments.payments up to date at lake version {second.version}",
    ]


def test_the_table_follows_retention_on_a_local_lake(tmp_path: Path) -> None:
    _retention_and_sync_twice(LocalStore(tmp_path / "lake"), CatalogSettings())


def test_the_table_follows_retention_on_s3(s3_server: Any, tmp_path: Path) -> None:
    settings = CatalogSettings(properties={"uri": f"sqlite:///{tmp_path / 'catalog.db'}"})
    _retention_and_sync_twice(new_s3_store(s3_server), settings)


def _compacted_lake(tmp_path: Path) -> LocalStore:
    lake = LakeLog.of(segment_bytes=300)
    for i in range(40):
        lake.log.rec(i % 4, i)
    lake.log.tomb(1)
    lake.log.txn(1, [2, 5])
    lake.log.abort(1)
    lake.log.txn(2, [5, 0])
    lake.log.commit(2)
    store = LocalStore(tmp_path / "lake")
    lake.sync(store)
    adopt(store, now_ms=NOW, clock=FakeClock())
    return store


def test_a_compaction_replaces_the_files_of_the_segments_it_rewrote(tmp_path: Path) -> None:
    store = _compacted_lake(tmp_path)
    settings = CatalogSettings()
    sync_tables(store, catalog=settings)
    before = set(current_files(_table(store, settings, TP.topic))[TP.partition])
    cleaned(run_at(store, kafka_test_config(300), NOW + 1_000), TP)
    report = sync_tables(store, catalog=settings)
    [done] = report.tables[0].versions
    assert done.files_removed
    assert done.files_added
    after = set(current_files(_table(store, settings, TP.topic))[TP.partition])
    assert len(before - after) == done.files_removed
    _check(store, settings, (TP.topic,), [1, 2])


def test_gc_removed_versions_are_skipped_and_a_crash_before_the_commit_is_caught_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = LocalStore(tmp_path / "lake")
    settings = CatalogSettings()
    clock = FakeClock()
    first = commit_lake(store, rich_specs(), clock=clock)
    sync_tables(store, topics=["orders"], catalog=settings)
    states = list(first.partitions)
    for _ in range(3):  # versions 2, 3, 4: the same partitions, committed again
        clock.advance(1_000)
        commit_states(store, states, clock=clock)
    store.delete(manifest_key(2))
    store.delete(manifest_key(3))
    report = sync_tables(store, topics=["orders"], catalog=settings)
    assert report.lines() == [
        "orders: lake version 2-3 skipped: removed by gc before the table showed it",
        "orders: kafka_segments.orders up to date at lake version 4",
    ]

    fifth = _retention_drops_orders_0s_first_segment(store, states, clock)

    def crash(*args: Any, **kwargs: Any) -> None:
        raise OSError("killed between the files and the table's commit")

    monkeypatch.setattr(sync_module, "_commit", crash)
    with pytest.raises(OSError, match="killed"):
        sync_tables(store, topics=["orders"], catalog=settings)
    assert _table(store, settings, "orders").properties[LAKE_VERSION_PROPERTY] == "4"
    monkeypatch.undo()
    report = sync_tables(store, topics=["orders"], catalog=settings)
    assert [v.version for v in report.tables[0].versions] == [fifth.version]
    _check(store, settings, ("orders",), [1, fifth.version])


def test_on_a_format_2_lake_a_sync_reads_only_the_partitions_a_commit_changed(tmp_path: Path) -> None:
    local = LocalStore(tmp_path / "lake")
    clock = FakeClock()
    first = commit_lake(local, rich_specs(), clock=clock)
    upgrade(local, clock=clock)
    store = counting_store(local)
    settings = CatalogSettings(
        properties={
            "uri": f"sqlite:///{tmp_path / 'catalog.db'}",
            "warehouse": (tmp_path / "warehouse").as_uri(),
        }
    )
    sync_tables(store, catalog=settings)
    third = _retention_drops_orders_0s_first_segment(local, first.partitions, clock)
    store.reset()
    report = sync_tables(store, catalog=settings)
    assert [(t.topic, [v.partitions for v in t.versions]) for t in report.tables] == [
        ("orders", [(0,)]),
        ("payments", [()]),
    ]
    read = {call.key for call in store.calls if call.kind != "list"}
    assert not [key for key in read if "payments-" in key or "orders-1" in key]
    _check(store, settings, ("orders", "payments"), [third.version])


def test_one_sync_over_several_versions_drops_the_files_it_wrote_itself(tmp_path: Path) -> None:
    store = LocalStore(tmp_path / "lake")
    clock = FakeClock()
    first = commit_lake(store, rich_specs(), clock=clock)
    clock.advance(1_000)
    second = _retention_drops_orders_0s_first_segment(store, first.partitions, clock)
    report = sync_tables(store, topics=["orders"], catalog=CatalogSettings())
    assert [(v.version, v.files_removed) for v in report.tables[0].versions] == [(1, 0), (2, 1)]
    _check(store, CatalogSettings(), ("orders",), [first.version, second.version])


def test_a_compacted_topic_gets_its_latest_table(tmp_path: Path) -> None:
    store = _compacted_lake(tmp_path)
    settings = CatalogSettings()
    config = kafka_test_config(300)
    report = sync_tables(store, topics=[TP.topic], catalog=settings, config=config)
    assert [(t.table, t.view) for t in report.tables] == [
        ("kafka_segments.t", "all"),
        ("kafka_segments.t_latest", "latest"),
    ]
    cleaned(run_at(store, kafka_test_config(300), NOW + 1_000), TP)
    report = sync_tables(store, topics=[TP.topic], catalog=settings, config=config)
    [done] = report.tables[1].versions
    assert (done.files_removed, done.files_added) == (1, 1)  # the partition's one file, rebuilt
    table = _table(store, settings, "t_latest")
    dictionary = {b"0": b"0", b"2": b"38", b"3": b"39", b"5": b"5"}  # the raw log, replayed by hand
    for version in (1, 2):
        rows = _rows_at(table, version)
        latest = {"subscribe": TP.topic, "view": "latest", "kafka.isolation.level": "read_committed"}
        expected = read_lake(store, {**latest, "includeHeaders": "true", "versionAsOf": str(version)})
        assert sorted(rows, key=lambda r: r["offset"]) == pa.Table.from_batches(list(expected)).to_pylist()
        assert {row["key"]: row["value"] for row in rows} == dictionary


@pytest.mark.parametrize("failing", [1, 3])
def test_a_failed_file_write_leaves_the_table_as_it_was_and_the_next_sync_catches_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failing: int
) -> None:
    store = LocalStore(tmp_path / "lake")
    first = commit_lake(store, rich_specs(), clock=FakeClock())
    settings = CatalogSettings()
    written = 0
    write = sync_module.write_data_file

    def faulty(*args: Any, **kwargs: Any) -> Any:
        nonlocal written
        written += 1
        if written == failing:
            raise OSError(f"injected: file {failing} of the sync could not be written")
        return write(*args, **kwargs)

    monkeypatch.setattr(sync_module, "write_data_file", faulty)
    with pytest.raises(OSError, match="injected"):
        sync_tables(store, topics=["orders"], catalog=settings)
    table = _table(store, settings, "orders")
    assert table.current_snapshot() is None
    assert LAKE_VERSION_PROPERTY not in table.properties
    monkeypatch.undo()
    report = sync_tables(store, topics=["orders"], catalog=settings)
    assert [(v.version, v.files_added) for v in report.tables[0].versions] == [(first.version, 4)]
    _check(store, settings, ("orders",), [first.version])


def test_a_commit_on_a_table_another_sync_moved_is_one_clear_error(tmp_path: Path) -> None:
    store = LocalStore(tmp_path / "lake")
    clock = FakeClock()
    first = commit_lake(store, rich_specs(), clock=clock)
    settings = CatalogSettings()
    sync_tables(store, topics=["orders"], catalog=settings)
    stale = _table(store, settings, "orders")
    _retention_drops_orders_0s_first_segment(store, first.partitions, clock)
    sync_tables(store, topics=["orders"], catalog=settings)  # a snapshot more: `stale` is behind
    [dropped, *_] = current_files(stale)[0].values()
    with pytest.raises(TableError, match=r"another writer committed to the table meanwhile .*; sync again"):
        sync_module._commit(stale, version=2, drop=[dropped], add=())
