"""Legacy message sets v0/v1 (magic 0 and 1): ``LegacyRecord``, ``AbstractLegacyRecordBatch``. Read only.

A compressed entry is a wrapper whose value holds an inner message set; inner offsets are absolute in v0 and
relative in v1 (absolute = wrapperOffset - lastInnerOffset + innerOffset; a wrapper offset of 0, as some
librdkafka versions write, means base 0). A ``LegacyEntry`` has the surface of a v2 ``RecordBatch``. As in
Kafka only the outer CRC is checked; stricter than Kafka's reader, any structural damage is reported (a CRC
mismatch first, ``InvalidCrcError``)."""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import NamedTuple

from kafka_segments.errors import CorruptRecordError, DecompressionLimitError, InvalidCrcError
from kafka_segments.records.attributes import COMPRESSION_CODEC_MASK, TIMESTAMP_TYPE_MASK, CompressionType
from kafka_segments.records.batch import (
    LOG_OVERHEAD,
    MAGIC_OFFSET,
    NO_PARTITION_LEADER_EPOCH,
    NO_PRODUCER_EPOCH,
    NO_PRODUCER_ID,
    NO_SEQUENCE,
    NO_TIMESTAMP,
    BatchHeader,
)
from kafka_segments.records.compression import MAX_INFLATED_BATCH_BYTES, decompress
from kafka_segments.records.crc import crc32
from kafka_segments.records.decompressed_size import DecompressedSizeError
from kafka_segments.records.record import Record

MESSAGE_HEADER = struct.Struct(
    ">"
    "q"  # Offset
    "i"  # Size
    "I"  # CRC
    "b"  # Magic
    "b"  # Attributes
)
TIMESTAMP = struct.Struct(">q")
LENGTH = struct.Struct(">i")
ENTRY_PREFIX = struct.Struct(">qi")
RECORD_OVERHEAD_V0 = struct.calcsize(">Ibbii")  # 14: crc, magic, attributes, key length, value length
RECORD_OVERHEAD_V1 = struct.calcsize(">Ibbqii")  # 22: ... plus the timestamp
CRC_COVERAGE_START = MAGIC_OFFSET  # the CRC covers the magic byte to the end of the message

MAGIC_VALUE_V0 = 0
MAGIC_VALUE_V1 = 1
NULL_LENGTH = -1


class _MalformedError(ValueError):
    """An entry's bytes do not follow the legacy schema (turned into a located CorruptRecordError)."""


class _Message(NamedTuple):
    offset: int
    magic: int
    attributes: int
    timestamp: int
    key: memoryview | None
    value: memoryview | None


@dataclass(frozen=True, slots=True, eq=False)
class LegacyEntry:
    """One v0/v1 entry (a single message, or a compressed wrapper with its inner messages) over its bytes."""

    header: BatchHeader
    segment: str
    raw: memoryview = field(repr=False)
    """The entry's bytes exactly as stored (offset and size prefix included)."""
    records: list[Record] = field(repr=False)
    """Every (inner) message as a Record with its absolute offset; headers are always empty."""

    @property
    def offset(self) -> int:
        """The entry's offset field: the (last inner) message's absolute offset."""
        return self.header.last_offset

    def compute_crc(self) -> int:
        return crc32(self.raw[CRC_COVERAGE_START:])

    def is_valid(self) -> bool:
        return len(self.raw) >= LOG_OVERHEAD + RECORD_OVERHEAD_V0 and self.compute_crc() == self.header.crc

    def verify_crc(self) -> None:
        """Raises InvalidCrcError naming the segment, position and the entry's offset."""
        computed = self.compute_crc()
        if computed != self.header.crc:
            raise InvalidCrcError(
                _crc_mismatch(self.header.crc, computed),
                segment=self.segment,
                position=self.header.position,
                offset=self.offset,
            )


