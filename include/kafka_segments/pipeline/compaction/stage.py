"""Compaction in a run: which partitions get a cleaning round, where the rounds run (docs/compaction.md).

Per partition, in the order of Kafka's cleaner thread: at most one round (``compaction.eligibility``, within
the run's budget), then the deletion passes over the state it leaves (``run_changes``), committed together.
Rounds run as ``CompactionTask``s on the run's engine (``pipeline.engines``: Spark executors or the inline
engine's own process); both produce the same objects and entries."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from kafka_segments.compaction import COMPACTION_REASON
from kafka_segments.compaction.eligibility import (
    CompactionBudget,
    CompactionCandidate,
    assess,
    take_within_budget,
)
from kafka_segments.config import Config
from kafka_segments.lake.runs import RunRecord
from kafka_segments.pipeline.compaction.results import (
    CompactionResult,
    CompactionStatus,
    PartitionCompaction,
)
from kafka_segments.pipeline.compaction.task import CompactionTask
from kafka_segments.state import PartitionState

if TYPE_CHECKING:
    from kafka_segments.pipeline.engines.base import Engine

BUDGET_BYTES = "kafka_segments.compaction.max.bytes.per.run"
BUDGET_PARTITIONS = "kafka_segments.compaction.max.partitions.per.run"


def compaction_budget(config: Config) -> CompactionBudget:
    """The run's budget from the broker section (``kafka_segments.compaction.max.*.per.run``)."""
    max_bytes, max_partitions = config.broker_value(BUDGET_BYTES), config.broker_value(BUDGET_PARTITIONS)
    return CompactionBudget(
        max_bytes=max_bytes if isinstance(max_bytes, int) else -1,
        max_partitions=max_partitions if isinstance(max_partitions, int) else -1,
    )


def plan_candidates(
    states: Sequence[PartitionState],
    config: Config,
    *,
    now_ms: int,
    budget: CompactionBudget,
) -> tuple[list[CompactionCandidate], list[CompactionCandidate], list[PartitionCompaction]]:
    """Assess every partition of a compacted topic: (rounds to run, deferred, the rest as results)."""
    assessed = []
    for state in states:
        topic_config = config.for_topic(state.topic_partition.topic)
        if topic_config.compact:
            assessed.append(assess(state, topic_config, now_ms=now_ms))
    taken, deferred = take_within_budget(assessed, budget)
    chosen = {candidate.topic_partition for candidate in (*taken, *deferred)}
    by_tp = {state.topic_partition: state for state in states}
    idle = [
        PartitionCompaction.without_round(by_tp[c.topic_partition], c, CompactionStatus.SKIPPED)
        for c in assessed
        if c.topic_partition not in chosen
    ]
    return list(taken), list(deferred), idle


def compact_states(
    states: Sequence[PartitionState],
    config: Config,
    *,
    run: RunRecord,
    engine: Engine,
    write: bool = True,
) -> CompactionResult:
    """The compaction part of a run over ``states`` (quarantined partitions already left out); the rounds
    run on ``engine``."""
    budget = compaction_budget(config)
    taken, deferred, idle = plan_candidates(states, config, now_ms=run.now_ms, budget=budget)
    by_tp = {state.topic_partition: state for state in states}
    tasks = [
        CompactionTask(
            engine.lake,
            run,
            by_tp[candidate.topic_partition],
            config.for_topic(candidate.topic_partition.topic),
            candidate,
            write,
        )
        for candidate in taken
    ]
    rounds = engine.compact(tasks) if tasks else []
    later = [
        PartitionCompaction.without_round(by_tp[c.topic_partition], c, CompactionStatus.DEFERRED)
        for c in deferred
    ]
    order = {state.topic_partition: index for index, state in enumerate(states)}
    done = sorted([*rounds, *later, *idle], key=lambda p: order[p.topic_partition])
    return CompactionResult(tuple(done), budget)


__all__ = [
    "COMPACTION_REASON",
    "CompactionResult",
    "CompactionStatus",
    "PartitionCompaction",
    "compact_states",
    "compaction_budget",
]
