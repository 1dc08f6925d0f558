"""Where a run's fan-out work runs: here (threads), or on a cluster (the Spark engine brings its own runner).

A runner maps a module-level function over items and returns the results in the items' order. The tasks
below are what the Spark engine ships to its executors: they take the lake URI (each worker process opens
its own store, once) and plain values, and return small results. Spark moves object keys and summaries;
segment bytes go straight from the store to the task that reads them.

Both engines call the same functions on the same inputs, so they produce the same plan and the same staged
manifest (tests compare them).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Protocol, TypeVar

from kafka_segments.config.model import TopicConfig
from kafka_segments.lake.adoption_reads import ReadJob, ReadResult, read_one
from kafka_segments.lake.manifest import PartitionState
from kafka_segments.lake.runs import RunRecord
from kafka_segments.offsets.model import OffsetSnapshot
from kafka_segments.retention.plan import PartitionPlan, plan_retention
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
class ThreadRunner:
    """Runs the tasks in this process on up to ``max_workers`` threads (reads overlap; CPU work does not)."""

    max_workers: int = 8
    name: str = "inline"

    def map(self, fn: Callable[[T], R], items: Sequence[T]) -> list[R]:
        if self.max_workers < 1:
            raise ValueError(f"max_workers must be at least 1, got {self.max_workers}")
        if self.max_workers == 1 or len(items) <= 1:
            return [fn(item) for item in items]
        with ThreadPoolExecutor(min(self.max_workers, len(items)), thread_name_prefix="run") as pool:
            return list(pool.map(fn, items))


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


@dataclass(frozen=True, slots=True)
class TopicPlanTask:
    """The retention plan of one topic's partitions."""

    states: tuple[PartitionState, ...]
    config: TopicConfig
    now_ms: int
    snapshot: OffsetSnapshot | None
    quarantined: Mapping[TopicPartition, str]


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
