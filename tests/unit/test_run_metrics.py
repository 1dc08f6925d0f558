"""``pipeline.metrics``: a run report's metrics by Kafka's definitions (docs/metrics.md), on report parts
written by hand."""

from __future__ import annotations

from typing import Any

import pytest
from kafka_segments.pipeline.metrics import run_metrics
from orchestration.metrics import metric_gauges

pytestmark = pytest.mark.unit


def _compacted(
    partition: int,
    *,
    status: str = "cleaned",
    eligibility: str = "min.cleanable.dirty.ratio",
    ratio: float = 0.5,
    delay_ms: int = 0,
    cleanable_bytes: int = 0,
    stats: dict[str, Any] | None = None,
) -> dict[str, Any]:
    return {
        "topic": "k",
        "partition": partition,
        "status": status,
        "eligibility": eligibility,
        "dirty_ratio": {"before": ratio, "after": 0.0},
        "max_compaction_delay_ms": delay_ms,
        "cleanable_bytes": cleanable_bytes,
        "stats": stats,
    }


def _stats(read: int, written: int, *, utilization: float, seconds: float) -> dict[str, Any]:
    return {
        "bytes_read": read,
        "bytes_written": written,
        "buffer_utilization": utilization,
        "times": {"total_s": seconds},
    }


def _planned(
    partition: int, *, deleted: dict[str, dict[str, int]], holder: dict[str, int] | None
) -> dict[str, Any]:
    return {
        "topic": "t",
        "partition": partition,
        "log_start_offset": {"before": 0, "after": 10},
        "log_end_offset": 15,
        "kept_segments": 1,
        "kept_bytes": 100,
        "deleted": deleted,
        "deleted_segments": [{} for d in deleted.values() for _ in range(d["segments"])],
        "holder": holder,
    }


COMPACTION = {
    "partitions": [
        _compacted(0, ratio=0.6, delay_ms=90_999, stats=_stats(1000, 333, utilization=0.0125, seconds=2.9)),
        _compacted(1, ratio=0.7, stats=_stats(3000, 2000, utilization=0.5, seconds=1.0)),
        _compacted(2, status="skipped", eligibility="below-dirty-ratio", ratio=0.3, delay_ms=1_500),
        _compacted(3, status="quarantined", ratio=0.2, cleanable_bytes=700),
        _compacted(4, status="skipped", eligibility="uncleanable", ratio=0.95, cleanable_bytes=50),
        _compacted(5, status="skipped", eligibility="empty-log", ratio=0.0),
    ]
}
PLAN = {
    "totals": {
        "segments_deleted": 3,
        "bytes_deleted": 300,
        "by_reason": {
            "retention.ms": {"segments": 2, "bytes": 200},
            "consumed": {"segments": 1, "bytes": 100},
        },
    },
    "partitions": [
        _planned(0, deleted={"retention.ms": {"segments": 2, "bytes": 200, "records": 10}}, holder=None),
        _planned(
            1,
            deleted={"consumed": {"segments": 1, "bytes": 100, "records": 5}},
            holder={"lag_records": 8, "lag_bytes": 150},
        ),
    ],
}


def test_cleaner_gauges_follow_kafkas_formulas() -> None:
    metrics = run_metrics(COMPACTION, PLAN, now_ms=10_000, previous_now_ms=4_000)

    assert metrics["log_cleaner"] == {
        "max-buffer-utilization-percent": 50,
        "cleaner-recopy-percent": 58,  # (int) (100 * 2333 / 4000)
        "max-clean-time-secs": 2,
        "max-compaction-delay-secs": 90,
        "max-dirty-percent": 70,  # the uncleanable 0.95 and the empty log are not looked at
        "time-since-last-run-ms": 6_000,
        "uncleanable-partitions-count": 2,
        "uncleanable-bytes": 750,
    }


def test_a_run_without_rounds_or_history_reports_zeros_and_no_last_run() -> None:
    empty_plan = {"totals": {"segments_deleted": 0, "bytes_deleted": 0, "by_reason": {}}, "partitions": []}

    metrics = run_metrics({"partitions": []}, empty_plan, now_ms=1, previous_now_ms=None)

    assert set(metrics["log_cleaner"].values()) == {0, None}
    assert metrics["log_cleaner"]["time-since-last-run-ms"] is None
    assert metrics["retention"] == {"segments-deleted": 0, "bytes-deleted": 0, "passes": {}}


def test_retention_and_log_gauges_per_partition() -> None:
    metrics = run_metrics(COMPACTION, PLAN, now_ms=10_000, previous_now_ms=None)

    assert metrics["retention"]["passes"]["consumed"] == {"segments-deleted": 1, "bytes-deleted": 100}
    first, second = metrics["partitions"]
    assert (first["LogStartOffset"], first["LogEndOffset"], first["NumLogSegments"], first["Size"]) == (
        10,
        15,
        1,
        100,
    )
    assert (first["segments-deleted"], first["bytes-deleted"]) == (2, 200)
    assert (first["consumed-retention-held-records"], second["consumed-retention-held-records"]) == (0, 8)
    assert second["consumed-retention-held-bytes"] == 150


def test_gauge_names_carry_what_plain_statsd_cannot_tag() -> None:
    metrics = run_metrics(COMPACTION, PLAN, now_ms=10_000, previous_now_ms=None)

    gauges = {name: (value, tags) for name, value, tags in metric_gauges(metrics, lake="s3://lake")}

    assert "kafka_segments.time-since-last-run-ms" not in gauges
    assert gauges["kafka_segments.max-dirty-percent"] == (70, {"lake": "s3://lake"})
    assert gauges["kafka_segments.retention.retention.ms.bytes-deleted"] == (
        200,
        {"lake": "s3://lake", "pass": "retention.ms"},
    )
    assert gauges["kafka_segments.log.t.1.consumed-retention-held-records"] == (
        8,
        {"lake": "s3://lake", "topic": "t", "partition": "1"},
    )
