"""Rebuilding v2 batches from decoded record columns, without a Python call per record.

``rebuild_batches`` is ``builder.rebuild_batch`` (Kafka's ``MemoryRecords.buildRetainedRecordsInto``) for
many batches of one segment: one numba call writes every batch and its records (byte for byte what
``record.encode_records`` writes), one more compresses the LZ4 ones. Timestamp deltas are re-encoded
against the new baseTimestamp (the delete horizon when stamped); header keys that were not UTF-8 are
written back as U+FFFD, as Java's ``String`` did. Cases this path does not write (legacy sources, offsets
not increasing, deltas outside int64, invalid UTF-8 header keys) return ``None``: the caller takes the
per-record path."""

from __future__ import annotations

import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import crc32c as _crc32c
import numpy as np
import numpy.typing as npt

from kafka_segments.records.attributes import (
    COMPRESSION_CODEC_MASK,
    DELETE_HORIZON_FLAG_MASK,
    CompressionType,
)
from kafka_segments.records.batch import (
    ATTRIBUTES_OFFSET,
    CRC_OFFSET,
    HEADER,
    LOG_OVERHEAD,
    MAGIC_VALUE_V2,
    SIZE_OFFSET,
)
from kafka_segments.records.compression import Buffer, compressor
from kafka_segments.records.fast import lz4_kernels as _lz4
from kafka_segments.records.fast import rebuild_kernels as _k
from kafka_segments.records.fast.columns import RecordColumns

__all__ = ["PART_BYTES", "rebuild_batches"]

I64 = npt.NDArray[np.int64]
U8 = npt.NDArray[np.uint8]
_INT64_MIN = -(2**63)
_INT64_MAX = 2**63 - 1
_MAX_VARINT_GROWTH = 15
"""Bytes a re-encoded record can grow by: a 10-byte timestamp delta and a 5-byte length."""
_LZ4_SCRATCH = 4 << 20
"""Bytes of compressed batches ``_finish_lz4`` writes between two copies out (L2/L3-sized)."""


def rebuild_batches(
    columns: RecordColumns,
    keep: npt.NDArray[np.bool_],
    batches: Sequence[int] | npt.NDArray[np.intp],
    new_horizons: Sequence[int | None],
) -> list[bytes | None]:
    """``builder.rebuild_batch`` of each of ``batches`` (rows of ``columns.batches``, v2, in order), its
    retained records being its rows with ``keep`` set (at least one), stamping ``new_horizons[i]`` unless
    the batch has a horizon already; ``None`` for a batch the per-record path must write (module doc).

    The batches are written in parts of about ``PART_BYTES`` of retained records into one scratch buffer
    reused part after part: the memory held stays bounded however many records a segment retains."""
    if not len(batches):
        return []
    index = np.asarray(batches, dtype=np.int64)
    first_row = np.searchsorted(columns.batch_index, index)
    end_row = np.searchsorted(columns.batch_index, index, side="right")
    low, high = int(first_row[0]), int(end_row[-1])  # the rows of the batches: in order
    sizes = np.where(keep[low:high], columns.record_size[low:high].astype(np.int64) + _MAX_VARINT_GROWTH, 0)
    spans = np.concatenate([[0], np.cumsum(sizes)])
    capacity = spans[end_row - low] - spans[first_row - low] + HEADER.size
    parts = _parts(capacity)
    part_bytes = [int(capacity[a:b].sum()) for a, b in parts]
    scratch = np.empty(max(part_bytes), dtype=np.uint8)
    horizons = list(new_horizons)
    out: list[bytes | None] = []
    for (a, b), size in zip(parts, part_bytes, strict=True):
        part = _Part(index[a:b], first_row[a:b], end_row[a:b], horizons[a:b])
        out += _rebuild_part(columns, keep, part, scratch[:size])
    return out


PART_BYTES = 32 << 20
"""Bytes of batches (retained records, before compression) ``rebuild_batches`` writes per part."""


def _parts(capacity: I64) -> list[tuple[int, int]]:
    """Consecutive (start, stop) ranges of batches whose capacities add up to about ``PART_BYTES`` (a
    batch larger than that is a part of its own)."""
    ends = np.cumsum(capacity)
    parts, start, taken = [], 0, 0
    while start < len(capacity):
        stop = max(int(np.searchsorted(ends, taken + PART_BYTES, side="right")), start + 1)
        parts.append((start, stop))
        taken, start = int(ends[stop - 1]), stop
    return parts


@dataclass(frozen=True, slots=True)
class _Part:
    index: I64
    first_row: I64
    end_row: I64
    new_horizons: list[int | None]


