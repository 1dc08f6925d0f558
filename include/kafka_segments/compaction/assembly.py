"""A cleaned segment's output batches, in order (``assemble``): a copied batch's own bytes, the rebuilt
batches (``records.fast.rebuild_batches``; the few it does not write, record by record: the same bytes),
the 61-byte empty headers.

The rebuilt batches take their records from the segment's decoded columns, or, for a segment decoded in
steps that did not keep its records (``DecodedSegment.steps``), from each step decoded again, one at a
time, into one arena reused step after step: a round then holds one step of inflated records, not the
segment's (as Kafka's cleaning pass decompresses batch after batch)."""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np

from kafka_segments.compaction.decoded_segment import DecodedSegment
from kafka_segments.compaction.fates import I64, Bools, Codes
from kafka_segments.compaction.results import ACTIONS, BatchAction
from kafka_segments.compaction.source import SourceSegment
from kafka_segments.errors import CorruptRecordError
from kafka_segments.records.attributes import CONTROL_FLAG_MASK, TRANSACTIONAL_FLAG_MASK
from kafka_segments.records.batch import (
    MAGIC_VALUE_V2,
    NO_PRODUCER_EPOCH,
    NO_PRODUCER_ID,
    NO_TIMESTAMP,
    BatchHeader,
)
from kafka_segments.records.builder import empty_batch_header, rebuild_batch
from kafka_segments.records.fast import HeaderTable, RecordColumns, rebuild_batches

__all__ = ["assemble"]

_COPIED, _REBUILT, _EMPTY_HEADER = (
    ACTIONS.index(action) for action in (BatchAction.COPIED, BatchAction.REBUILT, BatchAction.EMPTY_HEADER)
)


def assemble(
    segment: SourceSegment,
    decoded: DecodedSegment,
    action: Codes,
    keep: Bools,
    horizon_ms: list[int | None],
    header: Callable[[int], BatchHeader],
) -> list[bytes]:
    """The segment's output batches in order: ``action`` per batch (``results.ACTIONS`` codes), ``keep``
    per record, ``horizon_ms``: the delete horizon to stamp on each rebuilt batch (``None``: none)."""
    rebuilt = np.flatnonzero(action == _REBUILT)
    table = decoded.columns.batches
    _check_producer_state(segment, table, rebuilt[table.magic[rebuilt] >= MAGIC_VALUE_V2])
    _check_timestamps(segment, decoded.columns, keep, rebuilt)
    written = iter(_rebuilt(segment, decoded, keep, rebuilt, horizon_ms, header))
    view = memoryview(segment.data)
    positions = table.position.tolist()
    ends = (table.position + table.size_in_bytes).tolist()
    out: list[bytes] = []
    for index, code in enumerate(action.tolist()):
        if code == _COPIED:
            out.append(bytes(view[positions[index] : ends[index]]))
        elif code == _REBUILT:
            out.append(next(written))
        elif code == _EMPTY_HEADER:
            out.append(empty_batch_header(header(index)))
    return out


def _check_producer_state(segment: SourceSegment, table: HeaderTable, rebuilt: I64) -> None:
    """Kafka's cleaner writes a rebuilt batch with ``MemoryRecordsBuilder``, which refuses a producer state no
    producer can have (``validateProducerState``): the round fails there, as Kafka's does.

    Raises:
        CorruptRecordError: a rebuilt batch transactional without a producer id, or with a producer id but
            no epoch, or (data) no sequence.
    """
    producer = table.producer_id[rebuilt]
    transactional = (table.attributes[rebuilt] & TRANSACTIONAL_FLAG_MASK) != 0
    control = (table.attributes[rebuilt] & CONTROL_FLAG_MASK) != 0
    reasons = (
        (transactional & (producer == NO_PRODUCER_ID), "transactional without a valid producer id"),
        (
            (producer != NO_PRODUCER_ID) & (table.producer_epoch[rebuilt] == NO_PRODUCER_EPOCH),
            "a negative producer epoch",
        ),
        ((producer != NO_PRODUCER_ID) & (table.base_sequence[rebuilt] < 0) & ~control, "a negative sequence"),
    )
    for bad, reason in reasons:
        if bad.any():
            row = int(rebuilt[np.argmax(bad)])
            producer_id = int(table.producer_id[row])
            raise CorruptRecordError(
                f"Kafka's cleaner cannot rebuild this batch of producer {producer_id}: {reason} "
                "(MemoryRecordsBuilder.validateProducerState)",
                segment=segment.name,
                position=int(table.position[row]),
                offset=int(table.base_offset[row]),
            )


