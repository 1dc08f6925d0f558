"""Transactions, markers, producers and empty batches through the whole run path (LogCleanerTest's
``testBasicTransactionAwareCleaning`` and ``testCommitMarkerRemoval``; ``Cleaner.cleanInto``,
``Cleaner.shouldRetainRecord``, ``MemoryRecords.filterTo``): Kafka-named segments in a lake →
``run_retention`` → the committed lake read back by our reader and by kafka-python's.

Producer liveness on a lake comes from the log at the run's ``now`` (docs/compaction.md, "How it maps onto a
lake"): a producer is active while ``now - (timestamp of its last batch or marker) <
producer.id.expiration.ms``. Kafka's tests have all producers active; that is reproduced by running within
that window of the batches' timestamps (``NOW``). A round needs a cleanable range (an expired horizon alone
triggers none), so every later round below has some new dirty data appended first.
"""

from __future__ import annotations

import pytest
from kafka_segments.pipeline.compaction.stage import CompactionStatus
from kafka_segments.segment.txn_index import AbortedTxn
from kafka_segments.storage import LocalStore, ObjectStore
from unit.compaction_helpers import DAY, NOW, L

from lake.compaction_run_helpers import (
    LakeLog,
    cleaned,
    committed,
    compact_config,
    compaction_of,
    kafka_test_config,
    read_lake,
    run_at,
    segment_txn_index,
)

pytestmark = pytest.mark.lake

HOUR = 3_600_000
INT32_MAX = 2**31 - 1


def txn_entries(entries: tuple[AbortedTxn, ...]) -> list[tuple[int, int, int]]:
    return [(e.producer_id, e.first_offset, e.last_offset) for e in entries]


def test_kafka_b1_basic_transaction_aware_cleaning(store: ObjectStore) -> None:
    """testBasicTransactionAwareCleaning: P1 txn[1,2]; P2 txn[2,3]; P1 txn[3,4]; P1 ABORT; P2 COMMIT;
    P1 txn[2]; P1 COMMIT; roll; one round. Aborted data goes whatever its keys, committed data is
    deduplicated, the markers stay, and the aborted transaction stays in the transaction index (P1, first 0,
    marker 6)."""
    lake = LakeLog.of(segment_bytes=2048)
    log = lake.log
    log.txn(1, [1, 2])
    log.txn(2, [2, 3])
    log.txn(1, [3, 4])
    log.abort(1)
    log.commit(2)
    log.txn(1, [2])
    log.commit(1)
    log.roll()
    lake.sync(store)

    result = run_at(store, kafka_test_config(2048), NOW + 1_000)

    view = read_lake(store)
    assert view.keys == [3, 2]
    assert view.offsets == [3, 6, 7, 8, 9]
    (segment, _active) = view.state.segments
    assert txn_entries(segment_txn_index(store, segment)) == [(1, 0, 6)]
    stats = cleaned(result).stats
    assert stats is not None
    assert stats.aborted_records_removed == 4
    assert view.state.cleaner_checkpoint == 10


def test_kafka_b4_commit_marker_survives_while_its_transaction_is_traversed(local_store: LocalStore) -> None:
    """testCommitMarkerRemoval, its rounds with new dirty data (the (†) rounds with an empty dirty range are
    a harness artifact; their production equivalent is ``test_commit_marker_of_a_vanished_transaction_...``).
    P1 txn[1]; P1 txn[2,3]; COMMIT; P1 txn[2]; COMMIT; roll; Clean(0, 6, L). Then P1 txn[1,3]; COMMIT; roll;
    Clean(6, 9, L): the first COMMIT stays, because the round traversed (and removed) its transaction's
    batches."""
    lake = LakeLog.of(segment_bytes=256)
    log = lake.log
    log.txn(1, [1])
    log.txn(1, [2, 3])
    log.commit(1)
    log.txn(1, [2])
    log.commit(1)
    log.roll()
    lake.sync(local_store)
    cfg = kafka_test_config(256)

    run_at(local_store, cfg, L)

    view = read_lake(local_store)
    assert view.state.cleaner_checkpoint == 6
    assert view.keys == [1, 3, 2]
    assert view.offsets == [0, 2, 3, 4, 5]

    log.txn(1, [1, 3])
    log.commit(1)
    log.roll()
    lake.sync(local_store)
    run_at(local_store, cfg, L)

    view = read_lake(local_store)
    assert view.state.cleaner_checkpoint == 9
    assert view.keys == [2, 1, 3]
    assert view.offsets == [3, 4, 5, 6, 7, 8]
    assert view.batch_at(3).delete_horizon_ms is None  # not discardable yet: nothing stamped


