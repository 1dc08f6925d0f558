"""What an engine is: the ``Engine`` protocol a run's stages call, the ``TaskRunner`` a cluster engine maps
tasks on, and the per-topic planning task (plain values, shipped to workers)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, TypeVar

from kafka_segments.config.model import TopicConfig
from kafka_segments.state import OffsetSnapshot, PartitionState
from kafka_segments.topic_partition import TopicPartition

if TYPE_CHECKING:
    from kafka_segments.lake.adoption import SegmentReader
    from kafka_segments.lake.runs import RunRecord
    from kafka_segments.pipeline.compaction.results import PartitionCompaction
    from kafka_segments.pipeline.compaction.task import CompactionTask
    from kafka_segments.retention.plan import PartitionPlan

T = TypeVar("T")
R = TypeVar("R")


class TaskRunner(Protocol):
    """Maps ``fn`` over ``items`` (possibly on other processes or machines); results in order."""

    @property
    def name(self) -> str: ...

    def map(self, fn: Callable[[T], R], items: Sequence[T]) -> list[R]: ...


@dataclass(frozen=True, slots=True)
class TopicPlanTask:
    """The retention plan of one topic's partitions."""

    states: tuple[PartitionState, ...]
    config: TopicConfig
    now_ms: int
    snapshot: OffsetSnapshot | None
    quarantined: Mapping[TopicPartition, str]


class Engine(Protocol):
    """Where a run's fan-outs run (see the module docstring)."""

    @property
    def name(self) -> str: ...

    @property
    def lake(self) -> str:
        """The lake URI tasks carry to their workers (``""``: the work stays in this process)."""
        ...

    def reader(self, run: RunRecord) -> SegmentReader | None:
        """Adoption's reads (``None``: adoption reads on its own threads in this process)."""
        ...

    def compact(self, tasks: Sequence[CompactionTask]) -> list[PartitionCompaction]: ...

    def plan(self, tasks: Sequence[TopicPlanTask]) -> list[tuple[PartitionPlan, ...]]: ...
