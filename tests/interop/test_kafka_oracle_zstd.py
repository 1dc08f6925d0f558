"""Rebuilt zstd batches are the bytes Kafka's own cleaner writes (issue 21, point 4).

The smallest input that showed the difference: 400 records of 100 B over 100 keys in zstd batches, written by
Kafka's own ``MemoryRecordsBuilder`` (``genlog``), one compaction round a day later by Kafka's ``Cleaner`` on
one copy and by a run on a local lake made from another, then every cleaned ``.log`` compared byte for byte.
Before the fix the batches the round rebuilt were 3 bytes shorter than Kafka's (zstd's one-call end instead of
zstd-jni's flush then end: ``tests/unit/test_zstd_kafka_frames.py``).

Runs only when ``KAFKA_ORACLE`` names the kafka-oracle launcher, a command line around Kafka's own
``UnifiedLog``, ``LogCleanerManager`` and ``Cleaner`` (``genlog``, ``clean``); it needs Java 17 and finds the
codecs in pyspark's jars.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from kafka_segments.config import parse_config
from kafka_segments.lake.export import export_lake
from kafka_segments.pipeline.retention_run import RunOptions, run_retention
from kafka_segments.records import CompressionType
from kafka_segments.records.batch import BatchHeader
from kafka_segments.records.log import scan_headers
from kafka_segments.storage import LocalStore
from lake.helpers import FakeClock

ORACLE = os.environ.get("KAFKA_ORACLE", "")
pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(
        not ORACLE, reason="KAFKA_ORACLE is not set (the kafka-oracle launcher's path: Kafka's own cleaner)"
    ),
]

T0 = 1_790_000_000_000
NOW = T0 + 86_400_000  # one day later: every segment but the active one is cleanable
PARTITION = "t-0"
CONFIG = "topics:\n  t:\n    cleanup.policy: compact\n"


def oracle(*args: str) -> str:
    spec = importlib.util.find_spec("pyspark")
    assert spec is not None, "pyspark is not installed"
    assert spec.submodule_search_locations, "pyspark is not a package"
    jars = Path(next(iter(spec.submodule_search_locations))) / "jars"
    env = {**os.environ, "PYSPARK_JARS": str(jars)}
    done = subprocess.run([ORACLE, *args], capture_output=True, text=True, timeout=120, check=False, env=env)
    assert done.returncode == 0, done.stderr
    return done.stdout


def batch_bytes(data: bytes, header: BatchHeader) -> bytes:
    return data[header.position : header.position + header.size_in_bytes]


def first_difference(ours: bytes, kafka: bytes) -> str:
    for mine, theirs in zip(scan_headers(ours), scan_headers(kafka), strict=False):
        if batch_bytes(ours, mine) != batch_bytes(kafka, theirs):
            return f"first differing batch: ours {mine}, Kafka's {theirs}"
    return f"{len(ours)} bytes here, {len(kafka)} in Kafka's"


def kafka_log(tmp_path: Path) -> Path:
    """Kafka's input log directory, every file at one fixed mtime (T0)."""
    source = tmp_path / "in"
    oracle("genlog", str(source / PARTITION), "400", "100", "zstd", "100", "1048576", str(T0))
    for path in (source / PARTITION).iterdir():
        os.utime(path, (T0 / 1000, T0 / 1000))
    return source


def kafka_round(source: Path, tmp_path: Path) -> tuple[Path, dict[str, Any]]:
    log_dir = tmp_path / "kafka"
    shutil.copytree(source, log_dir)
    report = json.loads(
        oracle(
            "clean", "--log-dir", str(log_dir), "--partition", PARTITION, "--now", str(NOW),
            "--prop", "cleanup.policy=compact", "--no-records",
        )
    )  # fmt: skip
    return log_dir / PARTITION, report


def our_round(source: Path, tmp_path: Path) -> Path:
    lake = tmp_path / "lake"
    shutil.copytree(source / PARTITION, lake / PARTITION)
    store = LocalStore(lake)
    config = parse_config(CONFIG, source="zstd.yaml")
    run_retention(store, config, RunOptions(now_ms=NOW), clock=FakeClock(NOW))
    export_lake(store, tmp_path / "export")
    return tmp_path / "export" / PARTITION


def test_rebuilt_zstd_batches_are_kafkas_bytes(tmp_path: Path) -> None:
    source = kafka_log(tmp_path)
    theirs, report = kafka_round(source, tmp_path)
    ours = our_round(source, tmp_path)

    assert report["eligible"], report
    kafka_logs = sorted(path.name for path in theirs.glob("*.log"))
    assert sorted(path.name for path in ours.glob("*.log")) == kafka_logs
    rebuilt = [
        header
        for name in kafka_logs
        for header in scan_headers((theirs / name).read_bytes())
        if header.compression == CompressionType.ZSTD and header.records_count <= header.last_offset_delta
    ]
    assert rebuilt, "Kafka's round rebuilt no zstd batch: the input no longer exercises the rebuild"
    for name in kafka_logs:
        mine, kafka = (ours / name).read_bytes(), (theirs / name).read_bytes()
        assert mine == kafka, f"{name}: {first_difference(mine, kafka)}"
