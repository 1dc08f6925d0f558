"""The compaction part of a run's readable report (from the report document, like the rest of it)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def compaction_report_lines(compaction: Mapping[str, Any] | None, *, dry_run: bool) -> list[str]:
    """The compaction part of a report document (``CompactionResult.to_dict``): a summary line, then one
    line per partition that was cleaned, deferred or quarantined (``dry_run``: would be cleaned: the
    cleaned segments were staged, never committed)."""
    if not compaction or not compaction["partitions"]:
        return []
    totals = compaction["totals"]
    idle = totals["partitions"] - totals["cleaned"] - totals["deferred"] - totals["quarantined"]
    cleaned, wrote = ("would be cleaned", "would write") if dry_run else ("cleaned", "wrote")
    lines = [
        f"compaction: {totals['cleaned']} of {totals['partitions']} compacted partition(s) {cleaned}, "
        f"{idle} not eligible, {totals['deferred']} deferred (budget), {totals['quarantined']} quarantined; "
        f"read {totals['bytes_read']} B, {wrote} {totals['bytes_written']} B"
    ]
    for partition in compaction["partitions"]:
        line = _compaction_line(partition, dry_run=dry_run)
        if line:
            lines.append("  " + line)
    return lines


def _compaction_line(partition: Mapping[str, Any], *, dry_run: bool) -> str | None:
    tp = f"{partition['topic']}-{partition['partition']}"
    status = partition["status"]
    if status == "deferred":
        return f"{tp}: deferred to the next run ({partition['eligibility']}; the run's budget is used up)"
    if status == "quarantined":
        return f"{tp}: QUARANTINED, not cleaned and not deleted from in this run: {partition['error']}"
    stats = partition["stats"]
    if status != "cleaned" or stats is None:
        return None
    ratio, checkpoint, times = partition["dirty_ratio"], partition["checkpoint"], stats["times"]
    kept = f" ({stats['segments_kept']} kept as they were)" if stats["segments_kept"] else ""
    cleaned, wrote = ("would clean", "would write") if dry_run else ("cleaned", "wrote")
    parts = [
        f"{tp}: {cleaned} ({partition['eligibility']}) offsets "
        f"{partition['first_dirty_offset']}..{partition['end_offset']},",
        f"dirty ratio {ratio['before']:.2f} -> {ratio['after']:.2f},",
        f"checkpoint {_or_dash(checkpoint['before'])} -> {checkpoint['after']};",
        f"read {stats['segments_read']} segment(s) {stats['bytes_read']} B "
        f"{stats['messages_read']} record(s),",
        f"{wrote} {stats['segments_written']} segment(s){kept} {stats['bytes_written']} B "
        f"{stats['messages_written']} record(s);",
        f"tombstones kept {stats['tombstones_kept']} removed {stats['tombstones_removed']},",
        f"aborted records removed {stats['aborted_records_removed']},",
        f"unkeyed removed {stats['unkeyed_records_removed']};",
        f"max compaction delay {partition['max_compaction_delay_secs']:.1f} s;",
        f"{times['total_s']:.2f} s (read {times['read_s']:.2f}, clean {times['clean_s']:.2f}, "
        f"write {times['write_s']:.2f})",
    ]
    return " ".join(parts)


def _or_dash(value: object) -> str:
    return "-" if value is None else str(value)
