"""The plan of a run over its adopted state: which partitions, which configuration, where the work runs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from kafka_segments.config import Config
from kafka_segments.lake.adoption_report import AdoptionResult
from kafka_segments.lake.runs import ALL_PARTITIONS, Selection
from kafka_segments.pipeline.engines.base import Engine, TopicPlanTask
from kafka_segments.retention.plan import RetentionPlan
from kafka_segments.state import OffsetSnapshot, PartitionState
from kafka_segments.topic_partition import TopicPartition


def adoption_quarantine(adoption: AdoptionResult) -> dict[TopicPartition, str]:
    """The partitions an adoption quarantined, with the first problem found in each."""
    quarantined: dict[TopicPartition, str] = {}
    for item in adoption.quarantined:
        quarantined.setdefault(item.topic_partition, f"quarantined: {item.key}: {item.reason}")
    return quarantined


def plan_adopted(
    adoption: AdoptionResult,
    config: Config,
    *,
    now_ms: int,
    snapshot: OffsetSnapshot | None,
    engine: Engine,
    selection: Selection = ALL_PARTITIONS,
    states: Sequence[PartitionState] | None = None,
    also_quarantined: Mapping[TopicPartition, str] | None = None,
) -> RetentionPlan:
    """The retention plan over the adopted state (quarantined partitions are reported, not planned); each
    topic is planned as one task on ``engine`` (partitions are planned independently of each other).

    Args:
        states: the partitions to plan instead of the adopted ones (the state a compaction round left).
        also_quarantined: more partitions to leave alone, with the reason (e.g. a failed cleaning round).
    """
    quarantined = adoption_quarantine(adoption)
    for tp, reason in (also_quarantined or {}).items():
        quarantined.setdefault(tp, reason)
    states = selection.select(adoption.partitions if states is None else states)
    topics = sorted({state.topic_partition.topic for state in states})
    tasks = [
        TopicPlanTask(
            states=tuple(state for state in states if state.topic_partition.topic == topic),
            config=config.for_topic(topic),
            now_ms=now_ms,
            snapshot=snapshot,
            quarantined={tp: why for tp, why in quarantined.items() if tp.topic == topic},
        )
        for topic in topics
    ]
    by_tp = {plan.topic_partition: plan for plans in engine.plan(tasks) for plan in plans}
    return RetentionPlan(now_ms, tuple(by_tp[state.topic_partition] for state in states))
