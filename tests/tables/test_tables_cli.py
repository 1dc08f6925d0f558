"""``kafka-segments tables sync`` as a user runs it (a process, then in this process): the text report and
``--json``, the topics a configuration file enables, a second sync that changes nothing, and a typo'd topic
as one line, exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_harness import cli, cli_in_process
from kafka_segments.storage import LocalStore
from kit import FakeClock
from lake.read_helpers import commit_lake, rich_specs

pytestmark = pytest.mark.lake

CONFIG = """
broker:
  kafka_segments.table.namespace: archive
topics:
  payments:
    kafka_segments.table.enable: true
"""


def test_sync_from_the_command_line(tmp_path: Path) -> None:
    lake = tmp_path / "lake"
    commit_lake(LocalStore(lake), rich_specs(), clock=FakeClock())
    config = tmp_path / "kafka-segments.yaml"
    config.write_text(CONFIG)

    done = cli("tables", "sync", "--lake", str(lake), "--config", str(config), "--json")
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

    # the same command in this process (a process costs seconds: pyiceberg, the kernels)
    again = cli_in_process("tables", "sync", "--lake", str(lake), "--config", str(config), aws={})
    assert again.returncode == 0, again.stderr
    assert again.stdout == "payments: archive.payments up to date at lake version 1\n"

    typo = cli_in_process("tables", "sync", "--lake", str(lake), "--topics", "order", aws={})
    assert typo.returncode == 2
    assert not typo.stdout
    assert "topic 'order' is not in the lake (version 1: orders, payments) and has no table" in typo.stderr
    assert len(typo.stderr.strip().splitlines()) == 1


def test_tables_without_an_action_says_which_there_are() -> None:
    done = cli_in_process("tables", aws={})
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1] == "kafka-segments tables: choose an action: sync"
