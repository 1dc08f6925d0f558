"""One task's records: its segment (or its byte span) read as the manifest pins it, decoded a bounded piece at
a time (``span_read``), and the records a consumer of ``[start, end)`` receives turned into Arrow batches:
never control records, never an offset outside the range (so never below the log start offset), and no
aborted data when ``drop_aborted``.

What a task holds at once is bounded whatever its segment inflates to (docs/lake.md, "Bad input and
faults"): one piece of decompressed records (at most ``MAX_INFLATED_BATCH_BYTES``, or one batch within that
limit) and one Arrow batch (at most ``DEFAULT_BATCH_BYTES`` of keys and values, or one record)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

import numpy as np
import numpy.typing as npt

from kafka_segments.reading.aborted import aborted_rows
from kafka_segments.reading.arrow import record_batch
from kafka_segments.reading.span_read import Decoded, TaskColumns, segment_pieces, task_pieces
from kafka_segments.reading.tasks import SegmentTask
from kafka_segments.storage.base import ObjectStore

I64 = npt.NDArray[np.int64]

DEFAULT_BATCH_ROWS = 65_536
"""Rows per Arrow batch handed on (Spark's ``spark.sql.execution.arrow.maxRecordsPerBatch`` is 10,000)."""
DEFAULT_BATCH_BYTES = 64 << 20
"""Key and value bytes per Arrow batch handed on (a batch holds more only for one record that large): what
Spark's JVM takes in at once from a task stays bounded whatever the records' sizes."""


def read_task(
    store: ObjectStore,
    task: SegmentTask,
    *,
    include_headers: bool,
    batch_rows: int = DEFAULT_BATCH_ROWS,
    batch_bytes: int = DEFAULT_BATCH_BYTES,
) -> Iterator[Any]:
    """The task's records as ``pyarrow.RecordBatch`` es of at most ``batch_rows`` rows and ``batch_bytes``
    key and value bytes (or one record), in offset order.

    Raises:
        SegmentObjectMismatchError, CorruptRecordError: as ``span_read.task_pieces`` (for this or a later
            segment); ``DecompressionLimitError``: a batch inflates past the limit.
    """
    for chosen in task_pieces(store, task):
        yield from _piece_batches(
            store,
            task,
            chosen,
            include_headers=include_headers,
            batch_rows=batch_rows,
            batch_bytes=batch_bytes,
        )
        del chosen  # not held while the next piece is decompressed


def _piece_batches(
    store: ObjectStore,
    task: SegmentTask,
    chosen: TaskColumns,
    *,
    include_headers: bool,
    batch_rows: int,
    batch_bytes: int,
) -> Iterator[Any]:
    columns, where = chosen.columns, chosen.where
    wanted = (~columns.is_control) & (columns.offset >= task.start) & (columns.offset < task.end)
    if chosen.owned is not None:
        wanted &= chosen.owned
    if task.drop_aborted:

        def following() -> Iterator[Decoded]:
            later = itertools.chain.from_iterable(
                segment_pieces(store, segment) for segment in task.following
            )
            return itertools.chain(chosen.rest(), later)

        wanted &= ~aborted_rows(columns, segment=where, following=following)
    rows = np.flatnonzero(wanted)
    sizes = np.maximum(columns.key_length[rows], 0).astype(np.int64) + np.maximum(
        columns.value_length[rows], 0
    )
    tp = task.topic_partition
    for first, stop in _cuts(sizes, batch_rows=batch_rows, batch_bytes=batch_bytes):
        yield record_batch(
            columns, rows[first:stop], topic=tp.topic, partition=tp.partition, include_headers=include_headers
        )


def _cuts(sizes: I64, *, batch_rows: int, batch_bytes: int) -> Iterator[tuple[int, int]]:
    """``[first, stop)`` row ranges of at most ``batch_rows`` rows whose ``sizes`` add up to at most
    ``batch_bytes`` (a range holds at least one row)."""
    ends = np.cumsum(sizes)
    first = 0
    while first < len(sizes):
        before = int(ends[first - 1]) if first else 0
        fits = int(np.searchsorted(ends, before + batch_bytes, side="right"))
        stop = min(len(sizes), first + batch_rows, max(fits, first + 1))
        yield first, stop
        first = stop
