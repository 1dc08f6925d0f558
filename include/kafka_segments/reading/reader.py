"""Reading the lake in Python, without Spark: ``read_lake`` yields Arrow record batches with the schema and
the options of Spark's Kafka source (docs/reading.md). The Spark data source runs the same plan and tasks."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from typing import Any

from kafka_segments.reading.arrow import arrow_schema
from kafka_segments.reading.latest import latest_by_key
from kafka_segments.reading.options import ReadOptions, View
from kafka_segments.reading.plan import ReadPlan, plan_read
from kafka_segments.reading.segment_read import read_task
from kafka_segments.reading.tasks import SegmentTask, tasks_by_partition
from kafka_segments.storage import open_store
from kafka_segments.storage.base import ObjectStore


def read_lake(
    lake: str | os.PathLike[str] | ObjectStore, options: Mapping[str, object] | ReadOptions
) -> Iterator[Any]:
    """The records ``options`` select, as ``pyarrow.RecordBatch`` es, partition by partition in offset order.

    ``lake`` is a URI (``s3://bucket/prefix``, a local path) or an open store; ``options`` use the names of
    Spark's Kafka source (``subscribe``, ``startingOffsets``, ``kafka.isolation.level`` ...) plus
    ``versionAsOf`` / ``timestampAsOf`` and ``view``.

    Raises:
        ReadOptionError, DataLossError, VersionGoneError: see ``plan.plan_read``; errors of the store and
        of the segments it reads.
    """
    store = lake if isinstance(lake, ObjectStore) else open_store(lake)
    plan = plan_read(store, options)
    yield from read_plan(store, plan)


def read_plan(store: ObjectStore, plan: ReadPlan) -> Iterator[Any]:
    """The batches of every task of ``plan``, in order (per partition for ``view=latest``)."""
    include_headers = plan.options.include_headers
    if plan.options.view is View.LATEST:
        for tasks in tasks_by_partition(plan.tasks):
            yield from read_latest(store, tasks, include_headers=include_headers)
        return
    for task in plan.tasks:
        yield from read_task(store, task, include_headers=include_headers)


def read_latest(store: ObjectStore, tasks: list[SegmentTask], *, include_headers: bool) -> Iterator[Any]:
    """The compacted view of one partition's tasks."""
    schema = arrow_schema(include_headers=include_headers)
    batches = (batch for task in tasks for batch in read_task(store, task, include_headers=include_headers))
    yield from latest_by_key(batches, schema=schema).to_batches()
