"""Run reports: a readable summary and a JSON document (same content).

Per partition: the segments and bytes deleted by each pass, the log start offset before and after, KIP-68's
M with the group holding it back (its lag and when its offsets expire), the groups that would lose records
they have not read, and why a partition was skipped."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from kafka_segments.lake.runs import RunOutcome
from kafka_segments.offsets.resolved import NO_OFFSETS, ResolvedOffsets, age_text
from kafka_segments.pipeline.compaction.report import compaction_report_lines
from kafka_segments.pipeline.metrics import run_metrics
from kafka_segments.pipeline.tables_stage import tables_lines
from kafka_segments.retention.consumed import ConsumedBound, ConsumedStatus
from kafka_segments.retention.plan import PartitionPlan, RetentionPlan
from kafka_segments.retention.rules import PASS_ORDER
from kafka_segments.timefmt import text_time

if TYPE_CHECKING:
    from kafka_segments.pipeline.run_result import RunResult


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


def offsets_to_dict(offsets: ResolvedOffsets | None, *, now_ms: int) -> dict[str, Any] | None:
    """The snapshot a run uses (or a view of the next run): a report's ``offsets_snapshot``."""
    if offsets is None:
        return None
    return {
        "id": offsets.snapshot_id,
        "origin": offsets.origin,
        "source": offsets.snapshot.source,
        "taken_at_ms": offsets.snapshot.taken_at_ms,
        "age_ms": now_ms - offsets.snapshot.taken_at_ms,
        "groups": len(offsets.snapshot.groups),
        "errors": [{"group_id": e.group_id, "error": e.error} for e in offsets.snapshot.errors],
        "note": offsets.note,
    }


def run_to_dict(result: RunResult) -> dict[str, Any]:
    offsets = result.offsets
    adoption = result.adoption
    compaction, plan = result.compaction.to_dict(), plan_to_dict(result.plan)
    return {
        "run_id": result.run_id,
        "outcome": result.outcome.value,
        "now_ms": result.now_ms,
        "dry_run": result.dry_run,
        "base_version": result.base_version,
        "base_now_ms": result.previous_now_ms,
        "committed_version": result.committed_version,
        "offsets_snapshot": offsets_to_dict(offsets, now_ms=result.now_ms),
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
        "compaction": compaction,
        "plan": plan,
        "gc": None if result.gc is None else result.gc.to_dict(),
        "tables": None if result.tables is None else result.tables.to_dict(),
        "metrics": run_metrics(
            compaction, plan, now_ms=result.now_ms, previous_now_ms=result.previous_now_ms
        ),
    }


def render_text(result: RunResult) -> str:
    """The readable summary of a run."""
    return render_report(run_to_dict(result))


def render_report(document: Mapping[str, Any]) -> str:
    """The readable summary of a run report document (``run_to_dict``, or a staged run's ``report.json``).

    A dry run's lines say what the run *would* do ("would delete", "would clean"): nothing was changed."""
    dry_run = bool(document["dry_run"])
    lines = [_headline(document), *_earlier_now_lines(document)]
    lines.extend(_offsets_lines(document.get("offsets_snapshot"), now_ms=document["now_ms"]))
    adoption = document.get("adoption") or {}
    adopted, regrown = adoption.get("adopted_segments", 0), adoption.get("regrown_segments", 0)
    quarantined = adoption.get("quarantined", [])
    if adopted or regrown or quarantined:
        lines.append(
            f"{'would adopt' if dry_run else 'adopted'} {adopted} new segment(s), {regrown} regrown, "
            f"{len(quarantined)} problem(s) (partitions quarantined for this run)"
        )
    lines.extend(compaction_report_lines(document.get("compaction"), dry_run=dry_run))
    plan = document["plan"]
    for partition in plan["partitions"]:
        lines.extend(partition_report_lines(partition, dry_run=dry_run))
    summary = plan["totals"]
    deleted = "would be deleted" if dry_run else "deleted"
    lines.append(
        f"total: {summary['segments_deleted']} segment(s), {summary['bytes_deleted']} bytes {deleted} in "
        f"{summary['partitions_changed']} of {summary['partitions']} partition(s)"
        + (f"; {summary['partitions_skipped']} skipped" if summary["partitions_skipped"] else "")
    )
    validation = document.get("validation")
    if validation is not None:
        verdict = "passed" if validation.get("success") else "FAILED"
        docs = validation.get("data_docs")
        page = validation.get("page")
        lines.append(
            f"validation: {verdict}"
            + (f"; Data Docs: {docs}" if docs else "")
            + (f"; offline page: {page}" if page else "")
        )
    gc = document.get("gc")
    if gc is not None:
        deleted = "would delete" if gc.get("dry_run") else "deleted"
        lines.append(
            f"gc: {deleted} {len(gc['deleted'])} retired segment(s), {len(gc['waiting'])} waiting for "
            "file.delete.delay.ms"
        )
    lines.extend(tables_lines(document.get("tables")))
    return "\n".join(lines) + "\n"


