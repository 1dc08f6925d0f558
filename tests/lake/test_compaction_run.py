"""Kafka's compaction scenarios (LogCleanerTest's ``testCleaningWithDeletes``, ``testCleanTombstone``,
``testCleaningWithUnkeyedMessages``, ``testDuplicateCheckAfterCleaning`` and ``testLogToClean``;
LogCleanerManagerTest's cleanable-offsets and deletable-logs tests) through the whole run path —
Kafka-named segments uploaded into a lake → ``run_retention`` → the committed lake read back by our reader and
by kafka-python's — plus the rules that decide whether and where a round runs
(``LogCleanerManager.cleanableOffsets``, ``grabFilthiestCompactedLog``): the cleaner checkpoint's resets,
min.compaction.lag.ms, max.compaction.lag.ms and the per-run budget.

On a lake the round's range comes from the lake itself (docs/compaction.md, "How it maps onto a lake"):
LSO = LEO unless a transaction is open, the active segment is the one with the highest base offset (a
``roll`` uploads a new, empty one). The topic uses ``min.cleanable.dirty.ratio`` 0 (compared with a strict
``>``, so any dirty section is eligible) unless the scenario is about eligibility. The producers of Kafka's
tests are all active: ``now`` stays within ``producer.id.expiration.ms`` of the batches.
"""

from __future__ import annotations

import pytest
from kafka_segments.compaction.eligibility import Eligibility
from kafka_segments.compaction.range import CheckpointState, cleanable_range
from kafka_segments.pipeline.compaction.stage import CompactionStatus
from kafka_segments.pipeline.delete_records_run import delete_records
from kafka_segments.records import Record, build_batch
from kafka_segments.retention.delete_records import DeleteRecordsRequest
from kafka_segments.state import SegmentOrigin
from kafka_segments.storage import LocalStore, ObjectStore
from kafka_segments.topic_partition import TopicPartition
from kit import FakeClock
from manifest_files import format_1_commits
from unit.compaction_helpers import DAY, NOW

from lake.compaction_run_helpers import (
    TP,
    LakeLog,
    cleaned,
    committed,
    compact_config,
    compaction_of,
    compaction_settings,
    kafka_test_config,
    read_lake,
    retired_reasons,
    run_at,
    topics_config,
    undecodable,
    upload_cleaner_checkpoint,
    upload_log_start_offsets,
)

pytestmark = pytest.mark.lake

HOUR = 3_600_000


# --- LogCleanerTest: key-based compaction -------------------------------------------------------------------


