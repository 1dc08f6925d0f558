"""A pushed lower bound on ``timestamp`` starts inside a segment whose ``.timeindex`` the manifest pins: a
one-hour query of a split, multi-hour lake reads strictly fewer bytes, and always exactly the rows of an
unfiltered read filtered in Python — with out-of-order CreateTime timestamps, LogAppendTime batches,
segments without a ``.timeindex``, and a ``.timeindex`` replaced after the manifest (docs/reading.md,
"Timestamps inside a segment")."""

from __future__ import annotations

import dataclasses
import tempfile
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafka_segments.lake import begin_run, stage_segment
from kafka_segments.lake.adopt_run import adopt
from kafka_segments.lake.codec import segment_to_dict
from kafka_segments.lake.layout import index_keys
from kafka_segments.lake.reader import resolve_manifest
from kafka_segments.lake.scan import sha256_hex, summarize_segment
from kafka_segments.lake.time_pin import checked_time_index_sha256, time_floor, time_index_key
from kafka_segments.reading import plan_read
from kafka_segments.reading.pushdown import Narrowing
from kafka_segments.segment.files import FileKind
from kafka_segments.segment.offset_index import ENTRY as OFFSET_ENTRY
from kafka_segments.segment.time_index import ENTRY, TimestampOffset, build_time_index
from kafka_segments.segment.writer import write_segment
from kafka_segments.storage import LocalStore, ObjectStore
from kafka_segments.topic_partition import TopicPartition
from kit import FakeClock, upload_segment
from lake.adoption_helpers import CountingStore
from pyspark.sql.datasource import GreaterThanOrEqual

from reading.split_helpers import RangeRecordingStore, rows
from reading.time_helpers import (
    HOUR_MS,
    T0,
    TP,
    all_rows,
    as_datetime,
    click_batches,
    commit_clicks,
    in_window,
    pushed_read,
)

pytestmark = pytest.mark.lake

HOURS = 6
CUTS = (80, 160)
"""Three segments of two hours each (40 batches an hour)."""


def _lake(store: ObjectStore, *, seed: int = 3, **kwargs: Any) -> None:
    commit_clicks(store, click_batches(seed, hours=HOURS), cuts=CUTS, **kwargs)


def test_one_hour_reads_fewer_bytes_and_exactly_its_rows(store: ObjectStore) -> None:
    _lake(store)
    assert all(segment.time_index_sha256 for segment in resolve_manifest(store).partitions[0].segments)
    want = all_rows(store)
    low, high = T0 + 3 * HOUR_MS + HOUR_MS // 2, T0 + 4 * HOUR_MS + HOUR_MS // 2  # inside segment 1
    got, narrowed = pushed_read(store, low, high, max_bytes=2000)
    before, whole = pushed_read(store, low, high, max_bytes=2000, time_index=False)
    assert got == before == in_window(want, low, high)
    assert len(got) > 50
    assert narrowed < whole * 0.8  # the middle segment's first hour and more are not read


def test_a_segment_without_a_timeindex_is_read_from_its_start() -> None:
    with tempfile.TemporaryDirectory() as folder:
        store = LocalStore(Path(folder))
        _lake(store, time_index=lambda segment: segment != 1)
        middle = resolve_manifest(store).partitions[0].segments[1]
        assert middle.time_index_sha256 is None
        low, high = T0 + 3 * HOUR_MS + HOUR_MS // 2, T0 + 4 * HOUR_MS
        assert time_floor(store, middle, low) == middle.base_offset
        got, narrowed = pushed_read(store, low, high, max_bytes=2000)
        before, whole = pushed_read(store, low, high, max_bytes=2000, time_index=False)
        assert got == before == in_window(all_rows(store), low, high)
        assert narrowed == whole


