"""Writing v2 record batches: new batches, compaction rebuilds and empty batch headers, by Kafka's rules
(``MemoryRecordsBuilder``, ``MemoryRecords.buildRetainedRecordsInto``,
``DefaultRecordBatch.writeEmptyHeader``).
A rebuilt batch keeps its source's header fields and codec; a stamped delete horizon becomes baseTimestamp
and the timestamp deltas are relative to it, so absolute timestamps survive."""

from __future__ import annotations

from collections.abc import Sequence

from kafka_segments.errors import SegmentWriteError
from kafka_segments.records.attributes import CompressionType, TimestampType, compute_attributes
from kafka_segments.records.batch import (
    ATTRIBUTES_OFFSET,
    CRC_OFFSET,
    HEADER,
    INT32_MAX,
    LOG_OVERHEAD,
    MAGIC_VALUE_V2,
    NO_PARTITION_LEADER_EPOCH,
    NO_PRODUCER_EPOCH,
    NO_PRODUCER_ID,
    NO_SEQUENCE,
    NO_TIMESTAMP,
    BatchHeader,
    RecordBatch,
)
from kafka_segments.records.compression import compress
from kafka_segments.records.crc import crc32c
from kafka_segments.records.record import Record, encode_records


def build_batch(  # noqa: PLR0913 - one keyword-only argument per batch header field, as kafka-python's and Kafka's builders take them
    records: Sequence[Record],
    *,
    base_offset: int | None = None,
    last_offset: int | None = None,
    compression: CompressionType = CompressionType.NONE,
    timestamp_type: TimestampType = TimestampType.CREATE_TIME,
    log_append_time: int | None = None,
    producer_id: int = NO_PRODUCER_ID,
    producer_epoch: int = NO_PRODUCER_EPOCH,
    base_sequence: int = NO_SEQUENCE,
    is_transactional: bool = False,
    is_control: bool = False,
    partition_leader_epoch: int = NO_PARTITION_LEADER_EPOCH,
    delete_horizon_ms: int | None = None,
    max_timestamp: int | None = None,
) -> bytes:
    """Encode ``records`` (absolute offsets, increasing) as one v2 batch.

    Args:
        base_offset: defaults to the first record's offset; a compaction rebuild passes the source's.
        last_offset: defaults to the last record's offset; a rebuild passes the source's so that
            lastOffsetDelta is preserved.
        log_append_time: for LogAppendTime batches, the broker time (becomes maxTimestamp).
        delete_horizon_ms: stamp this KIP-534 delete horizon (attribute bit 6, baseTimestamp).
        max_timestamp: override maxTimestamp (only an empty CreateTime batch needs it).

    Raises:
        SegmentWriteError: no records and no offsets given, offsets not increasing, or outside the batch.
    """
    if not records and (base_offset is None or last_offset is None):
        raise SegmentWriteError("an empty batch needs explicit base_offset and last_offset")
    first = base_offset if base_offset is not None else records[0].offset
    last = last_offset if last_offset is not None else records[-1].offset
    _check_offsets(records, first, last)
    if delete_horizon_ms is not None:
        base_timestamp = delete_horizon_ms
    else:
        base_timestamp = records[0].timestamp if records else NO_TIMESTAMP
    if timestamp_type == TimestampType.LOG_APPEND_TIME:
        if log_append_time is None:
            raise SegmentWriteError("a LogAppendTime batch needs log_append_time")
        max_ts = log_append_time
    elif max_timestamp is not None:
        max_ts = max_timestamp
    else:
        max_ts = max((r.timestamp for r in records), default=NO_TIMESTAMP)
    payload = encode_records(records, base_offset=first, base_timestamp=base_timestamp)
    body = compress(compression, payload) if records else b""
    attributes = compute_attributes(
        compression=compression if records else CompressionType.NONE,
        timestamp_type=timestamp_type,
        is_transactional=is_transactional,
        is_control=is_control,
        has_delete_horizon=delete_horizon_ms is not None,
    )
    header = BatchHeader(
        base_offset=first,
        batch_length=HEADER.size - LOG_OVERHEAD + len(body),
        partition_leader_epoch=partition_leader_epoch,
        magic=MAGIC_VALUE_V2,
        crc=0,
        attributes=attributes,
        last_offset_delta=last - first,
        base_timestamp=base_timestamp,
        max_timestamp=max_ts,
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        base_sequence=base_sequence,
        records_count=len(records),
    )
    return _seal(header, body)


