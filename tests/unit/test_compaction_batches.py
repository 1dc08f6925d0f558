"""How a round writes batches (``Cleaner.cleanInto``, ``MemoryRecords.filterTo``): byte-for-byte copies,
rebuilds that keep the source's codec and metadata, LogAppendTime, legacy v0/v1 entries converted to v2,
offset gaps, grouping. The pure decision functions are checked rule by rule at the end."""

from __future__ import annotations

from dataclasses import replace
from types import MappingProxyType

import pytest
from kafka_segments.compaction.decisions import (
    BatchReason,
    BatchRetention,
    RecordDecision,
    decide_batch,
    decide_record,
    legacy_delete_horizon,
    needs_delete_horizon,
    retain_deletes,
)
from kafka_segments.compaction.grouping import group_segments
from kafka_segments.compaction.offset_map import OffsetMap, key_digest
from kafka_segments.compaction.producers import (
    active_producers,
    is_last_batch_of_active_producer,
    replay_producers,
)
from kafka_segments.compaction.rewrite import BatchAction, RoundResult, clean_round
from kafka_segments.compaction.source import SourceSegment
from kafka_segments.records import CompressionType, Record, TimestampType
from kafka_segments.records.batch import BatchHeader
from unit.compaction_helpers import (
    DAY,
    NOW,
    LogBuilder,
    batches_of,
    headers_of,
    legacy_message,
    legacy_wrapper,
    offsets_of,
)
from unit.retention_helpers import topic_config

pytestmark = pytest.mark.unit

CONFIG = topic_config(cleanup_policy="compact", producer_id_expiration_ms=2**63 - 1)


def clean_all(log: LogBuilder, *, now: int = NOW, first_dirty: int = 0) -> RoundResult:
    segments = log.segments()
    result = clean_round(
        segments, first_dirty=first_dirty, end_offset=segments[-1].base_offset, config=CONFIG, now_ms=now
    )
    log.apply(result)
    return result


@pytest.mark.parametrize("codec", list(CompressionType))
def test_a_rebuilt_batch_keeps_its_codec_offsets_and_producer_metadata(codec: CompressionType) -> None:
    log = LogBuilder()
    log.records([(1, 1), (2, 2), (3, 3)], codec=codec, producer_id=9, epoch=4)
    log.records([(2, 20)])
    log.roll()
    log.rec(0, 0)
    source = headers_of(log.data())[0]
    result = clean_all(log)
    assert result.batches[0].action is BatchAction.REBUILT
    rebuilt = batches_of(log.data())[0]
    header = rebuilt.header
    assert header.compression is codec
    assert (header.base_offset, header.last_offset, header.records_count) == (0, 2, 2)
    assert (header.producer_id, header.producer_epoch, header.base_sequence) == (9, 4, 0)
    assert header.last_sequence == source.last_sequence
    assert header.partition_leader_epoch == source.partition_leader_epoch
    assert [(r.offset, r.key) for r in rebuilt.records] == [(0, b"1"), (2, b"3")]


@pytest.mark.parametrize("codec", list(CompressionType))
def test_a_batch_with_nothing_removed_is_copied_byte_for_byte(codec: CompressionType) -> None:
    log = LogBuilder()
    log.records([(1, 1), (2, 2)], codec=codec)
    log.roll()
    log.rec(0, 0)
    before = log.segments()[0].data
    result = clean_all(log)
    assert result.batches[0].action is BatchAction.COPIED
    assert result.segments[0].data == before


def test_a_tombstone_batch_is_rebuilt_to_stamp_its_horizon_with_absolute_timestamps() -> None:
    log = LogBuilder()
    log.records([(1, 1), (2, None)], timestamp=NOW - 5, codec=CompressionType.GZIP)
    log.roll()
    log.rec(0, 0)
    result = clean_all(log)
    assert result.batches[0].horizon_stamped
    batch = batches_of(log.data())[0]
    assert batch.header.delete_horizon_ms == NOW + DAY
    assert batch.header.base_timestamp == NOW + DAY
    assert batch.header.max_timestamp == NOW - 5
    assert [r.timestamp for r in batch.records] == [NOW - 5, NOW - 5]


