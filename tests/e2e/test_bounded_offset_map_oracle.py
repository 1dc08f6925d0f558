"""A bounded offset map (``log.cleaner.dedupe.buffer.size``) against Kafka's own cleaner.

The oracle is a launcher running Kafka's ``LogCleanerManager`` and ``Cleaner`` on a log directory (``clean``,
``dump``, ``genlog``), driven through the one oracle harness (``fidelity.sides``); the test runs only when the
environment variable ``KAFKA_ORACLE`` names it. One log,
two rounds on each side with the smallest dedupe buffer a broker accepts (1 MiB + 1 byte: 43690 slots,
39321 keys at the 0.9 load factor) over 40000 distinct keys: both rounds end where the map fills, in the
middle of a batch. After each round the exported lake and Kafka's log directory must hold the same segment
files (bytes, batches, records) and the same cleaner checkpoint, and the run's report Kafka's end offset and
record counts.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from fidelity.sides import (
    PARTITION,
    config_yaml,
    export_listing,
    needs_oracle,
    oracle_clean,
    oracle_genlog,
    product_adopt,
    product_export,
    product_run,
    require_launcher,
    set_mtimes,
    without_mtimes,
)

pytestmark = [pytest.mark.e2e, needs_oracle]

T0_MS = 1_790_000_000_000
NOW_MS = T0_MS + 3_600_000
MTIME_S = T0_MS // 1000
SEGMENT_BYTES = 262_144
DEDUPE_BUFFER = 1024 * 1024 + 1
MAP_KEYS = int(DEDUPE_BUFFER // 24 * 0.9)
PROPS = {"cleanup.policy": "compact", "segment.bytes": str(SEGMENT_BYTES)}
"""Kafka's topic properties; the product's configuration has ``internal.segment.bytes`` (``config_yaml``)."""


def kafka_round(log_dir: Path) -> dict[str, Any]:
    """Kafka's round; its document lists the segments with their records (``oracle dump``'s listing)."""
    return oracle_clean(require_launcher(), log_dir, NOW_MS, props=PROPS, dedupe_buffer_size=DEDUPE_BUFFER)


def product_round(lake: Path, config: Path, export: Path) -> dict[str, Any]:
    report = product_run(lake, config, NOW_MS, export.with_name(f"{export.name}.json"))
    product_export(lake, export)
    (partition,) = report["compaction"]["partitions"]
    assert partition["status"] == "cleaned", partition
    result: dict[str, Any] = partition
    return result


def checkpoint(log_dir: Path) -> str:
    return (log_dir / "cleaner-offset-checkpoint").read_text()


def test_two_rounds_end_where_kafkas_map_fills(tmp_path: Path) -> None:
    source = tmp_path / "in"
    oracle_genlog(
        require_launcher(), source / PARTITION, records=100000, value_bytes=10, codec="none", keys=40000,
        segment_bytes=SEGMENT_BYTES, t0=T0_MS,
    )  # fmt: skip
    set_mtimes(source, MTIME_S)
    kafka_dir, lake = tmp_path / "kafka", tmp_path / "lake"
    shutil.copytree(source, kafka_dir)
    shutil.copytree(source, lake)
    set_mtimes(kafka_dir, MTIME_S)
    set_mtimes(lake, MTIME_S)
    config = tmp_path / "kafka-segments.yaml"
    config.write_text(config_yaml(PROPS, dedupe_buffer_size=DEDUPE_BUFFER))
    product_adopt(lake, NOW_MS)

    ends = []
    for number in (1, 2):
        kafka = kafka_round(kafka_dir)
        export = tmp_path / f"export-{number}"
        ours = product_round(lake, config, export)

        assert kafka["end_offset"] < kafka["cleanable"]["first_uncleanable_offset"]  # the map filled
        assert ours["end_offset"] == ours["checkpoint"]["after"] == kafka["end_offset"]
        assert ours["first_dirty_offset"] == kafka["round"]["first_dirty_offset"]
        assert ours["stats"]["messages_read"] == kafka["stats"]["messages_read"]
        assert ours["stats"]["messages_written"] == kafka["stats"]["messages_written"]
        assert ours["stats"]["map_keys"] == MAP_KEYS
        assert checkpoint(export) == checkpoint(kafka_dir)
        assert export_listing(require_launcher(), export, kafka["segments"]) == without_mtimes(
            kafka["segments"]
        )
        ends.append(kafka["end_offset"])
    assert ends[0] < ends[1]
    assert kafka["stats"]["messages_written"] < kafka["stats"]["messages_read"]  # round 2 removed records
