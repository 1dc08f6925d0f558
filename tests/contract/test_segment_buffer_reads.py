"""Segments read with ``get_into`` into one reused buffer clean exactly as segments read with ``get``.

A worker keeps one input buffer between rounds and hands the round ``memoryview`` slices of it
(``SourceSegment.data`` is ``bytes | bytearray | memoryview``). For random partition logs (keys, tombstones,
unkeyed records, every codec, committed and aborted transactions, rolls) on every backend: the cleaned
segments, their index files and every batch outcome are identical, and the round leaves the buffer's bytes
as they were read (it never writes into its input).
"""

from __future__ import annotations

import uuid

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafka_segments.compaction.output import cleaned_segment_files
from kafka_segments.compaction.rewrite import RoundResult, clean_round
from kafka_segments.compaction.source import SourceSegment
from kafka_segments.records import CompressionType
from kafka_segments.storage import ObjectStore, read_into
from unit.compaction_helpers import NOW, LogBuilder
from unit.retention_helpers import topic_config

pytestmark = pytest.mark.contract

CONFIG = topic_config(cleanup_policy="compact")
SLACK = 64
"""Bytes left between and after the segments in the buffer (a reused buffer is larger than the input)."""

keys = st.integers(0, 9)
operations = st.one_of(
    st.tuples(
        st.just("rec"),
        st.lists(st.tuples(keys, st.booleans()), min_size=1, max_size=4),
        st.sampled_from(list(CompressionType)),
    ),
    st.tuples(st.just("unkeyed"), st.integers(1, 3)),
    st.tuples(st.just("txn"), st.integers(1, 2), st.lists(keys, min_size=1, max_size=3), st.booleans()),
    st.tuples(st.just("roll")),
)


def build_log(ops: list[tuple[object, ...]]) -> tuple[LogBuilder, int]:
    """The log and the round's end (the active segment's base)."""
    log = LogBuilder()
    log.rec(50, 50)
    for op in ops:
        if op[0] == "rec":
            log.records([(k, None if dead else k) for k, dead in op[1]], codec=op[2])  # type: ignore[attr-defined, arg-type]
        elif op[0] == "unkeyed":
            log.records([(None, i) for i in range(op[1])])  # type: ignore[call-overload, arg-type]
        elif op[0] == "txn":
            log.txn(op[1], op[2])  # type: ignore[arg-type]
            (log.commit if op[3] else log.abort)(op[1])  # type: ignore[arg-type]
        else:
            log.roll()
    log.roll()
    log.rec(99, 99)
    return log, log.chunks[-1][0]


def read_into_one_buffer(
    store: ObjectStore, segments: list[SourceSegment], prefix: str
) -> tuple[list[SourceSegment], np.ndarray]:
    """Every segment PUT, then read back into one buffer, each as a memoryview slice of it."""
    buffer = np.full(sum(s.size + SLACK for s in segments), 0xA5, dtype=np.uint8)
    read: list[SourceSegment] = []
    start = 0
    for segment in segments:
        key = f"{prefix}/{segment.base_offset:020d}.log"
        store.put(key, bytes(segment.data))
        size = read_into(store, key, buffer[start:], verify_checksum=False)
        data = memoryview(buffer)[start : start + size]
        read.append(SourceSegment(segment.name, segment.base_offset, data, segment.last_modified_ms))
        start += size + SLACK
    return read, buffer


def files_of(result: RoundResult) -> list[tuple[bytes, bytes, bytes]]:
    files = [cleaned_segment_files(cleaned, CONFIG) for cleaned in result.segments]
    return [(f.log, f.offset_index, f.time_index) for f in files]


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=st.lists(operations, min_size=1, max_size=25), use_arena=st.booleans())
def test_a_round_over_buffer_slices_equals_the_round_over_bytes(
    store: ObjectStore, ops: list[tuple[object, ...]], use_arena: bool
) -> None:
    log, end = build_log(ops)
    reference_segments = log.segments()
    segments, buffer = read_into_one_buffer(store, reference_segments, f"r-{uuid.uuid4().hex}")
    assert [bytes(s.data) for s in segments] == [s.data for s in reference_segments]
    as_read = buffer.copy()
    arena = np.zeros(1 << 16, dtype=np.uint8) if use_arena else None

    reference = clean_round(reference_segments, first_dirty=0, end_offset=end, config=CONFIG, now_ms=NOW)
    result = clean_round(segments, first_dirty=0, end_offset=end, config=CONFIG, now_ms=NOW, arena=arena)

    assert result == reference
    assert [c.data for c in result.segments] == [c.data for c in reference.segments]
    assert files_of(result) == files_of(reference)
    assert np.array_equal(buffer, as_read)