def test_a_timeindex_replaced_after_the_manifest_is_not_used() -> None:
    with tempfile.TemporaryDirectory() as folder:
        store = LocalStore(Path(folder))
        _lake(store)
        middle = resolve_manifest(store).partitions[0].segments[1]
        low, high = T0 + 3 * HOUR_MS + HOUR_MS // 2, T0 + 4 * HOUR_MS
        assert time_floor(store, middle, low) > middle.base_offset
        lie = ENTRY.pack(T0 - HOUR_MS, middle.next_offset - 1 - middle.base_offset)  # "all of it is older"
        store.put(time_index_key(middle.key), lie)
        assert time_floor(store, middle, low) == middle.base_offset
        got, narrowed = pushed_read(store, low, high, max_bytes=2000)
        before, whole = pushed_read(store, low, high, max_bytes=2000, time_index=False)
        assert got == before == in_window(all_rows(store), low, high)
        assert narrowed == whole
        store.delete(time_index_key(middle.key))
        assert time_floor(store, middle, low) == middle.base_offset


def test_only_a_timeindex_that_holds_for_the_log_is_pinned() -> None:
    files = write_segment(click_batches(5, hours=2), index_interval_bytes=512)
    table = summarize_segment(files.log, key="t", base_offset=0).table
    assert checked_time_index_sha256(files.time_index, table, base_offset=0) == sha256_hex(files.time_index)
    entries = build_time_index(
        [TimestampOffset(e.timestamp - 1, e.offset) for e in _entries(files.time_index)], base_offset=0
    )
    assert checked_time_index_sha256(entries.to_bytes(), table, base_offset=0) is None  # one ms too early
    assert checked_time_index_sha256(b"", table, base_offset=0) is None
    assert checked_time_index_sha256(b"\0" * 13, table, base_offset=0) is None  # does not parse


def test_a_lying_timeindex_is_staged_but_not_pinned() -> None:
    with tempfile.TemporaryDirectory() as folder:
        store = LocalStore(Path(folder))
        files = write_segment(click_batches(5, hours=2), index_interval_bytes=512)
        first = _entries(files.time_index)[0]
        lie = ENTRY.pack(first.timestamp, first.offset + 200)  # claims 200 more offsets than it may
        clock = FakeClock()
        run, _ = begin_run(store, now_ms=clock(), operation="test", clock=clock)
        staged = {FileKind.LOG: files.log, FileKind.TIME_INDEX: lie}
        entry = stage_segment(store, run, topic_partition=TP, base_offset=0, files=staged, clock=clock)
        assert entry.time_index_sha256 is None
        assert store.get(time_index_key(entry.key)) == lie


