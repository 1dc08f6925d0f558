"""One cleaning round (``Cleaner.doClean``) at the library level: Kafka's LogCleanerTest scenarios, then one
test per rule of ``Cleaner.cleanInto``, ``shouldRetainRecord`` and ``MemoryRecords.filterTo`` (tests named
after the rule).

Scenarios named ``kafka_a*`` / ``kafka_b*`` are LogCleanerTest's. Their producers are all active: the
tests set producer.id.expiration.ms to Long.MAX so liveness, derived from the log on a lake, agrees.
"""

from __future__ import annotations

import warnings
from dataclasses import replace
from types import MappingProxyType

import pytest
from kafka_segments.compaction import rewrite
from kafka_segments.compaction.decisions import BatchReason, BatchRetention
from kafka_segments.compaction.decoded import DecodedSegments
from kafka_segments.compaction.errors import CompactionError
from kafka_segments.compaction.offset_map import OffsetMap, key_digest
from kafka_segments.compaction.output import cleaned_segment_files
from kafka_segments.compaction.rewrite import BatchAction, EmptyRoundError, RoundResult, clean_round
from kafka_segments.compaction.source import aborted_from_markers
from kafka_segments.config.model import TopicConfig
from kafka_segments.records import CompressionType, ControlRecordType
from kafka_segments.segment.txn_index import AbortedTxn, parse_txn_index
from kafka_segments.segment.writer import write_segment
from unit.compaction_helpers import (
    DAY,
    NOW,
    L,
    LogBuilder,
    batch_lasts,
    batches_of,
    headers_of,
    keys_of,
    last_sequences,
    offsets_of,
)
from unit.retention_helpers import topic_config

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)  # kafka/__init__ imports its admin client
    from kafka.record.memory_records import MemoryRecords

pytestmark = pytest.mark.unit

LONG_MAX = 2**63 - 1
CONFIG = topic_config(cleanup_policy="compact", producer_id_expiration_ms=LONG_MAX)


def clean(
    log: LogBuilder,
    *,
    first_dirty: int = 0,
    end: int | None = None,
    now: int = NOW,
    config: TopicConfig = CONFIG,
    offset_map: OffsetMap | None = None,
) -> RoundResult:
    """Clean(first_dirty, end, now) on the log, swapping the cleaned segments in; with ``offset_map`` (whose
    dirty range is ``[first_dirty, end)``), a round over that map, as Kafka's LogCleanerTest runs rounds over
    a ``FakeOffsetMap``."""
    segments = log.segments()
    end_offset = segments[-1].base_offset if end is None else end
    if offset_map is None:
        result = clean_round(
            segments, first_dirty=first_dirty, end_offset=end_offset, config=config, now_ms=now
        )
    else:
        assert (offset_map.first_dirty_offset, offset_map.end_offset) == (first_dirty, end_offset)
        result = rewrite._clean_with_map(
            segments,
            offset_map,
            aborted_from_markers(segments),
            config=config,
            now_ms=now,
            decoded=DecodedSegments(),
        )
    log.apply(result)
    return result


def replay(log: LogBuilder, *, previous_end: int, now: int) -> RoundResult:
    """A LogCleanerTest round with an empty dirty range (its ``FakeOffsetMap.clear()`` keeps the latest
    offset), marked (†): recopy [0, previous_end) with an empty key map, latestOffset = previous_end - 1."""
    empty = OffsetMap(previous_end, previous_end, previous_end - 1, MappingProxyType({}))
    return clean(log, first_dirty=previous_end, end=previous_end, now=now, offset_map=empty)


def kafka_python_reads(data: bytes) -> list[tuple[int, int]]:
    """(base offset, record count) of every batch as kafka-python's reader sees it, CRCs checked."""
    out = []
    records = MemoryRecords(data)
    while (batch := records.next_batch()) is not None:
        assert batch.validate_crc()
        out.append((batch.base_offset, len(list(batch))))
    return out


# --- LogCleanerTest: key-based compaction ---


def test_kafka_a3_cleaning_with_deletes_removes_older_values_and_keeps_stamped_tombstones() -> None:
    log = LogBuilder()
    n = 20
    for i in range(n):
        log.rec(i, i)
        if i == 9:
            log.roll()
    log.roll()
    for k in range(0, n, 2):
        log.tomb(k)
    log.roll()
    for o in range(100, 110):
        log.rec(o, o)
    log.roll()
    log.rec(200, 200)
    clean(log)
    values = {(r.key, r.value is None) for b in batches_of(log.data()) for r in b.records}
    assert not any(
        key is not None and int(key) % 2 == 0 and int(key) < n and not dead for key, dead in values
    )
    tombstone_batches = [b for b in batches_of(log.data()) if b.records and b.records[0].value is None]
    assert len(tombstone_batches) == n // 2
    assert {b.header.delete_horizon_ms for b in tombstone_batches} == {NOW + DAY}


