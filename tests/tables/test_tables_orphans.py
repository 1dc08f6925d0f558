"""Unreferenced files (docs/tables.md, "Unreferenced files"): after expiry, the table's files no kept snapshot
references are deleted once older than the grace period, only when asked; on a local lake and on S3 (moto),
the table in the lake's warehouse or outside it."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from cli_harness import cli_in_process
from kafka_segments.lake.layout import manifest_key
from kafka_segments.state import Manifest
from kafka_segments.storage import LocalStore, ObjectStore
from kafka_segments.tables import CatalogSettings, current_files, open_catalog, sync_tables
from kafka_segments.tables import sync as sync_module
from kafka_segments.tables.files import name_of
from kit import FakeClock
from lake.read_helpers import ORDERS_0, commit_lake, commit_states, rich_specs
from s3_fixtures import new_s3_store

pytestmark = pytest.mark.lake

SETTINGS = CatalogSettings()


def _names(store: ObjectStore) -> set[str]:
    return {meta.key.rsplit("/", 1)[-1] for meta in store.list("_kafka_segments/tables/warehouse/")}


def _partition_0_files(store: ObjectStore, settings: CatalogSettings = SETTINGS) -> set[str]:
    table = open_catalog(store, settings).load_table(("kafka_segments", "orders"))
    return set(current_files(table)[0])


def _retention(store: ObjectStore, first: Manifest, clock: FakeClock) -> None:
    """Version 2: retention drops orders-0's first segment."""
    [orders] = [s for s in first.partitions if s.topic_partition == ORDERS_0]
    trimmed = dataclasses.replace(
        orders, segments=orders.segments[1:], log_start_offset=orders.segments[1].base_offset
    )
    clock.advance(1_000)
    commit_states(store, [trimmed if s is orders else s for s in first.partitions], clock=clock)


def _retention_then_gc(store: ObjectStore, settings: CatalogSettings = SETTINGS) -> str:
    """Version 1 synced, version 2 (retention) synced, gc removes version 1; returns the name of the file of
    the segment retention dropped."""
    clock = FakeClock()
    first = commit_lake(store, rich_specs(), clock=clock)
    sync_tables(store, topics=["orders"], catalog=settings)
    before = _partition_0_files(store, settings)
    _retention(store, first, clock)
    sync_tables(store, topics=["orders"], catalog=settings)
    [dropped] = before - _partition_0_files(store, settings)
    store.delete(manifest_key(1))
    return dropped


def _check_removal(store: ObjectStore) -> None:
    dropped = _retention_then_gc(store)
    assert dropped in _names(store)

    young = sync_tables(store, topics=["orders"], catalog=SETTINGS, delete_files=True)
    [files] = [table.unreferenced for table in young.tables]
    assert files is not None
    assert files.keys == ()
    assert files.younger > 0
    assert young.lines()[-1].endswith("unreferenced file(s) kept: younger than the grace period")
    assert dropped in _names(store)

    dry = sync_tables(store, topics=["orders"], catalog=SETTINGS, file_min_age_ms=0)
    assert dropped in _names(store)
    [files] = [table.unreferenced for table in dry.tables]
    assert files is not None
    assert files.dry_run
    assert dropped in {key.rsplit("/", 1)[-1] for key in files.keys}
    assert any(line.startswith("orders: would delete ") for line in dry.lines())

    done = sync_tables(store, topics=["orders"], catalog=SETTINGS, delete_files=True, file_min_age_ms=0)
    assert dropped not in _names(store)
    [document] = done.to_json()["tables"]
    assert document["unreferenced_files"]["dry_run"] is False
    assert any(key.endswith(dropped) for key in document["unreferenced_files"]["files"])
    assert any(line.startswith("orders: deleted ") for line in done.lines())
    table = open_catalog(store, SETTINGS).load_table(("kafka_segments", "orders"))
    assert table.scan().to_arrow().num_rows > 0  # everything the kept snapshots need is still there
    kept = {name_of(task.file.file_path) for task in table.scan().plan_files()}
    assert kept <= _names(store)
    again = sync_tables(store, topics=["orders"], catalog=SETTINGS, delete_files=True, file_min_age_ms=0)
    assert again.tables[0].unreferenced is not None
    assert again.tables[0].unreferenced.keys == ()


