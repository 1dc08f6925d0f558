"""The offset map of a round (``Cleaner.buildOffsetMap``, ``SkimpyOffsetMap``)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kafka_segments.compaction.offset_map import OffsetMap, build_offset_map, key_digest
from kafka_segments.compaction.source import aborted_from_markers, aborted_in_range
from kafka_segments.records import CompressionType
from unit.compaction_helpers import LogBuilder, key_bytes

pytestmark = pytest.mark.unit


def digest(key: int) -> bytes:
    return key_digest(key_bytes(key))


def full_map(log: LogBuilder, *, first_dirty: int = 0, end: int | None = None) -> OffsetMap:
    segments = log.segments()
    end_offset = segments[-1].base_offset if end is None else end
    aborted = aborted_in_range(segments, aborted_from_markers(segments), first_dirty, end_offset)
    return build_offset_map(segments, first_dirty=first_dirty, end_offset=end_offset, aborted=aborted)


def test_the_map_keeps_the_latest_offset_of_every_key() -> None:
    log = LogBuilder()
    for k, v in [(1, 1), (2, 2), (1, 3), (3, 4), (2, 5)]:
        log.rec(k, v)
    log.roll()
    offset_map = full_map(log)
    assert {k: offset_map.get(digest(k)) for k in (1, 2, 3, 4)} == {1: 2, 2: 4, 3: 3, 4: -1}
    assert len(offset_map) == 3


def test_tombstones_are_mapped_like_any_keyed_record() -> None:
    log = LogBuilder()
    log.rec(1, 1)
    log.tomb(1)
    log.roll()
    assert full_map(log).get(digest(1)) == 1


def test_unkeyed_records_are_never_mapped() -> None:
    log = LogBuilder()
    log.records([(None, 1), (1, 2), (None, 3)])
    log.roll()
    offset_map = full_map(log)
    assert len(offset_map) == 1
    assert offset_map.get(digest(1)) == 1


def test_records_below_first_dirty_are_not_mapped() -> None:
    log = LogBuilder()
    log.records([(1, 1), (2, 2), (3, 3)])  # one batch 0-2, first dirty in the middle
    log.rec(4, 4)
    log.roll()
    offset_map = full_map(log, first_dirty=2)
    assert offset_map.get(digest(1)) == -1
    assert offset_map.get(digest(2)) == -1
    assert offset_map.get(digest(3)) == 2


def test_aborted_transactional_data_never_enters_the_map() -> None:
    log = LogBuilder()
    log.rec(1, 1)  # 0
    log.txn(7, [1, 2])  # 1-2 aborted
    log.abort(7)  # 3
    log.txn(8, [2])  # 4 committed
    log.commit(8)  # 5
    log.roll()
    offset_map = full_map(log)
    assert offset_map.get(digest(1)) == 0
    assert offset_map.get(digest(2)) == 4


def test_an_abort_whose_marker_is_past_the_round_still_excludes_its_data() -> None:
    # collectAbortedTransactions searches on past the upper bound until an entry's LSO reaches it.
    log = LogBuilder()
    log.txn(7, [1])  # 0
    log.roll()
    log.abort(7)  # 1, in the active segment
    log.rec(2, 2)
    assert full_map(log, end=1).get(digest(1)) == -1


def test_control_records_are_never_keys() -> None:
    log = LogBuilder()
    log.txn(7, [1])
    log.commit(7)
    log.roll()
    assert len(full_map(log)) == 1


def test_latest_offset_is_the_round_upper_bound_minus_one_across_offset_gaps() -> None:
    log = LogBuilder()
    log.rec(1, 1)
    log.roll()
    log.next_offset = 100  # a gap, as after an earlier compaction
    log.rec(2, 2)
    log.roll()
    log.next_offset = 200
    log.rec(3, 3)
    offset_map = full_map(log)
    assert offset_map.latest_offset == 199
    assert offset_map.next_dirty_offset == 200


def test_an_empty_dirty_range_maps_nothing() -> None:
    log = LogBuilder()
    log.rec(1, 1)
    log.roll()
    log.rec(2, 2)
    offset_map = full_map(log, first_dirty=1, end=1)
    assert (len(offset_map), offset_map.latest_offset) == (0, -1)


def test_compressed_batches_are_mapped_by_record() -> None:
    log = LogBuilder()
    log.records([(1, 1), (2, 2), (1, 3)], codec=CompressionType.ZSTD)
    log.roll()
    assert full_map(log).get(digest(1)) == 2


log_operations = st.lists(
    st.tuples(st.sampled_from(["rec", "tomb", "unkeyed", "roll"]), st.integers(0, 30)),
    min_size=1,
    max_size=80,
)


def build_log(operations: list[tuple[str, int]]) -> LogBuilder:
    log = LogBuilder()
    for op, k in operations:
        if op == "rec":
            log.rec(k, k)
        elif op == "tomb":
            log.tomb(k)
        elif op == "unkeyed":
            log.rec(None, k)
        else:
            log.roll()
    log.roll()
    return log


@settings(max_examples=40, deadline=None)
@given(operations=log_operations)
def test_the_map_holds_the_last_keyed_offset_of_every_key(operations: list[tuple[str, int]]) -> None:
    log = build_log(operations)
    segments = log.segments()
    end = segments[-1].base_offset
    expected: dict[int, int] = {}
    offset = 0
    for op, k in operations:
        if op in ("rec", "tomb"):
            expected[k] = offset
        if op != "roll":
            offset += 1
    offset_map = build_offset_map(segments, first_dirty=0, end_offset=end)
    assert {k: offset_map.get(digest(k)) for k in expected} == expected
    assert len(offset_map) == len(expected)
