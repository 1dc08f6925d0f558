"""Writing a segment and rebuilding its indexes by Kafka's rules (`LogSegment.append`, `recover`).

Each scenario is named after the rule it checks. Single-record batches with key ``k`` and value ``v`` are
70 bytes: 61 header bytes + a 9-byte record.
"""

from __future__ import annotations

import bisect
import struct
import warnings
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from kafka_segments.errors import SegmentFullError, SegmentWriteError
from kafka_segments.records import CompressionType, Record, build_batch, scan_headers
from kafka_segments.records.batch import CRC_OFFSET
from kafka_segments.segment import (
    OffsetPosition,
    SegmentFiles,
    SegmentWriter,
    TimestampOffset,
    check_segment,
    parse_offset_index,
    parse_time_index,
    rebuild_indexes,
    write_segment,
    write_segments,
)

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)  # kafka/__init__ imports its admin client
    from kafka.record.memory_records import MemoryRecords

pytestmark = pytest.mark.unit

SEGMENTS = Path(__file__).resolve().parents[1] / "data" / "segments"
SIZE = 70


def batch(offset: int, *timestamps: int, count: int = 1, value: bytes = b"v") -> bytes:
    stamps = timestamps or (1000,) * count
    return build_batch([Record(offset + i, ts, b"k", value) for i, ts in enumerate(stamps)])


def offsets_of(segment: SegmentFiles) -> list[OffsetPosition]:
    return list(parse_offset_index(segment.offset_index, base_offset=segment.base_offset).entries)


def times_of(segment: SegmentFiles) -> list[TimestampOffset]:
    # The writer's index is exact (closed segments are trimmed): an entry (timestamp 0, relative offset 0)
    # is all zero bytes and must not be taken for a preallocated slot.
    entries = parse_time_index(segment.time_index, base_offset=segment.base_offset, trim_unused_slots=False)
    return list(entries.entries)


def test_single_record_batch_size_assumed_by_the_tables() -> None:
    assert len(batch(0)) == SIZE


# --- offset index: when entries are added ------------------------------------------------------------


def test_first_batch_never_gets_an_index_entry() -> None:
    assert offsets_of(write_segment([batch(0)], index_interval_bytes=0)) == []
    assert offsets_of(write_segment([batch(0, count=50)], index_interval_bytes=0)) == []


@pytest.mark.parametrize(
    ("interval", "batches", "expected"),
    [
        (0, 3, [(1, 70), (2, 140)]),
        (69, 3, [(1, 70), (2, 140)]),
        (70, 4, [(2, 140)]),  # 70 > 70 is false: the counter must exceed the interval
        (139, 4, [(2, 140)]),
        (140, 5, [(3, 210)]),
        (140, 8, [(3, 210), (6, 420)]),  # the counter restarts at the entry's batch
        (4096, 60, [(59, 4130)]),
    ],
)
def test_entry_when_bytes_since_last_entry_exceed_interval(
    interval: int, batches: int, expected: list[tuple[int, int]]
) -> None:
    segment = write_segment([batch(i) for i in range(batches)], index_interval_bytes=interval)
    assert offsets_of(segment) == [OffsetPosition(*entry) for entry in expected]


def test_entry_is_the_batch_last_offset_at_the_batch_start() -> None:
    first, second = batch(10, count=5), batch(17, count=4)
    segment = write_segment([first, second], index_interval_bytes=0)
    assert offsets_of(segment) == [OffsetPosition(20, len(first))]


def test_default_interval_is_4096_bytes() -> None:
    segment = write_segment([batch(i) for i in range(60)])
    assert offsets_of(segment) == [OffsetPosition(59, 59 * SIZE)]  # 59 * 70 = 4130 > 4096


# --- time index -----------------------------------------------------------------------------------------


def test_time_index_only_appends_larger_timestamps() -> None:
    stamps = [5, 3, 4, 9, 9, 2]
    segment = write_segment([batch(i, ts) for i, ts in enumerate(stamps)], index_interval_bytes=0)
    assert times_of(segment) == [TimestampOffset(5, 0), TimestampOffset(9, 3)]


