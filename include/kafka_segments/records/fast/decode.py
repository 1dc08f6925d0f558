"""The columnar hot path: whole-segment header tables (``scan_header_table``, ``log.scan_headers`` in columns)
and record columns (``decode_record_columns``, equal to every record of ``log.iter_batches``).

Damage is reported exactly as the Python path reports it: the kernels only find which entry is bad, and the
Python code for that one entry raises the error, so class, message, position and offset are the same, and
the first damaged entry wins. Segments holding legacy entries (magic 0/1) are read by the Python path. Numbers
the columns cannot hold (beyond int64, spans of 2 GiB or more) raise ``CorruptRecordError``."""

from __future__ import annotations

from collections.abc import Callable
from typing import NoReturn

import numpy as np
import numpy.typing as npt

from kafka_segments.errors import CorruptRecordError, DecompressionLimitError
from kafka_segments.records.attributes import TIMESTAMP_TYPE_MASK, CompressionType
from kafka_segments.records.batch import RECORDS_OFFSET, BatchHeader, RecordBatch
from kafka_segments.records.compression import (
    MAX_INFLATED_BATCH_BYTES,
    batch_decompressors,
    decompress_buffer,
)
from kafka_segments.records.decompressed_size import DecompressedSizeError
from kafka_segments.records.fast import decode_kernels as _k
from kafka_segments.records.fast.columns import I64, U8, HeaderTable, RecordColumns, allocate_record_columns
from kafka_segments.records.fast.lz4_into import decode_frames_into, frame_block_max, native_decoder
from kafka_segments.records.fast.scan import (
    as_read_only_array,
    as_view,
    first_damage,
    raise_damage,
    scan_header_table,
    walk,
)
from kafka_segments.records.log import iter_batches
from kafka_segments.records.record import MIN_RECORD_SIZE, encode_record

__all__ = ["HeaderTable", "RecordColumns", "decode_record_columns", "scan_header_table"]

Buffer = bytes | bytearray | memoryview

_MAX_CODEC_ID = max(CompressionType)

LZ4_MAX_RATIO = 256
"""More than LZ4's largest ratio (a 255-byte run per length byte): a frame of ``n`` bytes inflates to less
than ``n * LZ4_MAX_RATIO``."""

SEGMENT_MAX_RATIO = 256
"""Decompressed bytes per stored byte a whole segment may reach in one decode beyond the per-batch limit
(LZ4 cannot pass it; gzip and zstd records of real topics average far below it): a segment of many batches
each inflating just under the limit (decompression bombs) costs one limit, not one per batch."""

_EXPECTED_RATIO = 4
"""Initial arena bytes per compressed byte (JSON-like batches compress 2-3x); the arena grows if needed."""


def decode_record_columns(
    data: Buffer,
    *,
    segment: str = "<memory>",
    verify_crc: bool = True,
    arena: U8 | None = None,
    max_batch_bytes: int | None = MAX_INFLATED_BATCH_BYTES,
    max_total_bytes: int | None = None,
) -> RecordColumns:
    """Every record of a ``.log`` buffer as columns (control records included, ``is_control`` set): equal to
    the records of ``log.iter_batches(data, segment=segment, verify_crc=verify_crc)``.

    Args:
        arena: a writable uint8 array to decompress into, reused segment after segment (touched memory is
            several times faster than fresh); the result's ``buffer`` may be a view of it, so it must not be
            reused while the result is in use. Uncompressed segments are decoded in place.
        max_batch_bytes: the most bytes one compressed batch may inflate to (``None``: no limit; by default
            ``compression.MAX_INFLATED_BATCH_BYTES``).
        max_total_bytes: the most bytes the records of the whole buffer may take decompressed (``None``: no
            limit; ``segment_records_budget`` gives a segment's): past it, ``DecompressionLimitError`` at the
            first batch that does not fit, having held no more than it (and a decompression step).

    Raises:
        CorruptRecordError: at the first damaged entry, as ``iter_batches`` and ``RecordBatch.records``
            raise it.
        DecompressionLimitError: a compressed batch inflates past ``max_batch_bytes``.
        UnsupportedCodecError: as the Python path.
        ValueError: ``arena`` is not a writable, contiguous, one-dimensional uint8 array.
    """
    if arena is not None and not (
        arena.dtype == np.uint8 and arena.ndim == 1 and arena.flags.c_contiguous and arena.flags.writeable
    ):
        raise ValueError("arena must be a writable, contiguous, one-dimensional uint8 array")
    columns, stopped = decode_record_prefix(
        data,
        segment=segment,
        verify_crc=verify_crc,
        arena=arena,
        max_batch_bytes=max_batch_bytes,
        piece_bytes=max_total_bytes,
    )
    if stopped is not None and max_total_bytes is not None:
        view = as_view(data)
        raise DecompressionLimitError(
            f"the segment's records inflate past {max_total_bytes} bytes (the decompression limit, or "
            f"{SEGMENT_MAX_RATIO} times the segment's {len(view)} bytes if larger; "
            "kafka_segments.compaction.max.batch.decompressed.bytes)",
            segment=segment,
            position=stopped,
            offset=int.from_bytes(view[stopped : stopped + 8], "big", signed=True),
            limit=max_total_bytes,
        )
    return columns


