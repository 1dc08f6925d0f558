"""``InlineEngine``: a run's fan-outs in this process, on the run's store."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from kafka_segments.lake.adoption import SegmentReader
from kafka_segments.lake.runs import RunRecord
from kafka_segments.pipeline.compaction.results import PartitionCompaction
from kafka_segments.pipeline.compaction.task import CompactionTask
from kafka_segments.pipeline.engines.base import TopicPlanTask
from kafka_segments.pipeline.engines.tasks import compact_task_on, plan_topic, task_bytes
from kafka_segments.progress import phase
from kafka_segments.retention.plan import PartitionPlan
from kafka_segments.storage.base import ObjectStore


@dataclass(frozen=True, slots=True)
class InlineEngine:
    """The run's work in this process, on ``store``."""

    store: ObjectStore
    name: str = "inline"
    lake: str = ""

    def reader(self, run: RunRecord) -> SegmentReader | None:
        return None

    def compact(self, tasks: Sequence[CompactionTask]) -> list[PartitionCompaction]:
        total = sum(task_bytes(task) for task in tasks)
        with phase("compact", items=len(tasks), nbytes=total) as progress:
            done = []
            for task in tasks:
                done.append(compact_task_on(self.store, task))
                progress.advance(str(task.state.topic_partition), nbytes=task_bytes(task))
        return done

    def plan(self, tasks: Sequence[TopicPlanTask]) -> list[tuple[PartitionPlan, ...]]:
        return [plan_topic(task) for task in tasks]
