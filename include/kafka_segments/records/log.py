"""Reading a ``.log`` segment: a plain concatenation of entries with no file header.

Every entry starts with ``Offset => Int64, Size => Int32`` and has its magic at byte 16: 2 is a record batch,
0 and 1 are legacy messages, anything else is corruption (``ByteBufferLogInputStream.nextBatch``). A header
no writer can produce is damage too; a header scan (``scan_headers``) also refuses records counts the
stream cannot hold and entries past ``MAX_SEGMENT_BYTES`` (32-bit index positions), because the manifest's
counts come from headers. Damage is a ``CorruptRecordError`` naming the segment, byte position and offset;
``scan_valid_prefix`` returns what is valid up to it, as Kafka's segment recovery does."""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass

from kafka_segments.errors import CorruptRecordError, TruncatedSegmentError
from kafka_segments.records.attributes import COMPRESSION_CODEC_MASK, CompressionType
from kafka_segments.records.batch import (
    INT32_MAX,
    LOG_OVERHEAD,
    MAGIC_OFFSET,
    MAGIC_VALUE_V2,
    NO_TIMESTAMP,
    RECORD_BATCH_OVERHEAD,
    BatchHeader,
    RecordBatch,
    unpack_header,
)
from kafka_segments.records.compression import MAX_INFLATED_BATCH_BYTES
from kafka_segments.records.legacy import RECORD_OVERHEAD_V0, LegacyEntry, read_legacy_entry
from kafka_segments.records.record import MIN_RECORD_SIZE, Record

Buffer = bytes | bytearray | memoryview
Entry = RecordBatch | LegacyEntry

_PREFIX = struct.Struct(">qi")
MAX_CODEC_ID = max(CompressionType)
HEADER_SIZE_UP_TO_MAGIC = MAGIC_OFFSET + 1
INT64_MAX = 2**63 - 1
MAX_SEGMENT_BYTES = INT32_MAX
"""The largest segment Kafka writes (``segment.bytes`` is an int; ``.index`` positions are 32-bit)."""


@dataclass(frozen=True, slots=True)
class SegmentScan:
    """What a tolerant scan found: the valid batches, how many bytes they span, and the damage (if any)."""

    batches: tuple[BatchHeader, ...]
    valid_bytes: int
    damage: CorruptRecordError | None

    @property
    def is_clean(self) -> bool:
        return self.damage is None


def iter_batches(
    data: Buffer,
    *,
    segment: str = "<memory>",
    verify_crc: bool = True,
    max_inflated: int | None = MAX_INFLATED_BATCH_BYTES,
) -> Iterator[Entry]:
    """Every entry of the segment, as a ``RecordBatch`` (magic 2) or a ``LegacyEntry`` (magic 0/1).
    ``max_inflated``: the most bytes one compressed entry may decompress to (``None``: no limit).

    Raises:
        CorruptRecordError: at the first damaged entry (everything before it has been yielded);
            ``DecompressionLimitError`` for an entry past ``max_inflated`` (a v2 batch's when its records
            are read).
    """
    view = memoryview(data)
    for position, size, magic in _walk(view, segment):
        yield _entry_at(
            view, position, size, magic, segment, verify_crc=verify_crc, max_inflated=max_inflated
        )


def scan_headers(
    data: Buffer, *, segment: str = "<memory>", verify_crc: bool = False
) -> Iterator[BatchHeader]:
    """The header of every entry, without decoding records (v2 bodies are never touched).

    Raises:
        CorruptRecordError: at the first damaged entry.
    """
    view = memoryview(data)
    for position, size, magic in _walk(view, segment):
        if magic == MAGIC_VALUE_V2 and not verify_crc:
            header = _checked_v2_header(unpack_header(view, position), segment)
        else:
            header = _entry_at(view, position, size, magic, segment, verify_crc=verify_crc).header
        yield check_scanned_header(header, segment)