def rebuild_batch(
    source: RecordBatch, retained: Sequence[Record], *, delete_horizon_ms: int | None = None
) -> bytes:
    """A batch holding ``retained`` (a subset of ``source``'s records) with the source's metadata.

    ``delete_horizon_ms`` stamps a new horizon; an existing horizon of the source is preserved (never
    reset). With no records this writes the empty batch header (and a horizon is lost, as in Kafka)."""
    header = source.header
    if not retained:
        return empty_batch_header(header)
    horizon = header.delete_horizon_ms if header.has_delete_horizon else delete_horizon_ms
    timestamp_type = header.timestamp_type
    if timestamp_type == TimestampType.NO_TIMESTAMP_TYPE:
        timestamp_type = TimestampType.CREATE_TIME
    return build_batch(
        retained,
        base_offset=header.base_offset if header.magic >= MAGIC_VALUE_V2 else None,
        last_offset=header.last_offset if header.magic >= MAGIC_VALUE_V2 else None,
        compression=header.compression,
        timestamp_type=timestamp_type,
        log_append_time=header.max_timestamp if timestamp_type == TimestampType.LOG_APPEND_TIME else None,
        producer_id=header.producer_id,
        producer_epoch=header.producer_epoch,
        base_sequence=header.base_sequence,
        is_transactional=header.is_transactional,
        is_control=header.is_control,
        partition_leader_epoch=header.partition_leader_epoch,
        delete_horizon_ms=horizon,
    )


def empty_batch_header(source: BatchHeader) -> bytes:
    """Kafka's ``writeEmptyHeader`` for ``source``: keeps producer state, drops every record."""
    attributes = compute_attributes(
        timestamp_type=source.timestamp_type
        if source.timestamp_type != TimestampType.NO_TIMESTAMP_TYPE
        else TimestampType.CREATE_TIME,
        is_transactional=source.is_transactional,
        is_control=source.is_control,
    )
    header = BatchHeader(
        base_offset=source.base_offset,
        batch_length=HEADER.size - LOG_OVERHEAD,
        partition_leader_epoch=source.partition_leader_epoch,
        magic=MAGIC_VALUE_V2,
        crc=0,
        attributes=attributes,
        last_offset_delta=source.last_offset_delta,
        base_timestamp=NO_TIMESTAMP,
        max_timestamp=source.max_timestamp,
        producer_id=source.producer_id,
        producer_epoch=source.producer_epoch,
        base_sequence=source.base_sequence,
        records_count=0,
    )
    return _seal(header, b"")


def _seal(header: BatchHeader, body: bytes) -> bytes:
    """Pack the header, append the body and fill in the CRC-32C."""
    buf = bytearray(HEADER.size + len(body))
    HEADER.pack_into(
        buf,
        0,
        header.base_offset,
        header.batch_length,
        header.partition_leader_epoch,
        header.magic,
        0,
        header.attributes,
        header.last_offset_delta,
        header.base_timestamp,
        header.max_timestamp,
        header.producer_id,
        header.producer_epoch,
        header.base_sequence,
        header.records_count,
    )
    buf[HEADER.size :] = body
    crc = crc32c(memoryview(buf)[ATTRIBUTES_OFFSET:])
    buf[CRC_OFFSET:ATTRIBUTES_OFFSET] = crc.to_bytes(4, "big")
    return bytes(buf)


def _check_offsets(records: Sequence[Record], first: int, last: int) -> None:
    if last < first:
        raise SegmentWriteError(f"last offset {last} is below base offset {first}")
    if last - first > INT32_MAX:
        raise SegmentWriteError(f"offset span {first}..{last} does not fit a batch's int32 lastOffsetDelta")
    previous = first - 1
    for record in records:
        if record.offset <= previous or record.offset > last:
            raise SegmentWriteError(
                f"record offset {record.offset} is not increasing within batch {first}..{last}"
            )
        previous = record.offset