def test_transaction_spanning_segments_keeps_its_abort_indexed_where_the_marker_lands(
    local_store: LocalStore,
) -> None:
    """A transaction whose batches lie in two segments and whose ABORT marker lands in the second: one
    transaction state is shared by every group of the round (``CleanedTransactionMetadata``), so the aborted
    data of both segments goes, the marker stays (its data was seen in this round) and the abort is
    re-indexed in the new segment holding the marker, with the first offset from the earlier segment (P1's
    last data batch stays as an empty header: P1 is active). A second producer's transaction that spans the
    same segments commits and is deduplicated as usual."""
    lake = LakeLog.of()
    log = lake.log
    log.txn(1, [1])
    log.txn(2, [2])
    log.roll()
    log.txn(1, [3])
    log.txn(2, [4])
    log.abort(1)
    log.roll()
    log.commit(2)
    log.rec(2, "x")
    log.roll()
    lake.sync(local_store)
    assert lake.bases == [0, 2, 5, 7]

    result = run_at(local_store, compact_config(internal_segment_bytes=150), NOW + 1_000)

    view = read_lake(local_store)
    assert [s.base_offset for s in view.state.segments] == [0, 2, 5, 7]
    first, second, third, _active = view.state.segments
    assert first.last_offset is None  # every batch of the first segment went
    assert txn_entries(segment_txn_index(local_store, second)) == [(1, 0, 4)]
    assert txn_entries(segment_txn_index(local_store, third)) == []
    assert view.batch_bases == [2, 3, 4, 5, 6]
    assert view.batch_at(2).records_count == 0  # P1's last data batch: aborted, but P1 is active
    assert view.keys == [4, 2]
    assert view.offsets == [3, 4, 5, 6]
    stats = cleaned(result).stats
    assert stats is not None
    assert stats.aborted_records_removed == 2


def test_abort_marker_lifecycle_kept_then_stamped_then_removed(local_store: LocalStore) -> None:
    """ABORT marker (``Cleaner.cleanInto``, ``MemoryRecords.filterTo``): kept and re-indexed while the round
    still sees its transaction's data; once the data is gone the next round finds it discardable and stamps it
    (now + delete.retention.ms) without indexing it again; a round at or after that horizon removes it."""
    lake = LakeLog.of()
    log = lake.log
    log.txn(1, [1, 2])
    log.abort(1)
    log.txn(1, [3])
    log.commit(1)
    log.rec(9, 9)
    log.roll()
    lake.sync(local_store)
    cfg = compact_config()
    t1 = NOW + 1_000

    first = run_at(local_store, cfg, t1)

    view = read_lake(local_store)
    assert view.batch_bases == [2, 3, 4, 5]
    assert txn_entries(segment_txn_index(local_store, view.state.segments[0])) == [(1, 0, 2)]
    assert view.batch_at(2).delete_horizon_ms is None
    assert cleaned(first).stats.aborted_records_removed == 2  # type: ignore[union-attr]

    def another_round(now: int, value: int) -> None:
        log.rec(9, value)
        log.roll()
        lake.sync(local_store)
        assert compaction_of(run_at(local_store, cfg, now)).status is CompactionStatus.CLEANED

    t2 = t1 + 1_000
    another_round(t2, 10)
    view = read_lake(local_store)
    assert view.batch_at(2).delete_horizon_ms == t2 + DAY
    assert view.batch_at(2).is_control
    assert txn_entries(segment_txn_index(local_store, view.state.segments[0])) == []

    another_round(t2 + DAY - 1, 11)
    assert read_lake(local_store).batch_bases[0] == 2

    another_round(t2 + DAY, 12)
    view = read_lake(local_store)
    assert view.batch_bases[:2] == [3, 4]
    assert view.offsets == [3, 4, 8]


