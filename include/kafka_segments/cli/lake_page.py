"""``describe --html OUT``: the lake view (``views.lake_view``) written as one self-contained HTML file.

With ``--config`` the page has the compaction and retention outlook at ``--now`` (``describe --config``'s
data) and the offsets' expiry by the configuration's ``offsets.retention.minutes``; ``--offsets`` replaces
the snapshot pinned in the lake."""

from __future__ import annotations

import argparse
from pathlib import Path

from kafka_segments.storage.base import ObjectStore
from kafka_segments.views.describe_compaction import CompactionContext


def write_lake_page(
    store: ObjectStore, args: argparse.Namespace, context: CompactionContext | None, *, out: str
) -> Path:
    """Build the view of ``store`` (``args``: ``--version``, ``--offsets``, ``--now``) and write it."""
    from kafka_segments.clock import wall_clock_ms
    from kafka_segments.offsets.snapshot_codec import load_snapshot_file
    from kafka_segments.views.lake_view import build_lake_view
    from kafka_segments.views.lake_view_html import render_html

    now_ms = context.now_ms if context is not None else args.now
    if now_ms is None:
        now_ms = wall_clock_ms()
    offsets = getattr(args, "offsets", None)
    view = build_lake_view(
        store,
        now_ms=now_ms,
        version=args.version,
        compaction=context,
        snapshot=None if offsets is None else load_snapshot_file(offsets),
    )
    path = Path(out)
    path.write_text(render_html([view]), encoding="utf-8")
    return path