def test_time_entry_is_the_max_so_far_including_the_batch_being_indexed() -> None:
    segment = write_segment([batch(0, 1), batch(1, 2), batch(2, 7), batch(3, 3)], index_interval_bytes=100)
    # entry before batch 2 (140 > 100): max so far includes batch 2 itself
    assert offsets_of(segment) == [OffsetPosition(2, 140)]
    assert times_of(segment) == [TimestampOffset(7, 2)]


def test_time_entry_offset_is_the_last_offset_of_the_batch_with_the_max_timestamp() -> None:
    segment = write_segment([batch(0, 9, 1, 2), batch(3, 4), batch(4, 5)], index_interval_bytes=0)
    assert times_of(segment) == [TimestampOffset(9, 2)]


def test_final_time_index_entry_on_close() -> None:
    segment = write_segment([batch(0, 10), batch(1, 30), batch(2, 20)])
    assert offsets_of(segment) == []
    assert times_of(segment) == [TimestampOffset(30, 1)]
    assert (segment.largest_timestamp, segment.offset_of_largest_timestamp) == (30, 1)


def test_closing_entry_is_not_repeated_when_the_last_entry_has_the_max() -> None:
    segment = write_segment([batch(0, 1), batch(1, 5)], index_interval_bytes=0)
    assert times_of(segment) == [TimestampOffset(5, 1)]


def test_without_timestamps_there_is_no_time_index() -> None:
    segment = write_segment([batch(0, -1), batch(1, -1)], index_interval_bytes=0)
    assert segment.time_index == b""
    assert (segment.largest_timestamp, segment.offset_of_largest_timestamp) == (-1, 0)


# --- offsets --------------------------------------------------------------------------------------------


def test_offset_span_overflow_rejected() -> None:
    writer = SegmentWriter(base_offset=0)
    writer.append(batch(2**31 - 1))
    with pytest.raises(SegmentFullError, match="overflows the int32 relative offset"):
        writer.append(batch(2**31))
    with pytest.raises(SegmentFullError, match="overflows"):
        SegmentWriter(base_offset=0).append(batch(2**31 - 1, count=2))


def test_offset_below_the_base_offset_rejected() -> None:
    with pytest.raises(SegmentWriteError, match="below the segment base offset 5") as caught:
        SegmentWriter(base_offset=5).append(batch(4))
    assert not isinstance(caught.value, SegmentFullError)


@pytest.mark.parametrize("second", [batch(3), batch(2), batch(0, count=5)])
def test_batches_must_have_increasing_offsets(second: bytes) -> None:
    writer = SegmentWriter(base_offset=0)
    writer.append(batch(1, count=3))
    with pytest.raises(SegmentWriteError, match="not above the previous batch's last offset 3"):
        writer.append(second)


def test_offset_gaps_are_allowed() -> None:
    segment = write_segment([batch(0), batch(10), batch(11, count=2)], index_interval_bytes=0)
    assert segment.next_offset == 13
    assert offsets_of(segment) == [OffsetPosition(10, 70), OffsetPosition(12, 140)]


# --- rolling --------------------------------------------------------------------------------------------


def test_full_time_index_is_reported_as_kafka_would_roll() -> None:
    writer = SegmentWriter(base_offset=0, index_interval_bytes=0, segment_index_bytes=24)
    writer.append(batch(0))
    writer.append(batch(1))  # 1 time entry of 24 // 12 = 2, one of which is reserved
    assert writer.is_full
    with pytest.raises(SegmentFullError, match="the time index is full"):
        writer.append(batch(2))
    assert writer.size == 2 * SIZE
    assert writer.close().batch_count == 2


def test_full_offset_index_is_reported_as_kafka_would_roll() -> None:
    writer = SegmentWriter(base_offset=0, index_interval_bytes=0, segment_index_bytes=24)
    for offset in range(4):  # no timestamps, so the time index stays empty
        writer.append(batch(offset, -1))
    with pytest.raises(SegmentFullError, match="the offset index is full"):
        writer.append(batch(4, -1))


