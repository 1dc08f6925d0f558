"""``describe --config F [--offsets S | --offsets-source SRC] [--now T]``: consumed retention per partition,
as a run at ``T`` would see it — KIP-68's M, the group holding it back (lag, expiry) and what the next run
would delete — with the offsets snapshot that run would use (``pipeline.stages.next_run_offsets``: the runs'
own rule), named with its id, origin and age in the text and as ``offsets_snapshot`` in ``--json``.

The configuration and the time are the ones the compaction view used (``cli/compaction_view.py``), so both
views describe the same instant; ``--html`` gets the same snapshot."""

from __future__ import annotations

import argparse
from typing import Any

from kafka_segments.config import Config
from kafka_segments.offsets.resolved import ResolvedOffsets, offsets_line
from kafka_segments.state import Manifest
from kafka_segments.storage.base import ObjectStore
from kafka_segments.timefmt import text_time
from kafka_segments.views.describe_compaction import CompactionContext


def describe_offsets(
    store: ObjectStore, args: argparse.Namespace, context: CompactionContext | None
) -> tuple[int, ResolvedOffsets | None]:
    """``describe``'s time (``--config``'s, else ``--now``, else the wall clock) and the offsets a run then
    would use (``--offsets``, ``--offsets-source``: ``pipeline.stages.next_run_offsets``)."""
    from kafka_segments.clock import wall_clock_ms
    from kafka_segments.pipeline.stages import next_run_offsets

    now_ms = context.now_ms if context is not None else args.now
    if now_ms is None:
        now_ms = wall_clock_ms()
    offsets = next_run_offsets(
        store, now_ms=now_ms, file=args.offsets, source=getattr(args, "offsets_source", None)
    )
    return now_ms, offsets


def consumed_view(
    manifest: Manifest,
    args: argparse.Namespace,
    document: dict[str, Any],
    *,
    config: Config,
    now_ms: int,
    offsets: ResolvedOffsets | None,
) -> str:
    """Add ``consumed``/``holder``/``next_run`` to each partition of ``document`` and ``offsets_snapshot``
    (the snapshot used, as a run report names it) to ``document``; return the text section.

    ``args``: ``--topic``."""
    from kafka_segments.pipeline.report import offsets_to_dict, partition_lines, partition_to_dict
    from kafka_segments.retention.plan import plan_retention

    snapshot = None if offsets is None else offsets.snapshot
    document["offsets_snapshot"] = offsets_to_dict(offsets, now_ms=now_ms)
    wanted = None if args.topics is None else set(args.topics)
    states = [s for s in manifest.partitions if wanted is None or s.topic_partition.topic in wanted]
    topics = sorted({state.topic_partition.topic for state in states})
    plan = plan_retention(
        states, [config.for_topic(topic) for topic in topics], now_ms=now_ms, snapshot=snapshot
    )
    by_key = {(p["topic"], p["partition"]): p for p in document.get("partitions", [])}
    lines = [f"\nretention at now={now_ms} ({text_time(now_ms)}; {offsets_line(offsets, now_ms=now_ms)})"]
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
