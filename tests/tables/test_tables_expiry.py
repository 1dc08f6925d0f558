"""Snapshot expiry (docs/tables.md, "Snapshot expiry"): after a sync, the snapshots that show only lake
versions gc removed are expired; every retained version keeps the snapshot that shows it."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from kafka_segments.lake.layout import manifest_key
from kafka_segments.storage import LocalStore
from kafka_segments.tables import CatalogSettings, open_catalog, snapshot_as_of, sync_tables
from kit import FakeClock
from lake.read_helpers import ORDERS_0, ORDERS_1, commit_lake, commit_states, rich_specs

pytestmark = pytest.mark.lake


def test_snapshots_of_versions_gc_removed_are_expired(tmp_path: Path) -> None:
    store = LocalStore(tmp_path / "lake")
    settings = CatalogSettings()
    clock = FakeClock()
    first = commit_lake(store, rich_specs(), clock=clock)
    sync_tables(store, topics=["orders"], catalog=settings)
    states = list(first.partitions)
    for partition in (ORDERS_0, ORDERS_1):  # versions 2 and 3: retention drops the partition's first segment
        [orders] = [s for s in states if s.topic_partition == partition]
        trimmed = dataclasses.replace(
            orders, segments=orders.segments[1:], log_start_offset=orders.segments[1].base_offset
        )
        states = [trimmed if s is orders else s for s in states]
        clock.advance(1_000)
        commit_states(store, states, clock=clock)
        sync_tables(store, topics=["orders"], catalog=settings)
    table = open_catalog(store, settings).load_table(("kafka_segments", "orders"))
    assert len(table.snapshots()) == 3
    kept = {version: snapshot_as_of(table, version).snapshot_id for version in (2, 3)}

    store.delete(manifest_key(1))  # gc removed version 1
    report = sync_tables(store, topics=["orders"], catalog=settings)
    assert report.lines() == [
        "orders: kafka_segments.orders up to date at lake version 3",
        "orders: expired 1 snapshot(s) showing only lake versions gc removed",
    ]
    assert report.to_json()["tables"][0]["expired_snapshots"] == 1
    table = open_catalog(store, settings).load_table(("kafka_segments", "orders"))
    assert {snapshot.snapshot_id for snapshot in table.snapshots()} == set(kept.values())
    assert {version: snapshot_as_of(table, version).snapshot_id for version in (2, 3)} == kept
    assert snapshot_as_of(table, 1) is None

    again = sync_tables(store, topics=["orders"], catalog=settings)
    assert again.lines() == ["orders: kafka_segments.orders up to date at lake version 3"]
