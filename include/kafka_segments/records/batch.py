"""Record batch v2 (magic 2, ``DefaultRecordBatch``): the header schema and a batch view.

The header is BaseOffset, Length, PartitionLeaderEpoch, Magic, CRC, Attributes, LastOffsetDelta,
BaseTimestamp (the delete horizon when attribute bit 6 is set), MaxTimestamp, ProducerId, ProducerEpoch,
BaseSequence, RecordsCount. The CRC-32C covers Attributes to the end of the batch, so the four fields before
it can be rewritten without recomputing it. Every offset below is derived from the struct formats."""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import cached_property

from kafka_segments.errors import CorruptRecordError, DecompressionLimitError, InvalidCrcError
from kafka_segments.records.attributes import (
    COMPRESSION_CODEC_MASK,
    CONTROL_FLAG_MASK,
    DELETE_HORIZON_FLAG_MASK,
    TIMESTAMP_TYPE_MASK,
    TRANSACTIONAL_FLAG_MASK,
    CompressionType,
    TimestampType,
)
from kafka_segments.records.compression import MAX_INFLATED_BATCH_BYTES, decompress
from kafka_segments.records.crc import crc32c
from kafka_segments.records.decompressed_size import DecompressedSizeError
from kafka_segments.records.record import Record, RecordFormatError, decode_records

Buffer = bytes | bytearray | memoryview

HEADER = struct.Struct(
    ">"
    "q"  # BaseOffset
    "i"  # Length
    "i"  # PartitionLeaderEpoch
    "b"  # Magic
    "I"  # CRC
    "h"  # Attributes
    "i"  # LastOffsetDelta
    "q"  # BaseTimestamp
    "q"  # MaxTimestamp
    "q"  # ProducerId
    "h"  # ProducerEpoch
    "i"  # BaseSequence
    "i"  # RecordsCount
)
LOG_OVERHEAD = struct.calcsize(">qi")  # offset + size: the prefix of every entry of every magic
BASE_OFFSET_OFFSET = 0
SIZE_OFFSET = struct.calcsize(">q")
PARTITION_LEADER_EPOCH_OFFSET = struct.calcsize(">qi")
MAGIC_OFFSET = struct.calcsize(">qii")
CRC_OFFSET = struct.calcsize(">qiib")
ATTRIBUTES_OFFSET = struct.calcsize(">qiibI")
LAST_OFFSET_DELTA_OFFSET = struct.calcsize(">qiibIh")
BASE_TIMESTAMP_OFFSET = struct.calcsize(">qiibIhi")
MAX_TIMESTAMP_OFFSET = struct.calcsize(">qiibIhiq")
PRODUCER_ID_OFFSET = struct.calcsize(">qiibIhiqq")
PRODUCER_EPOCH_OFFSET = struct.calcsize(">qiibIhiqqq")
BASE_SEQUENCE_OFFSET = struct.calcsize(">qiibIhiqqqh")
RECORDS_COUNT_OFFSET = struct.calcsize(">qiibIhiqqqhi")
RECORD_BATCH_OVERHEAD = HEADER.size  # 61
RECORDS_OFFSET = RECORD_BATCH_OVERHEAD

MAGIC_VALUE_V2 = 2
NO_TIMESTAMP = -1
NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1
NO_SEQUENCE = -1
NO_PARTITION_LEADER_EPOCH = -1
INT32_MAX = 2**31 - 1


@dataclass(frozen=True, slots=True)
class BatchHeader:
    """The header of one log entry, as read without touching the records.

    For legacy (magic 0/1) entries the v2-only fields hold Kafka's sentinels and ``attributes`` is the
    message's int8 attributes."""

    base_offset: int
    batch_length: int
    partition_leader_epoch: int
    magic: int
    crc: int
    attributes: int
    last_offset_delta: int
    base_timestamp: int
    max_timestamp: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    records_count: int
    position: int = 0
    """Byte position of the entry in its segment (or buffer)."""

    @property
    def size_in_bytes(self) -> int:
        return self.batch_length + LOG_OVERHEAD

    @property
    def last_offset(self) -> int:
        return self.base_offset + self.last_offset_delta

    @property
    def next_offset(self) -> int:
        return self.last_offset + 1

    @property
    def compression(self) -> CompressionType:
        return CompressionType(self.attributes & COMPRESSION_CODEC_MASK)

    @property
    def timestamp_type(self) -> TimestampType:
        if self.magic == 0:
            return TimestampType.NO_TIMESTAMP_TYPE
        if self.attributes & TIMESTAMP_TYPE_MASK:
            return TimestampType.LOG_APPEND_TIME
        return TimestampType.CREATE_TIME

    @property
    def is_transactional(self) -> bool:
        return self.magic >= MAGIC_VALUE_V2 and bool(self.attributes & TRANSACTIONAL_FLAG_MASK)

    @property
    def is_control(self) -> bool:
        return self.magic >= MAGIC_VALUE_V2 and bool(self.attributes & CONTROL_FLAG_MASK)

    @property
    def has_delete_horizon(self) -> bool:
        return self.magic >= MAGIC_VALUE_V2 and bool(self.attributes & DELETE_HORIZON_FLAG_MASK)

    @property
    def delete_horizon_ms(self) -> int | None:
        """The KIP-534 delete horizon (baseTimestamp when bit 6 is set), else ``None``."""
        return self.base_timestamp if self.has_delete_horizon else None

    @property
    def has_producer_id(self) -> bool:
        return self.producer_id > NO_PRODUCER_ID  # Kafka: NO_PRODUCER_ID < producerId(), so -5 has none

    @property
    def last_sequence(self) -> int:
        """baseSequence + lastOffsetDelta, wrapping past Int32 max as Kafka's ``incrementSequence``."""
        if self.base_sequence == NO_SEQUENCE:
            return NO_SEQUENCE
        return increment_sequence(self.base_sequence, self.last_offset_delta)


