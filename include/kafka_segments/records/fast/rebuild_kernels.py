"""numba kernels behind ``rebuild.py``: ``DefaultRecord.writeTo`` (``encode_rows``) and v2 batches from record
columns (``write_batches``, fields at the offsets ``records.batch`` derives)."""

from __future__ import annotations

from typing import Any

import numpy as np

from kafka_segments.records.attributes import (
    COMPRESSION_CODEC_MASK,
    CONTROL_FLAG_MASK,
    DELETE_HORIZON_FLAG_MASK,
    TIMESTAMP_TYPE_MASK,
    TRANSACTIONAL_FLAG_MASK,
)
from kafka_segments.records.batch import (
    ATTRIBUTES_OFFSET,
    BASE_OFFSET_OFFSET,
    BASE_SEQUENCE_OFFSET,
    BASE_TIMESTAMP_OFFSET,
    CRC_OFFSET,
    LAST_OFFSET_DELTA_OFFSET,
    LOG_OVERHEAD,
    MAGIC_OFFSET,
    MAGIC_VALUE_V2,
    MAX_TIMESTAMP_OFFSET,
    PARTITION_LEADER_EPOCH_OFFSET,
    PRODUCER_EPOCH_OFFSET,
    PRODUCER_ID_OFFSET,
    RECORD_BATCH_OVERHEAD,
    RECORDS_COUNT_OFFSET,
    SIZE_OFFSET,
)
from kafka_segments.records.fast.jit import njit

_INT64_MIN = -(2**63)
_INT64_MAX = 2**63 - 1
_HEADER_SIZE = RECORD_BATCH_OVERHEAD
_KEPT_ATTRIBUTES = COMPRESSION_CODEC_MASK | TIMESTAMP_TYPE_MASK | TRANSACTIONAL_FLAG_MASK | CONTROL_FLAG_MASK
"""The source attributes a rebuilt batch keeps (``builder.rebuild_batch``); the horizon flag is set anew."""


@njit(cache=True, inline="always")
def _varint_size(value: Any) -> Any:
    raw = np.uint64((value << 1) ^ (value >> 63))
    size = 1
    while raw > np.uint64(0x7F):
        raw >>= np.uint64(7)
        size += 1
    return size


@njit(cache=True, inline="always")
def _put_varint(out: Any, pos: Any, value: Any) -> Any:
    raw = np.uint64((np.int64(value) << 1) ^ (np.int64(value) >> 63))
    while raw > np.uint64(0x7F):
        out[pos] = np.uint8((raw & np.uint64(0x7F)) | np.uint64(0x80))
        raw >>= np.uint64(7)
        pos += 1
    out[pos] = np.uint8(raw)
    return pos + 1


@njit(cache=True, inline="always")
def _get_varint(buf: Any, pos: Any) -> Any:
    raw = np.int64(0)
    shift = 0
    while True:
        byte = np.int64(buf[pos])
        raw |= (byte & 0x7F) << shift
        pos += 1
        if byte < 0x80:
            break
        shift += 7
    return (raw >> 1) ^ -(raw & 1), pos


@njit(cache=True, nogil=True)
def _valid_utf8(buf: Any, start: Any, end: Any) -> Any:
    """RFC 3629 UTF-8 (what Python's strict decoder accepts): no overlongs, surrogates or > U+10FFFF."""
    pos = start
    while pos < end:
        lead = buf[pos]
        if lead < 0x80:
            pos += 1
            continue
        if 0xC2 <= lead <= 0xDF:
            need, low, high = 1, 0x80, 0xBF
        elif 0xE0 <= lead <= 0xEF:
            need = 2
            low = 0xA0 if lead == 0xE0 else 0x80
            high = 0x9F if lead == 0xED else 0xBF
        elif 0xF0 <= lead <= 0xF4:
            need = 3
            low = 0x90 if lead == 0xF0 else 0x80
            high = 0x8F if lead == 0xF4 else 0xBF
        else:
            return False
        if pos + need >= end:
            return False
        if not low <= buf[pos + 1] <= high:
            return False
        for i in range(2, need + 1):
            if not 0x80 <= buf[pos + i] <= 0xBF:
                return False
        pos += need + 1
    return True


@njit(cache=True, nogil=True)
def _headers_size(buf: Any, pos: Any, count: Any) -> Any:
    """Bytes of the headers at ``pos`` once re-encoded (minimal varints), or -1 for a non-UTF-8 key."""
    size = 0
    for _ in range(count):
        key_length, pos = _get_varint(buf, pos)
        if not _valid_utf8(buf, pos, pos + key_length):
            return -1
        size += _varint_size(key_length) + key_length
        pos += key_length
        value_length, pos = _get_varint(buf, pos)
        value_length = max(value_length, -1)  # any negative length is null, written as -1
        size += _varint_size(value_length) + max(value_length, 0)
        pos += max(value_length, 0)
    return size


@njit(cache=True, nogil=True)
def _copy_headers(buf: Any, pos: Any, count: Any, out: Any, at: Any) -> Any:
    for _ in range(count):
        key_length, pos = _get_varint(buf, pos)
        at = _put_varint(out, at, key_length)
        out[at : at + key_length] = buf[pos : pos + key_length]
        at += key_length
        pos += key_length
        value_length, pos = _get_varint(buf, pos)
        value_length = max(value_length, -1)  # any negative length is null, written as -1
        at = _put_varint(out, at, value_length)
        if value_length > 0:
            out[at : at + value_length] = buf[pos : pos + value_length]
            at += value_length
            pos += value_length
    return at


