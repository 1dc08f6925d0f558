"""``kafka-segments delete-records``: KIP-107 on the lake, committed atomically for every partition through
one ``LakeTransaction`` (whole segments below the new log start offsets retired as ``log-start-offset``). A
partition's error affects only that partition; a dry run ends as ``RunOutcome.DRY_RUN``."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from kafka_segments.clock import Clock, wall_clock_ms
from kafka_segments.config import Config
from kafka_segments.lake.adoption import AdoptionResult
from kafka_segments.lake.recover import recover
from kafka_segments.lake.runs import RunOutcome
from kafka_segments.lake.transaction import LakeTransaction
from kafka_segments.pipeline.run_changes import apply_plan
from kafka_segments.retention.consumed import ConsumedIndexes
from kafka_segments.retention.delete_records import (
    DeleteRecordsRequest,
    DeleteRecordsResult,
    delete_records_plan,
    quarantined_partition,
    unknown_partition,
)
from kafka_segments.retention.plan import PartitionPlan
from kafka_segments.state import OffsetSnapshot
from kafka_segments.storage.base import ObjectStore


@dataclass(frozen=True, slots=True)
class DeleteRecordsOutcome:
    run_id: str
    base_version: int | None
    committed_version: int | None
    results: tuple[DeleteRecordsResult, ...]
    plans: tuple[PartitionPlan, ...]
    adoption: AdoptionResult
    outcome: RunOutcome = RunOutcome.NOTHING_TO_CHANGE

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
    run computes the same results and commits nothing.

    Raises:
        CommitConflictError: another run committed first; nothing changed, run again.
        CommitStateUnknownError: the commit's outcome is unknown; ``recover`` settles it.
    """
    if not dry_run:
        recover(store, clock=clock)
    txn = LakeTransaction.begin(
        store, now_ms=now_ms, operation="delete-records", dry_run=dry_run, clock=clock
    )
    with txn:
        adoption = txn.adopt()
        results, plans = _decide(adoption, requests, config=config, now_ms=now_ms, snapshot=snapshot)
        changed = [plan for plan in plans if plan.changed]
        partitions, retired = apply_plan(txn.run, adoption.partitions, changed, config)
        txn.write_file(
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
        txn.stage(partitions, retired=retired)
    outcome = txn.commit()
    if outcome is RunOutcome.LOST and txn.lost_to is not None:
        raise txn.lost_to
    return DeleteRecordsOutcome(
        txn.run_id, txn.run.base_version, txn.committed_version, results, plans, adoption, outcome
    )


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
        "outcome": outcome.outcome.value,
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