def _rebuild_part(
    columns: RecordColumns, keep: npt.NDArray[np.bool_], part: _Part, out: U8
) -> list[bytes | None]:
    table = columns.batches
    index, new_horizons = part.index, part.new_horizons
    stamped = (table.attributes[index] & DELETE_HORIZON_FLAG_MASK) != 0
    new = np.array([h is not None for h in new_horizons], dtype=np.bool_)
    horizon = np.where(
        stamped, table.base_timestamp[index], np.array([h or 0 for h in new_horizons], dtype=np.int64)
    )
    header_fields = (
        table.base_offset,
        table.last_offset_delta,
        table.partition_leader_epoch,
        table.attributes,
        table.max_timestamp,
        table.producer_id,
        table.producer_epoch,
        table.base_sequence,
    )
    headers = np.stack([column[index].astype(np.int64) for column in header_fields], axis=1)
    bounds = np.empty((len(index), 3), dtype=np.int64)
    fields = (
        columns.offset,
        columns.timestamp,
        columns.key_start,
        columns.key_length,
        columns.value_start,
        columns.value_length,
        columns.headers_count,
    )
    _k.write_batches(
        columns.buffer,
        part.first_row,
        part.end_row,
        keep,
        fields,
        headers,
        horizon,
        stamped | new,
        out,
        bounds,
    )
    codecs = table.attributes[index] & COMPRESSION_CODEC_MASK
    written = (bounds[:, 2] >= 0) & (table.magic[index] >= MAGIC_VALUE_V2)
    done = _finish_lz4(out, bounds, np.flatnonzero(written & (codecs == CompressionType.LZ4)))
    plain = np.flatnonzero(written & (codecs == CompressionType.NONE))
    done.update(zip(plain.tolist(), _sealed(out, bounds[plain, 0], bounds[plain, 1]), strict=True))
    view = memoryview(out)  # type: ignore[arg-type]
    compressors = {code: compressor(code) for code in set(codecs.tolist()) if code != CompressionType.NONE}
    return [  # every uncompressed batch is done: the others left have a compressor
        (done[row] if row in done else _finish(view, start, end, compressors[codec])) if usable else None
        for row, ((start, end, _), codec, usable) in enumerate(
            zip(bounds.tolist(), codecs.tolist(), written.tolist(), strict=True)
        )
    ]


def _finish_lz4(out: U8, bounds: I64, rows: npt.NDArray[np.intp]) -> dict[int, bytes]:
    """Row -> finished batch for the LZ4 batches ``rows`` of ``out``, compressed by
    ``lz4_kernels.compress_frames`` (byte for byte ``lz4.frame.compress``); rows it leaves out are left to
    ``_finish``. The scratch buffer of ``_LZ4_SCRATCH`` bytes is reused so its pages are touched once: page
    faults on an output-sized buffer cost more than the compression saved."""
    if not len(rows) or not _lz4.bind_compressor():
        return {}
    starts = bounds[rows, 0] + HEADER.size
    ends = bounds[rows, 1]
    need = int((ends - starts).sum()) * 2 + (1 << 17)  # every frame, and LZ4's bound of the last one
    scratch = np.empty(min(_LZ4_SCRATCH, need), dtype=np.uint8)
    spans = np.empty((len(rows), 2), dtype=np.int64)
    batches: list[bytes] = []
    index, status = 0, _lz4.COMPRESSED
    while index < len(rows) and status != _lz4.LZ4_ERROR:
        first = index
        index, _, status = _lz4.compress_frames(out, starts, ends, HEADER.size, scratch, 0, first, spans)
        if index == first and status == _lz4.NO_ROOM:  # one frame larger than the scratch buffer
            scratch = np.empty(2 * len(scratch), dtype=np.uint8)
            continue
        heads, tails = spans[first:index, 0] - HEADER.size, spans[first:index, 1]
        sizes = (tails - heads - LOG_OVERHEAD).astype(">i4")  # the batch length field
        scratch[heads[:, None] + SIZE_OFFSET + np.arange(4)] = sizes.view(np.uint8).reshape(-1, 4)
        batches += _sealed(scratch, heads, tails)
    return dict(zip(rows[:index].tolist(), batches, strict=True))


def _sealed(buffer: U8, heads: I64, tails: I64) -> list[bytes]:
    """The batches ``buffer[heads[i]:tails[i]]``, complete but for their CRC-32C: sealed in place, then
    copied out (the CRC extension called directly, once per batch; the CRCs written over columns)."""
    view = memoryview(buffer)  # type: ignore[arg-type]
    pairs = list(zip(heads.tolist(), tails.tolist(), strict=True))
    crc = _crc32c.crc32c
    crcs = np.array([crc(view[head + ATTRIBUTES_OFFSET : tail]) for head, tail in pairs], dtype=">u4")
    buffer[heads[:, None] + CRC_OFFSET + np.arange(4)] = crcs.view(np.uint8).reshape(-1, 4)
    return [bytes(view[head:tail]) for head, tail in pairs]


_CRC = struct.Struct(">I")
_LENGTH = struct.Struct(">i")


def _finish(out: memoryview, start: int, end: int, codec_compress: Callable[[Buffer], bytes]) -> bytes:
    """The compressed batch at ``out[start:end]`` (CRC 0) with its records compressed by ``codec_compress``
    and its CRC-32C (the CRC extension called directly: this runs once per output batch)."""
    body = codec_compress(out[start + HEADER.size : end])
    head = start + HEADER.size  # the header is finished where it is: ``out`` is scratch
    _LENGTH.pack_into(out, start + SIZE_OFFSET, HEADER.size - LOG_OVERHEAD + len(body))
    _CRC.pack_into(
        out, start + CRC_OFFSET, _crc32c.crc32c(body, _crc32c.crc32c(out[start + ATTRIBUTES_OFFSET : head]))
    )
    return b"".join((out[start:head], body))