def test_kafka_a4_tombstone_horizon_counts_from_the_clean_not_the_record_timestamp() -> None:
    log = LogBuilder()
    log.rec(0, 0, timestamp=NOW + DAY + 10_000)
    log.roll()
    clean(log, first_dirty=0)
    log.tomb(0, timestamp=NOW - DAY - 10_000)
    log.roll()
    clean(log, first_dirty=1)
    assert headers_of(log.data())[0].last_offset == 1
    log.rec(1, 1)
    log.roll()
    clean(log, first_dirty=2)
    first = batches_of(log.data())[0]
    assert first.header.last_offset == 1
    assert first.records[0].value is None
    assert first.records[0].timestamp == NOW - DAY - 10_000  # absolute timestamp survives the horizon


def test_kafka_a5_cleaning_with_unkeyed_messages_removes_them_all() -> None:
    log = LogBuilder()
    for i in range(10):
        log.rec(None, i)
    log.roll()
    for o in range(10, 20):
        log.rec(o, o)
    log.roll()
    log.rec(99, 99)
    before = log.segments()
    unkeyed_bytes = sum(len(b.raw) for b in batches_of(before[0].data))
    result = clean(log)
    assert result.unkeyed_dropped == 10
    assert all(r.key is not None for b in batches_of(log.data()) for r in b.records)
    after = sum(s.size for s in log.segments())
    assert after == sum(s.size for s in before) - unkeyed_bytes


def test_kafka_a7_duplicate_check_after_cleaning_keeps_offsets_sequences_and_the_last_batch() -> None:
    log = LogBuilder()
    log.records([(1, 1), (2, 2), (3, 3)], producer_id=1)
    log.records([(3, 3), (1, 1), (4, 4)], producer_id=2)
    log.records([(1, 1), (4, 4)], producer_id=3)
    log.roll()
    clean(log)
    data = log.data()
    assert batch_lasts(data) == [2, 5, 7]
    assert last_sequences(data) == {1: 2, 2: 2, 3: 1}
    assert keys_of(data) == [2, 3, 1, 4]
    assert offsets_of(data) == [1, 3, 6, 7]
    assert [(h.base_offset, h.base_sequence) for h in headers_of(data)] == [(0, 0), (3, 0), (6, 0)]
    log.records([(2, 2)], producer_id=4)
    log.roll()
    clean(log)
    data = log.data()
    assert last_sequences(data) == {1: 2, 2: 2, 3: 1, 4: 0}
    assert batch_lasts(data) == [2, 5, 7, 8]
    assert keys_of(data) == [3, 1, 4, 2]
    assert offsets_of(data) == [3, 6, 7, 8]
    assert headers_of(data)[0].records_count == 0  # P1's last batch, kept empty


# --- LogCleanerTest: transactions, markers, empty batches, delete horizon ---


def test_kafka_b1_basic_transaction_aware_cleaning() -> None:
    log = LogBuilder()
    log.txn(1, [1, 2])
    log.txn(2, [2, 3])
    log.txn(1, [3, 4])
    log.abort(1)
    log.commit(2)
    log.txn(1, [2])
    log.commit(1)
    log.roll()
    result = clean(log, end=10)
    assert keys_of(log.data()) == [3, 2]
    assert offsets_of(log.data()) == [3, 6, 7, 8, 9]
    (segment,) = result.segments
    assert [(t.producer_id, t.first_offset, t.last_offset) for t in segment.aborted] == [(1, 0, 6)]


def test_kafka_b4_commit_marker_removal() -> None:
    log = LogBuilder()
    log.txn(1, [1])
    log.txn(1, [2, 3])
    log.commit(1)
    log.txn(1, [2])
    log.commit(1)
    log.roll()
    clean(log, first_dirty=0, end=6, now=L)
    assert keys_of(log.data()) == [1, 3, 2]
    assert offsets_of(log.data()) == [0, 2, 3, 4, 5]
    log.txn(1, [1, 3])
    log.commit(1)
    log.roll()
    result = clean(log, first_dirty=6, end=9, now=L)
    assert result.end_offset == 9
    assert keys_of(log.data()) == [2, 1, 3]
    assert offsets_of(log.data()) == [3, 4, 5, 6, 7, 8]
    replay(log, previous_end=9, now=L)
    assert offsets_of(log.data()) == [3, 4, 5, 6, 7, 8]
    marker = next(h for h in headers_of(log.data()) if h.base_offset == 3)
    assert marker.delete_horizon_ms == L + DAY
    replay(log, previous_end=9, now=LONG_MAX)
    assert offsets_of(log.data()) == [4, 5, 6, 7, 8]