def _headline(document: Mapping[str, Any]) -> str:
    run_id, now_ms, base = document["run_id"], document["now_ms"], document["base_version"]
    if document["dry_run"]:
        return f"dry run at now={_when(now_ms)} on version {base}: nothing was changed"
    committed = document.get("committed_version")
    if committed is not None:
        return f"run {run_id} at now={_when(now_ms)}: committed version {committed} (base {base})"
    outcome = document.get("outcome") or RunOutcome.NOTHING_TO_CHANGE
    if outcome in {RunOutcome.NOTHING_TO_CHANGE, RunOutcome.COMMITTED}:
        return f"run {run_id} at now={_when(now_ms)}: nothing to change (version {base})"
    return f"run {run_id} at now={_when(now_ms)}: {outcome} (version {base})"


def _earlier_now_lines(document: Mapping[str, Any]) -> list[str]:
    """A warning when the run's ``now`` precedes the ``now`` of the version it builds on (``base_now_ms``):
    a backfill of an earlier time does that on purpose, a scheduled run whose interval ended before the
    lake's last commit by accident. The rules apply as of the run's ``now`` (an earlier time deletes no more
    than the later run did and brings nothing back); ``time-since-last-run-ms`` is left out."""
    now_ms, base_now_ms = document["now_ms"], document.get("base_now_ms")
    if base_now_ms is None or now_ms >= base_now_ms:
        return []
    return [
        f"WARNING: now={_when(now_ms)} precedes the now of version {document['base_version']} "
        f"({_when(base_now_ms)}) by {base_now_ms - now_ms} ms: the rules apply as of this earlier time "
        "(a backfill); nothing deleted since comes back"
    ]


def _offsets_lines(offsets: Mapping[str, Any] | None, *, now_ms: int) -> list[str]:
    if offsets is None:
        return [f"offsets: {NO_OFFSETS}"]
    line = (
        f"offsets: snapshot {offsets['id'] or '(not stored)'} ({offsets['origin']}, source "
        f"{offsets['source']}, taken at {_when(offsets['taken_at_ms'])}, "
        f"{age_text(now_ms - offsets['taken_at_ms'])}): {offsets['groups']} group(s)"
    )
    lines = [line]
    if offsets["errors"]:
        failed = ", ".join(f"{e['group_id']} ({e['error']})" for e in offsets["errors"])
        lines.append(f"  unreadable groups: {failed} -> consumed retention skipped (M = -1)")
    if offsets["note"]:
        lines.append(f"  note: {offsets['note']}")
    return lines


def partition_lines(plan: PartitionPlan, *, dry_run: bool) -> list[str]:
    """The summary lines of one partition (``dry_run``: what a run would delete)."""
    return partition_report_lines(partition_to_dict(plan), dry_run=dry_run)


def partition_report_lines(partition: Mapping[str, Any], *, dry_run: bool) -> list[str]:
    """The summary lines of one partition of a report document (``partition_to_dict``); ``dry_run``: they say
    what the run would delete and which group would lose records."""
    tp = f"{partition['topic']}-{partition['partition']}"
    if partition["skipped"] is not None:
        return [f"{tp}: skipped ({partition['skipped']})"]
    before, after = partition["log_start_offset"]["before"], partition["log_start_offset"]["after"]
    head = f"{tp}: log start {before}"
    if after != before:
        head += f" -> {after}"
    head += f", log end {partition['log_end_offset']}"
    parts = [
        f"{reason}: {deleted['segments']} segment(s) {deleted['bytes']} B"
        for reason, deleted in partition["deleted"].items()
    ]
    deleted, loses = ("would delete", "would lose") if dry_run else ("deleted", "loses")
    nothing = "; nothing would be deleted" if dry_run else "; nothing deleted"
    head += f"; {deleted} " + ", ".join(parts) if parts else nothing
    lines = [head]
    consumed = _consumed_line(partition)
    if consumed:
        lines.append("  " + consumed)
    for loss in partition["unread_loss"]:
        lines.append(
            f"  WARNING: group {loss['group_id']} (committed offset {loss['committed_offset']}) {loses} "
            f"{loss['records']} unread record(s)"
        )
    return lines


def _consumed_line(partition: Mapping[str, Any]) -> str:
    bound = partition["consumed"]
    status = bound["status"]
    if status == ConsumedStatus.DISABLED.value:
        return ""
    holder = partition["holder"]
    if status == ConsumedStatus.ACTIVE.value and holder is not None:
        committed = (
            "no committed offset"
            if holder["committed_offset"] is None
            else f"at {holder['committed_offset']}"
        )
        expires = (
            "its offsets do not expire as things stand"
            if holder["expires_at_ms"] is None
            else f"its offsets expire at {_when(holder['expires_at_ms'])}"
        )
        return (
            f"consumed: M = {bound['min_committed_offset']}, held back by group {holder['group_id']} "
            f"({committed}; lag {holder['lag_records']} records, {holder['lag_bytes']} B; {expires})"
        )
    if status == ConsumedStatus.UNREADABLE_GROUPS.value:
        return f"consumed: skipped, M = -1 (unreadable groups: {', '.join(bound['unreadable_groups'])})"
    return f"consumed: {status}"


def _when(ms: int | None) -> str:
    """A time of a text line: epoch ms (what ``--now`` takes) with its ISO-8601 UTC reading."""
    return text_time(ms) if ms is None else f"{ms} ({text_time(ms)})"