def segment_records_budget(stored_bytes: int, max_batch_bytes: int | None) -> int | None:
    """The most bytes the records of a segment of ``stored_bytes`` may take decompressed in one decode: the
    larger of ``max_batch_bytes`` and ``SEGMENT_MAX_RATIO`` times its size (``None``: no limit)."""
    if max_batch_bytes is None:
        return None
    return max(max_batch_bytes, SEGMENT_MAX_RATIO * stored_bytes)


def decode_record_prefix(
    data: Buffer,
    *,
    segment: str,
    verify_crc: bool,
    arena: U8 | None = None,
    max_batch_bytes: int | None = MAX_INFLATED_BATCH_BYTES,
    piece_bytes: int | None = None,
) -> tuple[RecordColumns, int | None]:
    """``decode_record_columns``, or with ``piece_bytes`` only the first batches whose decompressed records
    take at most that many bytes together (at least one batch, which may take up to ``max_batch_bytes``):
    their columns, and the byte position of the first batch left out (``None``: none was). A batch is
    decompressed with what is left of ``piece_bytes`` as its limit (``max_batch_bytes`` when it is the
    first), so the records held at once never pass ``max(piece_bytes, max_batch_bytes)`` by more than a
    decompression step; damage after the batches returned is not looked at (the next piece finds it)."""
    array = as_read_only_array(data)
    full, stop, status = walk(array)
    if status == _k.SCAN_LEGACY:
        legacy = _decode_via_entries(
            data, segment=segment, verify_crc=verify_crc, max_inflated=max_batch_bytes
        )
        return legacy, None
    view = as_view(data)

    # The records of the entries before the first damaged frame, header or CRC can still fail first.
    limit, pending = first_damage(view, full, stop, status, verify_crc=verify_crc)

    records, payload_start, payload_end, bad_payload, too_large, capped = _payloads(
        array, view, full.prefix(limit), arena, max_batch_bytes, piece_bytes
    )
    decodable = len(payload_start)
    counts = full.records_count[:decodable]
    too_many = np.flatnonzero(counts.astype(np.int64) * MIN_RECORD_SIZE > payload_end - payload_start)
    if too_many.size:
        decodable = bad_payload = int(too_many[0])
    table = full.prefix(decodable)
    counts = table.records_count
    first = np.zeros(decodable + 1, dtype=np.int64)
    np.cumsum(counts, out=first[1:])
    columns = allocate_record_columns(int(first[-1]))
    bad_batch, code = _k.decode_records(
        records,
        payload_start[:decodable],
        payload_end[:decodable],
        table.base_offset,
        table.base_timestamp,
        table.max_timestamp,
        (table.attributes & TIMESTAMP_TYPE_MASK) != 0,
        counts,
        first[:-1],
        *columns.values(),
    )
    if bad_batch >= 0:
        _raise_records(
            view, full, int(bad_batch), segment, _k.ERROR_REASONS.get(int(code), "malformed records")
        )
    if bad_payload is not None:
        if too_large is not None and bad_payload == len(payload_start):
            _raise_too_large(full, bad_payload, segment, too_large)
        _raise_records(view, full, bad_payload, segment, "the records do not fit the batch")
    if pending is not None and capped is None:
        raise_damage(view, full, pending, segment)
    decoded = RecordColumns(
        buffer=records, **columns, is_control=np.repeat(table.is_control, counts), batches=table
    )
    return decoded, None if capped is None else int(full.position[capped])


