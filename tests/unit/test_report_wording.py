"""A run report's text says what happened: a dry run's lines say what the run *would* do (issue 37, point 2),
and a run whose ``now`` precedes its base version's says so instead of a negative
``time-since-last-run-ms`` (point 5)."""

from __future__ import annotations

from typing import Any

import pytest
from kafka_segments.pipeline.metrics import run_metrics
from kafka_segments.pipeline.report import render_report

pytestmark = pytest.mark.unit

NOW = 1_764_972_000_000  # 2025-12-05T22:00:00Z
TEN_MINUTES = 600_000


def _partition() -> dict[str, Any]:
    return {
        "topic": "clickstream",
        "partition": 0,
        "log_start_offset": {"before": 0, "after": 40},
        "log_end_offset": 90,
        "deleted": {"consumed": {"segments": 1, "bytes": 2233, "records": 40}},
        "consumed": {"status": "disabled"},
        "holder": None,
        "unread_loss": [{"group_id": "audit", "committed_offset": 10, "records": 30}],
        "skipped": None,
    }


def _compaction() -> dict[str, Any]:
    stats = {
        "segments_kept": 0, "segments_read": 2, "bytes_read": 900, "messages_read": 9, "segments_written": 1,
        "bytes_written": 500, "messages_written": 5, "tombstones_kept": 0, "tombstones_removed": 1,
        "aborted_records_removed": 0, "unkeyed_records_removed": 0,
        "times": {"total_s": 0.1, "read_s": 0.0, "clean_s": 0.0, "write_s": 0.0},
    }  # fmt: skip
    partition = {
        "topic": "customers", "partition": 0, "status": "cleaned", "eligibility": "min.cleanable.dirty.ratio",
        "first_dirty_offset": 0, "end_offset": 9, "dirty_ratio": {"before": 0.9, "after": 0.0},
        "checkpoint": {"before": None, "after": 9}, "max_compaction_delay_secs": 0.0, "stats": stats,
    }  # fmt: skip
    totals = {"partitions": 1, "cleaned": 1, "deferred": 0, "quarantined": 0, "bytes_read": 900,
              "bytes_written": 500}  # fmt: skip
    return {"partitions": [partition], "totals": totals}


def _report(*, dry_run: bool, base_now_ms: int | None = NOW - 3_600_000) -> dict[str, Any]:
    totals = {"segments_deleted": 1, "bytes_deleted": 2233, "partitions_changed": 1, "partitions": 1,
              "partitions_skipped": 0}  # fmt: skip
    return {
        "run_id": "r1",
        "now_ms": NOW,
        "base_version": 3,
        "base_now_ms": base_now_ms,
        "dry_run": dry_run,
        "committed_version": None if dry_run else 4,
        "offsets_snapshot": None,
        "adoption": {"adopted_segments": 2, "regrown_segments": 0, "quarantined": []},
        "compaction": _compaction(),
        "plan": {"partitions": [_partition()], "totals": totals},
        "gc": {"dry_run": dry_run, "deleted": ["a"], "waiting": []},
    }


def test_a_dry_runs_report_says_would_throughout() -> None:
    text = render_report(_report(dry_run=True))
    assert text.startswith(f"dry run at now={NOW} ")
    assert "nothing was changed" in text
    for line in (
        "would adopt 2 new segment(s)",
        "compaction: 1 of 1 compacted partition(s) would be cleaned",
        "customers-0: would clean (min.cleanable.dirty.ratio)",
        "would write 1 segment(s)",
        "clickstream-0: log start 0 -> 40, log end 90; would delete consumed: 1 segment(s) 2233 B",
        "WARNING: group audit (committed offset 10) would lose 30 unread record(s)",
        "total: 1 segment(s), 2233 bytes would be deleted in 1 of 1 partition(s)",
        "gc: would delete 1 retired segment(s)",
    ):
        assert line in text, f"{line!r} not in:\n{text}"
    for committed in ("; deleted ", "adopted ", ": cleaned (", " wrote ", ") loses ", "bytes deleted"):
        assert committed not in text, f"{committed!r} in a dry run's report:\n{text}"


def test_a_commits_report_says_what_it_did() -> None:
    text = render_report(_report(dry_run=False))
    for line in (
        "adopted 2 new segment(s)",
        "compaction: 1 of 1 compacted partition(s) cleaned",
        "customers-0: cleaned (",
        "; deleted consumed: 1 segment(s) 2233 B",
        "(committed offset 10) loses 30 unread record(s)",
        "2233 bytes deleted in",
        "gc: deleted 1 retired segment(s)",
    ):
        assert line in text, f"{line!r} not in:\n{text}"
    assert "would" not in text


def test_a_run_before_its_base_versions_now_is_warned_about() -> None:
    text = render_report(_report(dry_run=False, base_now_ms=NOW + TEN_MINUTES))
    assert (
        f"WARNING: now={NOW} (2025-12-05T22:00:00.000Z) precedes the now of version 3 ({NOW + TEN_MINUTES} "
        "(2025-12-05T22:10:00.000Z)) by 600000 ms"
    ) in text
    assert "WARNING: now=" not in render_report(_report(dry_run=False))
    assert "WARNING: now=" not in render_report(_report(dry_run=False, base_now_ms=None))


@pytest.mark.parametrize(
    ("previous", "expected"),
    [(None, None), (NOW - TEN_MINUTES, TEN_MINUTES), (NOW, 0), (NOW + TEN_MINUTES, None)],
)
def test_time_since_last_run_is_never_negative(previous: int | None, expected: int | None) -> None:
    plan = {"totals": {"segments_deleted": 0, "bytes_deleted": 0, "by_reason": {}}, "partitions": []}
    metrics = run_metrics({"partitions": []}, plan, now_ms=NOW, previous_now_ms=previous)
    assert metrics["log_cleaner"]["time-since-last-run-ms"] == expected