# --- transactions ---


def test_aborted_data_is_removed_and_the_abort_marker_goes_after_its_horizon() -> None:
    log = LogBuilder()
    log.rec(5, 5)  # 0
    log.txn(1, [1, 2])  # 1-2
    log.abort(1)  # 3
    log.rec(6, 6)  # 4
    log.roll()
    log.rec(7, 7)
    config = topic_config(cleanup_policy="compact", producer_id_expiration_ms=1)
    now = NOW + 1  # P1 has expired
    nothing_new = OffsetMap(5, 5, 4, MappingProxyType({}))
    first = clean(log, config=config, now=now)
    assert [(o.action, o.decision.reason) for o in first.batches if o.base_offset == 1] == [
        (BatchAction.DELETED, BatchReason.ABORTED_DATA)
    ]
    assert offsets_of(log.data()) == [0, 3, 4, 5]  # marker kept: its data was seen this round
    assert first.segments[0].aborted == (AbortedTxn(1, 1, 3, 4),)
    clean(log, first_dirty=5, end=5, config=config, now=now, offset_map=nothing_new)
    marker = next(h for h in headers_of(log.data()) if h.is_control)
    assert marker.delete_horizon_ms == now + DAY  # its data is gone: discardable, stamped
    clean(log, first_dirty=5, end=5, config=config, now=now + DAY - 1, offset_map=nothing_new)
    assert any(h.is_control for h in headers_of(log.data()))
    clean(log, first_dirty=5, end=5, config=config, now=now + DAY, offset_map=nothing_new)
    assert not any(h.is_control for h in headers_of(log.data()))


def test_aborted_transactions_from_the_txn_index_equal_those_from_markers() -> None:
    log = LogBuilder()
    log.txn(1, [1])
    log.abort(1)
    log.rec(1, 2)
    log.roll()
    log.rec(3, 3)
    segments = log.segments()
    from_markers = clean_round(segments, first_dirty=0, end_offset=3, config=CONFIG, now_ms=NOW)
    indexes = [(AbortedTxn(1, 0, 1, 2),), ()]
    from_index = clean_round(
        segments, first_dirty=0, end_offset=3, config=CONFIG, now_ms=NOW, txn_indexes=indexes
    )
    assert from_markers == from_index


def test_a_transaction_spanning_segments_is_aborted_in_both() -> None:
    log = LogBuilder()
    log.txn(1, [1])  # 0
    log.roll()
    log.txn(1, [1])  # 1
    log.roll()
    log.abort(1)  # 2
    log.rec(9, 9)  # 3
    log.roll()
    log.rec(8, 8)
    config = topic_config(cleanup_policy="compact", producer_id_expiration_ms=1)
    clean(log, config=config, now=NOW + 1)
    assert keys_of(log.data()) == [9, 8]
    assert offsets_of(log.data()) == [2, 3, 4]


def test_a_commit_marker_stays_while_a_batch_of_its_transaction_is_traversed() -> None:
    log = LogBuilder()
    log.txn(1, [1])  # 0
    log.commit(1)  # 1
    log.rec(1, 2)  # 2 supersedes the transaction's only record
    log.roll()
    log.rec(3, 3)
    config = topic_config(cleanup_policy="compact", producer_id_expiration_ms=1)
    result = clean(log, config=config, now=NOW + 1)
    assert offsets_of(log.data()) == [1, 2, 3]  # batch 0 was traversed this round: the marker stays unstamped
    assert headers_of(log.data())[0].delete_horizon_ms is None
    assert [o.action for o in result.batches][:2] == [BatchAction.DELETED, BatchAction.COPIED]


def test_control_batches_of_other_types_are_never_discarded() -> None:
    log = LogBuilder()
    log.append(_leader_change(0))
    log.rec(1, 1)
    log.roll()
    log.rec(2, 2)
    clean(log, now=LONG_MAX)
    assert headers_of(log.data())[0].is_control


def _leader_change(offset: int) -> bytes:
    from kafka_segments.records import ControlKey, Record, build_batch

    key = ControlKey(0, int(ControlRecordType.LEADER_CHANGE)).build()
    return build_batch([Record(offset, NOW, key, b"\x00\x00")], is_control=True)


# --- empty batches ---


def test_the_last_batch_of_an_active_producer_is_kept_empty() -> None:
    log = LogBuilder()
    log.records([(1, 1)], producer_id=7)
    log.rec(1, 2)
    log.roll()
    log.rec(3, 3)
    clean(log)
    (empty, _, _) = headers_of(log.data())
    assert (empty.records_count, empty.producer_id, empty.base_sequence) == (0, 7, 0)
    assert (empty.base_timestamp, empty.max_timestamp, empty.compression) == (-1, NOW, CompressionType.NONE)


