"""Faults inside pyiceberg's own writes during a sync (issue 34 point 4): the table's metadata JSON, a
manifest list, a manifest, a data file (through pyiceberg's FileIO, ``faulty_io``: failing as it is created,
or written with its reply lost) and the catalog's commit (the lake's own catalog and the SQL one; failing
before it, and after it with the commit done), on a local lake and on S3 (moto). One sync walks lake
versions 1 (the rich lake) and 2 (retention drops a segment): whatever write fails, the table is left at a
version it fully shows (none, or 1), the next sync catches up, and every version's rows equal
``read_lake``'s, with no row twice."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from kafka_segments.reading import read_lake
from kafka_segments.storage import LocalStore, ObjectStore
from kafka_segments.tables import CatalogSettings, open_catalog, recorded_version, snapshot_as_of, sync_tables
from kit import FakeClock
from lake.read_helpers import ORDERS_0, commit_lake, commit_states, rich_specs
from s3_fixtures import new_s3_store

from tables.faulty_io import FAULT, FAULTY_IO

pytestmark = pytest.mark.lake

Rows = list[dict[str, Any]]


@pytest.fixture
def fault() -> Iterator[None]:
    yield
    FAULT.disarm()


@pytest.fixture(params=["local", "s3"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> ObjectStore:
    """A fresh lake on a local directory or on S3 (moto's server over HTTP; the table's files through
    pyiceberg's own S3 client)."""
    if request.param == "local":
        return LocalStore(tmp_path / "lake")
    return new_s3_store(request.getfixturevalue("s3_server"))


def _two_versions(store: ObjectStore) -> None:
    """Version 1, the rich lake; version 2, retention dropping orders-0's first segment."""
    clock = FakeClock()
    first = commit_lake(store, rich_specs(), clock=clock)
    [orders] = [s for s in first.partitions if s.topic_partition == ORDERS_0]
    trimmed = dataclasses.replace(
        orders, segments=orders.segments[1:], log_start_offset=orders.segments[1].base_offset
    )
    clock.advance(60_000)
    commit_states(store, [trimmed if s is orders else s for s in first.partitions], clock=clock)


def _expected(store: ObjectStore, version: int) -> Rows:
    options = {
        "subscribe": "orders",
        "kafka.isolation.level": "read_committed",
        "includeHeaders": "true",
        "versionAsOf": str(version),
    }
    return pa.Table.from_batches(list(read_lake(store, options))).to_pylist()


def _rows(table: Any, snapshot_id: int | None = None) -> Rows:
    rows = table.scan(snapshot_id=snapshot_id).to_arrow()
    return rows.sort_by([("partition", "ascending"), ("offset", "ascending")]).to_pylist()


def _shows_fully(store: ObjectStore, settings: CatalogSettings) -> int | None:
    """The version the table shows (None: no table or none yet), checking its rows are exactly it."""
    catalog = open_catalog(store, settings)
    if not catalog.table_exists(("kafka_segments", "orders")):
        return None
    table = catalog.load_table(("kafka_segments", "orders"))
    version = recorded_version(table)
    if version is None:
        assert table.current_snapshot() is None
        return None
    assert _rows(table) == _expected(store, version)
    return version


def _sync(store: ObjectStore, settings: CatalogSettings) -> Any:
    return sync_tables(store, topics=["orders"], catalog=settings)


def _caught_up(store: ObjectStore, settings: CatalogSettings) -> None:
    _sync(store, settings)
    table = open_catalog(store, settings).load_table(("kafka_segments", "orders"))
    assert recorded_version(table) == 2
    for version in (1, 2):
        assert _rows(table, snapshot_as_of(table, version).snapshot_id) == _expected(store, version), version
    assert _sync(store, settings).tables[0].versions == ()  # and a sync more changes nothing


# the files a sync of versions 1 and 2 creates, and the version the table shows when that one fails:
# metadata 1 (create_table), 2 (version 1's commit), 3 (version 2's); a manifest and a manifest list for
# each of the two commits; four data files for version 1 (version 2 only drops one)
FILE_FAULTS = [
    ("metadata", 1, None),
    ("metadata", 2, None),
    ("metadata", 3, 1),
    ("manifest", 1, None),
    ("manifest", 2, 1),
    ("manifest list", 1, None),
    ("manifest list", 2, 1),
    ("data", 1, None),
    ("data", 4, None),
]


@pytest.mark.parametrize("when", ["create", "closed"])
@pytest.mark.parametrize(("kind", "nth", "shown"), FILE_FAULTS, ids=[f"{k}-{n}" for k, n, _ in FILE_FAULTS])
def test_a_failed_pyiceberg_file_write_leaves_a_version_the_table_fully_shows(
    store: ObjectStore, fault: None, kind: str, nth: int, shown: int | None, when: str
) -> None:
    _two_versions(store)
    settings = CatalogSettings(properties={"py-io-impl": FAULTY_IO})
    FAULT.arm(kind, nth, when=when)
    with pytest.raises(Exception, match="injected"):
        _sync(store, settings)
    assert FAULT.failed is not None
    FAULT.disarm()
    assert _shows_fully(store, settings) == shown
    _caught_up(store, settings)


@pytest.mark.parametrize("when", ["before", "after"])
@pytest.mark.parametrize("kind", ["lake", "sql"])
def test_a_failed_catalog_commit_leaves_a_version_the_table_fully_shows(
    store: ObjectStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str, when: str
) -> None:
    """The catalog's commit of version 2 fails before the catalog moves (the lake catalog's pointer, the SQL
    catalog's row), or after (the commit done, its outcome lost to the caller)."""
    _two_versions(store)
    sql = {"uri": f"sqlite:///{tmp_path / 'catalog.db'}"}
    settings = CatalogSettings(properties=sql if kind == "sql" else {})
    catalog_class = type(open_catalog(store, settings))
    commit = catalog_class.commit_table
    calls = 0

    def faulty(self: Any, *args: Any, **kwargs: Any) -> Any:
        nonlocal calls
        calls += 1
        if calls == 2 and when == "before":
            raise OSError("injected: the catalog's commit failed")
        done = commit(self, *args, **kwargs)
        if calls == 2:
            raise OSError("injected: the catalog committed, the answer was lost")
        return done

    monkeypatch.setattr(catalog_class, "commit_table", faulty)
    with pytest.raises(OSError, match="injected"):
        _sync(store, settings)
    monkeypatch.undo()
    assert _shows_fully(store, settings) == (1 if when == "before" else 2)
    _caught_up(store, settings)
