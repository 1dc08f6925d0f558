"""The time index ``.timeindex``: parsing, building, lookups and the check against the log."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from kafka_segments.errors import CorruptIndexError, SegmentWriteError
from kafka_segments.records import BatchHeader, Record, build_batch, scan_headers
from kafka_segments.segment import (
    TimeIndex,
    TimestampOffset,
    build_time_index,
    check_time_index,
    parse_time_index,
)
from kafka_segments.segment.time_index import ENTRY_SIZE, NO_TIMESTAMP, is_full, max_entries

pytestmark = pytest.mark.unit

SEGMENTS = Path(__file__).resolve().parents[1] / "data" / "segments"
T = 1_700_000_000_000
GOLDEN_ENTRIES = (
    TimestampOffset(T + 1000, 105),
    TimestampOffset(T + 3000, 131),
    TimestampOffset(T + 6000, 200),
)


def _raw(*entries: tuple[int, int]) -> bytes:
    return b"".join(struct.pack(">qi", timestamp, relative) for timestamp, relative in entries)


@st.composite
def time_indexes(draw: st.DrawFn) -> TimeIndex:
    base = draw(st.integers(0, 2**40))
    steps = draw(st.lists(st.tuples(st.integers(1, 10**6), st.integers(0, 1000)), max_size=40))
    entries, timestamp, offset = [], draw(st.integers(-1, 2**40)), base
    for timestamp_gap, offset_gap in steps:
        timestamp += timestamp_gap
        offset += offset_gap
        entries.append(TimestampOffset(timestamp, offset))
    return build_time_index(entries, base_offset=base)


def test_golden_file_parses_to_the_hand_derived_entries() -> None:
    data = (SEGMENTS / "index-base-100" / "00000000000000000100.timeindex").read_bytes()
    index = parse_time_index(data, base_offset=100)
    assert index.entries == GOLDEN_ENTRIES
    assert index.last_entry == TimestampOffset(T + 6000, 200)


def test_building_the_golden_entries_gives_the_golden_bytes() -> None:
    data = (SEGMENTS / "index-base-100" / "00000000000000000100.timeindex").read_bytes()
    assert build_time_index(GOLDEN_ENTRIES, base_offset=100).to_bytes() == data


def test_preallocated_file_counts_entries_up_to_the_last_non_zero_slot() -> None:
    data = (SEGMENTS / "preallocated" / "00000000000000000100.timeindex").read_bytes()
    index = parse_time_index(data, base_offset=100)
    assert index.entries == GOLDEN_ENTRIES[:2]
    assert index.unused_slots == 3


def test_untrimmed_zero_slot_is_a_timestamp_below_the_previous_one() -> None:
    data = (SEGMENTS / "preallocated" / "00000000000000000100.timeindex").read_bytes()
    with pytest.raises(CorruptIndexError, match="entry 2: timestamp 0 is not above") as caught:
        parse_time_index(data, base_offset=100, trim_unused_slots=False)
    assert caught.value.position == 24


def test_empty_index_last_entry_is_no_timestamp_at_the_base_offset() -> None:
    index = parse_time_index(b"", base_offset=42)
    assert index.last_entry == TimestampOffset(NO_TIMESTAMP, 42)
    assert index.lookup(T) == TimestampOffset(NO_TIMESTAMP, 42)


@pytest.mark.parametrize(
    ("data", "position", "message"),
    [
        (b"\x00" * 13, 12, "not a multiple of the 12-byte entry size"),
        (_raw((T, -1)), 0, "below the segment base offset"),
        (_raw((-1, 1)), 0, "timestamp -1 is not above the previous timestamp -1"),
        (_raw((T, 1), (T, 2)), 12, f"timestamp {T} is not above the previous timestamp {T}"),
        (_raw((T, 5), (T + 1, 4)), 12, "offset 104 is below the previous entry's offset 105"),
    ],
)
def test_corrupt_files_name_the_path_and_byte_position(data: bytes, position: int, message: str) -> None:
    with pytest.raises(CorruptIndexError, match=message) as caught:
        parse_time_index(data, base_offset=100, path="t-0/00000000000000000100.timeindex")
    assert caught.value.position == position
    assert "t-0/00000000000000000100.timeindex at byte" in str(caught.value)


def test_equal_offsets_with_larger_timestamps_are_allowed_as_in_maybe_append() -> None:
    index = parse_time_index(_raw((T, 5), (T + 1, 5)), base_offset=100)
    assert index.entries == (TimestampOffset(T, 105), TimestampOffset(T + 1, 105))


def test_building_refuses_what_maybe_append_would_not_write() -> None:
    with pytest.raises(SegmentWriteError, match="time index entry 1"):
        build_time_index([TimestampOffset(T, 101), TimestampOffset(T, 102)], base_offset=100)


def test_lookup_is_the_largest_timestamp_at_or_below_the_target() -> None:
    index = build_time_index(GOLDEN_ENTRIES, base_offset=100)
    assert index.lookup(T) == TimestampOffset(NO_TIMESTAMP, 100)
    assert index.lookup(T + 1000) == TimestampOffset(T + 1000, 105)
    assert index.lookup(T + 2999) == TimestampOffset(T + 1000, 105)
    assert index.lookup(T + 10**9) == TimestampOffset(T + 6000, 200)


@given(time_indexes(), st.lists(st.integers(-5, 2**42), max_size=20))
def test_lookup_agrees_with_a_linear_scan(index: TimeIndex, targets: list[int]) -> None:
    for target in [*targets, *(entry.timestamp for entry in index.entries)]:
        below = [entry for entry in index.entries if entry.timestamp <= target]
        expected = below[-1] if below else TimestampOffset(NO_TIMESTAMP, index.base_offset)
        assert index.lookup(target) == expected


@given(time_indexes())
def test_bytes_round_trip(index: TimeIndex) -> None:
    data = index.to_bytes()
    assert len(data) == ENTRY_SIZE * len(index.entries)
    assert parse_time_index(data, base_offset=index.base_offset, trim_unused_slots=False) == index


def test_one_slot_is_reserved_for_the_closing_entry() -> None:
    assert max_entries(10 * 1024 * 1024) == 873_813
    assert not is_full(1, 36)
    assert is_full(2, 36)


def _headers(*batches: tuple[int, list[int]]) -> list[BatchHeader]:
    log = b"".join(
        build_batch([Record(base + i, ts, b"k", b"v") for i, ts in enumerate(timestamps)])
        for base, timestamps in batches
    )
    return list(scan_headers(log))


def test_check_accepts_kafka_entries_and_the_closing_entry() -> None:
    headers = _headers((0, [T + 5, T + 1]), (2, [T + 3]), (3, [T + 9]))
    index = build_time_index([TimestampOffset(T + 5, 1), TimestampOffset(T + 9, 3)], base_offset=0)
    assert check_time_index(index, headers) == ()


@pytest.mark.parametrize(
    ("entries", "message"),
    [
        ([TimestampOffset(T + 4, 1), TimestampOffset(T + 9, 3)], "is not the largest batch timestamp"),
        ([TimestampOffset(T + 5, 7), TimestampOffset(T + 9, 8)], "offset 7 is not in the log"),
        ([TimestampOffset(T + 5, 1)], "the closing entry is missing"),
        ([], "the closing entry is missing"),
    ],
)
def test_check_reports_entries_that_disagree_with_the_log(
    entries: list[TimestampOffset], message: str
) -> None:
    headers = _headers((0, [T + 5, T + 1]), (2, [T + 3]), (3, [T + 9]))
    problems = check_time_index(build_time_index(entries, base_offset=0), headers)
    assert problems
    assert message in problems[0].reason


def test_active_segment_need_not_have_the_closing_entry() -> None:
    headers = _headers((0, [T + 5]), (1, [T + 9]))
    index = build_time_index([TimestampOffset(T + 5, 0)], base_offset=0)
    assert check_time_index(index, headers, inactive=False) == ()


def test_a_trimmed_entry_of_timestamp_0_at_the_base_offset_is_all_zeros() -> None:
    data = bytes(ENTRY_SIZE)  # (timestamp 0, relative offset 0): indistinguishable from an unused slot
    assert parse_time_index(data, base_offset=9).entries == ()
    assert parse_time_index(data, base_offset=9, trim_unused_slots=False).entries == (TimestampOffset(0, 9),)