def increment_sequence(sequence: int, increment: int) -> int:
    """Kafka's ``DefaultRecordBatch.incrementSequence``: wrap to 0 past ``Integer.MAX_VALUE``."""
    if sequence > INT32_MAX - increment:
        return increment - (INT32_MAX - sequence) - 1
    return sequence + increment


_new_header: Callable[..., BatchHeader] = BatchHeader


def unpack_header(buf: Buffer, pos: int) -> BatchHeader:
    """Read a v2 header at ``pos`` (the caller has checked that 61 bytes are there)."""
    return _new_header(*HEADER.unpack_from(buf, pos), pos)


class RecordBatch:
    """A v2 record batch over its bytes (a memoryview slice of the segment, not a copy).

    ``segment`` and ``position`` name where the batch lives, for error messages. ``max_inflated``: the most
    bytes its records may decompress to (``None``: no limit)."""

    __slots__ = ("__dict__", "_buf", "header", "max_inflated", "segment")

    def __init__(
        self,
        buf: Buffer,
        header: BatchHeader,
        *,
        segment: str = "<memory>",
        max_inflated: int | None = MAX_INFLATED_BATCH_BYTES,
    ) -> None:
        self._buf = memoryview(buf)
        self.header = header
        self.segment = segment
        self.max_inflated = max_inflated

    @classmethod
    def from_bytes(cls, data: Buffer, *, segment: str = "<memory>", position: int = 0) -> RecordBatch:
        """One whole v2 batch in ``data`` (used by tests and the builder's callers)."""
        if len(data) < RECORD_BATCH_OVERHEAD:
            raise CorruptRecordError(
                f"{len(data)} bytes is shorter than a v2 batch header ({RECORD_BATCH_OVERHEAD})",
                segment=segment,
                position=position,
            )
        header = unpack_header(data, 0)
        return cls(data[: header.size_in_bytes], replace(header, position=position), segment=segment)

    @property
    def raw(self) -> memoryview:
        """The batch's bytes exactly as stored."""
        return self._buf

    def compute_crc(self) -> int:
        return crc32c(self._buf[ATTRIBUTES_OFFSET:])

    def is_valid(self) -> bool:
        return len(self._buf) >= RECORD_BATCH_OVERHEAD and self.compute_crc() == self.header.crc

    def verify_crc(self) -> None:
        """Raises InvalidCrcError naming the segment, position and base offset."""
        computed = self.compute_crc()
        if computed != self.header.crc:
            raise InvalidCrcError(
                f"record batch CRC mismatch: stored {self.header.crc:#010x}, computed {computed:#010x}",
                segment=self.segment,
                position=self.header.position,
                offset=self.header.base_offset,
            )

    def records_payload(self) -> bytes:
        """The uncompressed records stream.

        Raises:
            DecompressionLimitError: it would inflate past ``max_inflated`` bytes.
            CorruptRecordError: an unknown codec, or a damaged compressed stream.
        """
        codec_id = self.header.attributes & COMPRESSION_CODEC_MASK
        try:
            codec = CompressionType(codec_id)
        except ValueError:
            raise self._corrupt(f"unknown compression codec id {codec_id}") from None
        body = self._buf[RECORDS_OFFSET:]
        try:
            return decompress(codec, body, magic=self.header.magic, max_size=self.max_inflated)
        except DecompressedSizeError as exc:
            header = self.header
            raise DecompressionLimitError(
                str(exc),
                segment=self.segment,
                position=header.position,
                offset=header.base_offset,
                limit=exc.limit,
            ) from None
        except ValueError as exc:
            raise self._corrupt(f"cannot decompress {codec.name} records: {exc}") from exc

    @cached_property
    def records(self) -> list[Record]:
        """Every record, with absolute offsets and timestamps (LogAppendTime applied)."""
        header = self.header
        if header.records_count < 0:
            raise self._corrupt(f"negative records count {header.records_count}")
        log_append_time = (
            header.max_timestamp if header.timestamp_type == TimestampType.LOG_APPEND_TIME else None
        )
        try:
            return decode_records(
                self.records_payload(),
                count=header.records_count,
                base_offset=header.base_offset,
                base_timestamp=header.base_timestamp,
                log_append_time=log_append_time,
            )
        except RecordFormatError as exc:
            raise self._corrupt(str(exc)) from exc

    def _corrupt(self, reason: str) -> CorruptRecordError:
        return CorruptRecordError(
            reason, segment=self.segment, position=self.header.position, offset=self.header.base_offset
        )