def test_an_expired_producer_loses_its_emptied_batch() -> None:
    log = LogBuilder()
    log.records([(1, 1)], producer_id=7, timestamp=NOW - DAY)
    log.rec(1, 2)
    log.roll()
    log.rec(3, 3)
    config = topic_config(cleanup_policy="compact")  # producer.id.expiration.ms 1 day
    clean(log, config=config)
    assert batch_lasts(log.data()) == [1, 2]  # [0] went with its producer


def test_a_producer_one_ms_short_of_expiry_is_still_active() -> None:
    log = LogBuilder()
    log.records([(1, 1)], producer_id=7, timestamp=NOW - DAY + 1)
    log.rec(1, 2)
    log.roll()
    log.rec(3, 3)
    clean(log, config=topic_config(cleanup_policy="compact"))
    assert batch_lasts(log.data()) == [0, 1, 2]


def test_the_batch_ending_the_round_is_kept_empty_even_without_producer() -> None:
    log = LogBuilder()
    log.rec(1, 1)
    log.rec(1, 2)
    log.roll()
    log.rec(2, 3)  # the active segment: the round ends at offset 2
    # A map that says offset 1 is superseded (as a (†) round or an outside map could): the batch ending the
    # round is still kept, as an empty header, so its last offset is not lost.
    superseding = OffsetMap(0, 2, 1, MappingProxyType({key_digest(b"1"): 5}))
    result = clean(log, end=2, offset_map=superseding)
    last = result.batches[-1]
    assert (last.decision.retention, last.decision.reason) == (
        BatchRetention.RETAIN_EMPTY,
        BatchReason.END_OF_ROUND,
    )
    assert last.action is BatchAction.EMPTY_HEADER
    assert batch_lasts(log.data()) == [1, 2]
    assert [o.action for o in result.batches] == [BatchAction.DELETED, BatchAction.EMPTY_HEADER]


def test_an_empty_round_is_refused() -> None:
    log = LogBuilder()
    log.rec(1, 1)
    with pytest.raises(EmptyRoundError, match="nothing to clean"):
        clean_round(log.segments(), first_dirty=0, end_offset=0, config=CONFIG, now_ms=NOW)


def test_segments_out_of_order_are_refused() -> None:
    log = LogBuilder()
    log.rec(1, 1)
    log.roll()
    log.rec(2, 2)
    with pytest.raises(CompactionError, match="does not follow"):
        clean_round(log.segments()[::-1], first_dirty=0, end_offset=1, config=CONFIG, now_ms=NOW)


# --- cross-check ---


def test_kafka_python_reads_every_cleaned_segment() -> None:
    log = LogBuilder()
    for codec in CompressionType:
        log.records([(1, codec), (2, None), (3, codec)], codec=codec)
    log.records([(4, 4)], producer_id=5)
    log.rec(4, 5)
    log.roll()
    log.rec(9, 9)
    clean(log)
    seen = kafka_python_reads(log.data())
    ours = [(b.header.base_offset, len(b.records)) for b in batches_of(log.data())]
    assert seen == ours


def test_kafka_b1_cleaned_segment_files_carry_the_retained_abort_in_their_txn_index() -> None:
    log = LogBuilder()
    log.txn(1, [1, 2])
    log.txn(2, [2, 3])
    log.txn(1, [3, 4])
    log.abort(1)
    log.commit(2)
    log.txn(1, [2])
    log.commit(1)
    log.roll()
    result = clean(log, end=10)
    files = cleaned_segment_files(result.segments[0], CONFIG)
    assert parse_txn_index(files.txn_index, base_offset=0) == (AbortedTxn(1, 0, 6, 2),)  # LSO: P2 was open
    assert files.log == result.segments[0].data
    assert (files.base_offset, files.next_offset, files.largest_timestamp) == (0, 10, NOW)
    # the marker route would not index it: the aborted data is gone from the cleaned segment
    assert write_segment(result.segments[0].batches).txn_index == b""


def test_a_segment_cleaned_down_to_nothing_stays_an_empty_segment_and_cleans_again() -> None:
    log = LogBuilder()
    log.rec(1, 1)
    log.roll()
    log.rec(1, 2)
    log.rec(2, 2)
    log.roll()
    log.rec(3, 3)
    small = replace(CONFIG, segment_bytes=1)  # no two segments share a group
    first = clean(log, config=small)
    assert (first.segments[0].base_offset, first.segments[0].data) == (0, b"")
    second = clean(log, config=small)
    assert [s.base_offset for s in second.segments] == [0, 1]
    assert offsets_of(log.data()) == [1, 2, 3]
