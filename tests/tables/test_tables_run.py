"""The ``tables`` stage of ``kafka-segments run`` (docs/tables.md, "After every run"): a committing run
brings the tables its configuration enables to the lake's head, and says so in its text and JSON reports; a
dry run syncs nothing; a sync that fails leaves the lake's commit in place, says so in one line and exits 1,
and the next run catches up. On a local lake and on S3 (moto over HTTP)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from cli_harness import cli_in_process
from kafka_segments.demo import DEFAULT_REGION, EMBEDDED_CREDENTIALS
from kafka_segments.lake.history import manifest_versions
from kafka_segments.reading import read_lake
from kafka_segments.storage import LocalStore, ObjectStore
from kafka_segments.tables import CatalogSettings, open_catalog
from kit import T0
from lake.retention_helpers import upload_fifteen_records
from s3_fixtures import new_s3_store

pytestmark = pytest.mark.lake

CONFIG = """\
topics:
  t:
    retention.ms: 10000
    kafka_segments.table.enable: true
"""


def _offsets_in_table(store: ObjectStore, settings: CatalogSettings) -> list[int]:
    table = open_catalog(store, settings).load_table(("kafka_segments", "t"))
    return sorted(table.scan().to_arrow().column("offset").to_pylist())


def _offsets_in_lake(store: ObjectStore) -> list[int]:
    options = {"subscribe": "t", "kafka.isolation.level": "read_committed"}
    return sorted(pa.Table.from_batches(list(read_lake(store, options))).column("offset").to_pylist())


def _run(lake: str, config: Path, *more: str, aws: dict[str, str]) -> tuple[Any, dict[str, Any]]:
    done = cli_in_process("run", "--lake", lake, "--config", str(config), "--now", str(T0), *more, aws=aws)
    return done, json.loads(done.stdout) if "--json" in more else {}


def test_a_run_syncs_the_enabled_tables_and_a_dry_run_none(tmp_path: Path) -> None:
    root = tmp_path / "lake"
    store = LocalStore(root)
    upload_fifteen_records(store, segment_ts=(10, T0, T0))  # retention drops the first segment
    config = tmp_path / "kafka-segments.yaml"
    config.write_text(CONFIG)

    planned = cli_in_process("plan", "--lake", str(root), "--config", str(config), "--now", str(T0), aws={})
    assert planned.returncode == 0, planned.stderr
    assert not (root / "_kafka_segments" / "tables").exists()  # a dry run syncs nothing
    dry, report = _run(str(root), config, "--dry-run", "--json", aws={})
    assert dry.returncode == 0, dry.stderr
    assert report["tables"] is None
    assert "[run] tables:" not in dry.stderr
    assert not (root / "_kafka_segments" / "tables").exists()

    ran, report = _run(str(root), config, "--json", aws={})
    assert ran.returncode == 0, ran.stderr
    assert report["committed_version"] == 1
    tables = report["tables"]
    assert tables["synced"] is True
    [table] = tables["report"]["tables"]
    assert (table["table"], table["created"], table["to_version"]) == ("kafka_segments.t", True, 1)
    assert table["unreferenced_files"]["dry_run"] is False  # a committing run deletes unreferenced files
    assert "[run] tables: bringing the enabled topics' tables to the lake's head" in ran.stderr
    assert _offsets_in_table(store, CatalogSettings()) == _offsets_in_lake(store) == list(range(5, 15))

    text, _ = _run(str(root), config, aws={})  # nothing to change; the table is up to date
    assert text.returncode == 0, text.stderr
    assert "tables: t: kafka_segments.t up to date at lake version 1\n" in text.stdout


def test_a_failed_sync_keeps_the_commit_and_the_next_run_catches_up(tmp_path: Path, s3_server: Any) -> None:
    store = new_s3_store(s3_server)
    upload_fifteen_records(store, segment_ts=(10, T0, T0))
    lake = f"s3://{store.bucket}/{store.prefix}"
    aws = {
        "AWS_ENDPOINT_URL": s3_server.endpoint_url,
        "AWS_ACCESS_KEY_ID": EMBEDDED_CREDENTIALS["aws_access_key_id"],
        "AWS_SECRET_ACCESS_KEY": EMBEDDED_CREDENTIALS["aws_secret_access_key"],
        "AWS_DEFAULT_REGION": DEFAULT_REGION,
    }
    config = tmp_path / "kafka-segments.yaml"
    unreachable = "kafka_segments.table.catalog: [type=rest, uri=http://127.0.0.1:9]"  # the discard port
    config.write_text(CONFIG.replace("topics:", f"broker:\n  {unreachable}\ntopics:"))

    failed, report = _run(lake, config, "--json", aws=aws)
    assert failed.returncode == 1
    assert report["committed_version"] == 1
    assert manifest_versions(store) == [1]
    assert report["tables"]["synced"] is False
    [line] = [line for line in failed.stderr.splitlines() if line.startswith("kafka-segments run:")]
    assert line.startswith(
        "kafka-segments run: tables: NOT synced (the lake committed version 1; the next run or "
        "`tables sync` catches up): TableError: "
    )
    assert "Traceback" not in failed.stderr

    config.write_text(CONFIG)  # the catalog kept inside the lake (the default)
    caught_up, report = _run(lake, config, aws=aws)
    assert caught_up.returncode == 0, caught_up.stderr
    assert "tables: t: lake version 1: +2 file(s) (10 rows), -0 file(s) in partition(s) 0" in caught_up.stdout
    assert _offsets_in_table(store, CatalogSettings()) == _offsets_in_lake(store) == list(range(5, 15))
