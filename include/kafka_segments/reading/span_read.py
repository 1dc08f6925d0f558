"""A task's records as decoded columns: the whole segment (read and checked against the manifest's sha256),
or only its byte span (a ranged read pinned to the manifest's etag) when the bytes prove the span holds
every record the task owns (docs/reading.md, "Large segments and byte ranges").

What a span's read checks, and why that is enough:

* **the object**: the ranged GET is pinned to the etag the manifest records (S3's ``If-Match``; on other
  stores the etag is compared before and after the read), so the bytes are the version the manifest names;
* **the content**: every batch's CRC-32C is checked as it is decoded;
* **the boundaries**: the decode walks batch by batch from the span's start and must end exactly at the
  span's end (else the last batch is cut: ``TruncatedSegmentError``), so each boundary a task of the same plan
  starts from is proven by the task before it, back to position 0;
* **the offsets** at an end whose neighbouring span no task reads: the first batch's base offset is at or
  below the task's first offset (offsets grow along a segment: nothing before it is wanted), and the batch
  just past the end starts at or after the task's end offset (its base offset is read with the span).

When a check fails (the ``.index`` was stale or wrong), or the object is no longer that etag (a regrown
adopted segment), the task falls back to the whole segment, checked against its sha256, and keeps the
batches that start in its span: the same rows, from bytes the manifest vouches for. A damaged batch or a
replaced object is then the whole read's named error (``CorruptRecordError``,
``SegmentObjectMismatchError``), never other rows."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from kafka_segments.errors import CorruptRecordError, ObjectNotFoundError, PreconditionFailedError
from kafka_segments.lake.reader import pinned_range, read_segment
from kafka_segments.reading.spans import ByteSpan
from kafka_segments.reading.tasks import SegmentTask
from kafka_segments.records.batch import MAGIC_VALUE_V2
from kafka_segments.records.fast import RecordColumns, decode_record_columns
from kafka_segments.state import SegmentEntry
from kafka_segments.storage.base import ObjectStore

Bools = npt.NDArray[np.bool_]
Decoded = tuple[RecordColumns, str]
Later = Callable[[], Iterable[Decoded]]

PEEK_BYTES = 17
"""Bytes of the next batch read with a span to check where it starts: its base offset (8), length (4),
partition leader epoch (4) and magic (1)."""
FRAME_BYTES = 12
"""An entry's base offset and length: the length counts the bytes after them."""


@dataclass(frozen=True, slots=True)
class TaskColumns:
    """The decoded records a task chooses from.

    ``owned``: the rows of the batches the task reads (``None``: all). ``rest``: the rest of the segment after
    ``columns``, for a transaction whose marker lies past them."""

    columns: RecordColumns
    where: str
    owned: Bools | None = None
    rest: Later = tuple


def task_columns(store: ObjectStore, task: SegmentTask) -> TaskColumns:
    """The records ``task`` chooses from: its span's bytes when they prove themselves, else the segment's.

    Raises:
        SegmentObjectMismatchError: the object is not what the manifest recorded.
        CorruptRecordError: a batch is damaged.
    """
    span = task.span
    if span is None:
        return TaskColumns(*decode_segment(store, task.segment))
    where = store.location(task.segment.key)
    try:
        columns = _span_columns(store, task, span, where)
    except (PreconditionFailedError, ObjectNotFoundError, CorruptRecordError):
        columns = None
    if columns is None:
        return _whole(store, task, span, where)
    return TaskColumns(
        columns, where, rest=lambda: _rest(store, task.segment, span.end, where, chunk=span.end - span.start)
    )


def decode_segment(store: ObjectStore, segment: SegmentEntry) -> tuple[RecordColumns, str]:
    """The segment's records as columns (read whole, sha256-checked), and its location for messages.

    Raises:
        SegmentObjectMismatchError: the object is not what the manifest recorded.
        CorruptRecordError: a batch is damaged.
    """
    where = store.location(segment.key)
    return decode_record_columns(read_segment(store, segment), segment=where), where


def _span_columns(store: ObjectStore, task: SegmentTask, span: ByteSpan, where: str) -> RecordColumns | None:
    """The span's records, or ``None`` when its bytes do not prove it holds every record the task owns."""
    segment = task.segment
    peek = not span.read_after and span.end < segment.size
    data = pinned_range(store, segment, start=span.start, end=span.end + (PEEK_BYTES if peek else 0))
    length = span.end - span.start
    columns = decode_record_columns(
        memoryview(data)[:length], segment=f"{where} (bytes {span.start}-{span.end})"
    )
    batches = columns.batches
    if len(batches) == 0 or bool(np.any(batches.magic != MAGIC_VALUE_V2)):
        return None
    if not span.read_before and span.start > 0 and int(batches.base_offset[0]) > task.start:
        return None
    if peek and not _starts_at_or_after(data[length:], task.end):
        return None
    return columns


def _starts_at_or_after(header: bytes, offset: int) -> bool:
    """The v2 batch whose first bytes are ``header`` starts at or after ``offset``."""
    if len(header) < PEEK_BYTES or header[PEEK_BYTES - 1] != MAGIC_VALUE_V2:
        return False
    return int.from_bytes(header[:8], "big", signed=True) >= offset


def _whole(store: ObjectStore, task: SegmentTask, span: ByteSpan, where: str) -> TaskColumns:
    """The segment's records (sha256-checked), owning the batches that start in the span (and before or
    after it, on a side no other task of the plan reads)."""
    segment = task.segment
    columns, _ = decode_segment(store, segment)
    positions = columns.batches.position[columns.batch_index]
    low = span.start if span.read_before else 0
    high = span.end if span.read_after else segment.size
    return TaskColumns(columns, where, owned=(positions >= low) & (positions < high))


def _rest(
    store: ObjectStore, segment: SegmentEntry, start: int, where: str, *, chunk: int
) -> Iterator[Decoded]:
    """The segment's records from ``start`` (a proven batch boundary) on, a span's length at a time (each
    piece cut after its last whole batch), read only as far as the caller iterates."""
    while start < segment.size:
        end = min(segment.size, start + chunk)
        try:
            data = pinned_range(store, segment, start=start, end=end)
        except (PreconditionFailedError, ObjectNotFoundError):
            data, end = read_segment(store, segment)[start:], segment.size
        whole = data if end == segment.size else memoryview(data)[: _whole_batches(data)]
        if not whole:
            chunk *= 2
            continue
        yield decode_record_columns(whole, segment=f"{where} (bytes {start}-{start + len(whole)})"), where
        start += len(whole)


def _whole_batches(data: bytes) -> int:
    """The length of the batches ``data`` holds whole (by their frames: offset, length)."""
    position = 0
    while position + FRAME_BYTES <= len(data):
        after = position + FRAME_BYTES + int.from_bytes(data[position + 8 : position + FRAME_BYTES], "big")
        if after > len(data):
            break
        position = after
    return position
