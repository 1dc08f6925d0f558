"""Snapshot expiry that follows the lake's own history (docs/tables.md, "Snapshot expiry"): a table keeps,
for every lake version the lake still retains, the snapshot that shows it (``snapshot_as_of``), and its
current snapshot; the snapshots that show only versions gc has removed from the lake are expired after each
sync, in one Iceberg commit. Time travel by lake version therefore works on the table exactly as far back
as on the lake."""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from typing import Any

from kafka_segments.tables.schema import LAKE_VERSION_PROPERTY


def snapshots_to_expire(table: Any, retained: Sequence[int]) -> list[int]:
    """The ids of ``table``'s snapshots that show no version of ``retained`` (the lake's versions,
    ascending) and are not the current one."""
    recorded = sorted(
        (int(snapshot.summary[LAKE_VERSION_PROPERTY]), snapshot.snapshot_id)
        for snapshot in table.snapshots()
        if snapshot.summary is not None and LAKE_VERSION_PROPERTY in snapshot.summary
    )
    shows = [version for version, _ in recorded]
    kept = set()
    for version in retained:
        at = bisect.bisect_right(shows, version)  # the last snapshot recording a version at or below it
        if at:
            kept.add(recorded[at - 1][1])
    current = table.current_snapshot()
    if current is not None:
        kept.add(current.snapshot_id)
    return [snapshot_id for _, snapshot_id in recorded if snapshot_id not in kept]


def expire_gone_snapshots(table: Any, retained: Sequence[int]) -> int:
    """Expire the snapshots ``snapshots_to_expire`` names, in one commit; returns how many. The files only
    they needed are removed afterwards (``tables.orphans``)."""
    expired = snapshots_to_expire(table, retained)
    if expired:
        table.maintenance.expire_snapshots().by_ids(expired).commit()
    return len(expired)
