"""The catalog kept inside the lake (``tables.lake_catalog``), the default of every lake: an S3 lake syncs
with no catalog configured and a reader without our code finds the table from its pointer object; of two
commits racing on one pointer one loses cleanly and the next sync catches up; a crash between the metadata
file and the pointer leaves the table at its old version; a local lake with the first slice's SQLite catalog
keeps it; the catalog's own operations (namespaces, listing, drop, register) and the ones it refuses."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from kafka_segments.errors import TableError
from kafka_segments.storage import LocalStore, ObjectStore
from kafka_segments.storage.base import PutMode, PutResult
from kafka_segments.tables import CatalogSettings, open_catalog, recorded_version, sync_tables
from kafka_segments.tables.catalog import CATALOG_DB_KEY, catalog_properties
from kafka_segments.tables.lake_catalog import LakeCatalog
from kafka_segments.tables.lake_pointers import CATALOG_PREFIX, METADATA_LOCATION, pointer_key
from kit import FakeClock
from lake.read_helpers import commit_lake, rich_specs
from pyiceberg.exceptions import NamespaceNotEmptyError, NoSuchNamespaceError, NoSuchTableError
from pyiceberg.table import StaticTable
from s3_fixtures import new_s3_store

from tables.test_tables_sync import _check, _retention_drops_orders_0s_first_segment, _table

pytestmark = pytest.mark.lake

DEFAULT = CatalogSettings()
ORDERS = ("kafka_segments", "orders")


def _sorted(rows: pa.Table) -> list[dict[str, Any]]:
    return rows.sort_by([("partition", "ascending"), ("offset", "ascending")]).to_pylist()


def test_an_s3_lake_with_no_catalog_keeps_its_tables_in_itself(s3_server: Any) -> None:
    store = new_s3_store(s3_server)
    first = commit_lake(store, rich_specs(), clock=FakeClock())
    report = sync_tables(store, topics=["orders"])
    assert [(t.table, t.created, t.to_version) for t in report.tables] == [("kafka_segments.orders", True, 1)]
    _check(store, DEFAULT, ("orders",), [first.version])
    assert [meta.key for meta in store.list(CATALOG_PREFIX)] == [
        f"{CATALOG_PREFIX}kafka_segments/namespace.properties",
        pointer_key(*ORDERS),
    ]

    # a reader without our code: the pointer names the metadata file, pyiceberg's StaticTable reads it
    pointer = json.loads(store.get(pointer_key(*ORDERS)))
    location = pointer[METADATA_LOCATION]
    assert location.startswith(f"s3://{store.bucket}/{store.prefix}_kafka_segments/tables/warehouse/")
    s3 = {k: v for k, v in catalog_properties(store, DEFAULT).items() if k.startswith("s3.")}
    static = StaticTable.from_metadata(location, properties=s3)
    loaded = _table(store, DEFAULT, "orders")
    assert static.metadata == loaded.metadata
    assert _sorted(static.scan().to_arrow()) == _sorted(loaded.scan().to_arrow())


@pytest.mark.parametrize("backend", ["local", "s3"])
def test_of_two_commits_racing_on_the_pointer_one_loses_and_the_next_sync_catches_up(
    backend: str, tmp_path: Path, s3_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    store: ObjectStore = LocalStore(tmp_path / "lake") if backend == "local" else new_s3_store(s3_server)
    clock = FakeClock()
    first = commit_lake(store, rich_specs(), clock=clock)
    sync_tables(store, topics=["orders"])
    second = _retention_drops_orders_0s_first_segment(store, first.partitions, clock)
    key = pointer_key(*ORDERS)
    put = store.put
    rivals: list[str] = []

    def racing_put(object_key: str, data: bytes, *, mode: PutMode) -> PutResult:
        """The first move of the pointer finds another commit's move just before it."""
        if object_key == key and not rivals:
            rivals.append("rival")
            rival = open_catalog(store, DEFAULT).load_table(ORDERS)
            rival.transaction().set_properties({"rival": "1"}).commit_transaction()
        return put(object_key, data, mode=mode)

    monkeypatch.setattr(store, "put", racing_put)
    with pytest.raises(TableError, match=r"another writer committed to the table meanwhile .*sync again"):
        sync_tables(store, topics=["orders"])
    table = _table(store, DEFAULT, "orders")
    assert (recorded_version(table), table.properties["rival"]) == (first.version, "1")  # the rival's, kept

    again = sync_tables(store, topics=["orders"])
    assert [v.version for v in again.tables[0].versions] == [second.version]
    _check(store, DEFAULT, ("orders",), [first.version, second.version])


