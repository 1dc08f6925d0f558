"""``kafka-segments delete-records``: KIP-107 on the lake, committed atomically for every partition.

recover → adopt → per-partition results → one commit with the new log start offsets and the whole segments
below them retired (reason ``log-start-offset``). A partition's error affects only that partition; when no
partition changes, nothing is committed.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import dataclass

from kafka_segments.config import Config
from kafka_segments.errors import KafkaSegmentsError
from kafka_segments.lake.adoption import AdoptionResult, adopt_objects
from kafka_segments.lake.commit import abort_run, begin_run, build_manifest, commit_run, stage_manifest
from kafka_segments.lake.history import read_head
from kafka_segments.lake.recover import recover
from kafka_segments.lake.runs import Clock, RunRecord, wall_clock_ms
from kafka_segments.offsets.model import OffsetSnapshot
from kafka_segments.pipeline.run_changes import apply_plan
from kafka_segments.pipeline.run_files import write_run_file
from kafka_segments.retention.consumed import ConsumedIndexes
from kafka_segments.retention.delete_records import (
    DeleteRecordsRequest,
    DeleteRecordsResult,
    delete_records_plan,
    quarantined_partition,
    unknown_partition,
)
from kafka_segments.retention.plan import PartitionPlan
from kafka_segments.storage.base import ObjectStore


@dataclass(frozen=True, slots=True)
class DeleteRecordsOutcome:
    run_id: str
    base_version: int | None
    committed_version: int | None
    results: tuple[DeleteRecordsResult, ...]
    plans: tuple[PartitionPlan, ...]
    adoption: AdoptionResult

    @property
    def failed(self) -> tuple[DeleteRecordsResult, ...]:
        return tuple(result for result in self.results if not result.ok)


def delete_records(
    store: ObjectStore,
    requests: Sequence[DeleteRecordsRequest],
    *,
    config: Config,
    now_ms: int,
    snapshot: OffsetSnapshot | None = None,
    dry_run: bool = False,
    clock: Clock = wall_clock_ms,
) -> DeleteRecordsOutcome:
    """Apply ``requests``; return every partition's result and the committed version (if any changed).

    ``snapshot`` (optional) only feeds the preview of groups that lose records they have not read. A dry
    run computes the same results and writes nothing.

    Raises:
        CommitConflictError: another run committed first; nothing changed, run again.
        CommitStateUnknownError: the commit's outcome is unknown; ``recover`` settles it.
    """
    if dry_run:
        base = read_head(store)
        run = RunRecord("dry-run", "delete-records", None if base is None else base.version, clock(), now_ms)
        adoption = adopt_objects(store, base=base, run=run)
        results, plans = _decide(adoption, requests, config=config, now_ms=now_ms, snapshot=snapshot)
        return DeleteRecordsOutcome(run.run_id, run.base_version, None, results, plans, adoption)
    recover(store, clock=clock)
    run, base = begin_run(store, now_ms=now_ms, operation="delete-records", clock=clock)
    try:
        adoption = adopt_objects(store, base=base, run=run)
        results, plans = _decide(adoption, requests, config=config, now_ms=now_ms, snapshot=snapshot)
    except Exception as exc:
        with contextlib.suppress(KafkaSegmentsError):
            abort_run(
                store, run.run_id, reason=f"delete-records failed before its commit: {exc}", clock=clock
            )
        raise
    changed = [plan for plan in plans if plan.changed]
    if not changed and not adoption.changed:
        abort_run(store, run.run_id, reason="nothing to change", clock=clock)
        return DeleteRecordsOutcome(run.run_id, run.base_version, None, results, plans, adoption)
    partitions, retired = apply_plan(run, adoption.partitions, changed, config)
    manifest = build_manifest(
        run, base=base, partitions=partitions, newly_retired=retired, present_keys=adoption.present_keys
    )
    write_run_file(
        store,
        run.run_id,
        "delete-records.json",
        {
            "requests": [
                {
                    "topic": r.topic_partition.topic,
                    "partition": r.topic_partition.partition,
                    "offset": r.offset,
                }
                for r in requests
            ],
            "results": [_result_dict(result) for result in results],
        },
    )
    stage_manifest(store, run, manifest)
    committed = commit_run(store, run.run_id, clock=clock)
    return DeleteRecordsOutcome(run.run_id, run.base_version, committed.version, results, plans, adoption)


def _decide(
    adoption: AdoptionResult,
    requests: Sequence[DeleteRecordsRequest],
    *,
    config: Config,
    now_ms: int,
    snapshot: OffsetSnapshot | None,
) -> tuple[tuple[DeleteRecordsResult, ...], tuple[PartitionPlan, ...]]:
    states = {state.topic_partition: state for state in adoption.partitions}
    quarantined = {item.topic_partition: f"{item.key}: {item.reason}" for item in adoption.quarantined}
    indexes = None if snapshot is None else ConsumedIndexes(snapshot, now_ms=now_ms)
    results: list[DeleteRecordsResult] = []
    plans: list[PartitionPlan] = []
    for request in requests:
        tp = request.topic_partition
        state = states.get(tp)
        if tp in quarantined:
            results.append(quarantined_partition(request, quarantined[tp]))
            continue
        if state is None:
            results.append(unknown_partition(request))
            continue
        topic_config = config.for_topic(tp.topic)
        index = None if indexes is None else indexes.for_topic(topic_config)
        result, plan = delete_records_plan(state, topic_config, request, now_ms=now_ms, index=index)
        results.append(result)
        if plan is not None:
            plans.append(plan)
    return tuple(results), tuple(plans)


def _result_dict(result: DeleteRecordsResult) -> dict[str, object]:
    return {
        "topic": result.topic_partition.topic,
        "partition": result.topic_partition.partition,
        "requested_offset": result.requested_offset,
        "low_watermark": result.low_watermark,
        "error": None if result.error is None else result.error.name,
        "detail": result.detail,
    }


def outcome_to_dict(outcome: DeleteRecordsOutcome) -> dict[str, object]:
    return {
        "run_id": outcome.run_id,
        "base_version": outcome.base_version,
        "committed_version": outcome.committed_version,
        "results": [_result_dict(result) for result in outcome.results],
        "unread_loss": [
            {
                "topic": plan.topic_partition.topic,
                "partition": plan.topic_partition.partition,
                "group_id": loss.group_id,
                "committed_offset": loss.committed_offset,
                "records": loss.records,
            }
            for plan in outcome.plans
            for loss in plan.unread_loss
        ],
    }