def test_an_existing_horizon_is_preserved_when_a_batch_is_rebuilt() -> None:
    log = LogBuilder()
    log.records([(1, None), (2, 2)])
    log.roll()
    log.rec(0, 0)
    clean_all(log)
    log.rec(2, 3)  # supersedes key 2 of the stamped batch
    log.roll()
    log.rec(9, 9)
    clean_all(log, now=NOW + 1000)
    batch = batches_of(log.data())[0]
    assert batch.header.delete_horizon_ms == NOW + DAY  # not NOW + 1000 + DAY
    assert [r.key for r in batch.records] == [b"1"]


def test_an_expired_tombstone_that_is_still_the_latest_is_removed() -> None:
    log = LogBuilder()
    log.tomb(1)
    log.rec(2, 2)
    log.roll()
    log.rec(0, 0)
    clean_all(log)
    assert offsets_of(log.data()) == [1, 2]
    clean_all(log, now=NOW + DAY - 1)
    assert len(batches_of(log.data())) == 3  # horizon not reached yet
    clean_all(log, now=NOW + DAY)
    assert [r.offset for b in batches_of(log.data()) for r in b.records] == [1, 2]


def test_log_append_time_batches_keep_the_broker_time_as_max_timestamp() -> None:
    log = LogBuilder()
    log.records([(1, 1), (2, 2)], log_append_time=True, timestamp=NOW - 7)
    log.rec(1, 3)
    log.roll()
    log.rec(0, 0)
    clean_all(log)
    batch = batches_of(log.data())[0]
    assert batch.header.timestamp_type is TimestampType.LOG_APPEND_TIME
    assert batch.header.max_timestamp == NOW - 7
    assert [(r.offset, r.timestamp) for r in batch.records] == [(1, NOW - 7)]


def test_offset_gaps_are_kept_and_nothing_is_renumbered() -> None:
    log = LogBuilder()
    log.rec(1, 1)
    log.next_offset = 50
    log.rec(2, 2)
    log.roll()
    log.next_offset = 100
    log.rec(1, 3)
    log.roll()
    log.rec(0, 0)
    result = clean_all(log)
    assert result.end_offset == 101
    assert offsets_of(log.data()) == [50, 100, 101]


def test_legacy_uncompressed_messages_become_single_record_v2_batches() -> None:
    data = b"".join(
        [
            legacy_message(0, 0, b"1", b"a"),
            legacy_message(1, 1, b"2", b"b", timestamp=NOW - 1),
            legacy_message(1, 2, b"1", b"c", timestamp=NOW - 2),
        ]
    )
    segments = [SourceSegment("legacy", 0, data, NOW), SourceSegment("active", 3, b"", NOW)]
    result = clean_round(segments, first_dirty=0, end_offset=3, config=CONFIG, now_ms=NOW)
    out = batches_of(result.segments[0].data)
    assert [(b.header.magic, b.header.base_offset, b.header.last_offset) for b in out] == [
        (2, 1, 1),
        (2, 2, 2),
    ]
    assert [b.header.timestamp_type for b in out] == [TimestampType.CREATE_TIME] * 2
    assert [r.timestamp for b in out for r in b.records] == [NOW - 1, NOW - 2]


def test_a_legacy_wrapper_becomes_one_v2_batch_starting_at_its_first_retained_record() -> None:
    inner = b"".join(legacy_message(1, i, str(k).encode(), b"v") for i, k in enumerate([1, 2, 1]))
    data = legacy_wrapper(2, CompressionType.GZIP, inner)
    segments = [SourceSegment("legacy", 0, data, NOW), SourceSegment("active", 3, b"", NOW)]
    result = clean_round(segments, first_dirty=0, end_offset=3, config=CONFIG, now_ms=NOW)
    (batch,) = batches_of(result.segments[0].data)
    assert (batch.header.magic, batch.header.compression) == (2, CompressionType.GZIP)
    assert (batch.header.base_offset, batch.header.last_offset) == (1, 2)
    assert [r.offset for r in batch.records] == [1, 2]


