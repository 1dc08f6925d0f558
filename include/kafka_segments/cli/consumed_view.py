"""``describe --config F [--offsets S] [--now T]``: consumed retention per partition, as a run at ``T`` would
see it — KIP-68's M, the group holding it back (lag, expiry) and what the next run would delete.

The configuration and the time are the ones the compaction view used (``cli/compaction_view.py``), so both
views describe the same instant."""

from __future__ import annotations

import argparse
from typing import Any

from kafka_segments.config import Config
from kafka_segments.state import Manifest, OffsetSnapshot
from kafka_segments.storage.base import ObjectStore
from kafka_segments.timefmt import text_time


def consumed_view(
    store: ObjectStore,
    manifest: Manifest,
    args: argparse.Namespace,
    document: dict[str, Any],
    *,
    config: Config,
    now_ms: int,
) -> str:
    """Add ``consumed``/``holder``/``next_run`` to each partition of ``document``; return the text section.

    ``args``: ``--offsets`` (a snapshot file; else the snapshot pinned in the lake) and ``--topic``."""
    from kafka_segments.offsets.snapshot_codec import load_snapshot_file
    from kafka_segments.offsets.snapshot_store import read_pinned_snapshot
    from kafka_segments.pipeline.report import partition_lines, partition_to_dict
    from kafka_segments.retention.plan import plan_retention

    snapshot: OffsetSnapshot | None
    if args.offsets is not None:
        snapshot = load_snapshot_file(args.offsets)
    else:
        pinned = read_pinned_snapshot(store, now_ms)
        snapshot = None if pinned is None else pinned.snapshot
    wanted = None if args.topics is None else set(args.topics)
    states = [s for s in manifest.partitions if wanted is None or s.topic_partition.topic in wanted]
    topics = sorted({state.topic_partition.topic for state in states})
    plan = plan_retention(
        states, [config.for_topic(topic) for topic in topics], now_ms=now_ms, snapshot=snapshot
    )
    by_key = {(p["topic"], p["partition"]): p for p in document.get("partitions", [])}
    lines = [
        f"\nretention at now={now_ms} ({text_time(now_ms)}; "
        f"{'no offsets snapshot' if snapshot is None else snapshot.source})"
    ]
    for partition_plan in plan.partitions:
        tp = partition_plan.topic_partition
        planned = partition_to_dict(partition_plan)
        entry = by_key.get((tp.topic, tp.partition))
        if entry is not None:
            entry["consumed"] = planned["consumed"]
            entry["holder"] = planned["holder"]
            entry["next_run"] = {
                "deleted": planned["deleted"],
                "log_start_offset": planned["log_start_offset"],
            }
        lines.extend(partition_lines(partition_plan, dry_run=True))
    return "\n".join(lines) + "\n"
