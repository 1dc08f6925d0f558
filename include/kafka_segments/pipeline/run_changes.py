"""What a run changes: compaction rounds, then the deletion passes over the state they leave, as one change
(as Kafka's cleaner thread cleans, then deletes old segments). Quarantined partitions are left alone; a round
that fails on bad data quarantines its partition; the deletion passes leave the cleaner checkpoint as it is,
even below the new log start offset (as Kafka's ``deleteOldSegments`` does)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from kafka_segments.config import Config
from kafka_segments.lake.adoption_report import AdoptionResult
from kafka_segments.lake.runs import RunRecord, Selection
from kafka_segments.lake.staging import retire
from kafka_segments.pipeline.compaction.stage import CompactionResult, compact_states
from kafka_segments.pipeline.engines.base import Engine
from kafka_segments.pipeline.planning import adoption_quarantine, plan_adopted
from kafka_segments.retention.plan import PartitionPlan, RetentionPlan
from kafka_segments.state import OffsetSnapshot, PartitionState, RetiredObject


@dataclass(frozen=True, slots=True)
class RunChanges:
    """A run's compaction and retention, and the partitions and retired objects they give."""

    compaction: CompactionResult
    plan: RetentionPlan
    partitions: tuple[PartitionState, ...]
    """Every adopted partition after the run (unselected and untouched ones as they were)."""
    retired: tuple[RetiredObject, ...]


def plan_changes(
    adoption: AdoptionResult,
    config: Config,
    *,
    run: RunRecord,
    engine: Engine,
    snapshot: OffsetSnapshot | None,
    selection: Selection,
) -> RunChanges:
    """Compact, then plan retention over the result (see the module docstring); the rounds write their
    output segments under the run's own names (invisible until a commit lists them).

    Args:
        run: the run (its id names written segments; its ``now_ms`` is every rule's clock).
        engine: where the rounds and the per-topic planning run.

    Raises:
        ObjectStoreError: the store failed during a round (nothing of this run is referenced yet).
    """
    quarantined = adoption_quarantine(adoption)
    candidates = [s for s in selection.select(adoption.partitions) if s.topic_partition not in quarantined]
    compaction = compact_states(candidates, config, run=run, engine=engine)
    after = compaction.states_after(adoption.partitions, run_id=run.run_id)
    plan = plan_adopted(
        adoption,
        config,
        now_ms=run.now_ms,
        snapshot=snapshot,
        selection=selection,
        engine=engine,
        states=after,
        also_quarantined=compaction.quarantined(),
    )
    partitions, deleted = apply_plan(run, after, plan.partitions, config)
    return RunChanges(compaction, plan, tuple(partitions), (*compaction.retired(run, config), *deleted))


def apply_plan(
    run: RunRecord, states: Sequence[PartitionState], plans: Sequence[PartitionPlan], config: Config
) -> tuple[list[PartitionState], list[RetiredObject]]:
    """The partitions after ``plans`` and the segments they retire (each with its pass as the reason)."""
    by_tp = {plan.topic_partition: plan for plan in plans}
    partitions: list[PartitionState] = []
    retired: list[RetiredObject] = []
    for state in states:
        plan = by_tp.get(state.topic_partition)
        if plan is None or not plan.changed:
            partitions.append(state)
            continue
        partitions.append(plan.new_state(state, run_id=run.run_id))
        delay = config.for_topic(state.topic_partition.topic).file_delete_delay_ms
        retired.extend(
            retire(d.segment, state.topic_partition, run, reason=d.reason.value, delete_delay_ms=delay)
            for d in plan.deletions
        )
    return partitions, retired
