"""A bounded offset map (``log.cleaner.dedupe.buffer.size``): where Kafka's ``buildOffsetMapForSegment``
stops, and the round's end offset (``latestOffset + 1``) that follows.

``kafka_map`` below is the executable spec: Kafka's loop written record by record over decoded batches; the
product (``offset_map.build_offset_map`` with ``map_fill``, over record columns) must agree with it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kafka_segments.compaction.map_fill import OffsetMapFullError
from kafka_segments.compaction.offset_map import OffsetMap, build_offset_map, key_digest
from kafka_segments.compaction.rewrite import clean_round
from kafka_segments.compaction.source import (
    SourceSegment,
    aborted_from_markers,
    aborted_in_range,
    segment_slice,
)
from kafka_segments.config.model import OffsetMapCapacity
from kafka_segments.records import RecordBatch, iter_batches
from unit.compaction_helpers import NOW, LogBuilder, key_bytes, offsets_of
from unit.retention_helpers import topic_config

pytestmark = pytest.mark.unit


def digest(key: int) -> bytes:
    return key_digest(key_bytes(key))


def bounded(
    log: LogBuilder, max_entries: int, *, slots: int = 1000, first_dirty: int = 0, end: int | None = None
) -> OffsetMap:
    segments = log.segments()
    end_offset = segments[-1].base_offset if end is None else end
    aborted = aborted_in_range(segments, aborted_from_markers(segments), first_dirty, end_offset)
    return build_offset_map(
        segments,
        first_dirty=first_dirty,
        end_offset=end_offset,
        aborted=aborted,
        capacity=OffsetMapCapacity(slots, max_entries),
    )


def kafka_map(
    segments: Sequence[SourceSegment], capacity: OffsetMapCapacity, *, first_dirty: int, end: int
) -> tuple[dict[bytes, int], int]:
    """Kafka's buildOffsetMap, record by record, for logs without transactions: (entries, latestOffset)."""
    entries: dict[bytes, int] = {}
    latest = -1
    dirty = list(segment_slice(segments, first_dirty, end))
    for index, segment in enumerate(dirty):
        for batch in iter_batches(segment.data):
            assert isinstance(batch, RecordBatch)
            for record in [] if batch.header.is_control else batch.records:
                if record.key is None or record.offset < first_dirty:
                    continue
                if len(entries) >= capacity.max_entries:
                    return entries, latest
                found = key_digest(bytes(record.key))
                if found not in entries and len(entries) >= capacity.slots:
                    raise OffsetMapFullError("full", location=segment.name)
                entries[found] = latest = record.offset
            if batch.header.last_offset >= first_dirty:
                latest = batch.header.last_offset
        latest = (dirty[index + 1].base_offset if index + 1 < len(dirty) else end) - 1
    return entries, latest


@pytest.mark.parametrize(
    ("batches", "max_entries", "latest", "mapped"),
    [
        # one record per batch: the 4th distinct key finds the map full; the round ends after offset 3
        ([[1], [2], [1], [3], [4], [5]], 3, 3, {1: 2, 2: 1, 3: 3}),
        # mid-batch: the records put from the batch stay, the round ends after the last one put
        ([[1, 2, 3, 4]], 2, 1, {1: 0, 2: 1}),
        # a full map stops even at a key it already holds
        ([[1, 2, 1, 5]], 2, 1, {1: 0, 2: 1}),
        # unkeyed records neither count nor stop; the batch they complete moves latestOffset
        ([[1], [None, None], [2]], 1, 2, {1: 0}),
        # a map exactly full stops at the next keyed record, held key or not
        ([[1, 2], [1, 2]], 2, 1, {1: 0, 2: 1}),
        # everything fits: the unbounded result (the round's upper bound - 1)
        ([[1, 2], [1, 2]], 3, 3, {1: 2, 2: 3}),
    ],
)
def test_where_the_map_fills(
    batches: list[list[int | None]], max_entries: int, latest: int, mapped: dict[int, int]
) -> None:
    log = LogBuilder()
    for keys in batches:
        log.records([(k, 0) for k in keys])
    log.roll()
    log.rec("active", 0)
    offset_map = bounded(log, max_entries)
    assert offset_map.latest_offset == latest
    assert offset_map.next_dirty_offset == latest + 1
    assert dict(offset_map.entries) == {digest(k): o for k, o in mapped.items()}


def test_a_map_full_at_the_start_of_a_segment_ends_the_round_at_that_segment_across_a_gap() -> None:
    log = LogBuilder()
    log.records([(1, 0), (2, 0)])
    log.roll()
    log.next_offset = 10  # a gap, as after an earlier compaction
    log.rec(3, 0)
    log.roll()
    log.rec("active", 0)
    offset_map = bounded(log, 2)
    assert (offset_map.latest_offset, len(offset_map)) == (9, 2)  # the first segment's end: next base - 1