def _entries(data: bytes) -> list[TimestampOffset]:
    return [TimestampOffset(t, o) for t, o in ENTRY.iter_unpack(data)]


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 1000),
    window=st.tuples(st.floats(-0.1, 1.1), st.floats(0, 0.5)),
    max_bytes=st.integers(500, 20_000),
    late_minutes=st.integers(0, 150),
)
def test_any_window_gives_the_rows_of_an_unfiltered_read(
    seed: int, window: tuple[float, float], max_bytes: int, late_minutes: int
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        store = LocalStore(Path(folder))
        batches = click_batches(seed, hours=4, batches_per_hour=20, late_ms=late_minutes * 60_000)
        commit_clicks(store, batches, cuts=(30, 50), time_index=lambda segment: segment != seed % 3)
        start, length = window
        low = T0 + round(start * 4 * HOUR_MS)
        high = low + round(length * 4 * HOUR_MS) + 1
        got, narrowed = pushed_read(store, low, high, max_bytes=max_bytes)
        _, whole = pushed_read(store, low, high, max_bytes=max_bytes, time_index=False)
        assert got == in_window(all_rows(store), low, high)
        assert narrowed <= whole
        by_time = {
            "subscribe": TP.topic,
            "startingTimestamp": str(low),
            "endingTimestamp": str(high),
            "startingOffsetsByTimestampStrategy": "latest",
        }
        resolved = rows(store, by_time)
        for segment in resolve_manifest(store).partitions[0].segments:
            store.delete(time_index_key(segment.key))
        assert rows(store, by_time) == resolved  # resolved by a whole segment's scan now


def test_a_pin_survives_the_manifest() -> None:
    with tempfile.TemporaryDirectory() as folder:
        store = LocalStore(Path(folder))
        _lake(store)
        segment = resolve_manifest(store).partitions[0].segments[0]
        assert segment.time_index_sha256 == sha256_hex(store.get(time_index_key(segment.key)))
        pinless = dataclasses.replace(segment, time_index_sha256=None)
        assert pinless == segment  # not part of equality
        assert segment_to_dict(segment)["time_index_sha256"] == segment.time_index_sha256
        assert "time_index_sha256" not in segment_to_dict(pinless)  # written as a manifest before the field


def test_adoption_pins_only_a_trimmed_timeindex_that_holds(local_store: LocalStore) -> None:
    files = write_segment(click_batches(9, hours=2), index_interval_bytes=512)
    first = _entries(files.time_index)[0]
    time_indexes = {
        0: files.time_index,  # as a broker rolls it: pinned
        1: files.time_index + b"\0" * 10_000,  # an active segment's preallocated index: not read past a bound
        2: ENTRY.pack(first.timestamp, first.offset + 200),  # claims offsets it may not
        3: None,
    }
    for partition, time_index in time_indexes.items():
        log_key = upload_segment(local_store, TopicPartition("adopted", partition), files, with_indexes=False)
        if time_index is not None:
            local_store.put(time_index_key(log_key), time_index)
    clock = FakeClock()
    adopt(local_store, now_ms=clock(), clock=clock)
    pins = {
        state.topic_partition.partition: state.segments[0].time_index_sha256
        for state in resolve_manifest(local_store).partitions
    }
    assert pins == {0: sha256_hex(files.time_index), 1: None, 2: None, 3: None}
    adopted = resolve_manifest(local_store).partitions[0].segments[0]
    low = T0 + HOUR_MS
    assert adopted.base_offset < time_floor(local_store, adopted, low) < adopted.next_offset


def test_a_starting_and_ending_timestamp_resolve_from_where_the_timeindex_starts() -> None:
    with tempfile.TemporaryDirectory() as folder:
        store = LocalStore(Path(folder))
        _lake(store)
        low, high = T0 + 3 * HOUR_MS + HOUR_MS // 2, T0 + 4 * HOUR_MS + HOUR_MS // 2
        options = {"subscribe": TP.topic, "startingTimestamp": str(low), "endingTimestamp": str(high)}

        def resolved() -> tuple[Any, int]:
            recording = RangeRecordingStore(store)
            return plan_read(recording, options).ranges, recording.log_bytes

        ranges, narrowed = resolved()
        segments = resolve_manifest(store).partitions[0].segments
        index_key = index_keys(segments[1].key)[0]
        good_index = store.get(index_key)
        shifted = [(o, p + 1) for o, p in OFFSET_ENTRY.iter_unpack(good_index)]
        store.put(index_key, b"".join(OFFSET_ENTRY.pack(o, p) for o, p in shifted))  # a wrong .index
        assert resolved()[0] == ranges
        store.put(index_key, good_index)
        for segment in segments[1:]:
            store.put(time_index_key(segment.key), b"")  # no longer the pinned bytes
        whole_ranges, whole = resolved()
        assert whole_ranges == ranges
        assert narrowed < whole == segments[1].size + segments[2].size
        assert rows(store, options) == rows(store, {**options, "maxBytesPerPartition": "2000"})


def test_planning_fetches_a_timeindex_only_where_it_can_narrow() -> None:
    with tempfile.TemporaryDirectory() as folder:
        store = LocalStore(Path(folder))
        _lake(store)
        segments = resolve_manifest(store).partitions[0].segments
        inside_middle = T0 + 3 * HOUR_MS + HOUR_MS // 2
        for low, max_bytes, fetched in (
            (T0 - HOUR_MS, 2000, set()),  # older than every segment's first batch
            (inside_middle, 1 << 40, set()),  # unsplit segments are read whole anyway
            (inside_middle, 2000, {time_index_key(segments[1].key)}),  # the last one starts after it
        ):
            counting = CountingStore(store)
            plan = plan_read(counting, {"subscribe": TP.topic, "maxBytesPerPartition": str(max_bytes)})
            narrowing = Narrowing().with_filter(GreaterThanOrEqual(("timestamp",), as_datetime(low)))
            narrowing.narrow(plan.tasks, records_too=True, floor_of=partial(time_floor, counting))
            assert set(counting.body_reads(suffix=".timeindex")) == fetched
