"""Text reports print their times as ISO-8601 UTC next to the epoch milliseconds (the JSON keeps epoch ms)."""

from __future__ import annotations

import pytest
from kafka_segments.pipeline.report import render_report

pytestmark = pytest.mark.unit

NOW = 1_763_700_000_000
ISO = "2025-11-21T04:40:00.000Z"


def _report(**changes: object) -> dict[str, object]:
    document: dict[str, object] = {
        "run_id": "r1",
        "now_ms": NOW,
        "base_version": 3,
        "dry_run": False,
        "committed_version": 4,
        "offsets_snapshot": {
            "id": "s",
            "origin": "pinned",
            "source": "lake",
            "taken_at_ms": NOW - 60_000,
            "groups": 2,
            "errors": [],
            "note": "",
        },
        "adoption": {},
        "compaction": None,
        "plan": {
            "partitions": [],
            "totals": {
                "segments_deleted": 0,
                "bytes_deleted": 0,
                "partitions_changed": 0,
                "partitions": 0,
                "partitions_skipped": 0,
            },
        },
    }
    document.update(changes)
    return document


def test_the_headline_and_the_offsets_line_read_as_iso_utc() -> None:
    text = render_report(_report())
    assert text.startswith(f"run r1 at now={NOW} ({ISO}): committed version 4 (base 3)")
    assert f"taken at {NOW - 60_000} (2025-11-21T04:39:00.000Z)" in text


def test_a_dry_run_headline_too() -> None:
    assert render_report(_report(dry_run=True)).startswith(f"dry run at now={NOW} ({ISO}) on version 3")
