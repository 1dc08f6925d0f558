"""The header scan of the fast path: every v2 batch header of a ``.log`` buffer as columns
(``scan_header_table``), and the checks that find an entry's damage in the order the Python reader finds it
(``log.iter_batches`` / ``log.scan_headers``) so the error raised is the same.

The kernels only find *which* entry is bad and in which phase; the error itself is then raised by the
Python code for that one entry (``log.read_entry``, ``RecordBatch.verify_crc``), so class, message, position
and offset are the same. ``decode`` uses the same walk and checks before it decodes records."""

from __future__ import annotations

from typing import NoReturn

import crc32c as _crc32c
import numpy as np
import numpy.typing as npt

from kafka_segments.errors import CorruptRecordError, InvalidCrcError
from kafka_segments.records.attributes import CompressionType
from kafka_segments.records.batch import ATTRIBUTES_OFFSET, NO_TIMESTAMP, RECORDS_OFFSET, RecordBatch
from kafka_segments.records.fast import decode_kernels as _k
from kafka_segments.records.fast.columns import TABLE_DTYPES, U8, HeaderTable
from kafka_segments.records.log import (
    INT64_MAX,
    MAX_SEGMENT_BYTES,
    check_scanned_header,
    read_entry,
    scan_headers,
)
from kafka_segments.records.record import MIN_RECORD_SIZE

__all__ = [
    "as_read_only_array",
    "as_view",
    "first_damage",
    "raise_crc",
    "raise_damage",
    "raise_entry",
    "scan_header_table",
    "walk",
]

Buffer = bytes | bytearray | memoryview

_MAX_CODEC_ID = max(CompressionType)


def scan_header_table(data: Buffer, *, segment: str = "<memory>", verify_crc: bool = False) -> HeaderTable:
    """The header of every entry of a ``.log`` buffer as columns, without decoding records.

    Equal to ``log.scan_headers(data, segment=segment, verify_crc=verify_crc)``, in columns.

    Raises:
        CorruptRecordError: at the first damaged entry (TruncatedSegmentError, InvalidCrcError), exactly as
            ``scan_headers`` raises it.
    """
    array = as_read_only_array(data)
    table, stop, status = walk(array)
    if status == _k.SCAN_LEGACY:
        return HeaderTable.from_headers(scan_headers(data, segment=segment, verify_crc=verify_crc))
    view = as_view(data)
    _, damage = first_damage(view, table, stop, status, verify_crc=verify_crc, scanning=True)
    if damage is not None:
        raise_damage(view, table, damage, segment)
    return table


def as_view(data: Buffer) -> memoryview:
    view = memoryview(data)
    return view if view.format == "B" and view.ndim == 1 else view.cast("B")


def as_read_only_array(data: Buffer) -> U8:
    """A read-only uint8 view of ``data`` (read-only so the kernels have one specialization)."""
    array = np.frombuffer(data, dtype=np.uint8)
    if array.flags.writeable:
        array = array.view()
        array.flags.writeable = False
    return array


def walk(array: U8) -> tuple[HeaderTable, int, int]:
    """(headers of the valid v2 entries before the stop, stop position, status)."""
    positions, stop, status = _k.walk_entries(array)
    columns = [positions, *(np.empty(len(positions), dtype=dtype) for dtype in TABLE_DTYPES[1:])]
    _k.fill_headers(array, *columns)
    table = HeaderTable(*columns)
    return table, int(stop), int(status)