def test_legacy_tombstones_follow_the_segment_mtime_and_are_stamped_when_kept() -> None:
    data = legacy_message(1, 0, b"1", None)
    clean_segment = SourceSegment("clean", 0, data, NOW)
    segments = [clean_segment, SourceSegment("dirty", 1, legacy_message(1, 1, b"2", b"x"), NOW)]
    segments.append(SourceSegment("active", 2, b"", NOW))
    kept = clean_round(segments, first_dirty=1, end_offset=2, config=CONFIG, now_ms=NOW)
    (tombstone, _) = batches_of(kept.segments[0].data)
    assert tombstone.header.delete_horizon_ms == NOW + DAY
    # legacy horizon = mtime of the last clean segment - delete.retention.ms; only older segments lose them
    old = [
        replace(clean_segment, last_modified_ms=NOW - DAY),
        SourceSegment("clean-2", 1, legacy_message(1, 1, b"2", b"x"), NOW),
        SourceSegment("dirty", 2, legacy_message(1, 2, b"3", b"y"), NOW),
        SourceSegment("active", 3, b"", NOW),
    ]
    dropped = clean_round(old, first_dirty=2, end_offset=3, config=CONFIG, now_ms=NOW)
    assert [b.header.base_offset for b in batches_of(dropped.segments[0].data)] == [1, 2]


def test_segments_are_grouped_up_to_segment_bytes() -> None:
    log = LogBuilder()
    for i in range(6):
        log.rec(i, i)
        log.roll()
    segments = log.segments()
    size = segments[0].size
    config = replace(CONFIG, segment_bytes=2 * size)
    result = clean_round(segments, first_dirty=0, end_offset=6, config=config, now_ms=NOW)
    assert [s.base_offset for s in result.segments] == [0, 2, 4]
    assert result.segments[0].sources == (segments[0].name, segments[1].name)


def test_grouping_respects_index_sizes_and_the_int32_offset_span() -> None:
    def seg(base: int, size: int = 10, index: int = 0) -> SourceSegment:
        return SourceSegment(str(base), base, b"x" * size, 0, index, index)

    by_index = group_segments(
        [seg(0, index=8), seg(1, index=8), seg(2, index=8)],
        segment_bytes=1000,
        segment_index_bytes=16,
        first_uncleanable_offset=3,
    )
    assert [[s.base_offset for s in g] for g in by_index] == [[0, 1], [2]]
    span = group_segments(
        [seg(0), seg(2**31 - 1), seg(2**31 + 5)],
        segment_bytes=1000,
        segment_index_bytes=1000,
        first_uncleanable_offset=2**31 + 10,
    )
    assert [[s.base_offset for s in g] for g in span] == [[0], [2**31 - 1, 2**31 + 5]]
    empty_ok = group_segments(
        [seg(0), seg(2**31 + 7, size=0)],
        segment_bytes=1000,
        segment_index_bytes=1000,
        first_uncleanable_offset=2**32,
    )
    assert len(empty_ok) == 1


def test_a_cleaned_segment_takes_the_mtime_of_its_last_source() -> None:
    log = LogBuilder()
    log.rec(1, 1)
    log.roll()
    log.rec(2, 2)
    log.roll()
    log.rec(3, 3)
    segments = log.segments()
    segments[1] = replace(segments[1], last_modified_ms=NOW + 5)
    result = clean_round(segments, first_dirty=0, end_offset=2, config=CONFIG, now_ms=NOW)
    assert [(s.base_offset, s.last_modified_ms) for s in result.segments] == [(0, NOW + 5)]


# --- the pure decision functions, rule by rule ---