def read_legacy_entry(
    entry: memoryview, *, segment: str, position: int, max_inflated: int | None = MAX_INFLATED_BATCH_BYTES
) -> LegacyEntry:
    """Parse the whole entry ``entry`` (offset/size prefix included; magic 0 or 1) found at ``position``.

    A compressed wrapper is decompressed here: its header's base offset and record count need the inner
    messages (as ``AbstractLegacyRecordBatch.baseOffset`` does).

    Raises:
        CorruptRecordError: the entry is malformed (InvalidCrcError when its CRC does not match either).
        DecompressionLimitError: a wrapper's message set inflates past ``max_inflated`` bytes (``None``: no
            limit).
    """
    view = memoryview(entry)
    if len(view) < LOG_OVERHEAD + RECORD_OVERHEAD_V0:
        raise CorruptRecordError(
            f"legacy entry of {len(view)} bytes is shorter than the minimum "
            f"{LOG_OVERHEAD + RECORD_OVERHEAD_V0}",
            segment=segment,
            position=position,
            offset=ENTRY_PREFIX.unpack_from(view)[0] if len(view) >= ENTRY_PREFIX.size else None,
        )
    offset, size, stored_crc, _, _ = MESSAGE_HEADER.unpack_from(view)
    try:
        if size != len(view) - LOG_OVERHEAD:
            raise _MalformedError(
                f"entry size field {size} disagrees with the {len(view) - LOG_OVERHEAD} bytes given"
            )
        message = _parse_message(view, 0, len(view))
        header, records = _decode(message, size, stored_crc, position, max_inflated)
    except DecompressedSizeError as exc:
        raise DecompressionLimitError(
            f"the wrapper's message set: {exc}",
            segment=segment,
            position=position,
            offset=offset,
            limit=exc.limit,
        ) from None
    except _MalformedError as exc:
        computed = crc32(view[CRC_COVERAGE_START:])
        if computed != stored_crc:
            raise InvalidCrcError(
                f"{_crc_mismatch(stored_crc, computed)}; the message is also unreadable: {exc}",
                segment=segment,
                position=position,
                offset=offset,
            ) from exc
        raise CorruptRecordError(str(exc), segment=segment, position=position, offset=offset) from exc
    return LegacyEntry(header, segment, view, records)


def _decode(
    message: _Message, size: int, crc: int, position: int, max_inflated: int | None
) -> tuple[BatchHeader, list[Record]]:
    """The header and records of a parsed outer message (decompressing a wrapper)."""
    codec = message.attributes & COMPRESSION_CODEC_MASK
    if codec == CompressionType.NONE:
        records = [Record(message.offset, message.timestamp, _bytes(message.key), _bytes(message.value))]
        return _header(message, size, crc, position, message.offset, 1), records
    inner = _inner_messages(message, codec, max_inflated)
    log_append_time = (
        message.timestamp
        if message.magic == MAGIC_VALUE_V1 and message.attributes & TIMESTAMP_TYPE_MASK
        else None
    )
    base = _absolute_base(message, inner)
    records = [
        Record(
            base + msg.offset,
            log_append_time if log_append_time is not None and msg.magic == MAGIC_VALUE_V1 else msg.timestamp,
            _bytes(msg.key),
            _bytes(msg.value),
        )
        for msg in inner
    ]
    return _header(message, size, crc, position, records[0].offset, len(records)), records


def _header(
    message: _Message, size: int, crc: int, position: int, base_offset: int, count: int
) -> BatchHeader:
    last_offset_delta = message.offset - base_offset
    if last_offset_delta < 0:
        raise _MalformedError(
            f"wrapper offset {message.offset} is below the offset of its first inner message {base_offset}"
        )
    return BatchHeader(
        base_offset=base_offset,
        batch_length=size,
        partition_leader_epoch=NO_PARTITION_LEADER_EPOCH,
        magic=message.magic,
        crc=crc,
        attributes=message.attributes,
        last_offset_delta=last_offset_delta,
        base_timestamp=message.timestamp,
        max_timestamp=message.timestamp,
        producer_id=NO_PRODUCER_ID,
        producer_epoch=NO_PRODUCER_EPOCH,
        base_sequence=NO_SEQUENCE,
        records_count=count,
        position=position,
    )