def first_damage(
    view: memoryview, table: HeaderTable, stop: int, status: int, *, verify_crc: bool, scanning: bool = False
) -> tuple[int, tuple[str, int] | None]:
    """(entries before the first damage, that damage as (kind, position or row)) from the entry checks.

    ``log.iter_batches`` / ``scan_headers`` check each entry in turn: its frame (``_check_entry``, done by
    the walk, which stopped at ``stop``), then with ``verify_crc`` its CRC, then its header fields
    (``_checked_v2_header``), then, ``scanning`` (``scan_headers``), what the batch can hold
    (``check_scanned_header``). The first damaged entry wins; within an entry, that order."""
    damage: tuple[str, int] | None = ("entry", stop) if status == _k.SCAN_DAMAGE else None
    limit = len(table)
    flags = _bad_header(table)
    if scanning:
        flags |= _misfit(table)
    bad = np.flatnonzero(flags)
    if bad.size:
        limit = int(bad[0])
        damage = ("entry", int(table.position[limit]))  # read_entry raises the header error
    if verify_crc:
        bad_crc = _first_bad_crc(view, table, min(limit + 1, len(table)))
        if bad_crc is not None:
            limit, damage = bad_crc, ("crc", bad_crc)
    return limit, damage


def _bad_header(table: HeaderTable) -> npt.NDArray[np.bool_]:
    """Rows ``log._checked_v2_header`` refuses (negative counts, unknown codec, offsets outside [0, 2^63-1],
    timestamps below -1)."""
    base = table.base_offset
    delta = table.last_offset_delta.astype(np.int64)
    offsets_out = (base < 0) | (delta > INT64_MAX - np.maximum(base, 0))
    timestamps_out = (table.base_timestamp < NO_TIMESTAMP) | (table.max_timestamp < NO_TIMESTAMP)
    flags: npt.NDArray[np.bool_] = (
        (delta < 0) | (table.records_count < 0) | (table.codec > _MAX_CODEC_ID) | offsets_out | timestamps_out
    )
    return flags


def _misfit(table: HeaderTable) -> npt.NDArray[np.bool_]:
    """Rows ``log.check_scanned_header`` refuses: past ``MAX_SEGMENT_BYTES``, or a records count the batch
    cannot hold (``log.records_count_misfit``)."""
    size = table.size_in_bytes
    count = table.records_count.astype(np.int64)
    uncompressed = table.codec == CompressionType.NONE
    too_many = np.where(
        uncompressed,
        count * MIN_RECORD_SIZE > size - RECORDS_OFFSET,
        count > table.last_offset_delta.astype(np.int64) + 1,
    )
    flags: npt.NDArray[np.bool_] = (table.position + size > MAX_SEGMENT_BYTES) | too_many
    return flags


def raise_damage(view: memoryview, table: HeaderTable, damage: tuple[str, int], segment: str) -> NoReturn:
    kind, where = damage
    if kind == "crc":
        raise_crc(view, table, where, segment)
    raise_entry(view, where, segment, "damaged entry")


def _first_bad_crc(view: memoryview, table: HeaderTable, limit: int) -> int | None:
    """The first of the first ``limit`` batches whose CRC-32C differs from its stored CRC."""
    starts = (table.position[:limit] + ATTRIBUTES_OFFSET).tolist()
    ends = (table.position[:limit] + table.size_in_bytes[:limit]).tolist()
    crc = _crc32c.crc32c  # the C extension itself: the crc.py wrapper costs a call per batch
    computed = [crc(view[start:end]) for start, end in zip(starts, ends, strict=True)]
    bad = np.flatnonzero(np.array(computed, dtype=np.uint32) != table.crc[:limit])
    return int(bad[0]) if bad.size else None


def raise_entry(view: memoryview, position: int, segment: str, reason: str) -> NoReturn:
    """Raise what ``log.read_entry`` raises for the damaged entry at ``position`` (then what
    ``log.check_scanned_header`` raises: the fast scan flags its rows too)."""
    check_scanned_header(read_entry(view, position, segment=segment).header, segment)
    raise CorruptRecordError(f"{reason} (found by the fast scan)", segment=segment, position=position)


def raise_crc(view: memoryview, table: HeaderTable, index: int, segment: str) -> NoReturn:
    header = table.header(index)
    RecordBatch(
        view[header.position : header.position + header.size_in_bytes], header, segment=segment
    ).verify_crc()
    raise InvalidCrcError(
        "record batch CRC mismatch (found by the fast scan)",
        segment=segment,
        position=header.position,
        offset=header.base_offset,
    )
