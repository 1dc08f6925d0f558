"""The tasks an engine runs, as module-level functions of plain values (a cluster pickles them to its
workers): adoption's reads, one partition's cleaning round, one topic's retention plan. Each worker opens the
lake's store itself, once per process (``worker_store``)."""

from __future__ import annotations

import functools
import gc
import threading
from collections.abc import Sequence
from dataclasses import dataclass

from kafka_segments.lake.adoption_reads import ReadJob, ReadResult, read_one
from kafka_segments.lake.runs import RunRecord
from kafka_segments.pipeline.compaction.results import PartitionCompaction
from kafka_segments.pipeline.compaction.round import compact_partition
from kafka_segments.pipeline.compaction.task import CompactionTask
from kafka_segments.pipeline.engines.base import TaskRunner, TopicPlanTask
from kafka_segments.progress import phase
from kafka_segments.retention.plan import PartitionPlan, plan_retention
from kafka_segments.storage.base import ObjectStore

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
    """An adoption's reads on ``runner`` (the ``reader`` of ``adopt_objects``); progress counts them as their
    results come back together."""
    total = sum(job.meta.size for job in jobs)
    with phase(
        "adopt: reading new segments (executors)", items=len(jobs), nbytes=total, unit="segments"
    ) as p:
        results = runner.map(read_task, [ReadTask(lake, run, job) for job in jobs])
        for job in jobs:
            p.advance(job.key, nbytes=job.meta.size)
    return results


def compaction_task(task: CompactionTask) -> PartitionCompaction:
    """One partition's cleaning round on the worker's store; then the worker's heap is frozen, once."""
    done = compact_task_on(worker_store(task.lake), task)
    freeze_worker_heap()
    return done


@functools.cache
def freeze_worker_heap() -> None:
    """Collect, then move every object of this process out of the cyclic garbage collector's reach
    (``gc.freeze``), once per process, after its first round: what is alive then — modules, numba's
    registries and kernels, the store's client — lives as long as the process.

    PySpark's daemon runs a full ``gc.collect()`` after every task of a reused Python worker; over a worker
    holding numba and boto3 that walk cost ~0.15 s of CPU per task, as much as a round of a 28 MB partition
    (bench/RESULTS.md). Frozen objects are still freed by reference counting; only a reference cycle they
    form later would not be collected."""
    gc.collect()
    gc.freeze()


def compact_task_on(store: ObjectStore, task: CompactionTask) -> PartitionCompaction:
    """``compact_partition`` of ``task`` on ``store``."""
    return compact_partition(store, task.run, task.state, task.config, task.candidate, write=task.write)


def task_bytes(task: CompactionTask) -> int:
    """The bytes of the partition a round reads (its progress weight)."""
    return sum(segment.size for segment in task.state.segments)


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