def _payloads(
    array: U8, view: memoryview, table: HeaderTable, reuse: U8 | None, limit: int | None, cap: int | None
) -> tuple[U8, I64, I64, int | None, tuple[str, int] | None, int | None]:
    """(arena, payload starts, payload ends, index of the first batch that cannot be decompressed, and why
    when it inflates past ``limit``, index of the first batch left out for ``cap``). Each stream is copied
    into the arena as soon as it is decompressed, while the decompressor's buffers are in the cache (fresh
    memory is the dominant cost); LZ4 runs go straight in. ``cap``: the arena bytes of the batches decoded
    (``decode_record_prefix``'s ``piece_bytes``)."""
    starts = table.position + RECORDS_OFFSET
    ends = table.position + table.size_in_bytes
    codecs = table.codec
    if not codecs.any():
        return array, starts, ends, None, None, None
    stored = ends - starts
    arena = reuse if reuse is not None else _new_arena(stored, codecs, cap=cap, limit=limit)
    count = len(table)
    payload_start = np.empty(count, dtype=np.int64)
    block_max = _kernel_block_max(array, starts, ends, codecs)
    if limit is not None:  # the kernel decodes whole frames: only those that cannot pass the limit
        block_max[stored * LZ4_MAX_RATIO > limit] = 0
    decompressors = _decompressors(codecs, array, starts, ends, np.flatnonzero(block_max <= 0), limit)
    used, index, failed, too_large, capped = 0, 0, None, None, None
    while index < count:
        if index not in decompressors:
            index, used = decode_frames_into(
                array, starts, ends, block_max, out=arena, used=used, first=index, payload_start=payload_start
            )
            if index == count:
                break
        piece: bytes | bytearray | memoryview = view[int(starts[index]) : int(ends[index])]
        if index not in decompressors:  # a frame the kernel did not decode (damaged, or no room for a block)
            decompressors.update(_decompressors(codecs, array, starts, ends, np.array([index]), limit))
        decompress = decompressors[index]
        room = None if cap is None or used == 0 else cap - used
        if room is not None and (room <= 0 or (decompress is None and len(piece) > room)):
            capped = index
            break
        if decompress is not None:
            output, stop, too_large = _inflate(decompress, int(codecs[index]), piece, limit, room)
            if output is None:
                capped, failed = (index, None) if stop == _CAPPED else (None, index)
                break
            piece = output
        arena = _append(arena, used, piece, cap)
        payload_start[index] = used
        used += len(piece)
        index += 1
    if failed is not None:
        count = failed
    elif capped is not None:
        count = capped
    payload_start = payload_start[:count]
    payload_end = np.append(payload_start[1:], used) if count else payload_start
    arena = arena[:used]
    arena.flags.writeable = False
    return arena, payload_start, payload_end, failed, too_large, capped


_CAPPED = "capped"
_FAILED = "failed"


def _new_arena(stored: I64, codecs: npt.NDArray[np.integer], *, cap: int | None, limit: int | None) -> U8:
    """Fresh memory for the records of batches of ``stored`` bytes: their expected size, at most the larger
    of ``cap`` and ``limit`` (it grows when needed)."""
    compressed = codecs != CompressionType.NONE
    expected = int(stored[~compressed].sum() + _EXPECTED_RATIO * stored[compressed].sum())
    return np.empty(expected if cap is None else min(expected, max(cap, limit or 0)), np.uint8)


def _inflate(
    decompress: Callable[[Buffer], bytes | bytearray],
    codec: int,
    piece: Buffer,
    limit: int | None,
    room: int | None,
) -> tuple[Buffer | None, str | None, tuple[str, int] | None]:
    """(``piece`` decompressed, None, None), or (None, why it stopped, the limit error's text and limit):
    ``_CAPPED`` when it inflates past ``room`` (what is left of a piece, when less than ``limit``: the next
    piece decodes it), ``_FAILED`` when past ``limit`` or damaged (the Python path raises it again, with the
    location: ``_raise_too_large``, ``_raise_records``)."""
    try:
        if room is None:
            return decompress(piece), None, None
        return (
            decompress_buffer(codec, piece, max_size=room if limit is None else min(room, limit)),
            None,
            None,
        )
    except DecompressedSizeError as exc:  # never decompressed again (_raise_too_large)
        # its text and limit only: the exception's traceback would hold this frame (and the output so far)
        # in a reference cycle until the cyclic collector runs (paused in rounds)
        if room is not None and (limit is None or room < limit):
            return None, _CAPPED, None
        return None, _FAILED, (str(exc), exc.limit)
    except Exception:  # the Python path raises it again, with the location (_raise_records)
        return None, _FAILED, None


def _kernel_block_max(array: U8, starts: I64, ends: I64, codecs: npt.NDArray[np.integer]) -> I64:
    """``lz4_into.frame_block_max`` of the LZ4 batches: > 0 for those the kernel decodes (none when LZ4's
    block decoder is not linked)."""
    lz4 = codecs == CompressionType.LZ4
    if lz4.any() and native_decoder():
        return frame_block_max(array, starts, ends, lz4)
    return np.zeros(len(codecs), dtype=np.int64)


