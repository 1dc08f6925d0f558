"""A task's records as decoded columns: the whole segment (read and checked against the manifest's sha256),
or only its byte span (a ranged read pinned to the manifest's etag) when the bytes prove the span holds
every record the task owns (docs/reading.md, "Large segments and byte ranges"). The records come a bounded
piece at a time (``records.fast.decode_record_pieces``): a task holds at most one piece decompressed, whatever
its segment inflates to.

What a span's read checks, and why that is enough:

* **the object**: the ranged GET is pinned to the etag the manifest records (S3's ``If-Match``; on other
  stores the etag is compared before and after the read), so the bytes are the version the manifest names;
* **the content**: every batch's CRC-32C is checked (with the frames and headers, before any is decoded);
* **the boundaries**: the decode walks batch by batch from the span's start and must end exactly at the
  span's end (else the last batch is cut: ``TruncatedSegmentError``), so each boundary a task of the same plan
  starts from is proven by the task before it, back to position 0;
* **the offsets** at an end whose neighbouring span no task reads: the first batch's base offset is at or
  below the task's first offset (offsets grow along a segment: nothing before it is wanted), and the batch
  just past the end starts at or after the task's end offset (its base offset is read with the span).

The spans are cut at the entries of a ``.index`` the manifest pins (``lake.index_pin``: checked against the
``.log`` when the segment entered the lake), so their starts are batch boundaries; these checks are defence
in depth. When one fails, or the object is no longer that etag (a regrown
adopted segment), the task falls back to the whole segment, checked against its sha256, and keeps the
batches that start in its span: the same rows, from bytes the manifest vouches for. A damaged batch or a
replaced object is then the whole read's named error (``CorruptRecordError``,
``SegmentObjectMismatchError``), never other rows. Every check is made before the first row is given, so a
fallback never repeats a row; records that fail to decode in a span that passed them (its batches' CRCs
hold) are that span's ``CorruptRecordError``, naming the object and the byte position in it."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from kafka_segments.errors import CorruptRecordError, ObjectNotFoundError, PreconditionFailedError
from kafka_segments.lake.reader import pinned_range, read_segment
from kafka_segments.reading.spans import ByteSpan
from kafka_segments.reading.tasks import SegmentTask
from kafka_segments.records.batch import MAGIC_VALUE_V2
from kafka_segments.records.fast import RecordColumns, decode_record_pieces, scan_header_table
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
    """One piece of the decoded records a task chooses from.

    ``owned``: the rows of the batches the task reads (``None``: all). ``rest``: the records after the piece
    (the rest of its segment, piece by piece), for a transaction whose marker lies past them."""

    columns: RecordColumns
    where: str
    owned: Bools | None = None
    rest: Later = tuple


def task_pieces(store: ObjectStore, task: SegmentTask) -> Iterator[TaskColumns]:
    """The records ``task`` chooses from, piece by piece: its span's bytes when they prove themselves, else
    the segment's.

    Raises:
        SegmentObjectMismatchError: the object is not what the manifest recorded.
        CorruptRecordError: a batch is damaged (``DecompressionLimitError``: it inflates past the limit).
    """
    span = task.span
    segment = task.segment
    where = store.location(segment.key)
    if span is None:
        yield from _pieces(read_segment(store, segment), where, origin=0, after=tuple)
        return
    try:
        data = _span_bytes(store, task, span, where)
    except (PreconditionFailedError, ObjectNotFoundError, CorruptRecordError):
        data = None
    if data is None:
        yield from _whole(store, task, span, where)
        return

    def after() -> Iterator[Decoded]:
        return _rest(store, segment, span.end, where, chunk=span.end - span.start)

    yield from _pieces(data, where, origin=span.start, after=after)


def segment_pieces(store: ObjectStore, segment: SegmentEntry) -> Iterator[Decoded]:
    """The segment's records (read whole, sha256-checked) piece by piece, with its location for messages.

    Raises:
        SegmentObjectMismatchError: the object is not what the manifest recorded.
        CorruptRecordError: a batch is damaged.
    """
    where = store.location(segment.key)
    for columns in decode_record_pieces(read_segment(store, segment), segment=where):
        yield columns, where
        del columns


def _pieces(data: bytes | memoryview, where: str, *, origin: int, after: Later) -> Iterator[TaskColumns]:
    """The pieces of ``data`` (the segment's bytes from ``origin``), each with the records after it."""
    view = memoryview(data)
    for columns in decode_record_pieces(view, segment=where, origin=origin):
        end = _end(columns, origin)

        def rest(end: int = end) -> Iterator[Decoded]:
            later = (
                (piece, where)
                for piece in decode_record_pieces(view[end - origin :], segment=where, origin=end)
            )
            return itertools.chain(later, after())

        yield TaskColumns(columns, where, rest=rest)
        del columns  # not held while the next piece is decompressed


def _end(columns: RecordColumns, origin: int) -> int:
    """Where the batches of ``columns`` end in their segment (``origin`` when there are none)."""
    batches = columns.batches
    if len(batches) == 0:
        return origin
    return int(batches.position[-1] + batches.size_in_bytes[-1])


def _span_bytes(store: ObjectStore, task: SegmentTask, span: ByteSpan, where: str) -> memoryview | None:
    """The span's bytes, or ``None`` when they do not prove the span holds every record the task owns: its
    frames walk exactly to its end, every CRC-32C holds, every batch is v2, and the offsets at an end no other
    task reads are the task's (module docstring).

    Raises:
        CorruptRecordError: a frame, header or CRC of the span is damaged.
        PreconditionFailedError, ObjectNotFoundError: the object is no longer the manifest's version.
    """
    segment = task.segment
    peek = not span.read_after and span.end < segment.size
    data = pinned_range(store, segment, start=span.start, end=span.end + (PEEK_BYTES if peek else 0))
    length = span.end - span.start
    own = memoryview(data)[:length]
    batches = scan_header_table(own, segment=f"{where} (bytes {span.start}-{span.end})", verify_crc=True)
    if len(batches) == 0 or bool(np.any(batches.magic != MAGIC_VALUE_V2)):
        return None
    if not span.read_before and span.start > 0 and int(batches.base_offset[0]) > task.start:
        return None
    if peek and not _starts_at_or_after(data[length:], task.end):
        return None
    return own


def _starts_at_or_after(header: bytes, offset: int) -> bool:
    """The v2 batch whose first bytes are ``header`` starts at or after ``offset``."""
    if len(header) < PEEK_BYTES or header[PEEK_BYTES - 1] != MAGIC_VALUE_V2:
        return False
    return int.from_bytes(header[:8], "big", signed=True) >= offset


def _whole(store: ObjectStore, task: SegmentTask, span: ByteSpan, where: str) -> Iterator[TaskColumns]:
    """The segment's records (sha256-checked), owning the batches that start in the span (and before or
    after it, on a side no other task of the plan reads)."""
    segment = task.segment
    low = span.start if span.read_before else 0
    high = span.end if span.read_after else segment.size
    for piece in _pieces(read_segment(store, segment), where, origin=0, after=tuple):
        columns = piece.columns
        positions = columns.batches.position[columns.batch_index]
        yield TaskColumns(columns, where, owned=(positions >= low) & (positions < high), rest=piece.rest)
        del piece, columns


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
        for columns in decode_record_pieces(whole, segment=where, origin=start):
            yield columns, where
            del columns
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
