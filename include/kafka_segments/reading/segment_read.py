"""One task's records: its segment (or its byte span) read as the manifest pins it, decoded into columns
(``span_read``), and the records a consumer of ``[start, end)`` receives turned into Arrow batches: never
control records, never an offset outside the range (so never below the log start offset), and no aborted
data when ``drop_aborted``."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

import numpy as np

from kafka_segments.reading.aborted import aborted_rows
from kafka_segments.reading.arrow import record_batch
from kafka_segments.reading.span_read import decode_segment, task_columns
from kafka_segments.reading.tasks import SegmentTask
from kafka_segments.records.fast import RecordColumns
from kafka_segments.storage.base import ObjectStore

DEFAULT_BATCH_ROWS = 65_536
"""Rows per Arrow batch handed on (Spark's ``spark.sql.execution.arrow.maxRecordsPerBatch`` is 10,000)."""


def read_task(
    store: ObjectStore, task: SegmentTask, *, include_headers: bool, batch_rows: int = DEFAULT_BATCH_ROWS
) -> Iterator[Any]:
    """The task's records as ``pyarrow.RecordBatch`` es of at most ``batch_rows`` rows, in offset order.

    Raises:
        SegmentObjectMismatchError, CorruptRecordError: as ``decode_segment`` (for this or a later segment).
    """
    chosen = task_columns(store, task)
    columns, where = chosen.columns, chosen.where
    wanted = (~columns.is_control) & (columns.offset >= task.start) & (columns.offset < task.end)
    if chosen.owned is not None:
        wanted &= chosen.owned
    if task.drop_aborted:

        def following() -> Iterator[tuple[RecordColumns, str]]:
            later = (decode_segment(store, segment) for segment in task.following)
            return itertools.chain(chosen.rest(), later)

        wanted &= ~aborted_rows(columns, segment=where, following=following)
    rows = np.flatnonzero(wanted)
    tp = task.topic_partition
    for first in range(0, len(rows), batch_rows):
        yield record_batch(
            columns,
            rows[first : first + batch_rows],
            topic=tp.topic,
            partition=tp.partition,
            include_headers=include_headers,
        )
