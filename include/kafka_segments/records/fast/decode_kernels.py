"""numba kernels behind ``decode.py``: the segment walk and the record v2 decoder over numpy uint8 views.

Kernels are ``@njit(cache=True, nogil=True)`` without a signature, so nothing compiles at import and the
threads of one worker decode side by side; ``decode.py`` always passes read-only, C-contiguous ``uint8``
views so each kernel has one specialization. They accept exactly what ``log._check_entry`` and
``record.decode_records`` accept; header fields are read at the offsets ``records.batch`` derives (module
globals: numba compiles them in as constants). ``fnv1a64`` is a prefilter, not an identity."""

from __future__ import annotations

from typing import Any

import numpy as np

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
from kafka_segments.records.legacy import RECORD_OVERHEAD_V0
from kafka_segments.records.log import HEADER_SIZE_UP_TO_MAGIC

# walk_entries status codes
SCAN_OK = 0
SCAN_LEGACY = 1  # an entry of magic 0/1: the caller falls back to the Python walk
SCAN_DAMAGE = 2  # the entry at the stop position fails a _check_entry rule

# decode_records error codes (the batch index is returned alongside)
DECODE_OK = 0
ERR_VARINT = 1  # a varint runs past the payload or past its maximum length
ERR_RECORD_LENGTH = 2  # a record length is negative or runs past the payload
ERR_KEY = 3  # key past the record
ERR_VALUE = 4  # value past the record
ERR_HEADER_COUNT = 5  # negative header count
ERR_HEADER_KEY = 6  # null / invalid / out-of-record header key
ERR_HEADER_VALUE = 7  # header value past the record
ERR_RECORD_SIZE = 8  # bytes consumed differ from the record's declared length
ERR_TRAILING = 9  # bytes left after the declared number of records
ERR_OVERFLOW = 10  # an offset or timestamp does not fit an int64, or a record is 2 GiB or more

ERROR_REASONS = {
    ERR_VARINT: "a varint runs past the records or past its maximum length",
    ERR_RECORD_LENGTH: "a record length is negative or runs past the records",
    ERR_KEY: "key past the end of its record",
    ERR_VALUE: "value past the end of its record",
    ERR_HEADER_COUNT: "negative header count",
    ERR_HEADER_KEY: "null or invalid header key",
    ERR_HEADER_VALUE: "header value past the end of its record",
    ERR_RECORD_SIZE: "a record's declared length differs from the bytes read",
    ERR_TRAILING: "unconsumed bytes after all records were read (incorrect declared batch size)",
    ERR_OVERFLOW: "an offset or timestamp does not fit an int64, or a record is 2 GiB or more",
}

_V2_MIN_SIZE = RECORD_BATCH_OVERHEAD - LOG_OVERHEAD
_MAX_RECORD_LENGTH = 2**31 - 1 - 5
_INT64_MIN = -(2**63)
_INT64_MAX = 2**63 - 1

_FNV_OFFSET = np.uint64(0xCBF29CE484222325)
_FNV_PRIME = np.uint64(0x100000001B3)


@njit(cache=True, inline="always")
def _be64(buf: Any, p: int) -> Any:
    v = np.int64(0)
    for i in range(8):
        v = (v << np.int64(8)) | np.int64(buf[p + i])
    return v


@njit(cache=True, inline="always")
def _be32(buf: Any, p: int) -> Any:
    v = (
        (np.int64(buf[p]) << 24)
        | (np.int64(buf[p + 1]) << 16)
        | (np.int64(buf[p + 2]) << 8)
        | np.int64(buf[p + 3])
    )
    if v >= 0x80000000:
        v -= 0x100000000
    return v


@njit(cache=True, inline="always")
def _be16(buf: Any, p: int) -> Any:
    v = (np.int64(buf[p]) << 8) | np.int64(buf[p + 1])
    if v >= 0x8000:
        v -= 0x10000
    return v