def header(**fields: object) -> BatchHeader:
    base = {
        "base_offset": 10,
        "batch_length": 49,
        "partition_leader_epoch": 0,
        "magic": 2,
        "crc": 0,
        "attributes": 0,
        "last_offset_delta": 2,
        "base_timestamp": NOW,
        "max_timestamp": NOW,
        "producer_id": -1,
        "producer_epoch": -1,
        "base_sequence": -1,
        "records_count": 3,
    }
    base.update(fields)
    return BatchHeader(**base)  # type: ignore[arg-type]


CONTROL = 0x30
HORIZON = 0x40


TXN = {"attributes": 0x10, "producer_id": 1}
MARKER = {"attributes": CONTROL, "producer_id": 1}
DUE = {"attributes": CONTROL | HORIZON, "producer_id": 1, "base_timestamp": NOW}
AHEAD = {"attributes": CONTROL | HORIZON, "producer_id": 1, "base_timestamp": NOW + 1}
DELETE, DELETE_EMPTY, RETAIN_EMPTY = (
    BatchRetention.DELETE,
    BatchRetention.DELETE_EMPTY,
    BatchRetention.RETAIN_EMPTY,
)


@pytest.mark.parametrize(
    ("fields", "can_discard", "last_of_producer", "expected"),
    [
        pytest.param({}, False, False, (DELETE_EMPTY, BatchReason.RECORDS_DECIDE), id="plain"),
        pytest.param(TXN, True, False, (DELETE, BatchReason.ABORTED_DATA), id="aborted"),
        pytest.param(
            TXN, True, True, (RETAIN_EMPTY, BatchReason.LAST_BATCH_OF_ACTIVE_PRODUCER), id="aborted-last"
        ),
        pytest.param({}, False, True, (DELETE_EMPTY, BatchReason.RECORDS_DECIDE), id="no-producer-id"),
        pytest.param(
            {"base_offset": 17}, False, False, (RETAIN_EMPTY, BatchReason.END_OF_ROUND), id="round-end"
        ),
        pytest.param(MARKER, True, False, (DELETE_EMPTY, BatchReason.RECORDS_DECIDE), id="marker-no-horizon"),
        pytest.param(DUE, True, False, (DELETE, BatchReason.EXPIRED_MARKER), id="marker-horizon-reached"),
        pytest.param(
            AHEAD, True, False, (DELETE_EMPTY, BatchReason.RECORDS_DECIDE), id="marker-horizon-ahead"
        ),
    ],
)
def test_batch_retention_rules(
    fields: dict[str, int],
    can_discard: bool,
    last_of_producer: bool,
    expected: tuple[BatchRetention, BatchReason],
) -> None:
    decision = decide_batch(
        header(**fields),
        can_discard=can_discard,
        last_of_active_producer=last_of_producer,
        round_upper_bound=20,
        now_ms=NOW,
    )
    assert (decision.retention, decision.reason) == expected


def test_a_discardable_control_batch_is_a_marker_for_an_empty_transaction() -> None:
    def empty_txn_marker(h: BatchHeader) -> bool:
        decision = decide_batch(
            h, can_discard=True, last_of_active_producer=False, round_upper_bound=99, now_ms=NOW
        )
        return decision.marker_for_empty_txn

    assert empty_txn_marker(header(**MARKER))
    assert not empty_txn_marker(header(**TXN))


MAP = OffsetMap(0, 100, 99, MappingProxyType({key_digest(b"k"): 50}))