def test_aborted_data_and_markers_do_not_count_but_move_the_latest_offset() -> None:
    log = LogBuilder()
    log.rec(1, 1)  # 0
    log.txn(7, [5, 6])  # 1-2, aborted: never put
    log.abort(7)  # 3
    log.rec(2, 2)  # 4: the map (1 key) is full here
    log.roll()
    log.rec("active", 0)
    offset_map = bounded(log, 1)
    assert (offset_map.latest_offset, dict(offset_map.entries)) == (3, {digest(1): 0})


def test_records_below_the_first_dirty_offset_do_not_count() -> None:
    log = LogBuilder()
    log.records([(1, 0), (2, 0), (3, 0)])  # 0-2, first dirty 2
    log.rec(4, 0)  # 3: full
    log.roll()
    log.rec("active", 0)
    offset_map = bounded(log, 1, first_dirty=2)
    assert (offset_map.latest_offset, dict(offset_map.entries)) == (2, {digest(3): 2})


def test_a_load_factor_above_one_fails_the_round_when_a_new_key_finds_no_slot() -> None:
    log = LogBuilder()
    log.records([(1, 0), (2, 0), (1, 0)])
    log.roll()
    log.rec("active", 0)
    assert len(bounded(log, 3, slots=2)) == 2  # an update of a held key needs no new slot
    log.rec(3, 0)
    log.roll()
    with pytest.raises(OffsetMapFullError, match="offset 3 has a new key"):
        bounded(log, 3, slots=2)


def test_the_capacity_is_kafkas_arithmetic() -> None:
    # SkimpyOffsetMap(min(buffer / threads, Integer.MAX_VALUE)): 24 bytes a slot; (int) (slots * factor)
    assert OffsetMapCapacity.of(buffer_size=134_217_728, load_factor=0.9, threads=1) == (
        OffsetMapCapacity(5_592_405, 5_033_164)
    )
    assert OffsetMapCapacity.of(buffer_size=2 * 1_048_577, load_factor=0.9, threads=2) == (
        OffsetMapCapacity(43_690, 39_321)
    )
    assert OffsetMapCapacity.of(buffer_size=2**40, load_factor=1.0, threads=1).slots == (2**31 - 1) // 24


batch_keys = st.lists(st.one_of(st.none(), st.integers(0, 12)), min_size=1, max_size=5)
log_operations = st.lists(st.one_of(batch_keys, st.just("roll"), st.just("gap")), min_size=1, max_size=40)


@settings(max_examples=60, deadline=None)
@given(
    operations=log_operations,
    slots=st.integers(1, 12),
    max_entries=st.integers(0, 14),
    first_dirty=st.integers(0, 6),
)
def test_the_map_stops_where_kafkas_loop_stops(
    operations: list[list[int | None] | str], slots: int, max_entries: int, first_dirty: int
) -> None:
    log = LogBuilder()
    for operation in operations:
        if operation == "roll":
            log.roll()
        elif operation == "gap":
            log.next_offset += 3
        else:
            log.records([(k, 0) for k in operation])
    log.roll()
    log.rec("active", 0)
    segments = log.segments()
    end = segments[-1].base_offset
    capacity = OffsetMapCapacity(slots, max_entries)
    try:
        expected = kafka_map(segments, capacity, first_dirty=first_dirty, end=end)
    except OffsetMapFullError:
        with pytest.raises(OffsetMapFullError):
            build_offset_map(segments, first_dirty=first_dirty, end_offset=end, capacity=capacity)
        return
    offset_map = build_offset_map(segments, first_dirty=first_dirty, end_offset=end, capacity=capacity)
    assert (dict(offset_map.entries), offset_map.latest_offset) == expected


def test_a_round_with_a_full_map_keeps_more_and_checkpoints_lower() -> None:
    """Keys 1 2 1 3 4 1 (one batch each), a map of 3 keys: the round ends after offset 3 (Kafka's checkpoint
    4); records past it are kept, and only key 1's offset 0 (superseded at offset 2) goes."""
    log = LogBuilder()
    for key in (1, 2, 1, 3, 4, 1):
        log.rec(key, key)
    log.roll()
    log.rec("active", 0)
    config = topic_config(cleanup_policy="compact", producer_id_expiration_ms=2**63 - 1)
    unbounded = clean_round(log.segments(), first_dirty=0, end_offset=6, config=config, now_ms=NOW)
    # 96 bytes: 4 slots of 24 bytes; (int) (4 * 0.75) = 3 keys
    bounded_config = replace(config, dedupe_buffer_size=96, dedupe_buffer_load_factor=0.75)
    result = clean_round(log.segments(), first_dirty=0, end_offset=6, config=bounded_config, now_ms=NOW)
    assert (unbounded.end_offset, result.end_offset) == (6, 4)
    assert offsets_of([s.data for s in unbounded.segments]) == [1, 3, 4, 5]
    assert offsets_of([s.data for s in result.segments]) == [1, 2, 3, 4, 5]
    assert result.map_keys == 3
    threads = replace(bounded_config, dedupe_buffer_size=2 * 96, cleaner_threads=2)
    assert clean_round(log.segments(), first_dirty=0, end_offset=6, config=threads, now_ms=NOW) == result
