"""The offset index ``.index``: parsing, building, lookups and the check against the log."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from kafka_segments.errors import CorruptIndexError, SegmentWriteError
from kafka_segments.records import Record, build_batch, scan_headers
from kafka_segments.segment import (
    OffsetIndex,
    OffsetPosition,
    build_offset_index,
    check_offset_index,
    parse_offset_index,
)
from kafka_segments.segment.offset_index import ENTRY_SIZE, max_entries

pytestmark = pytest.mark.unit

SEGMENTS = Path(__file__).resolve().parents[1] / "data" / "segments"
GOLDEN_ENTRIES = (OffsetPosition(105, 4210), OffsetPosition(131, 8463), OffsetPosition(200, 12700))


def _raw(*entries: tuple[int, int]) -> bytes:
    return b"".join(struct.pack(">ii", relative, position) for relative, position in entries)


@st.composite
def offset_indexes(draw: st.DrawFn) -> OffsetIndex:
    base = draw(st.integers(0, 2**40))
    gaps = draw(st.lists(st.tuples(st.integers(1, 1000), st.integers(1, 100_000)), max_size=40))
    entries, offset, position = [], base, 0
    for offset_gap, position_gap in gaps:
        offset += offset_gap
        position += position_gap
        entries.append(OffsetPosition(offset, position))
    return build_offset_index(entries, base_offset=base)


def test_golden_file_parses_to_the_hand_derived_entries() -> None:
    data = (SEGMENTS / "index-base-100" / "00000000000000000100.index").read_bytes()
    index = parse_offset_index(data, base_offset=100)
    assert index.entries == GOLDEN_ENTRIES
    assert index.unused_slots == 0
    assert index.last_offset == 200


def test_building_the_golden_entries_gives_the_golden_bytes() -> None:
    data = (SEGMENTS / "index-base-100" / "00000000000000000100.index").read_bytes()
    assert build_offset_index(GOLDEN_ENTRIES, base_offset=100).to_bytes() == data


def test_preallocated_file_counts_entries_up_to_the_last_non_zero_slot() -> None:
    data = (SEGMENTS / "preallocated" / "00000000000000000100.index").read_bytes()
    index = parse_offset_index(data, base_offset=100)
    assert index.entries == GOLDEN_ENTRIES[:2]
    assert index.unused_slots == 6
    assert index.to_bytes() == data[: 2 * ENTRY_SIZE]


def test_every_slot_is_an_entry_without_trimming_as_kafka_counts_length_over_entry_size() -> None:
    data = (SEGMENTS / "preallocated" / "00000000000000000100.index").read_bytes()
    with pytest.raises(CorruptIndexError, match="entry 2: offset 100 is not above") as caught:
        parse_offset_index(data, base_offset=100, trim_unused_slots=False)
    assert caught.value.position == 16


def test_all_zero_file_is_an_empty_index() -> None:
    index = parse_offset_index(bytes(80), base_offset=7)
    assert index == OffsetIndex(7, (), 10)
    assert index.lookup(1000) == OffsetPosition(7, 0)


@pytest.mark.parametrize(
    ("data", "position", "message"),
    [
        (b"\x00" * 9, 8, "not a multiple of the 8-byte entry size"),
        (_raw((-1, 10)), 0, "below the segment base offset"),
        (_raw((1, -5)), 0, r"position -5 is outside"),
        (_raw((1, 10), (1, 20)), 8, "offset 101 is not above the previous entry's offset 101"),
        (_raw((2, 10), (1, 20)), 8, "not above the previous entry's offset"),
        (_raw((1, 10), (2, 10)), 8, "position 10 is not above the previous entry's position 10"),
    ],
)
def test_corrupt_files_name_the_path_and_byte_position(data: bytes, position: int, message: str) -> None:
    with pytest.raises(CorruptIndexError, match=message) as caught:
        parse_offset_index(data, base_offset=100, path="t-0/00000000000000000100.index")
    assert caught.value.path == "t-0/00000000000000000100.index"
    assert caught.value.position == position
    assert f"t-0/00000000000000000100.index at byte {position}" in str(caught.value)


@pytest.mark.parametrize(
    "entries",
    [
        [OffsetPosition(99, 10)],
        [OffsetPosition(100 + 2**31, 10)],
        [OffsetPosition(101, 10), OffsetPosition(101, 20)],
        [OffsetPosition(101, 2**31)],
    ],
)
def test_building_refuses_what_kafka_append_refuses(entries: list[OffsetPosition]) -> None:
    with pytest.raises(SegmentWriteError, match="offset index entry"):
        build_offset_index(entries, base_offset=100)


def test_lookup_is_the_largest_entry_at_or_below_the_target_else_the_base() -> None:
    index = build_offset_index(GOLDEN_ENTRIES, base_offset=100)
    assert index.lookup(0) == OffsetPosition(100, 0)
    assert index.lookup(104) == OffsetPosition(100, 0)
    assert index.lookup(105) == OffsetPosition(105, 4210)
    assert index.lookup(130) == OffsetPosition(105, 4210)
    assert index.lookup(131) == OffsetPosition(131, 8463)
    assert index.lookup(10**12) == OffsetPosition(200, 12700)


@given(offset_indexes(), st.lists(st.integers(0, 2**41), max_size=20))
def test_lookup_agrees_with_a_linear_scan(index: OffsetIndex, targets: list[int]) -> None:
    for target in [*targets, *(entry.offset for entry in index.entries)]:
        below = [entry for entry in index.entries if entry.offset <= target]
        expected = below[-1] if below else OffsetPosition(index.base_offset, 0)
        assert index.lookup(target) == expected


@given(offset_indexes())
def test_bytes_round_trip(index: OffsetIndex) -> None:
    data = index.to_bytes()
    assert len(data) == ENTRY_SIZE * len(index.entries)
    assert parse_offset_index(data, base_offset=index.base_offset) == index


def test_max_entries_is_segment_index_bytes_over_8() -> None:
    assert max_entries(10 * 1024 * 1024) == 1_310_720
    assert max_entries(15) == 1


def _log_of_three_batches() -> bytes:
    return b"".join(build_batch([Record(offset, 1000, b"k", b"v")]) for offset in (0, 1, 5))


def test_check_accepts_entries_at_batch_starts() -> None:
    headers = list(scan_headers(_log_of_three_batches()))
    index = build_offset_index([OffsetPosition(1, 70), OffsetPosition(5, 140)], base_offset=0)
    assert check_offset_index(index, headers) == ()


def test_check_accepts_an_entry_for_the_last_offset_of_a_later_batch_as_older_brokers_wrote() -> None:
    headers = list(scan_headers(_log_of_three_batches()))
    index = build_offset_index([OffsetPosition(5, 70)], base_offset=0)
    assert check_offset_index(index, headers) == ()


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        (OffsetPosition(1, 71), "position 71 is not the start of a batch"),
        (OffsetPosition(6, 210), "position 210 is past the end of the log"),
        (OffsetPosition(1, 140), "offset 1 is not above the last offset 1 of the batch before position 140"),
        (OffsetPosition(9, 140), "offset 9 is past the log's last offset 5"),
    ],
)
def test_check_reports_entries_that_disagree_with_the_log(entry: OffsetPosition, message: str) -> None:
    headers = list(scan_headers(_log_of_three_batches()))
    problems = check_offset_index(OffsetIndex(0, (entry,)), headers)
    assert [(problem.entry, problem.reason) for problem in problems] == [(0, message)]
    assert str(problems[0]) == f"offset index entry 0: {message}"