def _inner_messages(wrapper: _Message, codec: int, max_inflated: int | None) -> list[_Message]:
    """Decompress a wrapper's value (at most ``max_inflated`` bytes) and parse its inner message set."""
    if codec == CompressionType.ZSTD:
        raise _MalformedError(
            f"zstd compression is not valid in a magic {wrapper.magic} message (v2 batches only)"
        )
    if codec > CompressionType.ZSTD:
        raise _MalformedError(f"unknown compression codec id {codec}")
    name = CompressionType(codec).name
    if wrapper.value is None:
        raise _MalformedError(f"compressed ({name}) wrapper message has a null value")
    try:
        payload = memoryview(decompress(codec, wrapper.value, magic=wrapper.magic, max_size=max_inflated))
    except DecompressedSizeError:
        raise
    except ValueError as exc:
        raise _MalformedError(f"cannot decompress the {name} message set: {exc}") from exc
    messages: list[_Message] = []
    pos = 0
    end = len(payload)
    while pos < end:
        where = f"inner message {len(messages)} (byte {pos} of the decompressed {name} message set)"
        if end - pos < LOG_OVERHEAD:
            break  # Kafka's DataLogInputStream: the end of the stream inside an entry ends the set
        _, inner_size = ENTRY_PREFIX.unpack_from(payload, pos)
        if inner_size < RECORD_OVERHEAD_V0:
            raise _MalformedError(f"{where}: impossible size {inner_size} (minimum {RECORD_OVERHEAD_V0})")
        stop = pos + LOG_OVERHEAD + inner_size
        if stop > end:
            break  # a message cut by the end of the stream: ignored, as Kafka ignores it
        try:
            message = _parse_message(payload, pos, stop)
        except _MalformedError as exc:
            raise _MalformedError(f"{where}: {exc}") from exc
        if message.attributes & COMPRESSION_CODEC_MASK:
            raise _MalformedError(f"{where}: inner messages must not be compressed (nested compression)")
        messages.append(message)
        pos = stop
    if not messages:
        raise _MalformedError(f"compressed ({name}) wrapper message holds no inner messages")
    return messages


def _absolute_base(wrapper: _Message, inner: list[_Message]) -> int:
    """What to add to inner offsets: 0 in a v0 wrapper (absolute), wrapper - last inner in a v1 wrapper."""
    if wrapper.magic == MAGIC_VALUE_V0 or wrapper.offset == 0:
        return 0
    last_inner = inner[-1].offset
    if wrapper.offset < last_inner:
        raise _MalformedError(
            f"wrapper offset {wrapper.offset} is less than the last inner relative offset {last_inner}"
        )
    return wrapper.offset - last_inner


def _parse_message(buf: memoryview, start: int, end: int) -> _Message:
    """The message of the entry ``buf[start:end]`` (whose size field the caller has checked)."""
    offset, _, _, magic, attributes = MESSAGE_HEADER.unpack_from(buf, start)
    pos = start + MESSAGE_HEADER.size
    if magic == MAGIC_VALUE_V0:
        timestamp = NO_TIMESTAMP
    else:  # any other magic has v1's layout (LegacyRecord; the cleaner does not ask inner magics to match)
        if end - start < LOG_OVERHEAD + RECORD_OVERHEAD_V1:
            raise _MalformedError(
                f"v1 message of {end - start - LOG_OVERHEAD} bytes is shorter than the minimum "
                f"{RECORD_OVERHEAD_V1}"
            )
        (timestamp,) = TIMESTAMP.unpack_from(buf, pos)
        pos += TIMESTAMP.size
    key, pos = _read_bytes(buf, pos, end, "key")
    value, pos = _read_bytes(buf, pos, end, "value")  # bytes after it are never read (LegacyRecord)
    return _Message(offset, magic, attributes, timestamp, key, value)


def _read_bytes(buf: memoryview, pos: int, end: int, what: str) -> tuple[memoryview | None, int]:
    if pos + LENGTH.size > end:
        raise _MalformedError(f"the message ends inside the {what} length")
    (length,) = LENGTH.unpack_from(buf, pos)
    pos += LENGTH.size
    if length < 0:  # any negative length is null (Utils.sizeDelimited)
        return None, pos
    if pos + length > end:
        raise _MalformedError(f"{what} of {length} bytes runs past the message ({end - pos} bytes left)")
    return buf[pos : pos + length], pos + length


def _bytes(data: memoryview | None) -> bytes | None:
    return None if data is None else bytes(data)


def _crc_mismatch(stored: int, computed: int) -> str:
    return f"legacy message CRC mismatch: stored {stored:#010x}, computed {computed:#010x}"
