"""An exported lake is a Kafka log directory other tools read: kafka-python reads every record of every
exported ``.log``, and ``kafka-segments inspect`` (kafka-dump-log's checks, indexes against their log)
accepts every exported segment and index file."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pytest
from cli_harness import cli
from kafka_segments.lake.export import export_lake
from kafka_segments.lake.reader import read_segment
from kafka_segments.records.log import iter_records
from kafka_segments.storage import LocalStore
from kit import FakeClock
from lake.read_helpers import rich_lake

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)  # kafka/__init__ imports its admin client
    from kafka.record.memory_records import MemoryRecords

pytestmark = pytest.mark.lake

Row = tuple[int, int, bytes | None, bytes | None, list[tuple[str, bytes | None]]]


def kafka_python_records(data: bytes) -> list[Row]:
    rows: list[Row] = []
    for batch in MemoryRecords(data):
        assert batch.validate_crc()
        rows.extend((r.offset, r.timestamp, r.key, r.value, [tuple(h) for h in r.headers]) for r in batch)
    return rows


def our_records(data: bytes) -> list[Row]:
    return [
        (r.offset, r.timestamp, r.key, r.value, [(h.key, h.value) for h in r.headers])
        for r in iter_records(data)
    ]


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    root = tmp_path_factory.mktemp("export-interop")
    store = LocalStore(root / "lake")
    manifest = rich_lake(store, FakeClock())
    export_lake(store, root / "out")
    committed = {
        state.topic_partition.dir_name: [
            r for entry in state.segments for r in our_records(read_segment(store, entry))
        ]
        for state in manifest.partitions
    }
    return root / "out", committed


def test_kafka_python_reads_every_exported_record(exported: tuple[Path, dict[str, Any]]) -> None:
    out, committed = exported
    for directory, expected in committed.items():
        logs = sorted((out / directory).glob("*.log"))
        assert logs, directory
        rows = [row for log in logs for row in kafka_python_records(log.read_bytes())]
        assert rows == expected, directory
        assert rows == [row for log in logs for row in our_records(log.read_bytes())]
    assert sum(len(rows) for rows in committed.values()) == 29 + 29 + 13


def test_inspect_accepts_every_exported_file(exported: tuple[Path, dict[str, Any]]) -> None:
    out, _ = exported
    files = sorted(
        str(p) for p in out.glob("*/*") if p.suffix in {".log", ".index", ".timeindex", ".txnindex"}
    )
    assert any(name.endswith(".txnindex") for name in files)

    result = cli("inspect", "--records", *files)

    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    assert result.stdout.count("Dumping ") == len(files)
    assert "Mismatches" not in result.stdout
