"""A run's metrics under Kafka's names (docs/metrics.md): the cleaner's (``LogCleaner`` and
``LogCleanerManager`` gauges), each partition's log gauges (``UnifiedLog``: ``LogStartOffset``,
``LogEndOffset``, ``NumLogSegments``, ``Size``) and retention's own, computed from the report document's
``compaction`` and ``plan`` parts so a stored ``report.json`` gives the same numbers.

A run is one pass of every cleaner thread over the lake: where Kafka takes the maximum (or, for the recopy
percentage, the sums) over its threads' last rounds, a run takes them over the partitions it cleaned. Values
are Kafka's Java ``int`` casts (truncated toward zero)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kafka_segments.compaction.eligibility import Eligibility

LOG_CLEANER = (
    "max-buffer-utilization-percent",
    "cleaner-recopy-percent",
    "max-clean-time-secs",
    "max-compaction-delay-secs",
)
"""``kafka.log:type=LogCleaner`` gauges."""
LOG_CLEANER_MANAGER = (
    "max-dirty-percent",
    "time-since-last-run-ms",
    "uncleanable-partitions-count",
    "uncleanable-bytes",
)
"""``kafka.log:type=LogCleanerManager`` gauges (Kafka's last two are per log directory: here, the lake)."""
RUN_RETENTION = ("segments-deleted", "bytes-deleted")
PARTITION_GAUGES = (
    "LogStartOffset",
    "LogEndOffset",
    "NumLogSegments",
    "Size",
    "segments-deleted",
    "bytes-deleted",
    "consumed-retention-held-records",
    "consumed-retention-held-bytes",
)
"""Per partition: ``kafka.log:type=Log`` gauges after the run, then retention's own."""


def run_metrics(
    compaction: Mapping[str, Any], plan: Mapping[str, Any], *, now_ms: int, previous_now_ms: int | None
) -> dict[str, Any]:
    """The ``metrics`` part of a run report: ``log_cleaner`` (both Kafka groups), ``retention`` (totals and
    per pass) and ``partitions`` (one entry per planned partition).

    Args:
        previous_now_ms: the ``now`` of the lake's last committed version (``None``: no version yet).
            ``time-since-last-run-ms`` is ``None`` (not sent) without one, and when ``now_ms`` precedes it
            (a backfill of an earlier time): never a negative gauge.
    """
    partitions: Sequence[Mapping[str, Any]] = compaction.get("partitions", ())
    cleaned = [p["stats"] for p in partitions if p.get("stats") is not None]
    uncleanable = [p for p in partitions if p["status"] == "quarantined" or p["eligibility"] == "uncleanable"]
    totals = plan["totals"]
    return {
        "log_cleaner": {
            **_cleaner_gauges(partitions, cleaned),
            "time-since-last-run-ms": _since(now_ms, previous_now_ms),
            "uncleanable-partitions-count": len(uncleanable),
            "uncleanable-bytes": sum(p.get("cleanable_bytes", 0) for p in uncleanable),
        },
        "retention": {
            "segments-deleted": totals["segments_deleted"],
            "bytes-deleted": totals["bytes_deleted"],
            "passes": {
                reason: {"segments-deleted": d["segments"], "bytes-deleted": d["bytes"]}
                for reason, d in totals["by_reason"].items()
            },
        },
        "partitions": [_partition_gauges(partition) for partition in plan["partitions"]],
    }


def _since(now_ms: int, previous_now_ms: int | None) -> int | None:
    """``now_ms - previous_now_ms``, or ``None`` when there is no previous run or it is later."""
    if previous_now_ms is None or now_ms < previous_now_ms:
        return None
    return now_ms - previous_now_ms


def _cleaner_gauges(
    partitions: Sequence[Mapping[str, Any]], cleaned: Sequence[Mapping[str, Any]]
) -> dict[str, int]:
    """``LogCleaner``'s four gauges and ``max-dirty-percent``. ``grabFilthiestCompactedLog`` looks at the
    compacted logs not marked uncleanable: the compaction delay is the most overdue of them, the dirty
    percentage (``dirtiestLogCleanableRatio``) the highest ratio of the non-empty ones, eligible or not."""
    looked_at = [p for p in partitions if p["eligibility"] not in _NOT_LOOKED_AT]
    ratios = [p["dirty_ratio"]["before"] for p in looked_at]
    written = sum(stats["bytes_written"] for stats in cleaned)
    read = sum(stats["bytes_read"] for stats in cleaned)
    utilization = max((stats.get("buffer_utilization", 0.0) for stats in cleaned), default=0.0)
    delay_ms = max((p["max_compaction_delay_ms"] for p in looked_at), default=0)
    return {
        "max-buffer-utilization-percent": int(utilization * 100),
        "cleaner-recopy-percent": int(100 * (written / max(read, 1))),
        "max-clean-time-secs": int(max((stats["times"]["total_s"] for stats in cleaned), default=0.0)),
        "max-compaction-delay-secs": int(delay_ms / 1000),
        "max-dirty-percent": int(100 * max(ratios, default=0.0)),
    }


_NOT_LOOKED_AT = frozenset(
    e.value
    for e in (
        Eligibility.NOT_COMPACTED,
        Eligibility.CLEANER_DISABLED,
        Eligibility.UNCLEANABLE,
        Eligibility.EMPTY_LOG,
    )
)


def _partition_gauges(partition: Mapping[str, Any]) -> dict[str, Any]:
    holder = partition["holder"]
    return {
        "topic": partition["topic"],
        "partition": partition["partition"],
        "LogStartOffset": partition["log_start_offset"]["after"],
        "LogEndOffset": partition["log_end_offset"],
        "NumLogSegments": partition["kept_segments"],
        "Size": partition["kept_bytes"],
        "segments-deleted": len(partition["deleted_segments"]),
        "bytes-deleted": sum(deleted["bytes"] for deleted in partition["deleted"].values()),
        "passes": {
            reason: {"segments-deleted": d["segments"], "bytes-deleted": d["bytes"]}
            for reason, d in partition["deleted"].items()
        },
        "consumed-retention-held-records": 0 if holder is None else holder["lag_records"],
        "consumed-retention-held-bytes": 0 if holder is None else holder["lag_bytes"],
    }