@njit(cache=True, nogil=True)
def walk_entries(buf: Any) -> Any:
    """Walk the entries; return (positions of the valid v2 entries, stop position, status)."""
    end = buf.shape[0]
    capacity = min(end // (LOG_OVERHEAD + _V2_MIN_SIZE) + 1, 4096)
    positions = np.empty(capacity, dtype=np.int64)
    pos = 0
    n = 0
    status = SCAN_OK
    while pos < end:
        remaining = end - pos
        if remaining < HEADER_SIZE_UP_TO_MAGIC:
            status = SCAN_DAMAGE
            break
        size = _be32(buf, pos + SIZE_OFFSET)
        if size < RECORD_OVERHEAD_V0:
            status = SCAN_DAMAGE
            break
        magic = buf[pos + MAGIC_OFFSET]
        if magic > MAGIC_VALUE_V2:
            status = SCAN_DAMAGE
            break
        if magic < MAGIC_VALUE_V2:
            status = SCAN_LEGACY
            break
        if size < _V2_MIN_SIZE or LOG_OVERHEAD + size > remaining:
            status = SCAN_DAMAGE
            break
        if n == capacity:
            capacity *= 2
            grown = np.empty(capacity, dtype=np.int64)
            grown[:n] = positions[:n]
            positions = grown
        positions[n] = pos
        n += 1
        pos += LOG_OVERHEAD + size
    return positions[:n], pos, status


@njit(cache=True, nogil=True)
def fill_headers(  # noqa: PLR0913 - numba kernel: nopython mode takes arrays one by one, not objects
    buf: Any,
    position: Any,
    base_offset: Any,
    batch_length: Any,
    partition_leader_epoch: Any,
    magic: Any,
    crc: Any,
    attributes: Any,
    last_offset_delta: Any,
    base_timestamp: Any,
    max_timestamp: Any,
    producer_id: Any,
    producer_epoch: Any,
    base_sequence: Any,
    records_count: Any,
) -> None:
    """Copy the v2 headers at ``position`` (found by walk_entries) into the columns.

    The positions are known, so the loads of successive headers do not wait on each other."""
    for i in range(position.shape[0]):
        pos = position[i]
        base_offset[i] = _be64(buf, pos + BASE_OFFSET_OFFSET)
        batch_length[i] = _be32(buf, pos + SIZE_OFFSET)
        partition_leader_epoch[i] = _be32(buf, pos + PARTITION_LEADER_EPOCH_OFFSET)
        magic[i] = buf[pos + MAGIC_OFFSET]
        c = _be32(buf, pos + CRC_OFFSET)
        crc[i] = c + 0x100000000 if c < 0 else c
        attributes[i] = _be16(buf, pos + ATTRIBUTES_OFFSET)
        last_offset_delta[i] = _be32(buf, pos + LAST_OFFSET_DELTA_OFFSET)
        base_timestamp[i] = _be64(buf, pos + BASE_TIMESTAMP_OFFSET)
        max_timestamp[i] = _be64(buf, pos + MAX_TIMESTAMP_OFFSET)
        producer_id[i] = _be64(buf, pos + PRODUCER_ID_OFFSET)
        producer_epoch[i] = _be16(buf, pos + PRODUCER_EPOCH_OFFSET)
        base_sequence[i] = _be32(buf, pos + BASE_SEQUENCE_OFFSET)
        records_count[i] = _be32(buf, pos + RECORDS_COUNT_OFFSET)


@njit(cache=True, inline="always")
def _varint(buf: Any, pos: int, end: int, max_bytes: int) -> Any:
    """Zigzag varint at pos: (value, next position, overflow flag, ok)."""
    if pos < end:
        first = np.int64(buf[pos])
        if first < 0x80:  # the common 1-byte case
            return (first >> 1) ^ -(first & 1), pos + 1, False, True
    raw = np.uint64(0)
    shift = np.uint64(0)
    for i in range(max_bytes):
        p = pos + i
        if p >= end:
            return np.int64(0), pos, False, False
        b = np.uint64(buf[p])
        raw |= (b & np.uint64(0x7F)) << shift
        if b < np.uint64(0x80):
            # bits beyond 64 (only possible in a 10th byte) make Python's value leave the int64 range
            overflow = i == 9 and b > np.uint64(1)
            value = np.int64(raw >> np.uint64(1)) ^ -np.int64(raw & np.uint64(1))
            return value, p + 1, overflow, True
        shift += np.uint64(7)
    return np.int64(0), pos, False, False


@njit(cache=True, inline="always")
def _add_overflows(a: Any, b: Any) -> bool:
    if b > 0:
        return bool(a > _INT64_MAX - b)
    return bool(b < 0 and a < _INT64_MIN - b)


@njit(cache=True, nogil=True)
def decode_records(  # noqa: PLR0911, PLR0912, PLR0913, PLR0915 - numba kernel over one batch's wire format: arrays one by one (nopython), one early return per malformed field; splitting it costs a call per record in the hot loop
    arena: Any,
    payload_start: Any,
    payload_end: Any,
    base_offset: Any,
    base_timestamp: Any,
    log_append_time: Any,
    use_log_append_time: Any,
    records_count: Any,
    first_record: Any,
    offset: Any,
    timestamp: Any,
    key_start: Any,
    key_length: Any,
    value_start: Any,
    value_length: Any,
    headers_count: Any,
    record_start: Any,
    record_size: Any,
    batch_index: Any,
) -> Any:
    """Decode the records of every batch; return (first bad batch or -1, error code)."""
    for b in range(payload_start.shape[0]):
        pos = payload_start[b]
        end = payload_end[b]
        base_off = base_offset[b]
        base_ts = base_timestamp[b]
        use_lat = use_log_append_time[b]
        lat = log_append_time[b]
        r = first_record[b]
        for _ in range(records_count[b]):
            rec_start = pos
            length, pos, _ovf, ok = _varint(arena, pos, end, 5)
            if not ok:
                return b, ERR_VARINT
            if length < 0 or pos + length > end:
                return b, ERR_RECORD_LENGTH
            if length > _MAX_RECORD_LENGTH:  # record_size, key and value lengths are int32 columns
                return b, ERR_OVERFLOW
            limit = pos + length
            pos += 1  # attributes, unused
            ts_delta, pos, ts_overflow, ok = _varint(arena, pos, end, 10)
            if not ok:
                return b, ERR_VARINT
            off_delta, pos, _ovf, ok = _varint(arena, pos, end, 5)
            if not ok:
                return b, ERR_VARINT
            klen, pos, _ovf, ok = _varint(arena, pos, end, 5)
            if not ok:
                return b, ERR_VARINT
            kstart = pos
            if klen < 0:
                klen = -1  # any negative length is null (DefaultRecord.readFrom)
            else:
                if pos + klen > limit:
                    return b, ERR_KEY
                pos += klen
            vlen, pos, _ovf, ok = _varint(arena, pos, end, 5)
            if not ok:
                return b, ERR_VARINT
            vstart = pos
            if vlen < 0:
                vlen = -1  # any negative length is null (DefaultRecord.readFrom)
            else:
                if pos + vlen > limit:
                    return b, ERR_VALUE
                pos += vlen
            hcount, pos, _ovf, ok = _varint(arena, pos, end, 5)
            if not ok:
                return b, ERR_VARINT
            if hcount < 0:
                return b, ERR_HEADER_COUNT
            for _h in range(hcount):
                hklen, pos, _ovf, ok = _varint(arena, pos, end, 5)
                if not ok:
                    return b, ERR_VARINT
                if hklen < 0 or pos + hklen > limit:
                    return b, ERR_HEADER_KEY
                pos += hklen
                hvlen, pos, _ovf, ok = _varint(arena, pos, end, 5)
                if not ok:
                    return b, ERR_VARINT
                if hvlen < 0:
                    hvlen = -1  # as a key or value: null
                else:
                    if pos + hvlen > limit:
                        return b, ERR_HEADER_VALUE
                    pos += hvlen
            if pos != limit:
                return b, ERR_RECORD_SIZE
            if _add_overflows(base_off, off_delta):
                return b, ERR_OVERFLOW
            off = base_off + off_delta
            if use_lat:
                ts = lat
            else:
                if ts_overflow or _add_overflows(base_ts, ts_delta):
                    return b, ERR_OVERFLOW
                ts = base_ts + ts_delta
            offset[r] = off
            timestamp[r] = ts
            key_start[r] = kstart
            key_length[r] = klen
            value_start[r] = vstart
            value_length[r] = vlen
            headers_count[r] = hcount
            record_start[r] = rec_start
            record_size[r] = limit - rec_start
            batch_index[r] = b
            r += 1
        if pos != end:
            return b, ERR_TRAILING
    return -1, DECODE_OK


@njit(cache=True, nogil=True)
def fnv1a64(arena: Any, key_start: Any, key_length: Any, out: Any) -> None:
    """64-bit FNV-1a of each key span; null keys (length -1) hash to 0."""
    for r in range(key_start.shape[0]):
        n = key_length[r]
        if n < 0:
            out[r] = np.uint64(0)
            continue
        h = _FNV_OFFSET
        p = key_start[r]
        for i in range(n):
            h = (h ^ np.uint64(arena[p + i])) * _FNV_PRIME
        out[r] = h
