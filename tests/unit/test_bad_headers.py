"""Issue 20: batch headers no writer can produce (offsets past ``Long.MAX_VALUE`` or negative, timestamps
below -1, a records count the batch cannot hold, an entry past Kafka's largest segment) are damage, found
by the header scan, the Python reference (``log.scan_headers``) and the fast scan (``scan_header_table``)
alike; a full decode names a lying records count with what the header claims and what the batch holds."""

from __future__ import annotations

import struct
from collections.abc import Callable

import pytest
from kafka_segments.errors import CorruptRecordError
from kafka_segments.records import log
from kafka_segments.records.attributes import CompressionType
from kafka_segments.records.batch import BASE_OFFSET_OFFSET, MAX_TIMESTAMP_OFFSET, BatchHeader
from kafka_segments.records.builder import build_batch
from kafka_segments.records.fast import decode_record_columns, scan_header_table
from kafka_segments.records.fast import scan as fast
from kafka_segments.records.log import iter_records, scan_headers
from kafka_segments.records.record import MIN_RECORD_SIZE, Record, encode_record
from unit.bad_batches import (
    INT32_MAX,
    OVERFLOW_BASE,
    early_base_timestamp_batch,
    early_timestamp_batch,
    lying_count_batch,
    overflowing_batch,
    records,
    with_field,
)

NAME = "orders-0/00000000000000000000.log"
GOOD = build_batch(records(0, 4))
AFTER = len(GOOD)  # every bad batch below follows one good batch


def _negative_base_offset() -> bytes:
    buf = bytearray(build_batch(records(0, 3)))
    struct.pack_into(">q", buf, BASE_OFFSET_OFFSET, -3)  # not covered by the CRC
    return bytes(buf)


BAD = {
    "offsets-past-long-max": (
        lambda: overflowing_batch(OVERFLOW_BASE),
        f"last offset {OVERFLOW_BASE + 9}, outside \\[0, 9223372036854775807\\]",
        OVERFLOW_BASE,
    ),
    "last-offset-one-past-long-max": (
        lambda: overflowing_batch(OVERFLOW_BASE, count=6),
        "last offset 9223372036854775808",
        OVERFLOW_BASE,
    ),
    "negative-base-offset": (_negative_base_offset, "base offset -3", -3),
    "max-timestamp-below-minus-one": (early_timestamp_batch, "maxTimestamp -5 \\(below -1", 0),
    "base-timestamp-long-min": (early_base_timestamp_batch, "baseTimestamp -9223372036854775808", 0),
    "count-cannot-fit-uncompressed": (
        lying_count_batch,
        f"records count {INT32_MAX} cannot fit the batch: \\d+ bytes of records hold at most \\d+",
        0,
    ),
    "count-cannot-fit-compressed": (
        lambda: lying_count_batch(compression=CompressionType.ZSTD),
        f"records count {INT32_MAX} cannot fit the batch: its offsets span only 10",
        0,
    ),
    "count-one-past-the-offsets-compressed": (
        lambda: lying_count_batch(claimed=11, compression=CompressionType.GZIP),
        "records count 11 cannot fit the batch: its offsets span only 10",
        0,
    ),
}


def _segment(bad: Callable[[], bytes]) -> bytes:
    batch = bad()
    if struct.unpack_from(">q", batch, BASE_OFFSET_OFFSET)[0] == 0:  # move it after the good batch
        batch = _moved(batch, 4)
    return GOOD + batch


def _moved(batch: bytes, base_offset: int) -> bytes:
    buf = bytearray(batch)
    struct.pack_into(">q", buf, BASE_OFFSET_OFFSET, base_offset)
    return bytes(buf)


def outcome(read: Callable[[], object]) -> tuple[str, object]:
    try:
        return "ok", read()
    except CorruptRecordError as exc:
        return "error", (type(exc), str(exc), exc.segment, exc.position, exc.offset)


@pytest.mark.parametrize(("make", "match", "offset"), list(BAD.values()), ids=list(BAD))
@pytest.mark.parametrize("verify_crc", [False, True], ids=["no-crc", "crc"])
def test_the_header_scan_refuses_what_no_writer_produces(
    make: Callable[[], bytes], match: str, offset: int, verify_crc: bool
) -> None:
    data = _segment(make)
    expected = offset + 4 if offset == 0 else offset
    with pytest.raises(CorruptRecordError, match=match) as info:
        list(scan_headers(data, segment=NAME, verify_crc=verify_crc))
    assert (info.value.segment, info.value.position, info.value.offset) == (NAME, AFTER, expected)
    slow = outcome(lambda: list(scan_headers(data, segment=NAME, verify_crc=verify_crc)))
    fast_scan = outcome(lambda: scan_header_table(data, segment=NAME, verify_crc=verify_crc).to_headers())
    assert fast_scan == slow