def _check_timestamps(segment: SourceSegment, columns: RecordColumns, keep: Bools, rebuilt: I64) -> None:
    """Kafka's builder refuses a retained record's timestamp below 0 other than -1 (``appendWithOffset``):
    the round fails there, as Kafka's does.

    Raises:
        CorruptRecordError: a record the round keeps in a rebuilt batch has such a timestamp.
    """
    if not rebuilt.size:
        return
    in_rebuilt = np.zeros(len(columns.batches), dtype=np.bool_)
    in_rebuilt[rebuilt] = True
    bad = np.flatnonzero(in_rebuilt[columns.batch_index] & keep & (columns.timestamp < NO_TIMESTAMP))
    if bad.size:
        row = int(bad[0])
        batch = int(columns.batch_index[row])
        raise CorruptRecordError(
            f"Kafka's cleaner cannot rebuild this batch: its record at offset {int(columns.offset[row])} has "
            f"the negative timestamp {int(columns.timestamp[row])} (MemoryRecordsBuilder.appendWithOffset)",
            segment=segment.name,
            position=int(columns.batches.position[batch]),
            offset=int(columns.batches.base_offset[batch]),
        )


def _rebuilt(
    segment: SourceSegment,
    decoded: DecodedSegment,
    keep: Bools,
    rebuilt: I64,
    horizon_ms: list[int | None],
    header: Callable[[int], BatchHeader],
) -> list[bytes]:
    """The batches ``rebuilt`` (in order) written, from the columns or step by step (module docstring)."""
    steps = decoded.steps
    if steps is None:
        return _written(segment, decoded.columns, keep, rebuilt, horizon_ms, header)
    arena = np.empty(steps.largest, dtype=np.uint8)
    of_step = steps.of_batches(rebuilt)
    bounds = np.searchsorted(of_step, np.arange(len(steps) + 1)).tolist()
    out: list[bytes] = []
    for step in np.unique(of_step).tolist():
        first, stop = bounds[step], bounds[step + 1]
        columns = steps.inflate(segment.data, step, arena=arena, segment=segment.name)
        batch, row = int(steps.batch_start[step]), int(steps.row_start[step])
        out += _written(
            segment,
            columns,
            keep[row : row + len(columns)],
            rebuilt[first:stop] - batch,
            horizon_ms[first:stop],
            functools.partial(_shifted, header, batch),
        )
    return out


def _shifted(header: Callable[[int], BatchHeader], batch: int, index: int) -> BatchHeader:
    """``header`` of a step's batch ``index`` (the step's first batch being the segment's ``batch``)."""
    return header(batch + index)


def _written(
    segment: SourceSegment,
    columns: RecordColumns,
    keep: Bools,
    batches: I64,
    horizon_ms: list[int | None],
    header: Callable[[int], BatchHeader],
) -> list[bytes]:
    """``batches`` of ``columns`` rebuilt: all at once, the few the fast path leaves, record by record."""
    out: list[bytes] = []
    fast = rebuild_batches(columns, keep, batches, horizon_ms)
    for index, done, horizon in zip(batches.tolist(), fast, horizon_ms, strict=True):
        if done is not None:
            out.append(done)
            continue
        rows = np.searchsorted(columns.batch_index, [index, index + 1]).tolist()
        out.append(_rebuild_per_record(segment, columns, keep, header(index), (rows[0], rows[1]), horizon))
    return out


def _rebuild_per_record(
    segment: SourceSegment,
    columns: RecordColumns,
    keep: Bools,
    header: BatchHeader,
    span: tuple[int, int],
    delete_horizon_ms: int | None,
) -> bytes:
    rows = np.arange(span[0], span[1])
    records = [columns.record(int(row)) for row in rows[keep[span[0] : span[1]]]]
    return rebuild_batch(segment.batch_at(header), records, delete_horizon_ms=delete_horizon_ms)