def test_kafka_a3_cleaning_with_deletes_removes_every_older_value_and_stamps_the_tombstones(
    store: ObjectStore,
) -> None:
    """testCleaningWithDeletes: rec(i,i) until 2 segments, a tombstone for every even key, then new keys
    until 4 segments; one round (0, active base). No even key keeps a value; the tombstones survive this
    first round, stamped with deleteHorizon = now + delete.retention.ms."""
    lake = LakeLog.of(segment_bytes=1024)
    log = lake.log
    while log.segment_count < 2:
        log.rec(log.next_offset, log.next_offset)
    n = log.next_offset
    for key in range(0, n, 2):
        log.tomb(key)
    while log.segment_count < 4:
        log.rec(log.next_offset, log.next_offset)
    lake.sync(store)
    now = NOW + 1_000

    result = run_at(store, kafka_test_config(1024), now)

    view = read_lake(store)
    odd_keys = list(range(1, n, 2))
    new_keys = list(range(n + n // 2 + n % 2, log.next_offset))
    assert view.keys == odd_keys + new_keys
    assert not {key for key in view.keys if key < n and key % 2 == 0}
    assert view.tombstone_keys == list(range(0, n, 2))
    tombstones = [b for b in view.batches if b.records and b.records[0][3] is None]
    assert {b.delete_horizon_ms for b in tombstones} == {now + DAY}
    active = lake.bases[-1]
    assert view.state.cleaner_checkpoint == active
    round_ = cleaned(result)
    assert (round_.first_dirty_offset, round_.end_offset) == (0, active)
    assert round_.stats is not None
    assert (round_.stats.tombstones_read, round_.stats.tombstones_kept) == (len(range(0, n, 2)),) * 2
    assert round_.stats.horizons_stamped == len(range(0, n, 2))
    assert all(segment.size <= 1024 for segment in view.state.segments)


def test_kafka_a4_tombstone_horizon_counts_from_the_clean_not_from_the_record_timestamp(
    local_store: LocalStore,
) -> None:
    """testCleanTombstone: a value stamped in the future, cleaned; a tombstone for its key whose *record*
    timestamp is older than delete.retention.ms, cleaned; a third record, cleaned. The first batch of the log
    is the tombstone (last offset 1) after both later rounds: its horizon counts from the round that first
    wrote it, not from its record timestamp."""
    lake = LakeLog.of()
    log = lake.log
    cfg = compact_config()
    log.rec(0, 0, timestamp=NOW + DAY + 10_000)
    log.roll()
    lake.sync(local_store)
    first = run_at(local_store, cfg, NOW)
    assert cleaned(first).stats.segments_kept == 1  # type: ignore[union-attr]  # nothing to remove: kept as is

    log.tomb(0, timestamp=NOW - DAY - 10_000)
    log.roll()
    lake.sync(local_store)
    second_now = NOW + 1_000
    run_at(local_store, cfg, second_now)
    view = read_lake(local_store)
    assert view.batch_lasts[0] == 1
    assert view.batches[0].records[0][1:4] == (NOW - DAY - 10_000, b"0", None)
    assert view.batches[0].delete_horizon_ms == second_now + DAY

    log.rec(1, 1)
    log.roll()
    lake.sync(local_store)
    run_at(local_store, cfg, NOW + 2_000)
    view = read_lake(local_store)
    assert view.batch_lasts[0] == 1
    assert view.batches[0].delete_horizon_ms == second_now + DAY
    assert view.tombstone_keys == [0]
    assert view.keys == [1]


def test_kafka_a5_cleaning_with_unkeyed_messages_removes_all_of_them(local_store: LocalStore) -> None:
    """testCleaningWithUnkeyedMessages: unkeyed single-record batches until a 2nd segment starts, keyed
    records until 3 segments; one round. No unkeyed record remains, the log shrinks by exactly the unkeyed
    batches' bytes, and the round counts them (Kafka's invalidMessagesRead)."""
    lake = LakeLog.of(segment_bytes=1024)
    log = lake.log
    unkeyed_sizes = []
    while log.segment_count < 2:
        log.rec(None, log.next_offset)
        unkeyed_sizes.append(len(log.chunks[-1][1][-1]))
    unkeyed = log.next_offset
    while log.segment_count < 3:
        log.rec(log.next_offset, log.next_offset)
    lake.sync(local_store)
    size_before = len(log.data())

    result = run_at(local_store, kafka_test_config(1024), NOW + 1_000)

    view = read_lake(local_store)
    assert all(row[2] is not None for b in view.batches for row in b.records)
    assert view.keys == list(range(unkeyed, log.next_offset))
    assert view.size == size_before - sum(unkeyed_sizes)
    stats = cleaned(result).stats
    assert stats is not None
    assert stats.unkeyed_records_removed == unkeyed


def test_kafka_a7_duplicate_check_after_cleaning_keeps_batch_bounds_and_sequences(store: ObjectStore) -> None:
    """testDuplicateCheckAfterCleaning: idempotent producers P1 [1,2,3], P2 [3,1,4], P3 [1,4]; a round keeps
    every batch's first/last offset and sequence. Then P4 [2]; the next round empties P1's batch but keeps its
    header: it is P1's last batch and P1 is still active.

    Not reproduced: re-sending the batches after a reload and seeing them detected as duplicates — that is the
    broker's producer-state manager answering a produce request, which a lake has no part in."""
    lake = LakeLog.of(segment_bytes=2048)
    log = lake.log
    log.records([(1, 1), (2, 2), (3, 3)], producer_id=1)
    log.records([(3, 3), (1, 1), (4, 4)], producer_id=2)
    log.records([(1, 1), (4, 4)], producer_id=3)
    log.roll()
    lake.sync(store)
    cfg = kafka_test_config(2048)

    run_at(store, cfg, NOW + 1_000)

    view = read_lake(store)
    assert view.batch_lasts == [2, 5, 7]
    assert view.last_sequences == {1: 2, 2: 2, 3: 1}
    assert view.keys == [2, 3, 1, 4]
    assert view.offsets == [1, 3, 6, 7]
    assert [(b.base_offset, b.base_sequence) for b in view.batches] == [(0, 0), (3, 0), (6, 0)]

    log.records([(2, 2)], producer_id=4)
    log.roll()
    lake.sync(store)
    result = run_at(store, cfg, NOW + 2_000)

    view = read_lake(store)
    assert view.last_sequences == {1: 2, 2: 2, 3: 1, 4: 0}
    assert view.batch_lasts == [2, 5, 7, 8]
    assert view.keys == [3, 1, 4, 2]
    assert view.offsets == [3, 6, 7, 8]
    empty = view.batches[0]
    assert (empty.records_count, empty.size, empty.producer_id, empty.base_sequence) == (0, 61, 1, 0)
    assert cleaned(result).stats.batches_emptied == 1  # type: ignore[union-attr]


def test_kafka_a10_log_to_clean_bytes_and_ratio(local_store: LocalStore) -> None:
    """testLogToClean + testLogToCleanWithUncleanableSection: six single-record segments (segment.bytes 100,
    key "1", 25-byte values). First dirty = segment 2 (the cleaner checkpoint), uncleanable = segment 4 (too
    young for min.compaction.lag.ms): clean bytes = segments 0+1, cleanable = 2+3, ratio = cleanable / total.
    Once the checkpoint reaches the active segment, total bytes = log size - active segment size."""
    lake = LakeLog.of(segment_bytes=100)
    for index in range(6):
        lake.log.rec(1, "v" * 25, timestamp=NOW - 2 * HOUR if index < 4 else NOW)
    assert lake.bases == [0, 1, 2, 3, 4, 5]
    lake.sync(local_store)
    upload_cleaner_checkpoint(local_store, {TP: 2})
    cfg = kafka_test_config(100, min_compaction_lag_ms=HOUR)
    size = len(lake.log.chunks[0][1][0])

    result = run_at(local_store, cfg, NOW)

    adopted = result.adoption.partitions[0]
    before = cleanable_range(adopted, cfg.for_topic("t"), now_ms=NOW)
    assert (before.first_dirty_offset, before.first_uncleanable_offset) == (2, 4)
    assert (before.clean_bytes, before.cleanable_bytes) == (2 * size, 2 * size)
    round_ = cleaned(result)
    assert round_.dirty_ratio_before == pytest.approx(0.5)
    assert (round_.first_dirty_offset, round_.first_uncleanable_offset, round_.end_offset) == (2, 4, 4)
    view = read_lake(local_store)
    assert view.offsets == [3, 4, 5]  # offsets 0-2 superseded by 3; 4 and 5 beyond the round

    run_at(local_store, cfg, NOW + 2 * HOUR)  # segment 4 is old enough now: the checkpoint reaches 5
    state = committed(local_store)
    assert state.cleaner_checkpoint == 5
    at_active = cleanable_range(state, cfg.for_topic("t"), now_ms=NOW + 2 * HOUR)
    assert at_active.first_dirty_offset == at_active.first_uncleanable_offset == 5
    assert at_active.total_bytes == state.size_bytes - state.segments[-1].size
    assert at_active.cleanable_bytes == 0
    third = run_at(local_store, cfg, NOW + 2 * HOUR)
    assert compaction_of(third).eligibility is Eligibility.BELOW_DIRTY_RATIO
    assert third.committed_version is None


# --- LogCleanerManagerTest: choosing what to clean ----------------------------------------------------------


def _eight_segments(lake: LakeLog, *, stamps: tuple[int, int] | None = None, switch_at: int = 4) -> None:
    """rec(o,o) until 8 segments of 1024 bytes; with ``stamps`` (t0, t1): t0 until ``switch_at`` segments
    exist, t1 afterwards (the segment active at the switch holds both)."""
    log = lake.log
    while log.segment_count < 8:
        if stamps is not None:
            log.timestamp = stamps[0] if log.segment_count < switch_at else stamps[1]
        log.rec(log.next_offset, log.next_offset)


def test_kafka_c1_cleanable_range_ends_at_the_active_segment(local_store: LocalStore) -> None:
    """testCleanableOffsetsActiveSegment: HW = LEO, no checkpoint: first dirty 0, first uncleanable = the
    active segment's base offset."""
    lake = LakeLog.of(segment_bytes=1024)
    _eight_segments(lake)
    lake.sync(local_store)

    result = run_at(local_store, kafka_test_config(1024), NOW)

    round_ = cleaned(result)
    assert (round_.first_dirty_offset, round_.first_uncleanable_offset) == (0, lake.bases[-1])
    assert committed(local_store).cleaner_checkpoint == lake.bases[-1]


def test_kafka_c1_an_open_transaction_bounds_the_range_mid_segment(local_store: LocalStore) -> None:
    """testCleanableOffsetsForNone with HW = 50: on a lake HW = LEO, so the same bound comes from the last
    stable offset — a transaction opened at offset 50 and never finished. firstUncleanableDirtyOffset is 50
    (mid-segment), rounded down to the base of the segment holding it; that segment and everything after it
    stay untouched."""
    lake = LakeLog.of(segment_bytes=1024)
    log = lake.log
    while log.next_offset < 50:
        log.rec(log.next_offset, log.next_offset)
    log.txn(9, [50])
    while log.segment_count < 8:
        log.rec(log.next_offset % 10, log.next_offset)  # later duplicates of keys 0-9: beyond the round
    lake.sync(local_store)
    holding = max(base for base in lake.bases if base <= 50)
    assert holding < 50

    result = run_at(local_store, kafka_test_config(1024), NOW)

    adopted = result.adoption.partitions[0]
    cfg = kafka_test_config(1024).for_topic("t")
    assert cleanable_range(adopted, cfg, now_ms=NOW).first_uncleanable_dirty_offset == 50
    round_ = cleaned(result)
    assert round_.first_uncleanable_offset == holding
    assert committed(local_store).cleaner_checkpoint == holding
    untouched = [s for s in committed(local_store).segments if s.base_offset >= holding]
    assert all(s.origin is SegmentOrigin.ADOPTED for s in untouched)
    assert read_lake(local_store).offsets[:holding] == list(range(holding))  # keys 0-9 not superseded yet


@pytest.mark.parametrize(
    ("switch_at", "expected_segment"),
    [
        pytest.param(4, 3, id="kafka_C1_testCleanableOffsetsForTime"),
        pytest.param(9, 7, id="kafka_C1_testCleanableOffsetsForShortTime"),
    ],
)
def test_kafka_c1_min_compaction_lag_bounds_the_range(
    local_store: LocalStore, switch_at: int, expected_segment: int
) -> None:
    """min.compaction.lag.ms 1 h: records at t0 until 4 segments, then at t1 = t0 + 1 h + 1 ms until 8; at t1
    the first uncleanable segment is the one that was active at t0 (it holds t1 records). All 8 segments
    written at t0, then 1 h + 1 ms later: the active segment's base."""
    t0 = NOW
    t1 = t0 + HOUR + 1
    lake = LakeLog.of(segment_bytes=1024)
    _eight_segments(lake, stamps=(t0, t1), switch_at=switch_at)
    lake.sync(local_store)

    result = run_at(local_store, kafka_test_config(1024, min_compaction_lag_ms=HOUR), t1)

    assert cleaned(result).first_uncleanable_offset == lake.bases[expected_segment]


def _fifteen_records(store: ObjectStore, topic: str, *, broken_at: int | None = None) -> LakeLog:
    """15 records at timestamp 10 in segments [0-4], [5-9], [10-14], then an empty active segment at 15;
    key = offset, except that offsets 10 and 11 write keys 0 and 5 again. ``broken_at``: that batch cannot
    be decoded (valid CRC, records that are not the gzip they claim to be)."""
    lake = LakeLog.of(tp=TopicPartition(topic, 0), timestamp=10)
    for offset in range(15):
        if offset and offset % 5 == 0:
            lake.log.roll()
        if offset == broken_at:
            lake.log.append(undecodable(build_batch([Record(offset, 10, b"x", b"x")])))
            continue
        lake.log.rec({10: 0, 11: 5}.get(offset, offset), offset)
    lake.log.roll()
    lake.sync(store)
    return lake


def test_kafka_c5_which_policies_get_a_round_and_which_deletion_passes(local_store: LocalStore) -> None:
    """deletableLogs: cleanup.policy=delete gets no round (its retention is LogManager's, every pass);
    compact gets a round and then only the log-start-offset pass; compact,delete a round and every pass; a
    partition whose round fails (marked uncleanable) gets neither, not even the log-start-offset pass."""
    lakes = {topic: _fifteen_records(local_store, topic) for topic in ("del", "cmp", "both")}
    lakes["broken"] = _fifteen_records(local_store, "broken", broken_at=7)
    upload_log_start_offsets(local_store, {lake.tp: 5 for lake in lakes.values()})
    per_segment = 400  # one source segment per cleaning group (five batches of ~72 bytes each)
    cfg = topics_config(
        {
            "del": {"cleanup.policy": "delete"},
            "cmp": compaction_settings(retention_ms=10_000, internal_segment_bytes=per_segment),
            "both": compaction_settings(
                cleanup_policy="compact,delete", retention_ms=10_000, internal_segment_bytes=per_segment
            ),
            "broken": compaction_settings(retention_ms=10_000, internal_segment_bytes=per_segment),
        }
    )
    originals = {topic: list(lake.bases) for topic, lake in lakes.items()}

    result = run_at(local_store, cfg, NOW)

    reasons = retired_reasons(local_store)

    def reasons_of(topic: str) -> set[str]:
        return {reason for key, reason in reasons.items() if key.startswith(f"{topic}-0/")}

    assert result.compaction.partition(lakes["del"].tp) is None
    assert [s.base_offset for s in committed(local_store, lakes["del"].tp).segments] == [15]
    assert reasons_of("del") == {"log-start-offset", "retention.ms"}

    assert compaction_of(result, lakes["cmp"].tp).status is CompactionStatus.CLEANED
    cmp_state = committed(local_store, lakes["cmp"].tp)
    assert [s.base_offset for s in cmp_state.segments] == [5, 10, 15]
    assert reasons_of("cmp") == {"compaction", "log-start-offset"}  # retention.ms is not applied
    assert read_lake(local_store, lakes["cmp"].tp).offsets == [6, 7, 8, 9, 10, 11, 12, 13, 14]

    assert compaction_of(result, lakes["both"].tp).status is CompactionStatus.CLEANED
    assert [s.base_offset for s in committed(local_store, lakes["both"].tp).segments] == [15]
    assert reasons_of("both") == {"compaction", "log-start-offset", "retention.ms"}

    broken = compaction_of(result, lakes["broken"].tp)
    assert broken.status is CompactionStatus.QUARANTINED
    assert broken.error is not None
    assert "00000000000000000005.log" in broken.error
    broken_state = committed(local_store, lakes["broken"].tp)
    assert [s.base_offset for s in broken_state.segments] == originals["broken"]
    assert all(s.origin is SegmentOrigin.ADOPTED for s in broken_state.segments)
    assert reasons_of("broken") == set()
    plan = result.plan.partition(lakes["broken"].tp)
    assert plan is not None
    assert plan.skipped is not None
    assert "uncleanable" in plan.skipped


# --- grabFilthiestCompactedLog: max.compaction.lag.ms -------------------------------------------------------


@pytest.mark.parametrize(
    ("first_ts", "second_ts", "min_lag", "eligibility"),
    [
        pytest.param(
            NOW - 2 * DAY, NOW - 60_000, 0, Eligibility.MAX_COMPACTION_LAG, id="first_batch_overdue"
        ),
        pytest.param(
            NOW - 60_000, NOW - 2 * DAY, 0, Eligibility.BELOW_DIRTY_RATIO, id="only_a_later_batch_overdue"
        ),
        pytest.param(NOW - 2 * DAY, NOW - 60_000, HOUR, Eligibility.EMPTY_LOG, id="min_lag_still_bounds_it"),
    ],
)
def test_max_compaction_lag_looks_at_the_first_batch_of_each_dirty_segment(
    local_store: LocalStore, first_ts: int, second_ts: int, min_lag: int, eligibility: Eligibility
) -> None:
    """KIP-354 ``maxCompactionDelay``: the *first batch's* maxTimestamp of each dirty non-active segment
    against now - max.compaction.lag.ms makes the partition eligible even with min.cleanable.dirty.ratio 1.0
    (which the ratio can never exceed); min.compaction.lag.ms still bounds the range, so a segment too young
    for it leaves nothing cleanable and no round (here nothing clean either: totalBytes 0, the log is dropped
    from the candidates)."""
    lake = LakeLog.of()
    lake.log.rec(1, "a", timestamp=first_ts)
    lake.log.rec(1, "b", timestamp=second_ts)
    lake.log.roll()
    lake.sync(local_store)
    cfg = compact_config(
        min_cleanable_dirty_ratio=1.0, max_compaction_lag_ms=DAY, min_compaction_lag_ms=min_lag
    )

    result = run_at(local_store, cfg, NOW)

    outcome = compaction_of(result)
    assert outcome.eligibility is eligibility
    if eligibility is Eligibility.MAX_COMPACTION_LAG:
        assert outcome.status is CompactionStatus.CLEANED
        assert outcome.compaction_delay_ms == (NOW - DAY) - first_ts
        assert read_lake(local_store).offsets == [1]
    else:
        assert outcome.status is CompactionStatus.SKIPPED
        assert read_lake(local_store).offsets == [0, 1]
        assert committed(local_store).cleaner_checkpoint is None


# --- cleanableOffsets: the cleaner checkpoint ---------------------------------------------------------------


def _ten_records(store: ObjectStore, *, empty_active: bool = True) -> LakeLog:
    """rec(o % 3, o) for o in 0..14 in segments [0-4], [5-9], [10-14] (+ an empty active segment at 15)."""
    lake = LakeLog.of()
    for offset in range(15):
        if offset and offset % 5 == 0:
            lake.log.roll()
        lake.log.rec(offset % 3, offset)
    if empty_active:
        lake.log.roll()
    lake.sync(store)
    return lake


@pytest.mark.parametrize(
    ("ratio", "status", "checkpoint_after"),
    [
        pytest.param(1.0, CompactionStatus.SKIPPED, 0, id="not_selected_still_rewritten"),
        pytest.param(0.0, CompactionStatus.CLEANED, 15, id="selected_cleans_from_log_start"),
    ],
)
def test_checkpoint_above_the_log_end_resets_to_the_log_start(
    local_store: LocalStore, ratio: float, status: CompactionStatus, checkpoint_after: int
) -> None:
    """cleanableOffsets: a checkpoint above the log end offset (the log was truncated) gives firstDirty = log
    start offset and is rewritten at once, whether or not the partition is then cleaned
    (testCheckpointUpdatedForInvalidOffsetNotSelected)."""
    _ten_records(local_store)
    upload_cleaner_checkpoint(local_store, {TP: 100})

    result = run_at(local_store, compact_config(min_cleanable_dirty_ratio=ratio), NOW)

    outcome = compaction_of(result)
    assert outcome.checkpoint_state is CheckpointState.ABOVE_LOG_END
    assert outcome.status is status
    assert (outcome.checkpoint_before, outcome.checkpoint_after) == (100, checkpoint_after)
    assert outcome.first_dirty_offset == 0
    assert committed(local_store).cleaner_checkpoint == checkpoint_after
    assert run_at(local_store, compact_config(min_cleanable_dirty_ratio=ratio), NOW).committed_version is None


def test_checkpoint_below_the_log_start_after_delete_records_is_read_as_the_log_start_at_the_next_run(
    local_store: LocalStore,
) -> None:
    """deleteRecords moves the log start offset past the checkpoint; the next run's cleanableOffsets finds it
    below the log start offset: firstDirty = log start offset; without a round the look resets it (Kafka's
    updateCheckpoints), which reads the same and is not a change on its own: the run commits nothing. On a
    lake kept in format 1, whose runs read every partition (a format 2 run leaves this one unread: its
    summary reads the checkpoint as the log start offset, the same state)."""
    clock = FakeClock()
    _ten_records(local_store, empty_active=False)  # the active segment is [10-14]
    cfg = compact_config(cleanup_policy="compact,delete")
    with format_1_commits():
        run_at(local_store, cfg, NOW, clock=clock)
        assert committed(local_store).cleaner_checkpoint == 10

        delete_records(local_store, [DeleteRecordsRequest(TP, 12)], config=cfg, now_ms=NOW, clock=clock)
        assert committed(local_store).log_start_offset == 12

        result = run_at(local_store, cfg, NOW, clock=clock)

    outcome = compaction_of(result)
    assert outcome.checkpoint_state is CheckpointState.BELOW_LOG_START
    assert outcome.status is CompactionStatus.SKIPPED
    assert (outcome.checkpoint_before, outcome.checkpoint_after, outcome.first_dirty_offset) == (10, 12, 12)
    assert result.committed_version is None
    assert committed(local_store).cleaner_checkpoint == 10
    assert run_at(local_store, cfg, NOW, clock=clock).committed_version is None


def test_checkpoint_below_the_log_start_after_retention_is_left_as_it_is(
    local_store: LocalStore,
) -> None:
    """compact,delete: the deletion passes move the log start offset past the checkpoint; as Kafka's
    deleteOldSegments, they leave the checkpoint as it is, and a rerun finds nothing to change."""
    _ten_records(local_store, empty_active=False)
    cfg = compact_config(cleanup_policy="compact,delete", retention_ms=DAY)
    run_at(local_store, cfg, NOW)
    assert committed(local_store).cleaner_checkpoint == 10

    result = run_at(local_store, cfg, NOW + 2 * DAY)  # every segment, the active one too, is past retention

    state = committed(local_store)
    assert (state.segments, state.log_start_offset) == ((), 15)
    assert state.cleaner_checkpoint == 10
    assert compaction_of(result).status is CompactionStatus.SKIPPED
    assert run_at(local_store, cfg, NOW + 2 * DAY).committed_version is None


def test_checkpoint_below_a_bootstrapped_log_start_starts_the_round_at_the_log_start(
    local_store: LocalStore,
) -> None:
    """A copied log directory whose cleaner checkpoint (2) is below its log start offset (5): the round's
    first dirty offset is 5, and only keys seen from offset 5 on supersede older values."""
    _ten_records(local_store)
    upload_cleaner_checkpoint(local_store, {TP: 2})
    upload_log_start_offsets(local_store, {TP: 5})

    result = run_at(local_store, compact_config(), NOW)

    outcome = cleaned(result)
    assert outcome.checkpoint_state is CheckpointState.BELOW_LOG_START
    assert (outcome.first_dirty_offset, outcome.end_offset) == (5, 15)
    view = read_lake(local_store)
    assert view.state.log_start_offset == 5
    assert view.offsets == [12, 13, 14]


def test_checkpoint_in_the_middle_of_a_segment_counts_that_segment_as_clean_and_cleanable(
    local_store: LocalStore,
) -> None:
    """A checkpoint inside a segment (a map-full round of Kafka's left it there): LogToClean counts that
    segment in both cleanBytes (base < firstDirty) and cleanableBytes (floor segment of firstDirty); the round
    maps only offsets >= firstDirty, yet recopies the whole log below its end."""
    lake = _ten_records(local_store)
    upload_cleaner_checkpoint(local_store, {TP: 7})
    s0, s1, s2 = (len(b"".join(batches)) for _, batches in lake.log.chunks[:3])

    result = run_at(local_store, compact_config(), NOW)

    adopted = result.adoption.partitions[0]
    before = cleanable_range(adopted, compact_config().for_topic("t"), now_ms=NOW)
    assert (before.clean_bytes, before.cleanable_bytes) == (s0 + s1, s1 + s2)
    outcome = cleaned(result)
    assert outcome.dirty_ratio_before == pytest.approx((s1 + s2) / (s0 + 2 * s1 + s2))
    assert (outcome.first_dirty_offset, outcome.end_offset) == (7, 15)
    assert read_lake(local_store).offsets == [12, 13, 14]  # offsets 0-6 superseded all the same


# --- the per-run budget -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("budget", "rounds"),
    [
        pytest.param(
            {"kafka_segments.compaction.max.partitions.per.run": 2},
            [{"hot-0", "warm-0"}, {"warm-1"}],
            id="max_partitions",
        ),
        pytest.param(
            {"kafka_segments.compaction.max.bytes.per.run": 1},
            [{"hot-0"}, {"warm-0"}, {"warm-1"}],
            id="max_bytes",
        ),
    ],
)
def test_budget_takes_overdue_partitions_first_then_the_dirtiest_and_defers_the_rest(
    local_store: LocalStore, budget: dict[str, object], rounds: list[set[str]]
) -> None:
    """kafka_segments.compaction.max.*.per.run: partitions past max.compaction.lag.ms first (hot-0, though
    its dirty ratio is the lowest, 1/3), then by dirty ratio (warm-0: 1.0, warm-1: 2/3). Deferred partitions
    are reported as such and cleaned by the following runs (a max.bytes budget always takes one round)."""
    for topic, partition in (("hot", 0), ("warm", 0), ("warm", 1)):
        lake = LakeLog.of(tp=TopicPartition(topic, partition), timestamp=NOW - 2 * DAY)
        for offset in range(15):
            if offset and offset % 5 == 0:
                lake.log.roll()
            lake.log.rec(offset % 3, offset)
        lake.log.roll()
        lake.sync(local_store)
    upload_cleaner_checkpoint(local_store, {TopicPartition("hot", 0): 10, TopicPartition("warm", 1): 5})
    cfg = topics_config(
        {"hot": compaction_settings(max_compaction_lag_ms=DAY), "warm": compaction_settings()}, broker=budget
    )

    seen = []
    for _ in rounds:
        result = run_at(local_store, cfg, NOW)
        by_status = {
            status: {str(p.topic_partition) for p in result.compaction.partitions if p.status is status}
            for status in CompactionStatus
        }
        seen.append(by_status[CompactionStatus.CLEANED])
        assert result.compaction.to_dict()["totals"]["deferred"] == len(by_status[CompactionStatus.DEFERRED])
    assert seen == rounds
    assert run_at(local_store, cfg, NOW).committed_version is None
