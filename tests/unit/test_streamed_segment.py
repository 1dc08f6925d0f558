"""``StreamedSegment``: a segment decoded and its keys grouped while it is read gives what the round would
have computed from the whole segment (``decoded.decode_segment``): the same columns, key ids and MD5s, so
the same round.
"""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafka_segments.compaction.decoded import DecodedSegment, decode_segment
from kafka_segments.compaction.rewrite import clean_round
from kafka_segments.compaction.source import SourceSegment
from kafka_segments.compaction.streamed import StreamedSegment
from kafka_segments.records import Record, build_batch
from kafka_segments.records.attributes import CompressionType
from kafka_segments.records.fast import ArenaUse
from unit.compaction_helpers import NOW, LogBuilder
from unit.test_compaction_properties import CONFIG, build, operations
from unit.test_fast import NAME, TS, segments
from unit.test_fast_stream import assert_same_columns

pytestmark = pytest.mark.unit

ARENA_BYTES = 1 << 20


def streamed(
    data: bytes,
    *,
    every: int,
    step_bytes: int,
    arena: bool,
    base_offset: int = 0,
    name: str = NAME,
    last_modified_ms: int = 0,
    arena_use: ArenaUse = ArenaUse.KEEP,
) -> SourceSegment:
    """``data`` read into a buffer ``every`` bytes at a time, each arrival fed to a ``StreamedSegment``."""
    buffer = np.zeros(len(data) + 3, dtype=np.uint8)
    reading = StreamedSegment(
        buffer,
        name=name,
        arena=np.zeros(ARENA_BYTES, dtype=np.uint8) if arena else None,
        step_bytes=step_bytes,
        arena_use=arena_use,
    )
    for end in [*range(every, len(data), every), len(data)]:
        buffer[:end] = np.frombuffer(data[:end], dtype=np.uint8)
        reading.feed(end)
    return reading.source(len(data), base_offset=base_offset, last_modified_ms=last_modified_ms)


def assert_same_decoding(got: SourceSegment, data: bytes) -> None:
    want = decode_segment(SourceSegment(NAME, 0, data))
    have = decode_segment(got)
    if have.steps is None:
        assert_same_columns(have.columns, want.columns)
    else:  # records not kept: the same columns, and each step decoded again holds the same records
        assert_same_columns(have.columns, want.columns, buffer=False)
        assert records_of_steps(have, data) == want.columns.to_records()
    assert have.key_id.tolist() == want.key_id.tolist()
    assert have.id_hi.tolist() == want.id_hi.tolist()
    assert have.id_lo.tolist() == want.id_lo.tolist()


@settings(max_examples=300, deadline=None)
@given(
    data=segments(max_batches=6),
    every=st.integers(1, 500),
    step_bytes=st.integers(1, 400),
    arena=st.booleans(),
    arena_use=st.sampled_from([ArenaUse.KEEP, ArenaUse.REUSE]),
)
def test_streamed_keys_and_columns_equal_decoding_the_whole_segment(
    data: bytes, every: int, step_bytes: int, arena: bool, arena_use: ArenaUse
) -> None:
    try:
        SourceSegment(NAME, 0, data).header_table()
        decode_segment(SourceSegment(NAME, 0, data))
    except Exception:  # int64-overflowing segments: the whole decode raises, and so does finish
        with pytest.raises(type(decode_error(data))):
            streamed(data, every=every, step_bytes=step_bytes, arena=arena, arena_use=arena_use)
        return
    got = streamed(data, every=every, step_bytes=step_bytes, arena=arena, arena_use=arena_use)
    assert_same_decoding(got, data)


def records_of_steps(decoded: DecodedSegment, data: bytes) -> list[Record]:
    """The records of a segment decoded without keeping them, each step decoded again."""
    steps = decoded.steps
    assert steps is not None
    arena = np.zeros(max(steps.largest, 1), dtype=np.uint8)
    records: list[Record] = []
    for step in range(len(steps)):
        records += steps.inflate(data, step, arena=arena, segment=NAME).to_records()
    return records


def decode_error(data: bytes) -> Exception:
    try:
        decode_segment(SourceSegment(NAME, 0, data))
    except Exception as exc:
        return exc
    raise AssertionError("no error")