def test_a_crash_between_the_metadata_file_and_the_pointer_leaves_the_table_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = LocalStore(tmp_path / "lake")
    clock = FakeClock()
    first = commit_lake(store, rich_specs(), clock=clock)
    sync_tables(store, topics=["orders"])
    before = _table(store, DEFAULT, "orders").metadata_location
    second = _retention_drops_orders_0s_first_segment(store, first.partitions, clock)
    put = store.put

    def crashing_put(object_key: str, data: bytes, *, mode: PutMode) -> PutResult:
        if object_key.startswith(CATALOG_PREFIX):
            raise KeyboardInterrupt  # the process dies before the pointer moves
        return put(object_key, data, mode=mode)

    monkeypatch.setattr(store, "put", crashing_put)
    with pytest.raises(KeyboardInterrupt):
        sync_tables(store, topics=["orders"])
    monkeypatch.undo()
    table = _table(store, DEFAULT, "orders")
    assert (table.metadata_location, recorded_version(table)) == (before, first.version)
    warehouse = store.list("_kafka_segments/tables/warehouse/")
    metadata = [meta.key for meta in warehouse if meta.key.endswith(".metadata.json")]
    assert len(metadata) == 3  # created, synced to v1, and the new one no pointer names

    sync_tables(store, topics=["orders"])
    _check(store, DEFAULT, ("orders",), [first.version, second.version])


def test_a_local_lake_keeps_its_sqlite_catalog_until_its_tables_move_into_the_lake(tmp_path: Path) -> None:
    store = LocalStore(tmp_path / "lake")
    commit_lake(store, rich_specs(), clock=FakeClock())
    db = tmp_path / "lake" / CATALOG_DB_KEY
    db.parent.mkdir(parents=True)
    sqlite = CatalogSettings(properties={"uri": f"sqlite:///{db}"})
    sync_tables(store, topics=["orders"], catalog=sqlite)
    assert not isinstance(open_catalog(store, DEFAULT), LakeCatalog)
    assert sync_tables(store, topics=["orders"]).lines() == [
        "orders: kafka_segments.orders up to date at lake version 1"
    ]
    assert not list(store.list(CATALOG_PREFIX))

    # moving the table into the lake's own catalog (docs/tables.md): register its metadata, drop the file
    lake = open_catalog(store, CatalogSettings(properties={"type": "lake"}))
    assert isinstance(lake, LakeCatalog)
    lake.create_namespace("kafka_segments")
    lake.register_table(ORDERS, open_catalog(store, sqlite).load_table(ORDERS).metadata_location)
    db.unlink()
    assert isinstance(open_catalog(store, DEFAULT), LakeCatalog)
    assert sync_tables(store, topics=["orders"]).lines() == [
        "orders: kafka_segments.orders up to date at lake version 1"
    ]


def test_the_catalogs_own_operations_and_the_ones_it_refuses(tmp_path: Path) -> None:
    store = LocalStore(tmp_path / "lake")
    commit_lake(store, rich_specs(), clock=FakeClock())
    sync_tables(store, topics=["orders"])
    catalog = open_catalog(store, DEFAULT)
    assert catalog.list_namespaces() == [("kafka_segments",)]
    assert catalog.list_tables("kafka_segments") == [ORDERS]
    assert catalog.table_exists(ORDERS)
    assert not catalog.table_exists(("kafka_segments", "payments"))
    with pytest.raises(NoSuchNamespaceError):
        catalog.list_tables("archive")
    catalog.create_namespace("archive", {"owner": "ops"})
    catalog.update_namespace_properties("archive", updates={"team": "data"})
    assert catalog.load_namespace_properties("archive") == {"owner": "ops", "team": "data"}
    location = catalog.load_table(ORDERS).metadata_location
    copy = catalog.register_table(("archive", "orders"), location)
    assert copy.metadata == catalog.load_table(ORDERS).metadata
    with pytest.raises(NamespaceNotEmptyError):
        catalog.drop_namespace("archive")
    catalog.drop_table(("archive", "orders"))
    catalog.drop_namespace("archive")
    assert catalog.list_namespaces() == [("kafka_segments",)]
    with pytest.raises(NoSuchTableError):
        catalog.load_table(("archive", "orders"))
    with pytest.raises(NotImplementedError, match="the catalog kept inside the lake does not support rename"):
        catalog.rename_table(ORDERS, ("kafka_segments", "renamed"))
    with pytest.raises(NotImplementedError, match="does not support views"):
        catalog.load_view(("kafka_segments", "a_view"))
    with pytest.raises(TableError, match="cannot name a table of the lake's catalog"):
        catalog.load_table(("kafka_segments", "a/b"))