def test_commit_marker_of_a_vanished_transaction_is_stamped_then_removed(local_store: LocalStore) -> None:
    """COMMIT marker (``Cleaner.cleanInto``): kept by the round that removes its transaction's last data (it
    traversed the batch); the next round traverses none, stamps it, and a round past the horizon removes it.
    The producer has expired (producer.id.expiration.ms 1 h), so its emptied batch is not kept as an empty
    header."""
    lake = LakeLog.of()
    log = lake.log
    log.txn(1, [1])
    log.commit(1)
    log.rec(1, "x")
    log.rec(5, 5)
    log.roll()
    lake.sync(local_store)
    cfg = compact_config(broker={"producer.id.expiration.ms": HOUR})
    t1 = NOW + 2 * HOUR

    run_at(local_store, cfg, t1)
    view = read_lake(local_store)
    assert view.batch_bases == [1, 2, 3]
    assert view.batch_at(1).delete_horizon_ms is None

    t2 = t1 + 1_000
    log.rec(6, 6)
    log.roll()
    lake.sync(local_store)
    run_at(local_store, cfg, t2)
    assert read_lake(local_store).batch_at(1).delete_horizon_ms == t2 + DAY

    log.rec(7, 7)
    log.roll()
    lake.sync(local_store)
    run_at(local_store, cfg, t2 + DAY)
    view = read_lake(local_store)
    assert view.batch_bases == [2, 3, 4, 5]
    assert view.offsets == [2, 3, 4, 5]


@pytest.mark.parametrize(
    ("now", "bases"),
    [
        pytest.param(NOW + 1_000, [0, 1, 2], id="active_producer_keeps_an_empty_header"),
        pytest.param(NOW + DAY, [1, 2], id="expired_producer_loses_it"),
    ],
)
def test_last_batch_of_an_active_producer_is_kept_as_an_empty_header(
    local_store: LocalStore, now: int, bases: list[int]
) -> None:
    """RETAIN_EMPTY (``Cleaner.cleanInto``): a producer's last batch, all of whose records are superseded, is
    kept as a 61-byte header (offsets, producer id/epoch, sequences, max timestamp kept; no records, base
    timestamp -1) while the producer is active; at now - last timestamp >= producer.id.expiration.ms it has
    expired and the batch goes."""
    lake = LakeLog.of()
    log = lake.log
    log.records([(1, 1)], producer_id=7)
    log.rec(1, "x")
    log.rec(5, 5)
    log.roll()
    lake.sync(local_store)

    result = run_at(local_store, compact_config(), now)

    view = read_lake(local_store)
    assert view.batch_bases == bases
    assert view.offsets == [1, 2]
    if bases[0] == 0:
        empty = view.batches[0]
        assert (empty.size, empty.records_count, empty.records) == (61, 0, ())
        assert (empty.producer_id, empty.producer_epoch, empty.base_sequence, empty.last_sequence) == (
            7,
            0,
            0,
            0,
        )
        assert (empty.base_timestamp, empty.max_timestamp, empty.delete_horizon_ms) == (-1, NOW, None)
        assert cleaned(result).stats.batches_emptied == 1  # type: ignore[union-attr]


def test_batch_ending_the_round_is_kept_empty_without_a_producer(local_store: LocalStore) -> None:
    """``Cleaner.cleanInto``: the batch whose next offset is the round's upper bound is kept (as an empty
    header) even without a producer id, so the log keeps the offset the checkpoint points past."""
    lake = LakeLog.of()
    lake.log.rec(1, 1)
    lake.log.rec(None, "unkeyed")
    lake.log.roll()
    lake.sync(local_store)

    run_at(local_store, compact_config(), NOW)

    view = read_lake(local_store)
    assert view.batch_lasts == [0, 1]
    last = view.batches[-1]
    assert (last.records_count, last.size, last.producer_id, last.max_timestamp) == (0, 61, -1, NOW)
    assert view.state.cleaner_checkpoint == 2
    assert committed(local_store).log_end_offset == 2


