"""Where a run's per-partition work runs: the ``Engine`` protocol and its two engines.

A run has three fan-outs: adoption's segment reads, one compaction round per eligible partition, and the
retention plan of each topic. An engine runs them:

* ``InlineEngine(store)``: in this process, on the run's store (adoption reads on its own threads);
* ``ClusterEngine(runner, lake)``: as tasks on a ``TaskRunner`` (the Spark engine's ``SparkRunner`` in
  ``spark_jobs/``), which maps the module-level task functions below over plain values. Each worker opens
  the lake's store itself (``worker_store``, once per process); segment bytes go straight from the store to
  the task that reads them, Spark moves only keys and summaries.

Both call the same functions on the same inputs, so they produce the same plan, objects and staged manifest
(tests compare them). A new engine (another cluster, a process pool) is a ``TaskRunner``; see
docs/architecture.md.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Protocol, TypeVar

from kafka_segments.config.model import TopicConfig
from kafka_segments.lake.adoption import SegmentReader
from kafka_segments.lake.adoption_reads import ReadJob, ReadResult, read_one
from kafka_segments.lake.runs import RunRecord
from kafka_segments.pipeline.compaction.results import PartitionCompaction
from kafka_segments.pipeline.compaction.round import compact_partition
from kafka_segments.pipeline.compaction.task import CompactionTask
from kafka_segments.retention.plan import PartitionPlan, plan_retention
from kafka_segments.state import OffsetSnapshot, PartitionState
from kafka_segments.storage.base import ObjectStore
from kafka_segments.topic_partition import TopicPartition

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
        return self.runner.map(compaction_task, tasks)

    def plan(self, tasks: Sequence[TopicPlanTask]) -> list[tuple[PartitionPlan, ...]]:
        return self.runner.map(plan_topic, tasks)


# --- the tasks a cluster ships (module-level functions of plain values) -----------------------------------
_stores: dict[str, ObjectStore] = {}
_stores_lock = threading.Lock()


def worker_store(lake: str) -> ObjectStore:
    """The store of ``lake`` in this process (opened once per process; stores are thread-safe)."""
    with _stores_lock:
        store = _stores.get(lake)
        if store is None:
            from kafka_segments.storage.uri import open_store

            store = _stores[lake] = open_store(lake)
        return store


@dataclass(frozen=True, slots=True)
class ReadTask:
    """One adoption read: the lake, the run and the job."""

    lake: str
    run: RunRecord
    job: ReadJob


def read_task(task: ReadTask) -> ReadResult:
    """Read and judge one object of an adoption (``adoption_reads.read_one`` on the worker's store)."""
    return read_one(worker_store(task.lake), task.run, task.job)


def read_jobs(runner: TaskRunner, lake: str, run: RunRecord, jobs: Sequence[ReadJob]) -> list[ReadResult]:
    """An adoption's reads on ``runner`` (the ``reader`` of ``adopt_objects``)."""
    return runner.map(read_task, [ReadTask(lake, run, job) for job in jobs])


def compaction_task(task: CompactionTask) -> PartitionCompaction:
    """One partition's cleaning round on the worker's store."""
    return compact_task_on(worker_store(task.lake), task)


def compact_task_on(store: ObjectStore, task: CompactionTask) -> PartitionCompaction:
    """``compact_partition`` of ``task`` on ``store``."""
    return compact_partition(store, task.run, task.state, task.config, task.candidate, write=task.write)


def plan_topic(task: TopicPlanTask) -> tuple[PartitionPlan, ...]:
    """``plan_retention`` over one topic (partitions are planned independently of each other)."""
    plan = plan_retention(
        task.states,
        [task.config],
        now_ms=task.now_ms,
        snapshot=task.snapshot,
        quarantined=dict(task.quarantined),
    )
    return plan.partitions