def test_unreferenced_files_are_deleted_once_old_on_a_local_lake(tmp_path: Path) -> None:
    _check_removal(LocalStore(tmp_path / "lake"))


def test_unreferenced_files_are_deleted_once_old_on_s3(s3_server: Any) -> None:
    _check_removal(new_s3_store(s3_server))


def test_the_files_of_a_sync_that_did_not_commit_are_deleted_once_old(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = LocalStore(tmp_path / "lake")
    clock = FakeClock()
    first = commit_lake(store, rich_specs(), clock=clock)

    def no_commit(*args: Any, **kwargs: Any) -> None:
        raise OSError("injected: the commit failed")

    with monkeypatch.context() as patch:
        patch.setattr(sync_module, "_commit", no_commit)
        with pytest.raises(OSError, match="injected"):
            sync_tables(store, topics=["orders"], catalog=SETTINGS)
    written = {name for name in _names(store) if name.endswith(".parquet")}
    _retention(store, first, clock)
    store.delete(manifest_key(1))  # the table goes straight to version 2: one file written is never needed
    lake = str(tmp_path / "lake")
    done = cli_in_process(
        "tables",
        "sync",
        "--lake",
        lake,
        "--topics",
        "orders",
        "--execute",
        "--orphan-min-age-ms",
        "0",
        "--json",
        aws={},
    )
    assert done.returncode == 0, done.stderr
    table = open_catalog(store, SETTINGS).load_table(("kafka_segments", "orders"))
    kept = {name_of(task.file.file_path) for task in table.scan().plan_files()}
    [never_needed] = written - kept
    assert never_needed not in _names(store)
    assert kept <= _names(store)
    [document] = json.loads(done.stdout)["tables"]
    assert any(key.endswith(never_needed) for key in document["unreferenced_files"]["files"])


def test_a_table_outside_the_lake_is_cleaned_through_its_file_io(tmp_path: Path) -> None:
    store = LocalStore(tmp_path / "lake")
    warehouse = tmp_path / "warehouse"
    settings = CatalogSettings(properties={"warehouse": warehouse.as_uri()})
    dropped = _retention_then_gc(store, settings)
    outside = {path.name for path in warehouse.rglob("*") if path.is_file()}
    assert dropped in outside

    dry = sync_tables(store, topics=["orders"], catalog=settings, file_min_age_ms=0)
    assert dropped in {path.name for path in warehouse.rglob("*")}
    assert any(line.startswith("orders: would delete ") for line in dry.lines())
    sync_tables(store, topics=["orders"], catalog=settings, delete_files=True, file_min_age_ms=0)
    left = {path.name for path in warehouse.rglob("*") if path.is_file()}
    assert dropped not in left
    table = open_catalog(store, settings).load_table(("kafka_segments", "orders"))
    assert {name_of(task.file.file_path) for task in table.scan().plan_files()} <= left
    assert table.scan().to_arrow().num_rows > 0


def test_a_table_outside_the_lake_on_s3_is_cleaned_through_its_file_io(s3_server: Any) -> None:
    """The lake on one prefix of a bucket, the warehouse on another: the table's files are listed and
    deleted through pyiceberg's FileIO (with the lake's endpoint and credentials), the lake's store never."""
    store = new_s3_store(s3_server)
    elsewhere = new_s3_store(s3_server)
    settings = CatalogSettings(properties={"warehouse": elsewhere.describe().rstrip("/")})

    def outside() -> set[str]:
        return {meta.key.rsplit("/", 1)[-1] for meta in elsewhere.list()}

    dropped = _retention_then_gc(store, settings)
    assert dropped in outside()
    assert not _names(store)  # nothing of the table in the lake's own warehouse

    dry = sync_tables(store, topics=["orders"], catalog=settings, file_min_age_ms=0)
    assert dropped in outside()
    assert any(line.startswith("orders: would delete ") for line in dry.lines())
    sync_tables(store, topics=["orders"], catalog=settings, delete_files=True, file_min_age_ms=0)
    left = outside()
    assert dropped not in left
    table = open_catalog(store, settings).load_table(("kafka_segments", "orders"))
    assert {name_of(task.file.file_path) for task in table.scan().plan_files()} <= left
    assert table.scan().to_arrow().num_rows > 0
