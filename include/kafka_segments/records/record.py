"""Record v2 (``DefaultRecord``): the records inside a magic-2 batch (zigzag varint lengths and deltas; a
value length of -1 is a tombstone, 0 an empty value; header keys are UTF-8 read with U+FFFD for malformed
bytes). In a LogAppendTime batch every record's timestamp is the batch's maxTimestamp, whatever its delta
says."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from kafka_segments.records.varint import VARINT_MAX_BYTES, VarintError, decode_varint, encode_varint

Buffer = bytes | bytearray | memoryview

MIN_RECORD_SIZE = 7
"""The fewest bytes a v2 record takes: its length varint, attributes, timestamp delta, offset delta, key
length, value length and headers count, one byte each (a null key and value, no headers). A batch of ``n``
records holds at least ``n * MIN_RECORD_SIZE`` bytes of records stream."""


@dataclass(frozen=True, slots=True)
class Header:
    """A record header; keys are non-null strings, values may be null."""

    key: str
    value: bytes | None


@dataclass(frozen=True, slots=True)
class Record:
    """One record with its absolute offset and timestamp."""

    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: tuple[Header, ...] = ()

    @property
    def is_tombstone(self) -> bool:
        """A null value: compaction's delete marker. An empty value is not a tombstone."""
        return self.value is None


class RecordFormatError(ValueError):
    """A record's bytes do not follow the v2 record schema (callers add the segment and position)."""


def encode_record(record: Record, *, base_offset: int, base_timestamp: int) -> bytes:
    """The bytes of ``record`` inside a batch with the given base offset and base timestamp."""
    parts = [
        b"\x00",
        encode_varint(record.timestamp - base_timestamp),
        encode_varint(record.offset - base_offset),
        _encode_nullable(record.key),
        _encode_nullable(record.value),
        encode_varint(len(record.headers)),
    ]
    for header in record.headers:
        key = header.key.encode("utf-8")
        parts.append(encode_varint(len(key)))
        parts.append(key)
        parts.append(_encode_nullable(header.value))
    body = b"".join(parts)
    return encode_varint(len(body)) + body


def encode_records(records: Sequence[Record], *, base_offset: int, base_timestamp: int) -> bytes:
    return b"".join(
        encode_record(record, base_offset=base_offset, base_timestamp=base_timestamp) for record in records
    )


def decode_records(
    data: Buffer, *, count: int, base_offset: int, base_timestamp: int, log_append_time: int | None = None
) -> list[Record]:
    """Decode exactly ``count`` records that fill ``data`` completely.

    Raises:
        RecordFormatError: a record is malformed, a length disagrees with the bytes consumed, the data ends
            early, or bytes are left over after ``count`` records.
    """
    records: list[Record] = []
    pos = 0
    end = len(data)
    try:
        for index in range(count):
            if pos == end:  # the records end cleanly before the header's count: it lies
                raise RecordFormatError(_count_mismatch(index, count, end))
            record, pos = _decode_record(data, pos, base_offset, base_timestamp, log_append_time, index)
            records.append(record)
    except VarintError as exc:
        raise RecordFormatError(f"record {len(records)}: {exc}") from exc
    if pos != end:
        raise RecordFormatError(
            f"{end - pos} unconsumed bytes after all {count} records were read "
            "(incorrect declared batch size)"
        )
    return records


def _count_mismatch(found: int, claimed: int, end: int) -> str:
    return (
        f"record {found}: varint at {end} runs past the end of the buffer (the batch header claims "
        f"{claimed} records, its records stream holds {found})"
    )


def _decode_record(
    data: Buffer, pos: int, base_offset: int, base_timestamp: int, log_append_time: int | None, index: int
) -> tuple[Record, int]:
    length, pos = decode_varint(data, pos, max_bytes=VARINT_MAX_BYTES)
    start = pos
    limit = start + length
    if length < 0 or limit > len(data):
        raise RecordFormatError(f"record {index} declares {length} bytes but {len(data) - start} remain")
    pos += 1  # attributes, unused
    timestamp_delta, pos = decode_varint(data, pos)
    offset_delta, pos = decode_varint(data, pos, max_bytes=VARINT_MAX_BYTES)
    key, pos = _decode_nullable(data, pos, limit, "key", index)
    value, pos = _decode_nullable(data, pos, limit, "value", index)
    header_count, pos = decode_varint(data, pos, max_bytes=VARINT_MAX_BYTES)
    if header_count < 0:
        raise RecordFormatError(f"record {index} has a negative header count {header_count}")
    headers = []
    for _ in range(header_count):
        header_key, pos = _decode_nullable(data, pos, limit, "header key", index)
        if header_key is None:
            raise RecordFormatError(f"record {index} has a null header key")
        header_value, pos = _decode_nullable(data, pos, limit, "header value", index)
        # Kafka reads header keys with new String(bytes, UTF_8): malformed bytes become U+FFFD, no error.
        headers.append(Header(header_key.decode("utf-8", errors="replace"), header_value))
    if pos != limit:
        raise RecordFormatError(f"record {index}: expected to read {length} bytes but read {pos - start}")
    timestamp = log_append_time if log_append_time is not None else base_timestamp + timestamp_delta
    return Record(base_offset + offset_delta, timestamp, key, value, tuple(headers)), pos


def _encode_nullable(value: bytes | None) -> bytes:
    if value is None:
        return encode_varint(-1)
    return encode_varint(len(value)) + bytes(value)


def _decode_nullable(data: Buffer, pos: int, limit: int, what: str, index: int) -> tuple[bytes | None, int]:
    length, pos = decode_varint(data, pos, max_bytes=VARINT_MAX_BYTES)
    if length < 0:  # any negative length is null (DefaultRecord.readFrom)
        return None, pos
    if pos + length > limit:
        raise RecordFormatError(f"record {index}: {what} of {length} bytes runs past the record")
    return bytes(data[pos : pos + length]), pos + length