@pytest.mark.parametrize(
    ("record", "control", "discard", "deletes", "expected"),
    [
        (Record(40, NOW, b"k", b"v"), False, True, True, RecordDecision.DROP_BATCH_DISCARDED),
        (Record(40, NOW, b"\x00\x00\x00\x01", b"v"), True, False, True, RecordDecision.KEEP_CONTROL),
        (Record(100, NOW, None, b"v"), False, False, True, RecordDecision.KEEP_BEYOND_MAP),
        (Record(100, NOW, b"k", None), False, False, False, RecordDecision.KEEP_BEYOND_MAP),
        (Record(40, NOW, None, b"v"), False, False, True, RecordDecision.DROP_UNKEYED),
        (Record(40, NOW, b"k", b"v"), False, False, True, RecordDecision.DROP_SUPERSEDED),
        (Record(50, NOW, b"k", b"v"), False, False, False, RecordDecision.KEEP_LATEST),
        (Record(50, NOW, b"k", b""), False, False, False, RecordDecision.KEEP_LATEST),
        (Record(50, NOW, b"k", None), False, False, True, RecordDecision.KEEP_TOMBSTONE),
        (Record(50, NOW, b"k", None), False, False, False, RecordDecision.DROP_EXPIRED_TOMBSTONE),
        (Record(7, NOW, b"absent", b"v"), False, False, True, RecordDecision.KEEP_LATEST),
    ],
)
def test_record_retention_rules(
    record: Record, control: bool, discard: bool, deletes: bool, expected: RecordDecision
) -> None:
    decision = decide_record(
        record, is_control=control, discard_records=discard, offset_map=MAP, deletes_retained=deletes
    )
    assert decision is expected


def test_deletes_are_retained_until_the_v2_horizon_or_by_legacy_segment_mtime() -> None:
    def kept(h: BatchHeader, mtime: int = 0) -> bool:
        return retain_deletes(h, now_ms=NOW, segment_last_modified_ms=mtime, legacy_delete_horizon_ms=100)

    assert kept(header())
    assert kept(header(attributes=HORIZON, base_timestamp=NOW + 1))
    assert not kept(header(attributes=HORIZON, base_timestamp=NOW))
    assert kept(header(magic=1), mtime=101)
    assert not kept(header(magic=1), mtime=100)
    assert legacy_delete_horizon([5, 9], delete_retention_ms=4) == 5
    assert legacy_delete_horizon([], delete_retention_ms=4) == 0


def test_a_horizon_is_set_once_for_tombstones_and_emptied_transaction_markers() -> None:
    assert needs_delete_horizon(header(), contains_tombstones=True, marker_for_empty_txn=False)
    assert needs_delete_horizon(header(), contains_tombstones=False, marker_for_empty_txn=True)
    assert not needs_delete_horizon(header(), contains_tombstones=False, marker_for_empty_txn=False)
    stamped = header(attributes=HORIZON)
    assert not needs_delete_horizon(stamped, contains_tombstones=True, marker_for_empty_txn=True)


def test_producer_liveness_is_derived_from_the_log() -> None:
    states = replay_producers(
        [
            header(producer_id=1, producer_epoch=0, max_timestamp=NOW - 10),
            header(base_offset=20, producer_id=2, producer_epoch=0, attributes=0x10, max_timestamp=NOW - DAY),
            header(base_offset=30, producer_id=3, producer_epoch=0, max_timestamp=NOW - DAY),
            header(
                base_offset=40,
                producer_id=1,
                producer_epoch=1,
                attributes=CONTROL | 0x10,
                last_offset_delta=0,
            ),
            header(base_offset=50, producer_id=4, attributes=CONTROL | 0x10, records_count=0),
        ]
    )
    assert set(states) == {1, 2, 3}  # an emptied control batch changes nothing
    assert (states[1].producer_epoch, states[1].last_data_offset) == (1, -1)  # epoch bump cleared data
    assert states[2].in_transaction
    active = active_producers(states, now_ms=NOW, expiration_ms=DAY)
    assert set(active) == {1, 2}  # 3 expired at exactly producer.id.expiration.ms; 2 has an open transaction
    marker = header(base_offset=40, producer_id=1, producer_epoch=1, attributes=CONTROL, last_offset_delta=0)
    assert is_last_batch_of_active_producer(marker, active)
    assert not is_last_batch_of_active_producer(replace(marker, producer_epoch=0), active)
    assert is_last_batch_of_active_producer(header(base_offset=20, producer_id=2), active)
    assert not is_last_batch_of_active_producer(header(base_offset=10, producer_id=2), active)
