"""Hypothesis properties of a cleaning round over random logs (keys, tombstones, unkeyed records, every
codec, idempotent producers, interleaved committed and aborted transactions, rolls):

* the output offsets are a subsequence of the input offsets, and no batch boundary moves;
* for every key the latest (non-aborted) record survives, unless it is a tombstone past its horizon;
* a second round at the same ``now`` changes nothing (once transaction markers have been stamped, which a
  round after their data disappeared does, as in LogCleanerTest's ``testCommitMarkerRemoval``);
* kafka-python's reader reads every output batch with a valid CRC.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafka_segments.compaction.rewrite import RoundResult, clean_round
from kafka_segments.compaction.source import aborted_from_markers, aborted_in_range
from kafka_segments.records import CompressionType, RecordBatch
from kafka_segments.records.log import iter_batches
from unit.compaction_helpers import DAY, NOW, LogBuilder
from unit.retention_helpers import topic_config

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)  # kafka/__init__ imports its admin client
    from kafka.record.memory_records import MemoryRecords

pytestmark = pytest.mark.unit

CONFIG = topic_config(cleanup_policy="compact")
PRODUCERS = (11, 12, 13)

keys = st.integers(0, 12)
codecs = st.sampled_from(list(CompressionType))
operations = st.one_of(
    st.tuples(st.just("rec"), st.lists(st.tuples(keys, st.booleans()), min_size=1, max_size=4), codecs),
    st.tuples(st.just("unkeyed"), st.integers(1, 3), codecs),
    st.tuples(st.just("idempotent"), st.sampled_from(PRODUCERS), st.lists(keys, min_size=1, max_size=3)),
    st.tuples(st.just("txn"), st.sampled_from(PRODUCERS), st.lists(keys, min_size=1, max_size=3)),
    st.tuples(st.just("end"), st.sampled_from(PRODUCERS), st.booleans()),
    st.tuples(st.just("roll")),
)


@dataclass
class RandomLog:
    log: LogBuilder
    end: int
    """The round's upper bound: the active segment's base (all transactions are closed before it)."""


def build(ops: list[tuple[object, ...]]) -> RandomLog:
    log = LogBuilder()
    log.rec(50, 50)
    open_txns: set[int] = set()
    for op in ops:
        kind = op[0]
        if kind == "rec":
            pairs, codec = op[1], op[2]
            log.records([(k, None if dead else k) for k, dead in pairs], codec=codec)  # type: ignore[union-attr]
        elif kind == "unkeyed":
            log.records([(None, i) for i in range(op[1])], codec=op[2])  # type: ignore[call-overload, arg-type]
        elif kind in ("idempotent", "txn"):
            pid = op[1]
            if kind == "idempotent" and pid in open_txns:
                continue
            log.records([(k, k) for k in op[2]], producer_id=pid, transactional=kind == "txn")  # type: ignore[union-attr, arg-type]
            if kind == "txn":
                open_txns.add(pid)  # type: ignore[arg-type]
        elif kind == "end" and op[1] in open_txns:
            open_txns.discard(op[1])  # type: ignore[arg-type]
            (log.commit if op[2] else log.abort)(op[1])  # type: ignore[arg-type]
        elif kind == "roll":
            log.roll()
    for pid in sorted(open_txns):
        log.commit(pid)
    log.roll()
    log.rec(99, 99)
    return RandomLog(log, log.chunks[-1][0])


def run(log: LogBuilder, end: int, *, now: int = NOW) -> RoundResult:
    segments = log.segments()
    result = clean_round(segments, first_dirty=0, end_offset=end, config=CONFIG, now_ms=now)
    log.apply(result)
    return result


def batches(log: LogBuilder) -> list[RecordBatch]:
    return [b for b in iter_batches(log.data()) if isinstance(b, RecordBatch)]


def record_offsets(log: LogBuilder) -> list[int]:
    return [r.offset for b in batches(log) for r in b.records]


def latest_per_key(log: LogBuilder, end: int) -> dict[bytes, tuple[int, bytes | None]]:
    """key -> (offset, value) of its latest committed record below ``end``."""
    segments = log.segments()
    aborted = aborted_in_range(segments, aborted_from_markers(segments), 0, end)
    latest: dict[bytes, tuple[int, bytes | None]] = {}
    for batch in batches(log):
        header = batch.header
        if header.is_control or header.base_offset >= end:
            continue
        if header.is_transactional and any(
            t.producer_id == header.producer_id and t.first_offset <= header.base_offset < t.last_offset
            for t in aborted
        ):
            continue
        for record in batch.records:
            if record.key is not None:
                latest[record.key] = (record.offset, record.value)
    return latest


settings_ = settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@settings_
@given(ops=st.lists(operations, min_size=1, max_size=30))
def test_output_offsets_are_a_subsequence_and_batch_boundaries_never_move(
    ops: list[tuple[object, ...]],
) -> None:
    random_log = build(ops)
    log = random_log.log
    before_offsets = record_offsets(log)
    before_bounds = {(b.header.base_offset, b.header.last_offset) for b in batches(log)}
    run(log, random_log.end)
    after_offsets = record_offsets(log)
    assert after_offsets == sorted(after_offsets)
    assert set(after_offsets) <= set(before_offsets)
    assert {(b.header.base_offset, b.header.last_offset) for b in batches(log)} <= before_bounds


@settings_
@given(ops=st.lists(operations, min_size=1, max_size=30))
def test_the_latest_record_of_every_key_survives_until_its_tombstone_expires(
    ops: list[tuple[object, ...]],
) -> None:
    random_log = build(ops)
    log, end = random_log.log, random_log.end
    latest = latest_per_key(log, end)
    run(log, end)
    survivors = {
        (r.offset, r.key, r.value) for b in batches(log) if not b.header.is_control for r in b.records
    }
    for key, (offset, value) in latest.items():
        assert (offset, key, value) in survivors
    run(log, end, now=NOW + DAY)
    survivors = {
        (r.offset, r.key, r.value) for b in batches(log) if not b.header.is_control for r in b.records
    }
    for key, (offset, value) in latest.items():
        assert ((offset, key, value) in survivors) == (value is not None)


@settings_
@given(ops=st.lists(operations, min_size=1, max_size=30))
def test_a_second_round_at_the_same_now_changes_nothing(ops: list[tuple[object, ...]]) -> None:
    random_log = build(ops)
    log, end = random_log.log, random_log.end
    transactional = any(op[0] == "txn" for op in ops)
    run(log, end)
    first = log.data()
    run(log, end)
    if not transactional:
        assert log.data() == first
    second = log.data()
    run(log, end)
    assert log.data() == second


@settings_
@given(ops=st.lists(operations, min_size=1, max_size=30))
def test_kafka_python_reads_every_output_batch(ops: list[tuple[object, ...]]) -> None:
    random_log = build(ops)
    log = random_log.log
    run(log, random_log.end)
    ours = [(b.header.base_offset, [(r.offset, r.key, r.value) for r in b.records]) for b in batches(log)]
    theirs = []
    records = MemoryRecords(log.data())
    while (batch := records.next_batch()) is not None:
        assert batch.validate_crc()
        theirs.append((batch.base_offset, [(r.offset, r.key, r.value) for r in batch]))
    assert theirs == ours
