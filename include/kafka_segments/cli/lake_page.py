"""``describe --html OUT``: the lake view (``views.lake_view``) written as one self-contained HTML file.

With ``--config`` the page has the compaction and retention outlook at ``--now`` (``describe --config``'s
data) and the offsets' expiry by the configuration's ``offsets.retention.minutes``; its offsets are the ones
``describe``'s text and ``--json`` use (``cli.consumed_view.describe_offsets``)."""

from __future__ import annotations

import argparse
from pathlib import Path

from kafka_segments.offsets.resolved import ResolvedOffsets
from kafka_segments.storage.base import ObjectStore
from kafka_segments.views.describe_compaction import CompactionContext


def write_lake_page(
    store: ObjectStore,
    args: argparse.Namespace,
    context: CompactionContext | None,
    *,
    now_ms: int,
    offsets: ResolvedOffsets | None,
    out: str,
) -> Path:
    """Build the view of ``store`` at ``now_ms`` (``args``: ``--version``) and write it."""
    from kafka_segments.views.lake_view import build_lake_view
    from kafka_segments.views.lake_view_html import render_html

    view = build_lake_view(store, now_ms=now_ms, version=args.version, offsets=offsets, compaction=context)
    path = Path(out)
    path.write_text(render_html([view]), encoding="utf-8")
    return path