def test_new_epoch_reusing_sequences_decides_the_producers_last_batch(local_store: LocalStore) -> None:
    """Sequence reuse after an epoch bump: P1 epoch 0 writes sequences 0-1, then epoch 1 starts again at
    sequence 0. The producer's last batch is the epoch-1 batch (``ProducerAppendInfo``: a new epoch resets the
    producer's batch metadata), so that one is kept as an empty header and the epoch-0 batch goes, although
    its sequence is the higher one."""
    lake = LakeLog.of()
    log = lake.log
    log.records([(1, 1), (2, 2)], producer_id=1, epoch=0)
    log.sequences[1] = 0
    log.records([(3, 3)], producer_id=1, epoch=1)
    for key in (1, 2, 3):
        log.rec(key, "x")
    log.roll()
    lake.sync(local_store)

    run_at(local_store, compact_config(), NOW + 1_000)

    view = read_lake(local_store)
    assert view.batch_bases == [2, 3, 4, 5]
    empty = view.batches[0]
    assert (empty.records_count, empty.producer_epoch, empty.base_sequence) == (0, 1, 0)
    assert view.last_sequences == {1: 0}


def test_rebuilt_batch_keeps_a_sequence_range_that_wraps_past_int32_max(local_store: LocalStore) -> None:
    """A rebuilt batch keeps baseSequence and lastOffsetDelta, so its last sequence (baseSequence +
    lastOffsetDelta, wrapping past Integer.MAX_VALUE to 0) is unchanged when its middle record goes."""
    lake = LakeLog.of()
    log = lake.log
    log.sequences[1] = INT32_MAX - 1
    log.records([(1, 1), (2, 2), (3, 3)], producer_id=1)
    log.rec(2, "x")
    log.roll()
    lake.sync(local_store)

    run_at(local_store, compact_config(), NOW + 1_000)

    view = read_lake(local_store)
    rebuilt = view.batches[0]
    assert (rebuilt.base_offset, rebuilt.last_offset, rebuilt.records_count) == (0, 2, 2)
    assert (rebuilt.base_sequence, rebuilt.last_sequence) == (INT32_MAX - 1, 0)
    assert view.last_sequences == {1: 0}
    assert view.offsets == [0, 2, 3]


def test_abort_with_a_bumped_epoch_leaves_the_producer_without_a_last_data_batch(
    local_store: LocalStore,
) -> None:
    """A fenced transaction: P1 epoch 0 writes data, the coordinator aborts it with epoch 1. The marker's new
    epoch clears P1's batch metadata (``ProducerStateEntry.maybeUpdateProducerEpoch``), so P1 has no last data
    batch: its aborted batch is removed instead of being kept as an empty header, and the ABORT marker (a
    control batch of P1's current epoch) is P1's last entry, kept and indexed."""
    lake = LakeLog.of()
    log = lake.log
    log.txn(1, [1, 2], epoch=0)
    log.abort(1, epoch=1)
    log.rec(1, "x")
    log.rec(2, "y")
    log.roll()
    lake.sync(local_store)

    run_at(local_store, compact_config(), NOW + 1_000)

    view = read_lake(local_store)
    assert view.batch_bases == [2, 3, 4]
    marker = view.batches[0]
    assert (marker.is_control, marker.producer_epoch) == (True, 1)
    assert txn_entries(segment_txn_index(local_store, view.state.segments[0])) == [(1, 0, 2)]


def test_abort_marker_beyond_the_round_still_removes_the_aborted_data_inside_it(
    local_store: LocalStore,
) -> None:
    """Aborted transactions come from the transaction indexes of every segment from the round's start on
    (``collectAbortedTransactions(start, upperBound)``: entries with firstOffset < upper bound), so data
    whose ABORT marker lies in the active segment, past the round, is still dropped; the marker itself is
    beyond the round and untouched."""
    lake = LakeLog.of()
    log = lake.log
    log.txn(1, [1])
    log.rec(5, 5)
    log.roll()
    log.abort(1)
    log.rec(6, 6)
    log.txn(1, [7])
    log.commit(1)
    lake.sync(local_store)

    result = run_at(local_store, compact_config(), NOW + 1_000)

    view = read_lake(local_store)
    assert view.batch_bases == [1, 2, 3, 4, 5]
    assert view.keys == [5, 6, 7]
    assert cleaned(result).end_offset == 2
    assert cleaned(result).stats.aborted_records_removed == 1  # type: ignore[union-attr]
