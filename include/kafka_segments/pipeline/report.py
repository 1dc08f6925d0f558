"""Run reports: a readable summary and a JSON document (same content).

Per partition: the segments and bytes deleted by each pass, the log start offset before and after, KIP-68's
M with the group holding it back (its lag and when its offsets expire), the groups that would lose records
they have not read, and why a partition was skipped.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kafka_segments.retention.consumed import ConsumedBound, ConsumedStatus
from kafka_segments.retention.plan import PartitionPlan, RetentionPlan
from kafka_segments.retention.rules import PASS_ORDER

if TYPE_CHECKING:
    from kafka_segments.pipeline.retention_run import RunResult


def partition_to_dict(plan: PartitionPlan) -> dict[str, Any]:
    by_reason: dict[str, dict[str, int]] = {}
    for reason in PASS_ORDER:
        segments = plan.deleted_by(reason)
        if segments:
            by_reason[reason.value] = {
                "segments": len(segments),
                "bytes": sum(segment.size for segment in segments),
                "records": sum(segment.record_count for segment in segments),
            }
    return {
        "topic": plan.topic_partition.topic,
        "partition": plan.topic_partition.partition,
        "log_start_offset": {"before": plan.old_log_start_offset, "after": plan.new_log_start_offset},
        "log_end_offset": plan.log_end_offset,
        "passes": [reason.value for reason in plan.passes],
        "deleted": by_reason,
        "deleted_segments": [
            {
                "key": d.segment.key,
                "base_offset": d.segment.base_offset,
                "last_offset": d.segment.last_offset,
                "size": d.segment.size,
                "largest_timestamp_ms": d.segment.largest_timestamp_ms,
                "reason": d.reason.value,
            }
            for d in plan.deletions
        ],
        "kept_segments": len(plan.kept),
        "kept_bytes": sum(segment.size for segment in plan.kept),
        "consumed": consumed_to_dict(plan.consumed),
        "holder": None
        if plan.holder is None
        else {
            "group_id": plan.holder.group_id,
            "committed_offset": plan.holder.committed_offset,
            "lag_records": plan.holder.lag_records,
            "lag_bytes": plan.holder.lag_bytes,
            "expires_at_ms": plan.holder.expires_at_ms,
        },
        "unread_loss": [
            {"group_id": loss.group_id, "committed_offset": loss.committed_offset, "records": loss.records}
            for loss in plan.unread_loss
        ],
        "skipped": plan.skipped,
    }


def consumed_to_dict(bound: ConsumedBound) -> dict[str, Any]:
    return {
        "status": bound.status.value,
        "min_committed_offset": bound.min_offset,
        "groups": [
            {
                "group_id": group.group_id,
                "committed_offset": group.committed_offset,
                "position": group.position,
                "expires_at_ms": group.expires_at_ms,
                "required": group.required,
            }
            for group in bound.groups
        ],
        "unreadable_groups": list(bound.unreadable_groups),
    }


def plan_to_dict(plan: RetentionPlan) -> dict[str, Any]:
    return {
        "now_ms": plan.now_ms,
        "totals": totals(plan),
        "partitions": [partition_to_dict(partition) for partition in plan.partitions],
    }


def totals(plan: RetentionPlan) -> dict[str, Any]:
    by_reason: dict[str, dict[str, int]] = {}
    for reason in PASS_ORDER:
        segments = [s for p in plan.partitions for s in p.deleted_by(reason)]
        if segments:
            by_reason[reason.value] = {"segments": len(segments), "bytes": sum(s.size for s in segments)}
    return {
        "partitions": len(plan.partitions),
        "partitions_changed": sum(1 for p in plan.partitions if p.changed),
        "partitions_skipped": sum(1 for p in plan.partitions if p.skipped is not None),
        "segments_deleted": sum(len(p.deletions) for p in plan.partitions),
        "bytes_deleted": sum(p.bytes_deleted for p in plan.partitions),
        "by_reason": by_reason,
    }


def run_to_dict(result: RunResult) -> dict[str, Any]:
    offsets = result.offsets
    adoption = result.adoption
    return {
        "run_id": result.run_id,
        "outcome": result.outcome,
        "now_ms": result.now_ms,
        "dry_run": result.dry_run,
        "base_version": result.base_version,
        "committed_version": result.committed_version,
        "offsets_snapshot": None
        if offsets is None
        else {
            "id": offsets.snapshot_id,
            "origin": offsets.origin,
            "source": offsets.snapshot.source,
            "taken_at_ms": offsets.snapshot.taken_at_ms,
            "groups": len(offsets.snapshot.groups),
            "errors": [{"group_id": e.group_id, "error": e.error} for e in offsets.snapshot.errors],
            "note": offsets.note,
        },
        "adoption": {
            "adopted_segments": len(adoption.adopted),
            "regrown_segments": len(adoption.regrown),
            "quarantined": [
                {
                    "topic": item.topic_partition.topic,
                    "partition": item.topic_partition.partition,
                    "key": item.key,
                    "reason": item.reason,
                }
                for item in adoption.quarantined
            ],
            "ignored_objects": len(adoption.ignored),
        },
        "plan": plan_to_dict(result.plan),
        "gc": None if result.gc is None else result.gc.to_dict(),
    }


def render_text(result: RunResult) -> str:
    """The readable summary of a run."""
    lines = [_headline(result)]
    lines.extend(_offsets_lines(result))
    adoption = result.adoption
    if adoption.adopted or adoption.regrown or adoption.quarantined:
        lines.append(
            f"adopted {len(adoption.adopted)} new segment(s), {len(adoption.regrown)} regrown, "
            f"{len(adoption.quarantined)} problem(s) (partitions quarantined for this run)"
        )
    for plan in result.plan.partitions:
        lines.extend(partition_lines(plan))
    summary = totals(result.plan)
    lines.append(
        f"total: {summary['segments_deleted']} segment(s), {summary['bytes_deleted']} bytes deleted in "
        f"{summary['partitions_changed']} of {summary['partitions']} partition(s)"
        + (f"; {summary['partitions_skipped']} skipped" if summary["partitions_skipped"] else "")
    )
    if result.gc is not None:
        gc = result.gc
        lines.append(
            f"gc: deleted {len(gc.deleted)} retired segment(s), {len(gc.waiting)} waiting for "
            "file.delete.delay.ms"
        )
    return "\n".join(lines) + "\n"


def _headline(result: RunResult) -> str:
    if result.dry_run:
        return f"dry run at now={result.now_ms} on version {result.base_version}: nothing was changed"
    if result.committed_version is None:
        return (
            f"run {result.run_id} at now={result.now_ms}: nothing to change (version {result.base_version})"
        )
    return (
        f"run {result.run_id} at now={result.now_ms}: committed version {result.committed_version} "
        f"(base {result.base_version})"
    )


def _offsets_lines(result: RunResult) -> list[str]:
    offsets = result.offsets
    if offsets is None:
        return ["offsets: no snapshot (consumed retention cannot apply)"]
    snapshot = offsets.snapshot
    line = (
        f"offsets: snapshot {offsets.snapshot_id or '(not stored)'} ({offsets.origin}, source "
        f"{snapshot.source}, taken at {snapshot.taken_at_ms}): {len(snapshot.groups)} group(s)"
    )
    lines = [line]
    if snapshot.errors:
        failed = ", ".join(f"{e.group_id} ({e.error})" for e in snapshot.errors)
        lines.append(f"  unreadable groups: {failed} -> consumed retention skipped (M = -1)")
    if offsets.note:
        lines.append(f"  note: {offsets.note}")
    return lines


def partition_lines(plan: PartitionPlan) -> list[str]:
    """The summary lines of one partition."""
    tp = plan.topic_partition
    if plan.skipped is not None:
        return [f"{tp}: skipped ({plan.skipped})"]
    head = f"{tp}: log start {plan.old_log_start_offset}"
    if plan.new_log_start_offset != plan.old_log_start_offset:
        head += f" -> {plan.new_log_start_offset}"
    head += f", log end {plan.log_end_offset}"
    parts = []
    for reason in PASS_ORDER:
        segments = plan.deleted_by(reason)
        if segments:
            parts.append(f"{reason.value}: {len(segments)} segment(s) {sum(s.size for s in segments)} B")
    head += "; deleted " + ", ".join(parts) if parts else "; nothing deleted"
    lines = [head]
    consumed = _consumed_line(plan)
    if consumed:
        lines.append("  " + consumed)
    for loss in plan.unread_loss:
        lines.append(
            f"  WARNING: group {loss.group_id} (committed offset {loss.committed_offset}) loses "
            f"{loss.records} unread record(s)"
        )
    return lines


def _consumed_line(plan: PartitionPlan) -> str:
    bound = plan.consumed
    if bound.status is ConsumedStatus.DISABLED:
        return ""
    if bound.status is ConsumedStatus.ACTIVE and plan.holder is not None:
        holder = plan.holder
        committed = (
            "no committed offset" if holder.committed_offset is None else f"at {holder.committed_offset}"
        )
        expires = (
            "its offsets do not expire as things stand"
            if holder.expires_at_ms is None
            else f"its offsets expire at {holder.expires_at_ms}"
        )
        return (
            f"consumed: M = {bound.min_offset}, held back by group {holder.group_id} ({committed}; lag "
            f"{holder.lag_records} records, {holder.lag_bytes} B; {expires})"
        )
    if bound.status is ConsumedStatus.UNREADABLE_GROUPS:
        return f"consumed: skipped, M = -1 (unreadable groups: {', '.join(bound.unreadable_groups)})"
    return f"consumed: {bound.status.value}"