def test_an_empty_segment_takes_a_batch_even_with_tiny_indexes() -> None:
    writer = SegmentWriter(base_offset=0, index_interval_bytes=0, segment_index_bytes=12)
    writer.append(batch(0))
    with pytest.raises(SegmentFullError, match="the time index is full"):
        writer.append(batch(1))


def test_segment_bytes_limit_rolls_before_the_batch_that_would_exceed_it() -> None:
    writer = SegmentWriter(base_offset=0, segment_bytes=150)
    writer.append(batch(0))
    writer.append(batch(1))  # 70 + 70 <= 150
    with pytest.raises(SegmentFullError, match=r"exceed segment\.bytes=150"):
        writer.append(batch(2))


def test_a_batch_larger_than_segment_bytes_still_fills_an_empty_segment() -> None:
    assert write_segment([batch(0)], segment_bytes=10).batch_count == 1


def test_write_segments_rolls_at_the_batch_base_offset() -> None:
    two_records = len(batch(0, count=2))
    segments = write_segments([batch(i * 2, count=2) for i in range(5)], segment_bytes=2 * two_records)
    assert [(s.base_offset, s.batch_count) for s in segments] == [(0, 2), (4, 2), (8, 1)]
    assert b"".join(s.log for s in segments) == b"".join(batch(i * 2, count=2) for i in range(5))


# --- input validation and the result ----------------------------------------------------------------


def test_batch_bytes_must_be_exactly_one_entry() -> None:
    with pytest.raises(SegmentWriteError, match="pass one batch per item"):
        SegmentWriter(base_offset=0).append(batch(0) + batch(1))


def test_damaged_batch_is_rejected_naming_the_batch() -> None:
    damaged = bytearray(batch(0))
    damaged[CRC_OFFSET] ^= 0xFF
    with pytest.raises(SegmentWriteError, match=r"batch 0 .* not a valid entry: record batch CRC mismatch"):
        SegmentWriter(base_offset=0, segment="t-0/00").append(bytes(damaged))
    SegmentWriter(base_offset=0, verify_crc=False).append(bytes(damaged))
    with pytest.raises(SegmentWriteError, match="not a valid entry"):
        SegmentWriter(base_offset=0).append(batch(0)[:40])


def test_closed_writer_refuses_appends_and_close_is_idempotent() -> None:
    writer = SegmentWriter(base_offset=0)
    writer.append(batch(0))
    assert writer.close() is writer.close()
    with pytest.raises(SegmentWriteError, match="closed"):
        writer.append(batch(1))


