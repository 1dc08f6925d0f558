"""A small lake with history for the lake view's tests (``describe --html``, the Airflow plugin): two
committed versions, a run report naming what each pass deleted and an uncleanable partition, a pinned
offsets snapshot with two groups and a configuration; and a reader of the page's numbers."""

from __future__ import annotations

import dataclasses
import json
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from kafka_segments.lake import Manifest
from kafka_segments.lake.layout import run_prefix
from kafka_segments.offsets.snapshot_store import pin_snapshot, store_snapshot
from kafka_segments.state import CommittedOffset, GroupOffsets, OffsetSnapshot
from kafka_segments.storage import LocalStore
from kit import FakeClock
from lake.read_helpers import commit_states, rich_lake

CONFIG = """\
broker:
  offsets.retention.minutes: 60
topics:
  orders:
    cleanup.policy: compact
    min.cleanable.dirty.ratio: 0.1
    max.compaction.lag.ms: 3600000
  payments:
    cleanup.policy: delete
    retention.commitoffset.enable: true
    retention.commitoffset.ms: 0
"""
BILLING_OFFSET = 8
"""billing's committed offset on payments-0: above the log start offset (6), inside the second segment."""


@dataclasses.dataclass(frozen=True)
class ViewLake:
    root: Path
    config: Path
    now_ms: int
    head: Manifest


def build_view_lake(root: Path) -> ViewLake:
    """Version 1: the rich lake (adopt); version 2: payments-0's first segment deleted (log start 6), its
    run's report saying so (log-start-offset: 1 segment) and orders-1 uncleanable; a snapshot pinned at
    ``now`` with billing (Stable, on payments-0) and audit (Empty, so its offsets expire)."""
    store = LocalStore(root)
    clock = FakeClock()
    first = rich_lake(store, clock)
    payments = first.partitions[2]
    moved = dataclasses.replace(payments, log_start_offset=6, segments=payments.segments[1:])
    head = commit_states(store, [*first.partitions[:2], moved, first.partitions[3]], clock=clock)
    gone = payments.segments[0]
    report = {
        "run_id": head.run_id,
        "outcome": "committed",
        "adoption": {"quarantined": []},
        "compaction": {
            "totals": {"cleaned": 0},
            "partitions": [
                {"topic": "orders", "partition": 1, "status": "quarantined", "error": "bad batch"}
            ],
        },
        "plan": {"totals": {"by_reason": {"log-start-offset": {"segments": 1, "bytes": gone.size}}}},
        "metrics": {"log_cleaner": {"max-dirty-percent": 100, "uncleanable-partitions-count": 1}},
    }
    store.put(run_prefix(head.run_id) + "report.json", json.dumps(report).encode())
    now_ms = clock() + 1
    groups = (
        GroupOffsets("billing", "Stable", "consumer", None, ("payments",),
                     (CommittedOffset("payments", 0, BILLING_OFFSET, now_ms),)),
        GroupOffsets("audit", "Empty", "consumer", now_ms - 1000, (),
                     (CommittedOffset("payments", 0, 6, now_ms - 5000),)),
    )  # fmt: skip
    stored = store_snapshot(store, OffsetSnapshot(taken_at_ms=now_ms, source="file", groups=groups))
    pin_snapshot(store, now_ms=now_ms, snapshot_id=stored.snapshot_id, source="file")
    config = root.parent / "config.yaml"
    config.write_text(CONFIG)
    return ViewLake(root=root, config=config, now_ms=now_ms, head=head)


class PageNumbers(HTMLParser):
    """The page's numbers: per partition row ``(topic, partition)`` → ``{data-key: data-value}``, the
    history points per topic (``version`` → ``(size_bytes, log start offsets)``), the commits' rows."""

    def __init__(self) -> None:
        super().__init__()
        self.partitions: dict[tuple[str, int], dict[str, str]] = {}
        self.points: dict[str, dict[int, tuple[int, int]]] = {}
        self.groups: list[str] = []
        self._row: dict[str, str] | None = None
        self._figure: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "tr" and "data-topic" in a:
            self._row = self.partitions.setdefault((a["data-topic"], int(a["data-partition"])), {})
        elif tag == "tr" and "data-group" in a:
            self.groups.append(a["data-group"])
        elif tag == "td" and self._row is not None and "data-key" in a:
            self._row[a["data-key"]] = a["data-value"]
        elif tag == "figure":
            self._figure = a.get("data-topic")
        elif tag == "g" and self._figure is not None and "data-version" in a:
            point = (int(a["data-size-bytes"]), int(a["data-log-start-offsets"]))
            self.points.setdefault(self._figure, {})[int(a["data-version"])] = point

    def handle_endtag(self, tag: str) -> None:
        if tag == "tr":
            self._row = None
        elif tag == "figure":
            self._figure = None


def page_numbers(html: str) -> PageNumbers:
    parser = PageNumbers()
    parser.feed(html)
    return parser


def expected_numbers(document: dict[str, Any]) -> dict[tuple[str, int], dict[str, str]]:
    """``describe --json``'s partitions as the page shows them (``data-value``: Python's repr)."""
    keys = (
        "log_start_offset",
        "log_end_offset",
        "segment_count",
        "size_bytes",
        "record_count",
        "dirty_ratio",
    )
    return {
        (p["topic"], p["partition"]): {k: "" if p[k] is None else repr(p[k]) for k in keys}
        for p in document["partitions"]
    }
