"""``InlineEngine``: a run's fan-outs in this process, on the run's store."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from kafka_segments.lake.adoption import SegmentReader
from kafka_segments.lake.runs import RunRecord
from kafka_segments.pipeline.compaction.results import PartitionCompaction
from kafka_segments.pipeline.compaction.task import CompactionTask
from kafka_segments.pipeline.engines.base import TopicPlanTask
from kafka_segments.pipeline.engines.tasks import compact_task_on, plan_topic
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
        return [compact_task_on(self.store, task) for task in tasks]

    def plan(self, tasks: Sequence[TopicPlanTask]) -> list[tuple[PartitionPlan, ...]]:
        return [plan_topic(task) for task in tasks]