def iter_records(data: Buffer, *, segment: str = "<memory>", verify_crc: bool = True) -> Iterator[Record]:
    """Every record of the segment with its absolute offset and timestamp (control records included)."""
    for entry in iter_batches(data, segment=segment, verify_crc=verify_crc):
        yield from entry.records


def scan_valid_prefix(data: Buffer, *, segment: str = "<memory>", verify_crc: bool = True) -> SegmentScan:
    """Headers of the valid entries up to the first damage, and that damage (``None`` for a clean segment)."""
    batches: list[BatchHeader] = []
    valid_bytes = 0
    try:
        for header in scan_headers(data, segment=segment, verify_crc=verify_crc):
            batches.append(header)
            valid_bytes = header.position + header.size_in_bytes
    except CorruptRecordError as damage:
        return SegmentScan(tuple(batches), valid_bytes, damage)
    return SegmentScan(tuple(batches), valid_bytes, None)


def read_entry(data: Buffer, position: int = 0, *, segment: str = "<memory>") -> Entry:
    """The one entry that starts at ``position`` (checked for length and magic, not for CRC)."""
    view = memoryview(data)
    size, magic = _check_entry(view, position, segment)
    return _entry_at(view, position, size, magic, segment, verify_crc=False)


def _walk(view: memoryview, segment: str) -> Iterator[tuple[int, int, int]]:
    """Yield (position, size, magic) for each entry, raising at damage."""
    position = 0
    end = len(view)
    while position < end:
        size, magic = _check_entry(view, position, segment)
        yield position, size, magic
        position += LOG_OVERHEAD + size


def _check_entry(view: memoryview, position: int, segment: str) -> tuple[int, int]:
    remaining = len(view) - position
    if remaining < HEADER_SIZE_UP_TO_MAGIC:
        raise TruncatedSegmentError(
            f"segment ends inside an entry header ({remaining} bytes left, {HEADER_SIZE_UP_TO_MAGIC} needed)",
            segment=segment,
            position=position,
            offset=_prefix_offset(view, position, remaining),
        )
    offset, size = _PREFIX.unpack_from(view, position)
    if size < RECORD_OVERHEAD_V0:
        raise CorruptRecordError(
            f"impossible entry size {size} (smaller than the minimum {RECORD_OVERHEAD_V0})",
            segment=segment,
            position=position,
            offset=offset,
        )
    magic = view[position + MAGIC_OFFSET]
    if magic > MAGIC_VALUE_V2:
        raise CorruptRecordError(
            f"unknown magic byte {magic}", segment=segment, position=position, offset=offset
        )
    if magic == MAGIC_VALUE_V2 and size < RECORD_BATCH_OVERHEAD - LOG_OVERHEAD:
        raise CorruptRecordError(
            f"impossible batch length {size} "
            f"(a v2 batch header alone is {RECORD_BATCH_OVERHEAD - LOG_OVERHEAD})",
            segment=segment,
            position=position,
            offset=offset,
        )
    if LOG_OVERHEAD + size > remaining:
        raise TruncatedSegmentError(
            f"entry declares {LOG_OVERHEAD + size} bytes but only {remaining} remain in the segment",
            segment=segment,
            position=position,
            offset=offset,
        )
    return size, magic


def _entry_at(
    view: memoryview,
    position: int,
    size: int,
    magic: int,
    segment: str,
    *,
    verify_crc: bool,
    max_inflated: int | None = MAX_INFLATED_BATCH_BYTES,
) -> Entry:
    """The entry at ``position``; with ``verify_crc`` a damaged checksum is reported before anything else."""
    end = position + LOG_OVERHEAD + size
    if magic == MAGIC_VALUE_V2:
        header = unpack_header(view, position)
        batch = RecordBatch(view[position:end], header, segment=segment, max_inflated=max_inflated)
        if verify_crc:
            batch.verify_crc()
        _checked_v2_header(batch.header, segment)
        return batch
    entry = read_legacy_entry(
        view[position:end], segment=segment, position=position, max_inflated=max_inflated
    )
    if verify_crc:
        entry.verify_crc()
    return entry