@pytest.mark.parametrize(
    ("base_offset", "interval", "index_bytes", "segment_bytes", "message"),
    [
        (-1, 0, 12, None, "base_offset"),
        (0, -1, 12, None, "index.interval.bytes"),
        (0, 0, 11, None, "segment_index_bytes"),
        (0, 0, 12, 0, "segment_bytes"),
    ],
)
def test_invalid_options(
    base_offset: int, interval: int, index_bytes: int, segment_bytes: int | None, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        SegmentWriter(
            base_offset=base_offset,
            index_interval_bytes=interval,
            segment_index_bytes=index_bytes,
            segment_bytes=segment_bytes,
        )


def test_result_metadata_and_file_names() -> None:
    segment = write_segment([batch(100, 5, 9), batch(105, 7, count=1)], base_offset=90)
    assert segment.base_offset == 90
    assert (segment.batch_count, segment.record_count) == (2, 3)
    assert (segment.last_offset, segment.next_offset) == (105, 106)
    assert (segment.largest_timestamp, segment.offset_of_largest_timestamp) == (9, 101)
    assert segment.size == len(segment.log) == 2 * SIZE + 9
    assert sorted(segment.files()) == [
        "00000000000000000090.index",
        "00000000000000000090.log",
        "00000000000000000090.timeindex",
    ]


def test_empty_segment() -> None:
    segment = SegmentWriter(base_offset=7).close()
    assert (segment.log, segment.offset_index, segment.time_index, segment.txn_index) == (b"", b"", b"", b"")
    assert (segment.last_offset, segment.next_offset) == (None, 7)
    with pytest.raises(SegmentWriteError, match="explicit base_offset"):
        write_segment([])


# --- golden segment and rebuilding ----------------------------------------------------------------------


def _split(log: bytes) -> list[bytes]:
    batches, position = [], 0
    while position < len(log):
        size = 12 + struct.unpack_from(">i", log, position + 8)[0]
        batches.append(log[position : position + size])
        position += size
    return batches


def test_golden_segment_written_by_kafka_python_gets_the_hand_derived_indexes() -> None:
    golden = SEGMENTS / "interval-100"
    log = (golden / "00000000000000000100.log").read_bytes()
    segment = write_segment(_split(log), index_interval_bytes=100)
    assert segment.log == log
    assert segment.offset_index == (golden / "00000000000000000100.index").read_bytes()
    assert segment.time_index == (golden / "00000000000000000100.timeindex").read_bytes()
    assert segment.files() == {path.name: path.read_bytes() for path in golden.iterdir()}
    rebuilt = rebuild_indexes(log, base_offset=100, index_interval_bytes=100)
    assert rebuilt.segment == segment
    assert (rebuilt.truncated_bytes, rebuilt.damage) == (0, None)


def test_rebuild_stops_at_the_first_damaged_batch_as_recover_truncates() -> None:
    batches = [batch(i, i) for i in range(4)]
    damaged = bytearray(batches[2])
    damaged[CRC_OFFSET] ^= 0x01
    log = b"".join([*batches[:2], bytes(damaged), batches[3]])
    recovery = rebuild_indexes(log, base_offset=0, index_interval_bytes=0, segment="t-0/00.log")
    assert recovery.segment == write_segment(batches[:2], index_interval_bytes=0)
    assert recovery.truncated_bytes == 2 * SIZE
    assert recovery.damage is not None
    assert recovery.damage.position == 2 * SIZE
    assert "t-0/00.log at byte 140" in str(recovery.damage)


def test_rebuild_of_a_partial_trailing_batch() -> None:
    log = batch(0) + batch(1)[:30]
    recovery = rebuild_indexes(log, base_offset=0)
    assert recovery.segment.batch_count == 1
    assert recovery.truncated_bytes == 30


def test_check_segment_reports_a_stale_index_and_passes_a_rebuilt_one() -> None:
    segment = write_segment([batch(i, i) for i in range(5)], index_interval_bytes=0)
    stale = write_segment([batch(i, i) for i in range(3)], index_interval_bytes=0)
    shifted = write_segment([batch(i, i) for i in range(5)], index_interval_bytes=0, base_offset=0)
    assert check_segment(
        segment.log, base_offset=0, offset_index=shifted.offset_index, time_index=segment.time_index
    ).ok
    result = check_segment(segment.log, base_offset=0, time_index=stale.time_index)
    assert [str(problem) for problem in result.problems] == [
        "time index: the last entry's timestamp 2 is below the segment's largest timestamp 4: "
        "the closing entry is missing"
    ]
    broken = check_segment(
        segment.log + b"\x00" * 20,
        base_offset=0,
        offset_index=b"\x00" * 7,
        time_index=segment.time_index,
        segment="t-0/00000000000000000000",
    )
    assert [problem.file for problem in broken.problems] == ["log", "offset index"]
    assert "t-0/00000000000000000000.log at byte 350" in str(broken.problems[0])


# --- properties -----------------------------------------------------------------------------------------


@st.composite
def segments(draw: st.DrawFn) -> tuple[list[bytes], int]:
    offset = draw(st.integers(0, 10**6))
    batches = []
    for _ in range(draw(st.integers(1, 25))):
        count = draw(st.integers(1, 3))
        stamps = draw(
            st.lists(st.one_of(st.just(-1), st.integers(0, 10_000)), min_size=count, max_size=count)
        )
        size = draw(st.integers(0, 300))
        batches.append(batch(offset, *stamps, value=b"x" * size))
        offset += count + draw(st.integers(0, 3))
    return batches, draw(st.integers(0, 1000))


@given(segments())
def test_every_index_entry_points_at_a_batch_start_whose_last_offset_matches(
    case: tuple[list[bytes], int],
) -> None:
    batches, interval = case
    segment = write_segment(batches, index_interval_bytes=interval)
    headers = {header.position: header for header in scan_headers(segment.log)}
    for entry in offsets_of(segment):
        assert headers[entry.position].last_offset == entry.offset
    for time_entry in times_of(segment):
        upto = [h for h in headers.values() if h.base_offset <= time_entry.offset]
        assert time_entry.timestamp == max(h.max_timestamp for h in upto)
        assert any(h.last_offset == time_entry.offset for h in upto)
    if segment.largest_timestamp >= 0:
        assert times_of(segment)[-1] == TimestampOffset(
            segment.largest_timestamp, segment.offset_of_largest_timestamp
        )


@given(segments(), st.lists(st.integers(0, 2 * 10**6), max_size=10))
def test_lookups_agree_with_a_linear_scan(case: tuple[list[bytes], int], targets: list[int]) -> None:
    batches, interval = case
    segment = write_segment(batches, index_interval_bytes=interval)
    offsets = parse_offset_index(segment.offset_index, base_offset=segment.base_offset)
    times = parse_time_index(segment.time_index, base_offset=segment.base_offset)
    headers = list(scan_headers(segment.log))
    for target in targets:
        found = offsets.lookup(target)
        containing = [h for h in headers if h.last_offset >= target]
        if containing:  # scanning forward from the found position reaches the first batch holding target
            assert found.position <= containing[0].position
        assert found.offset <= target or found == OffsetPosition(segment.base_offset, 0)
        hit = times.lookup(target % 10_001)
        earlier = [h for h in headers if h.last_offset < hit.offset]
        assert all(h.max_timestamp <= hit.timestamp for h in earlier)
    last_offsets = [h.last_offset for h in headers]
    assert bisect.bisect_left(last_offsets, segment.next_offset) == len(headers)


@given(segments())
def test_rebuild_indexes_of_the_written_log_gives_the_written_segment(case: tuple[list[bytes], int]) -> None:
    batches, interval = case
    segment = write_segment(batches, index_interval_bytes=interval)
    recovery = rebuild_indexes(segment.log, base_offset=segment.base_offset, index_interval_bytes=interval)
    assert recovery.segment == segment
    check = check_segment(
        segment.log,
        base_offset=segment.base_offset,
        offset_index=segment.offset_index,
        time_index=segment.time_index,
        txn_index=segment.txn_index,
        ongoing={},
    )
    assert check.ok, check.problems


# --- interop --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("compression", [CompressionType.NONE, CompressionType.GZIP])
def test_kafka_python_reads_the_written_log(compression: CompressionType) -> None:
    records = [
        [Record(o, 1000 + o, b"key%d" % o, b"value%d" % o) for o in range(b, b + 3)] for b in (0, 3, 9)
    ]
    segment = write_segment(
        [build_batch(rs, compression=compression) for rs in records], index_interval_bytes=0
    )
    reader = MemoryRecords(segment.log)
    seen: list[tuple[int, int, bytes | None, bytes | None]] = []
    while reader.has_next():
        kafka_batch = reader.next_batch()
        assert kafka_batch.validate_crc()
        seen.extend((r.offset, r.timestamp, r.key, r.value) for r in kafka_batch)
    assert seen == [(r.offset, r.timestamp, r.key, r.value) for rs in records for r in rs]


def test_golden_files_are_what_the_generator_makes() -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_segment_golden", SEGMENTS / "make_golden.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for path, data in module.golden_files().items():
        assert path.read_bytes() == data, path.name


def test_rebuild_indexes_legacy_entries_by_their_shallow_offsets() -> None:
    log = (SEGMENTS.parent / "legacy" / "v1.log").read_bytes()
    headers = list(scan_headers(log))
    recovery = rebuild_indexes(log, base_offset=headers[0].base_offset, index_interval_bytes=0)
    assert recovery.damage is None
    assert offsets_of(recovery.segment) == [OffsetPosition(h.last_offset, h.position) for h in headers[1:]]
    assert recovery.segment.record_count == sum(h.records_count for h in headers)