def _decompressors(
    codecs: npt.NDArray[np.integer],
    array: U8,
    starts: I64,
    ends: I64,
    rows: npt.NDArray[np.intp],
    limit: int | None,
) -> dict[int, Callable[[Buffer], bytes | bytearray] | None]:
    """Batch row -> its decompressor (``compression.batch_decompressors``), for ``rows``."""
    found = batch_decompressors(codecs[rows], array, starts[rows], ends[rows], max_size=limit)
    return dict(zip(rows.tolist(), found, strict=True))


def _append(arena: U8, used: int, piece: Buffer, cap: int | None = None) -> U8:
    """``arena`` (or a copy twice as large, at most ``cap`` unless ``piece`` needs more, when ``piece`` does
    not fit) with ``piece`` at ``used``."""
    size = len(piece)
    if used + size > len(arena):
        grown_size = max(2 * len(arena), used + size)
        if cap is not None:
            grown_size = max(min(grown_size, cap), used + size)
        grown = np.empty(grown_size, dtype=np.uint8)
        grown[:used] = arena[:used]
        arena = grown
    arena.data[used : used + size] = piece  # a memoryview copy: numpy's slice assignment is slower
    return arena


def _decode_via_entries(
    data: Buffer, *, segment: str, verify_crc: bool, max_inflated: int | None
) -> RecordColumns:
    """Legacy-bearing segments: decode in Python, then lay the records out as v2 bytes for the columns."""
    headers: list[BatchHeader] = []
    pieces: list[bytes] = []
    offsets: list[int] = []
    timestamps: list[int] = []
    entry_of: list[int] = []
    # records are decoded entry by entry, so that damage is met in the order iter_batches meets it
    entries = iter_batches(data, segment=segment, verify_crc=verify_crc, max_inflated=max_inflated)
    for index, entry in enumerate(entries):
        headers.append(entry.header)
        for record in entry.records:
            pieces.append(encode_record(record, base_offset=record.offset, base_timestamp=record.timestamp))
            offsets.append(record.offset)
            timestamps.append(record.timestamp)
            entry_of.append(index)
    table = HeaderTable.from_headers(headers)
    lengths = np.fromiter((len(piece) for piece in pieces), dtype=np.int64, count=len(pieces))
    ends = np.cumsum(lengths)
    arena = as_read_only_array(b"".join(pieces))
    total = len(pieces)
    columns = allocate_record_columns(total)
    try:
        offset_column = np.array(offsets, dtype=np.int64)
        timestamp_column = np.array(timestamps, dtype=np.int64)
    except OverflowError as exc:
        raise CorruptRecordError(_k.ERROR_REASONS[_k.ERR_OVERFLOW], segment=segment, position=0) from exc
    bad_batch, code = _k.decode_records(
        arena,
        ends - lengths,
        ends,
        offset_column,
        timestamp_column,
        np.zeros(total, dtype=np.int64),
        np.zeros(total, dtype=np.bool_),
        np.ones(total, dtype=np.int32),
        np.arange(total, dtype=np.int64),
        *columns.values(),
    )
    if bad_batch >= 0:  # cannot happen: the bytes were just encoded
        raise CorruptRecordError(
            f"re-encoded record does not decode: {_k.ERROR_REASONS.get(int(code))}",
            segment=segment,
            position=0,
        )
    batch_index = np.array(entry_of, dtype=np.int32)
    columns["batch_index"] = batch_index
    return RecordColumns(buffer=arena, **columns, is_control=table.is_control[batch_index], batches=table)


def _raise_too_large(table: HeaderTable, index: int, segment: str, error: tuple[str, int]) -> NoReturn:
    header = table.header(index)
    reason, limit = error
    raise DecompressionLimitError(
        f"{reason} (kafka_segments.compaction.max.batch.decompressed.bytes)",
        segment=segment,
        position=header.position,
        offset=header.base_offset,
        limit=limit,
    )


def _raise_records(view: memoryview, table: HeaderTable, index: int, segment: str, reason: str) -> NoReturn:
    """Raise what ``RecordBatch.records`` raises for batch ``index``, else CorruptRecordError(reason)."""
    header = table.header(index)
    batch = RecordBatch(
        view[header.position : header.position + header.size_in_bytes], header, segment=segment
    )
    records = batch.records  # raises the Python path's error for this batch
    reason += f" (the Python decoder reads its {len(records)} records)"
    raise CorruptRecordError(reason, segment=segment, position=header.position, offset=header.base_offset)