def _checked_v2_header(header: BatchHeader, segment: str) -> BatchHeader:
    """Reject header values no writer can produce (negative counts, codec ids above zstd, offsets outside
    [0, 2^63-1], timestamps below -1)."""
    codec = header.attributes & COMPRESSION_CODEC_MASK
    if header.last_offset_delta < 0 or header.records_count < 0 or codec > MAX_CODEC_ID:
        raise _header_damage(
            header,
            segment,
            f"invalid batch header (lastOffsetDelta {header.last_offset_delta}, "
            f"recordsCount {header.records_count}, compression codec id {codec})",
        )
    if header.base_offset < 0 or header.last_offset > INT64_MAX:
        raise _header_damage(
            header,
            segment,
            f"batch offsets out of range: base offset {header.base_offset} + lastOffsetDelta "
            f"{header.last_offset_delta} = last offset {header.last_offset}, outside [0, {INT64_MAX}]",
        )
    if header.base_timestamp < NO_TIMESTAMP or header.max_timestamp < NO_TIMESTAMP:
        raise _header_damage(
            header,
            segment,
            f"batch timestamps out of range: baseTimestamp {header.base_timestamp}, maxTimestamp "
            f"{header.max_timestamp} (below {NO_TIMESTAMP}, Kafka's 'no timestamp')",
        )
    return header


def check_scanned_header(header: BatchHeader, segment: str) -> BatchHeader:
    """What a header scan checks beyond the entry itself, since it decodes no record: the entry ends within
    ``MAX_SEGMENT_BYTES`` and a v2 batch's records count fits its records stream.

    Raises:
        CorruptRecordError: naming the segment, the entry's position and base offset.
    """
    end = header.position + header.size_in_bytes
    if end > MAX_SEGMENT_BYTES:
        raise _header_damage(
            header,
            segment,
            f"the entry ends at byte {end}, past {MAX_SEGMENT_BYTES} bytes (Kafka's largest segment: "
            "offset index positions are 32-bit)",
        )
    if header.magic == MAGIC_VALUE_V2:
        misfit = records_count_misfit(header)
        if misfit is not None:
            raise _header_damage(
                header, segment, f"records count {header.records_count} cannot fit the batch: {misfit}"
            )
    return header


def records_count_misfit(header: BatchHeader) -> str | None:
    """Why a v2 batch cannot hold the records its header counts, or ``None``.

    Uncompressed, ``n`` records take at least ``n * MIN_RECORD_SIZE`` bytes of the batch. Compressed, the
    bytes give no bound, but each record has its own offset within ``[baseOffset, baseOffset +
    lastOffsetDelta]`` (producers number them consecutively; the cleaner only removes records)."""
    payload = header.size_in_bytes - RECORD_BATCH_OVERHEAD
    count = header.records_count
    if header.compression is CompressionType.NONE:
        if count * MIN_RECORD_SIZE > payload:
            return (
                f"{payload} bytes of records hold at most {payload // MIN_RECORD_SIZE} "
                f"(a record takes at least {MIN_RECORD_SIZE} bytes)"
            )
    elif count > header.last_offset_delta + 1:
        span = header.last_offset_delta + 1
        return f"its offsets span only {span} (lastOffsetDelta {header.last_offset_delta})"
    return None


def _header_damage(header: BatchHeader, segment: str, reason: str) -> CorruptRecordError:
    return CorruptRecordError(reason, segment=segment, position=header.position, offset=header.base_offset)


def _prefix_offset(view: memoryview, position: int, remaining: int) -> int | None:
    if remaining >= _PREFIX.size - 4:
        return int(struct.unpack_from(">q", view, position)[0])
    return None
