"""Against Kafka's own cleaner (``KAFKA_ORACLE``): the run report's ``metrics`` equal Kafka's gauges
(issue 24, point 2; docs/metrics.md).

Kafka's values are computed from what ``oracle clean`` prints with the formulas of ``LogCleaner`` /
``LogCleanerManager.registerMetrics`` (``(int) (bufferUtilization * 100)``, ``(int) (100 * bytesWritten /
max(bytesRead, 1))``, ``(int) (maxCompactionDelayMs / 1000)``, ``(int) (100 * dirtiestLogCleanableRatio)``)
and ``UnifiedLog``'s log gauges after the round. ``max-clean-time-secs`` is a wall time on both sides: only
its type is checked."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fidelity.sides import DAY, T0, needs_oracle, side_by_side, write_log_dir
from unit.compaction_helpers import LogBuilder

pytestmark = [pytest.mark.lake, needs_oracle]


def _kafka_cleaner_gauges(kafka: dict[str, Any]) -> dict[str, int]:
    stats = kafka["stats"]
    return {
        "max-buffer-utilization-percent": int(stats["buffer_utilization"] * 100),
        "cleaner-recopy-percent": int(100 * stats["bytes_written"] / max(stats["bytes_read"], 1)),
        "max-compaction-delay-secs": int(kafka["max_compaction_delay_ms"] / 1000),
        "max-dirty-percent": int(100 * kafka["cleanable"]["cleanable_ratio"]),
        "uncleanable-partitions-count": 0,
        "uncleanable-bytes": 0,
    }


def _kafka_log_gauges(kafka: dict[str, Any]) -> dict[str, int]:
    after = kafka["after"]
    return {
        "LogStartOffset": after["log_start_offset"],
        "LogEndOffset": after["log_end_offset"],
        "NumLogSegments": after["segments"],
        "Size": after["size"],
        "segments-deleted": kafka["segments_deleted"],
    }


def test_an_overdue_round_reports_kafkas_cleaner_gauges(
    tmp_path: Path,
) -> None:
    """max.compaction.lag.ms passed a day ago and the ratio is below min.cleanable.dirty.ratio: the round is
    forced; 40 records over 5 keys in four segments, a fifth active one."""
    log = LogBuilder(timestamp=T0)
    for offset in range(40):
        if offset and offset % 10 == 0:
            log.roll()
        log.rec(offset % 5, offset)
    log.roll()
    log.rec("active", 40)
    log_dir = write_log_dir(tmp_path / "in", log.chunks)
    topic = {
        "cleanup.policy": "compact",
        "max.compaction.lag.ms": str(DAY),
        "min.cleanable.dirty.ratio": "0.99",
    }

    seen = side_by_side(log_dir, tmp_path, now=T0 + 2 * DAY, props=topic)

    assert seen.kafka["round"]["need_compaction_now"]
    cleaner = seen.run["metrics"]["log_cleaner"]
    expected = _kafka_cleaner_gauges(seen.kafka)
    assert {name: cleaner[name] for name in expected} == expected
    assert cleaner["max-compaction-delay-secs"] == 86_400
    assert isinstance(cleaner["max-clean-time-secs"], int)
    assert cleaner["time-since-last-run-ms"] == 0  # adopted at the same now
    (partition,) = seen.run["metrics"]["partitions"]
    assert {name: partition[name] for name in _kafka_log_gauges(seen.kafka)} == _kafka_log_gauges(seen.kafka)


def test_retention_after_the_round_reports_kafkas_log_gauges(
    tmp_path: Path,
) -> None:
    """compact,delete over four segments with tombstones: the round ends at the active segment, then
    retention.ms deletes every segment. Kafka rolls a new empty active segment (one segment of 0 bytes); the
    lake keeps none (docs/metrics.md)."""
    log = LogBuilder(timestamp=T0)
    for offset in range(24):
        if offset in (8, 16, 23):
            log.roll()
        if offset % 7 == 6:
            log.tomb(offset % 3)
        else:
            log.rec(offset % 3, offset)
    log_dir = write_log_dir(tmp_path / "in", log.chunks)
    topic = {"cleanup.policy": "compact,delete", "retention.ms": str(DAY)}

    seen = side_by_side(log_dir, tmp_path, now=T0 + 2 * DAY, props=topic)

    metrics = seen.run["metrics"]
    expected = _kafka_cleaner_gauges(seen.kafka)
    assert {name: metrics["log_cleaner"][name] for name in expected} == expected
    (partition,) = metrics["partitions"]
    kafka = _kafka_log_gauges(seen.kafka)
    assert (kafka["NumLogSegments"], kafka["Size"]) == (1, 0)
    assert {**partition, "NumLogSegments": 1}.items() >= kafka.items()
    assert metrics["retention"]["segments-deleted"] == seen.kafka["segments_deleted"] > 0
