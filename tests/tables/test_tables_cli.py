"""``kafka-segments tables sync`` as a user runs it, on an S3 lake (moto over HTTP, found through
``AWS_ENDPOINT_URL`` and the standard credentials, which pyiceberg's FileIO gets from the lake's client): a
process, then in this process. The text report and ``--json``, the topics a configuration file enables, a
second sync that changes nothing, a typo'd topic as one line, exit 2."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_harness import cli, cli_in_process
from kafka_segments.demo import DEFAULT_REGION, EMBEDDED_CREDENTIALS
from kit import FakeClock
from lake.read_helpers import commit_lake, rich_specs
from s3_fixtures import new_s3_store

pytestmark = pytest.mark.lake

CONFIG = """
broker:
  kafka_segments.table.namespace: archive
topics:
  payments:
    kafka_segments.table.enable: true
"""


def test_sync_from_the_command_line(tmp_path: Path, s3_server: Any) -> None:
    store = new_s3_store(s3_server)
    commit_lake(store, rich_specs(), clock=FakeClock())
    lake = f"s3://{store.bucket}/{store.prefix}"
    aws = {
        "AWS_ENDPOINT_URL": s3_server.endpoint_url,
        "AWS_ACCESS_KEY_ID": EMBEDDED_CREDENTIALS["aws_access_key_id"],
        "AWS_SECRET_ACCESS_KEY": EMBEDDED_CREDENTIALS["aws_secret_access_key"],
        "AWS_DEFAULT_REGION": DEFAULT_REGION,
    }
    config = tmp_path / "kafka-segments.yaml"
    config.write_text(CONFIG)
    catalog = f"uri=sqlite:///{tmp_path / 'catalog.db'}"
    sync = ("tables", "sync", "--lake", lake, "--config", str(config), "--catalog", catalog)

    done = cli(*sync, "--json", aws=aws)
    assert done.returncode == 0, done.stderr
    assert not done.stderr  # pyiceberg warns of no column: the unmeasured ones are declared
    report = json.loads(done.stdout)
    [table] = report["tables"]
    assert (table["topic"], table["table"], table["created"], table["to_version"]) == (
        "payments",
        "archive.payments",
        True,
        1,
    )
    assert table["versions"][0]["files_added"] == 2
    assert table["versions"][0]["rows_added"] == 5
    data = [key for key in (meta.key for meta in store.list("_kafka_segments/tables/")) if "/data/" in key]
    assert len(data) == 2  # in the lake's own prefix

    # the same command in this process (a process costs seconds: pyiceberg, the kernels)
    again = cli_in_process(*sync, aws=aws)
    assert again.returncode == 0, again.stderr
    assert again.stdout == "payments: archive.payments up to date at lake version 1\n"

    typo = cli_in_process(
        "tables", "sync", "--lake", lake, "--catalog", catalog, "--topics", "order", aws=aws
    )
    assert typo.returncode == 2
    assert not typo.stdout
    assert "topic 'order' is not in the lake (version 1: orders, payments) and has no table" in typo.stderr
    assert len(typo.stderr.strip().splitlines()) == 1


def test_tables_without_an_action_says_which_there_are() -> None:
    done = cli_in_process("tables", aws={})
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1] == "kafka-segments tables: choose an action: sync"
