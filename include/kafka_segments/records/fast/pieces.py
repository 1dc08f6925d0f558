"""A segment's records as columns, a bounded piece at a time (``decode_record_pieces``): what a reader holds
decompressed at once is one piece, whatever the segment inflates to, so the memory of a segment of many
decompression bombs, each under the per-batch limit, does not grow with their number (docs/lake.md, "Bad
input and faults").

The pieces together are exactly ``decode_record_columns``'s records, in order, with batch positions in the
whole buffer; damage raises the same error (class, position, offset) once the pieces before it are given."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

from kafka_segments.errors import CorruptRecordError
from kafka_segments.records.compression import MAX_INFLATED_BATCH_BYTES
from kafka_segments.records.fast import decode_kernels as _k
from kafka_segments.records.fast.columns import RecordColumns
from kafka_segments.records.fast.decode import decode_record_columns, decode_record_prefix
from kafka_segments.records.fast.scan import as_read_only_array, as_view, first_damage, raise_damage, walk

Buffer = bytes | bytearray | memoryview

PIECE_BYTES = 64 << 20
"""Decompressed bytes of one piece by default (a piece holds more only for one batch that large, up to the
per-batch limit)."""


def decode_record_pieces(
    data: Buffer,
    *,
    segment: str = "<memory>",
    verify_crc: bool = True,
    max_batch_bytes: int = MAX_INFLATED_BATCH_BYTES,
    piece_bytes: int | None = None,
    origin: int = 0,
) -> Iterator[RecordColumns]:
    """The records of ``data`` (a ``.log`` buffer) as consecutive pieces of whole batches, each holding at
    most ``piece_bytes`` (default: ``PIECE_BYTES``) decompressed bytes, or one batch of up to
    ``max_batch_bytes``. Uncompressed records are spans of ``data`` (one piece); segments holding legacy
    entries are decoded whole (``decode_record_columns``: each wrapper within the limit). ``origin``: where
    ``data`` starts in its segment (a batch boundary): batch and error positions are the segment's.

    Raises:
        CorruptRecordError: as ``decode_record_columns``, after the pieces before the damage.
        DecompressionLimitError: a batch inflates past ``max_batch_bytes``.
    """
    cap = PIECE_BYTES if piece_bytes is None else piece_bytes
    array = as_read_only_array(data)
    full, stop, status = walk(array)
    if status == _k.SCAN_LEGACY:
        try:
            whole = decode_record_columns(
                data, segment=segment, verify_crc=verify_crc, max_batch_bytes=max_batch_bytes
            )
        except CorruptRecordError as exc:
            raise moved(exc, origin) from None
        yield _shifted(whole, origin)
        return
    view = as_view(data)
    # the frames, CRCs and headers of the whole buffer are checked once, here; the pieces decode the entries
    # before the first damage, which is raised after them (as decode_record_columns raises it)
    clean, pending = first_damage(view, full, stop, status, verify_crc=verify_crc)
    end = int(full.position[clean - 1] + full.size_in_bytes[clean - 1]) if clean else 0
    start = 0
    while True:
        try:
            columns, after = decode_record_prefix(
                view[start:end],
                segment=segment,
                verify_crc=False,
                max_batch_bytes=max_batch_bytes,
                piece_bytes=cap,
            )
        except CorruptRecordError as exc:
            raise moved(exc, origin + start) from None
        yield _shifted(columns, origin + start)
        del columns  # not held while the next piece is decompressed
        if after is None:
            break
        start += after
    if pending is not None:
        try:
            raise_damage(view, full, pending, segment)
        except CorruptRecordError as exc:
            raise moved(exc, origin) from None


def _shifted(columns: RecordColumns, start: int) -> RecordColumns:
    """``columns`` of the bytes from ``start`` on, their batch positions made positions in the segment."""
    if start == 0:
        return columns
    batches = dataclasses.replace(columns.batches, position=columns.batches.position + start)
    return dataclasses.replace(columns, batches=batches)


def moved(error: CorruptRecordError, start: int) -> CorruptRecordError:
    """``error`` about bytes from ``start`` on, its position made a position in the segment (same class and
    attributes, e.g. a ``DecompressionLimitError``'s limit)."""
    if start == 0:
        return error
    shifted = error.__class__.__new__(error.__class__)
    shifted.__dict__.update(error.__dict__)
    CorruptRecordError.__init__(
        shifted, error.reason, segment=error.segment, position=error.position + start, offset=error.offset
    )
    return shifted