@pytest.mark.parametrize(
    "name",
    [
        "offsets-past-long-max",
        "negative-base-offset",
        "max-timestamp-below-minus-one",
        "base-timestamp-long-min",
    ],
)
def test_a_full_decode_refuses_the_same_headers(name: str) -> None:
    make, match, _ = BAD[name]
    data = _segment(make)
    slow = outcome(lambda: list(iter_records(data, segment=NAME)))
    assert slow[0] == "error"
    assert outcome(lambda: decode_record_columns(data, segment=NAME).to_records()) == slow
    with pytest.raises(CorruptRecordError, match=match):
        list(iter_records(data, segment=NAME))


def test_the_smallest_record_takes_min_record_size_bytes() -> None:
    smallest = encode_record(Record(0, 0, None, None), base_offset=0, base_timestamp=0)
    assert len(smallest) == MIN_RECORD_SIZE


def test_a_count_that_fits_exactly_is_accepted() -> None:
    batch = build_batch([Record(i, 0, None, None) for i in range(5)], base_offset=0)
    assert [h.records_count for h in scan_headers(batch)] == [5]
    assert scan_header_table(batch).to_headers() == list(scan_headers(batch))


@pytest.mark.parametrize(
    "compression", [CompressionType.NONE, CompressionType.ZSTD], ids=["uncompressed", "zstd"]
)
def test_a_full_decode_names_the_claimed_and_the_found_count(compression: CompressionType) -> None:
    # a count the header scan lets through (it fits the batch) but the records stream does not hold
    data = GOOD + _moved(lying_count_batch(claimed=10, count=9, compression=compression), 4)
    expected = (
        "record 9: varint at \\d+ runs past the end of the buffer \\(the batch header claims 10 records, "
        "its records stream holds 9\\)"
    )
    with pytest.raises(CorruptRecordError, match=expected) as info:
        list(iter_records(data, segment=NAME))
    assert (type(info.value), info.value.segment, info.value.position, info.value.offset) == (
        CorruptRecordError,
        NAME,
        AFTER,
        4,
    )
    slow = outcome(lambda: list(iter_records(data, segment=NAME)))
    assert outcome(lambda: decode_record_columns(data, segment=NAME).to_records()) == slow


def test_a_lying_count_of_int32_max_is_named_by_a_full_decode() -> None:
    data = GOOD + _moved(lying_count_batch(compression=CompressionType.LZ4), 4)
    with pytest.raises(CorruptRecordError, match="claims 2147483647 records, its records stream holds 10"):
        decode_record_columns(data, segment=NAME)


def test_an_entry_past_the_largest_segment_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    # a 2 GiB segment is too large for a test: lower the limit so that the second batch crosses it
    data = GOOD + _moved(build_batch(records(0, 2)), 4)
    monkeypatch.setattr(log, "MAX_SEGMENT_BYTES", len(data) - 1)
    monkeypatch.setattr(fast, "MAX_SEGMENT_BYTES", len(data) - 1)
    match = f"the entry ends at byte {len(data)}, past {len(data) - 1} bytes"
    with pytest.raises(CorruptRecordError, match=match) as info:
        list(scan_headers(data, segment=NAME))
    assert (info.value.position, info.value.offset) == (AFTER, 4)
    assert outcome(lambda: scan_header_table(data, segment=NAME).to_headers()) == outcome(
        lambda: list(scan_headers(data, segment=NAME))
    )


def test_headers_at_the_edges_are_accepted() -> None:
    # last offset exactly Long.MAX_VALUE, timestamps -1
    top = overflowing_batch(OVERFLOW_BASE, count=5)
    no_timestamp = with_field(build_batch(records(0, 1)), MAX_TIMESTAMP_OFFSET, ">q", -1)
    for data in (top, no_timestamp):
        headers: list[BatchHeader] = list(scan_headers(data, verify_crc=True))
        assert scan_header_table(data, verify_crc=True).to_headers() == headers
    assert next(iter(scan_headers(top))).last_offset == 2**63 - 1
