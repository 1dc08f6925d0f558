"""Batches no writer can produce, with a valid CRC (issue 20's bad uploads): offsets past ``Long.MAX_VALUE``,
timestamps below -1, a records count the batch cannot hold, decompression bombs."""

from __future__ import annotations

import struct
import zlib
from collections.abc import Callable

import zstandard
from kafka_segments.records.attributes import CompressionType
from kafka_segments.records.batch import (
    ATTRIBUTES_OFFSET,
    BASE_TIMESTAMP_OFFSET,
    CRC_OFFSET,
    LOG_OVERHEAD,
    MAX_TIMESTAMP_OFFSET,
    RECORDS_COUNT_OFFSET,
    RECORDS_OFFSET,
    SIZE_OFFSET,
)
from kafka_segments.records.builder import build_batch
from kafka_segments.records.crc import crc32c
from kafka_segments.records.record import Record
from unit.strategies import INT32_MAX, INT64_MAX, TS_BASE

TS = TS_BASE
OVERFLOW_BASE = INT64_MAX - 4
"""A base offset whose 10-record batch ends past ``Long.MAX_VALUE`` (``09223372036854775803.log``)."""


def records(base_offset: int, count: int = 10) -> list[Record]:
    return [Record(base_offset + i, TS + i, f"k{i}".encode(), b"v" * 8) for i in range(count)]


def resealed(batch: bytes | bytearray) -> bytes:
    """``batch`` (one v2 batch) with its CRC recomputed, so that only its header fields are wrong."""
    buf = bytearray(batch)
    buf[CRC_OFFSET:ATTRIBUTES_OFFSET] = crc32c(bytes(buf[ATTRIBUTES_OFFSET:])).to_bytes(4, "big")
    return bytes(buf)


def with_field(batch: bytes, at: int, fmt: str, value: int) -> bytes:
    """``batch`` with the header field at byte ``at`` set to ``value``, CRC recomputed."""
    buf = bytearray(batch)
    struct.pack_into(fmt, buf, at, value)
    return resealed(buf)


def overflowing_batch(base_offset: int = OVERFLOW_BASE, count: int = 10) -> bytes:
    """A batch of ``count`` records whose last offset is past ``Long.MAX_VALUE``."""
    return build_batch(records(base_offset, count), base_offset=base_offset)


def lying_count_batch(
    base_offset: int = 0,
    *,
    claimed: int = INT32_MAX,
    count: int = 10,
    compression: CompressionType = CompressionType.NONE,
) -> bytes:
    """A batch of ``count`` records whose header claims ``claimed`` records (CRC recomputed)."""
    batch = build_batch(records(base_offset, count), compression=compression)
    return with_field(batch, RECORDS_COUNT_OFFSET, ">i", claimed)


def early_timestamp_batch(base_offset: int = 0, *, max_timestamp: int = -5) -> bytes:
    """A batch whose maxTimestamp is below -1 (Kafka's "no timestamp")."""
    return with_field(build_batch(records(base_offset, 3)), MAX_TIMESTAMP_OFFSET, ">q", max_timestamp)


def early_base_timestamp_batch(base_offset: int = 0) -> bytes:
    """A batch whose baseTimestamp is ``Long.MIN_VALUE``."""
    return with_field(build_batch(records(base_offset, 3)), BASE_TIMESTAMP_OFFSET, ">q", -(2**63))


def with_payload(batch: bytes, payload: bytes) -> bytes:
    """``batch`` with its records stream replaced by ``payload`` (length and CRC fixed)."""
    buf = bytearray(batch[:RECORDS_OFFSET] + payload)
    struct.pack_into(">i", buf, SIZE_OFFSET, len(buf) - LOG_OVERHEAD)
    return resealed(buf)


def zstd_bomb(inflated: int, *, base_offset: int = 0) -> bytes:
    """A one-record zstd batch whose records stream inflates to ``inflated`` zero bytes (1 GiB: 32 KB)."""
    stream = zstandard.ZstdCompressor(level=3, write_content_size=False).compressobj()
    return with_payload(
        build_batch(records(base_offset, 1), compression=CompressionType.ZSTD),
        _zeros_through(stream.compress, stream.flush, inflated),
    )


def gzip_bomb(inflated: int, *, base_offset: int = 0) -> bytes:
    """A one-record gzip batch whose records stream inflates to ``inflated`` zero bytes (512 MiB: 510 KB)."""
    stream = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    return with_payload(
        build_batch(records(base_offset, 1), compression=CompressionType.GZIP),
        _zeros_through(stream.compress, stream.flush, inflated),
    )


def _zeros_through(compress: Callable[[bytes], bytes], flush: Callable[[], bytes], size: int) -> bytes:
    chunk = bytes(1 << 20)
    parts = [compress(chunk[: min(len(chunk), size - done)]) for done in range(0, size, len(chunk))]
    return b"".join((*parts, flush()))