@njit(cache=True, nogil=True)
def encode_rows(  # noqa: PLR0913 - numba kernel: nopython mode takes arrays one by one, not objects
    buf: Any,
    rows: Any,
    offset: Any,
    timestamp: Any,
    key_start: Any,
    key_length: Any,
    value_start: Any,
    value_length: Any,
    headers_count: Any,
    base_offset: Any,
    base_timestamp: Any,
    out: Any,
) -> Any:
    """``DefaultRecord.writeTo`` of each row into ``out``: bytes written, or -1 (a non-UTF-8 header key)."""
    at = 0
    for row in rows:
        klen = np.int64(key_length[row])
        vlen = np.int64(value_length[row])
        count = np.int64(headers_count[row])
        headers_at = value_start[row] + max(vlen, 0)
        headers = 0
        if count:
            headers = _headers_size(buf, _get_varint(buf, headers_at)[1], count)
            if headers < 0:
                return -1
            headers_at = _get_varint(buf, headers_at)[1]
        ts_delta = timestamp[row] - base_timestamp
        offset_delta = offset[row] - base_offset
        body = (
            1
            + _varint_size(ts_delta)
            + _varint_size(offset_delta)
            + _varint_size(klen)
            + max(klen, 0)
            + _varint_size(vlen)
            + max(vlen, 0)
            + _varint_size(count)
            + headers
        )
        at = _put_varint(out, at, body)
        out[at] = 0
        at = _put_varint(out, at + 1, ts_delta)
        at = _put_varint(out, at, offset_delta)
        at = _put_varint(out, at, klen)
        if klen > 0:
            out[at : at + klen] = buf[key_start[row] : key_start[row] + klen]
            at += klen
        at = _put_varint(out, at, vlen)
        if vlen > 0:
            out[at : at + vlen] = buf[value_start[row] : value_start[row] + vlen]
            at += vlen
        at = _put_varint(out, at, count)
        if count:
            at = _copy_headers(buf, headers_at, count, out, at)
    return at


@njit(cache=True, inline="always")
def _put_be(out: Any, pos: Any, value: Any, size: Any) -> None:
    for i in range(size):
        out[pos + i] = (value >> (8 * (size - 1 - i))) & 0xFF


@njit(cache=True, nogil=True)
def write_batches(  # noqa: PLR0913 - numba kernel: nopython mode takes arrays one by one, not objects
    buf: Any,
    first_row: Any,
    end_row: Any,
    keep: Any,
    fields: Any,
    headers: Any,
    horizon: Any,
    has_horizon: Any,
    out: Any,
    bounds: Any,
) -> None:
    """Each batch, header and retained records, into ``out[bounds[b, 0] : bounds[b, 1]]``; ``bounds[b, 2]`` is
    its record count, or -1 when it must take the per-record path. ``headers`` rows hold the source's header
    fields; an uncompressed batch is complete (CRC 0), the caller compresses the others and re-seals them."""
    offset, timestamp, key_start, key_length, value_start, value_length, headers_count = fields
    at = 0
    rows = np.empty(np.max(end_row - first_row) if len(first_row) else 0, dtype=np.int64)
    for b in range(len(first_row)):
        bounds[b, 0] = at
        bounds[b, 1] = at
        bounds[b, 2] = -1
        base_offset = headers[b, 0]
        last_offset = base_offset + headers[b, 1]
        n = 0
        previous = base_offset - 1
        good = True
        high = _INT64_MIN
        for row in range(first_row[b], end_row[b]):
            if keep[row]:
                good = good and previous < offset[row] <= last_offset
                previous = offset[row]
                high = max(high, timestamp[row])
                rows[n] = row
                n += 1
        if n == 0 or not good:
            continue
        base = horizon[b] if has_horizon[b] else timestamp[rows[0]]
        for i in range(n):
            ts = timestamp[rows[i]]
            if (base > 0 and ts < _INT64_MIN + base) or (base < 0 and ts > _INT64_MAX + base):
                good = False
        if not good:
            continue
        written = encode_rows(
            buf,
            rows[:n],
            offset,
            timestamp,
            key_start,
            key_length,
            value_start,
            value_length,
            headers_count,
            base_offset,
            base,
            out[at + _HEADER_SIZE :],
        )
        if written < 0:
            continue
        attributes = (headers[b, 3] & _KEPT_ATTRIBUTES) | (DELETE_HORIZON_FLAG_MASK if has_horizon[b] else 0)
        max_timestamp = headers[b, 4] if attributes & TIMESTAMP_TYPE_MASK else high
        _put_be(out, at + BASE_OFFSET_OFFSET, base_offset, 8)
        _put_be(out, at + SIZE_OFFSET, _HEADER_SIZE - LOG_OVERHEAD + written, 4)
        _put_be(out, at + PARTITION_LEADER_EPOCH_OFFSET, headers[b, 2], 4)
        out[at + MAGIC_OFFSET] = MAGIC_VALUE_V2
        _put_be(out, at + CRC_OFFSET, 0, 4)
        _put_be(out, at + ATTRIBUTES_OFFSET, attributes, 2)
        _put_be(out, at + LAST_OFFSET_DELTA_OFFSET, headers[b, 1], 4)
        _put_be(out, at + BASE_TIMESTAMP_OFFSET, base, 8)
        _put_be(out, at + MAX_TIMESTAMP_OFFSET, max_timestamp, 8)
        _put_be(out, at + PRODUCER_ID_OFFSET, headers[b, 5], 8)
        _put_be(out, at + PRODUCER_EPOCH_OFFSET, headers[b, 6], 2)
        _put_be(out, at + BASE_SEQUENCE_OFFSET, headers[b, 7], 4)
        _put_be(out, at + RECORDS_COUNT_OFFSET, n, 4)
        bounds[b, 1] = at + _HEADER_SIZE + written
        bounds[b, 2] = n
        at += _HEADER_SIZE + written