@pytest.mark.parametrize("codec", [CompressionType.NONE, CompressionType.LZ4], ids=["none", "lz4"])
def test_unkeyed_records_and_keys_of_every_length_across_steps(codec: CompressionType) -> None:
    keys = [None, b"", b"a", b"k" * 8, b"k" * 15, b"k" * 16, b"k" * 17, b"p" * 40 + b"x", b"p" * 40 + b"y"]
    data = b"".join(
        build_batch(
            [Record(base + i, TS, keys[(base + i * 5) % len(keys)], b"v%d" % i) for i in range(4)],
            base_offset=base,
            compression=codec,
        )
        for base in range(0, 160, 4)
    )
    segment = streamed(data, every=50, step_bytes=120, arena=True)
    assert_same_decoding(segment, data)
    assert len(set(decode_segment(segment).key_id.tolist())) == len(keys)  # the null key is -1


def test_a_finished_segment_lets_go_of_its_steps_without_the_garbage_collector() -> None:
    """The decoder's step callback is a method of the ``StreamedSegment``: a reference cycle unless
    ``finish`` breaks it, which kept every step's columns alive until a collection (and put the next
    segment's columns on fresh, page-faulting memory)."""
    data = b"".join(
        build_batch([Record(base + i, TS, b"k%d" % i, b"v") for i in range(4)], base_offset=base)
        for base in range(0, 80, 4)
    )
    buffer = np.frombuffer(data, dtype=np.uint8).copy()
    reading = StreamedSegment(buffer, name=NAME, step_bytes=100)
    for end in range(50, len(data) + 50, 50):
        reading.feed(min(end, len(data)))
    steps = [weakref.ref(step.offset) for step in reading._decoder._steps]
    finished = weakref.ref(reading)
    gc.disable()
    try:
        segment = reading.source(len(data), base_offset=0)
        del reading
        assert len(steps) > 2
        assert finished() is None, "the StreamedSegment outlived its last reference"
        assert all(step() is None for step in steps), "a step's columns outlived the join"
    finally:
        gc.enable()
    assert_same_decoding(segment, data)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    ops=st.lists(operations, min_size=1, max_size=30),
    every=st.integers(20, 400),
    arena_use=st.sampled_from([ArenaUse.KEEP, ArenaUse.REUSE]),
)
def test_a_round_over_streamed_segments_equals_the_round_that_decodes(
    ops: list[tuple[object, ...]], every: int, arena_use: ArenaUse
) -> None:
    random_log = build(ops)
    segments_ = random_log.log.segments()
    options = {"first_dirty": 0, "end_offset": random_log.end, "config": CONFIG, "now_ms": NOW}
    decoding = clean_round(segments_, **options)  # type: ignore[arg-type]
    streamed_segments = [
        streamed(
            bytes(s.data),
            every=every,
            step_bytes=64,
            arena=True,
            base_offset=s.base_offset,
            name=s.name,
            last_modified_ms=s.last_modified_ms,
            arena_use=arena_use,
        )
        for s in segments_
    ]
    assert clean_round(streamed_segments, **options) == decoding  # type: ignore[arg-type]


def test_markers_keys_are_kept_when_the_records_are_not() -> None:
    """A segment with transaction markers among compressed batches keeps no records either: the markers'
    keys (read by both passes) are kept by row, and the round is the one that decodes."""
    lz4 = CompressionType.LZ4
    log = LogBuilder()
    log.records([(1, 1), (2, 2)], codec=lz4)  # a compressed batch first: the steps inflate into the arena
    log.txn(11, [1, 2], codec=lz4)
    log.commit(11)
    log.records([(1, 1), (3, None)], codec=lz4)
    log.txn(12, [3, 4], codec=lz4)
    log.abort(12)
    log.records([(4, 4)], codec=lz4)
    log.roll()
    log.rec(99, 99)
    segments_ = log.segments()
    options = {"first_dirty": 0, "end_offset": log.chunks[-1][0], "config": CONFIG, "now_ms": NOW}
    streamed_segments = [
        streamed(
            bytes(s.data),
            every=40,
            step_bytes=64,
            arena=True,
            base_offset=s.base_offset,
            name=s.name,
            last_modified_ms=s.last_modified_ms,
            arena_use=ArenaUse.REUSE,
        )
        for s in segments_
    ]
    found = [decode_segment(s) for s in streamed_segments]
    with_markers = [d for d in found if d.columns.is_control.any()]
    assert with_markers
    assert all(d.steps is not None and d.columns.buffer.size == 0 for d in with_markers)
    for decoded in with_markers:
        rows = np.flatnonzero(decoded.columns.is_control).tolist()
        assert sorted(decoded.control_keys) == rows
        assert all(len(decoded.control_key(row) or b"") == 4 for row in rows)  # version and type
    assert clean_round(streamed_segments, **options) == clean_round(segments_, **options)  # type: ignore[arg-type]
