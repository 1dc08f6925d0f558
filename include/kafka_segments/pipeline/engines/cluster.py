"""``ClusterEngine``: a run's fan-outs as tasks on a ``TaskRunner`` (Spark's ``SparkRunner`` in
``spark_jobs/``), whose workers open the lake themselves."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial

from kafka_segments.lake.adoption import SegmentReader
from kafka_segments.lake.runs import RunRecord
from kafka_segments.pipeline.compaction.results import PartitionCompaction
from kafka_segments.pipeline.compaction.task import CompactionTask
from kafka_segments.pipeline.engines.base import TaskRunner, TopicPlanTask
from kafka_segments.pipeline.engines.tasks import compaction_task, plan_topic, read_jobs, task_bytes
from kafka_segments.progress import phase
from kafka_segments.retention.plan import PartitionPlan


@dataclass(frozen=True, slots=True)
class ClusterEngine:
    """The run's work as tasks on ``runner``, whose workers open ``lake``."""

    runner: TaskRunner
    lake: str

    def __post_init__(self) -> None:
        if not self.lake:
            raise ValueError("a cluster engine needs the lake URI its workers open")

    @property
    def name(self) -> str:
        return self.runner.name

    def reader(self, run: RunRecord) -> SegmentReader | None:
        return partial(read_jobs, self.runner, self.lake, run)

    def compact(self, tasks: Sequence[CompactionTask]) -> list[PartitionCompaction]:
        """The rounds on the executors; progress counts them as their results come back together."""
        with phase("compact (executors)", items=len(tasks), nbytes=sum(map(task_bytes, tasks))) as progress:
            done = self.runner.map(compaction_task, tasks)
            for task in tasks:
                progress.advance(str(task.state.topic_partition), nbytes=task_bytes(task))
        return done

    def plan(self, tasks: Sequence[TopicPlanTask]) -> list[tuple[PartitionPlan, ...]]:
        return self.runner.map(plan_topic, tasks)
