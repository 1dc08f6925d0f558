"""Batch attributes (``DefaultRecordBatch``): codec in bits 0-2, timestamp type in bit 3, then (v2 only)
isTransactional, isControl and hasDeleteHorizonMs (KIP-534) in bits 4-6; legacy messages have an int8."""

from __future__ import annotations

from enum import IntEnum

COMPRESSION_CODEC_MASK = 0x07
TIMESTAMP_TYPE_MASK = 0x08
TRANSACTIONAL_FLAG_MASK = 0x10
CONTROL_FLAG_MASK = 0x20
DELETE_HORIZON_FLAG_MASK = 0x40


class CompressionType(IntEnum):
    """Kafka's compression codec ids (``CompressionType.java``)."""

    NONE = 0
    GZIP = 1
    SNAPPY = 2
    LZ4 = 3
    ZSTD = 4


class TimestampType(IntEnum):
    """Kafka's timestamp types; ``NO_TIMESTAMP_TYPE`` only for magic 0."""

    NO_TIMESTAMP_TYPE = -1
    CREATE_TIME = 0
    LOG_APPEND_TIME = 1


def compute_attributes(
    *,
    compression: CompressionType = CompressionType.NONE,
    timestamp_type: TimestampType = TimestampType.CREATE_TIME,
    is_transactional: bool = False,
    is_control: bool = False,
    has_delete_horizon: bool = False,
) -> int:
    """The v2 attributes int16 for these properties (``DefaultRecordBatch.computeAttributes``)."""
    attributes = int(compression) & COMPRESSION_CODEC_MASK
    if timestamp_type == TimestampType.LOG_APPEND_TIME:
        attributes |= TIMESTAMP_TYPE_MASK
    if is_transactional:
        attributes |= TRANSACTIONAL_FLAG_MASK
    if is_control:
        attributes |= CONTROL_FLAG_MASK
    if has_delete_horizon:
        attributes |= DELETE_HORIZON_FLAG_MASK
    return attributes
