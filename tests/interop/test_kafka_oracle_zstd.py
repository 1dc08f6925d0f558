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

import shutil
from pathlib import Path
from typing import Any

import pytest
from fidelity.sides import (
    PARTITION,
    config_yaml,
    needs_oracle,
    oracle_clean,
    oracle_genlog,
    product_adopt,
    product_export,
    product_run,
    require_launcher,
    set_mtimes,
)
from kafka_segments.records import CompressionType
from kafka_segments.records.batch import BatchHeader
from kafka_segments.records.log import scan_headers

pytestmark = [pytest.mark.e2e, needs_oracle]

T0 = 1_790_000_000_000
NOW = T0 + 86_400_000  # one day later: every segment but the active one is cleanable
PROPS = {"cleanup.policy": "compact"}


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
    oracle_genlog(
        require_launcher(), source / PARTITION, records=400, value_bytes=100, codec="zstd", keys=100,
        segment_bytes=1048576, t0=T0,
    )  # fmt: skip
    set_mtimes(source, T0 // 1000)
    return source


def kafka_round(source: Path, tmp_path: Path) -> tuple[Path, dict[str, Any]]:
    log_dir = tmp_path / "kafka"
    shutil.copytree(source, log_dir)
    report = oracle_clean(require_launcher(), log_dir, NOW, props=PROPS, records=False)
    return log_dir / PARTITION, report


def our_round(source: Path, tmp_path: Path) -> Path:
    lake = tmp_path / "lake"
    shutil.copytree(source / PARTITION, lake / PARTITION)
    config = tmp_path / "zstd.yaml"
    config.write_text(config_yaml(PROPS))
    product_adopt(lake, NOW)
    product_run(lake, config, NOW, tmp_path / "report.json")
    product_export(lake, tmp_path / "export")
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
