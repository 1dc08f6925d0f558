"""An open transaction is forgotten when Kafka's log loading snapshots it at or below the log start offset.

Kafka snapshots the producer state after recovering each segment, at its next offset
(``LogLoader.recoverSegment``), deletes every snapshot at or below the log start offset
(``ProducerStateManager.truncateAndReload``: ``snapshot.offset <= logStartOffset``) and replays from the log
start offset (``UnifiedLog.rebuildProducerState``). So a transaction whose last batch lies in a segment ending
at or below the log start offset is gone, the last stable offset is the log end offset and the round cleans;
when the log start offset is inside that segment Kafka keeps it and clamps the last stable offset to the log
start offset. Found by the differential suite (docs/fidelity.md, docs/compaction.md "The last stable offset").

The log: segment [0, 4] (producer 5's transaction at offsets 0-1, then 2-4), segment [20, 25], the active
segment [26, 26]; the log end offset is 27.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from kafka_segments.compaction.range import UncleanableBound, cleanable_range
from kafka_segments.lake.codec import manifest_from_json, manifest_to_json
from kafka_segments.retention.delete_records import DeleteRecordsRequest, delete_records_plan
from kafka_segments.retention.plan import plan_partition
from kafka_segments.state import Manifest, OpenTransaction, PartitionState
from kafka_segments.topic_partition import TopicPartition
from unit.retention_helpers import seg, state, topic_config

pytestmark = pytest.mark.unit

NOW = 1_800_000_000_000
TP = TopicPartition("t", 0)
SEGMENTS = [seg(0, 4), seg(20, 25), seg(26, 26)]
OPEN = OpenTransaction(producer_id=5, producer_epoch=0, first_offset=0, last_offset=1)
OLD_MANIFEST = OpenTransaction(producer_id=5, producer_epoch=0, first_offset=0)
"""As read from a manifest written before ``last_offset``: where its last batch lies is unknown."""
SPANNING = replace(OPEN, last_offset=22)
"""Producer 5's transaction goes on in the second segment (its last batch ends at 22)."""


def _log(txn: OpenTransaction, log_start: int) -> PartitionState:
    return replace(state(SEGMENTS, log_start=log_start), open_transactions=(txn,))


@pytest.mark.parametrize(
    ("txn", "log_start", "known", "lso"),
    [
        pytest.param(OPEN, 10, None, 27, id="forgotten: the segment ends below the log start offset"),
        pytest.param(OPEN, 5, None, 27, id="forgotten: boundary, the snapshot offset (5) is the log start"),
        pytest.param(OPEN, 4, 0, 4, id="kept: the log start offset inside its segment, LSO clamped"),
        pytest.param(OPEN, 0, 0, 0, id="kept: the log start offset at its segment's base"),
        pytest.param(OLD_MANIFEST, 10, 0, 10, id="old manifest without last_offset: kept, LSO clamped"),
        pytest.param(SPANNING, 10, 20, 20, id="spanning: restarts in the first replayed segment"),
        pytest.param(SPANNING, 21, 20, 21, id="spanning, log start inside the replayed segment: clamped"),
    ],
)
def test_an_open_transaction_is_forgotten_when_its_last_segment_ends_at_or_below_the_log_start(
    txn: OpenTransaction, log_start: int, known: int | None, lso: int
) -> None:
    log = _log(txn, log_start)
    firsts = [t.first_offset for t in log.loaded_open_transactions]
    assert firsts == ([] if known is None else [known])
    assert log.last_stable_offset == lso
    assert log.open_transactions == (txn,)  # the record stays: a later regrouping may bring it back


def test_a_forgotten_transaction_lets_the_round_clean_up_to_the_active_segment() -> None:
    config = topic_config(cleanup_policy="compact", min_cleanable_dirty_ratio=0.0)
    forgotten = cleanable_range(_log(OPEN, 10), config, now_ms=NOW)
    assert (forgotten.first_uncleanable_offset, forgotten.bound) == (26, UncleanableBound.ACTIVE_SEGMENT)
    kept = cleanable_range(_log(OLD_MANIFEST, 10), config, now_ms=NOW)
    assert kept.bound is UncleanableBound.LAST_STABLE_OFFSET
    assert (kept.first_uncleanable_dirty_offset, kept.cleanable_bytes) == (10, 0)


def test_a_segment_regrouped_past_the_log_start_brings_the_transaction_back() -> None:
    """A cleaned group [0, 25] ends above the log start offset: Kafka's load replays it whole again."""
    log = replace(_log(OPEN, 10), segments=(seg(0, 25), seg(26, 26)))
    assert [t.first_offset for t in log.loaded_open_transactions] == [0]
    assert log.last_stable_offset == 10


def test_retention_drops_a_transaction_whose_batches_it_deleted_and_clamps_the_others() -> None:
    """After ``retention.ms`` deletes [0, 4], no load can replay producer 5's batch; producer 6's transaction
    (its last batch in [20, 25]) is clamped to the new log start offset."""
    other = OpenTransaction(producer_id=6, producer_epoch=0, first_offset=3, last_offset=21)
    log = replace(
        state([seg(0, 4, ts=1), seg(20, 25, ts=NOW), seg(26, 26, ts=NOW)]), open_transactions=(OPEN, other)
    )
    plan = plan_partition(log, topic_config(retention_ms=1000), now_ms=NOW, index=None)
    after = plan.new_state(log, run_id="r2")
    assert after.log_start_offset == 20
    assert after.open_transactions == (replace(other, first_offset=20),)
    assert after.open_transactions[0].last_offset == 21


def test_delete_records_into_the_gap_keeps_the_record_and_the_next_load_forgets_it() -> None:
    """``deleteRecords`` up to 10: no segment goes ([0, 4] stays while the next one starts above 10); the
    transaction stays recorded, clamped to 10, and the manifest reads it back (its last batch below its
    first offset)."""
    log = _log(OPEN, 0)
    _, plan = delete_records_plan(log, topic_config(), DeleteRecordsRequest(TP, 10), now_ms=NOW)
    assert plan is not None
    after = plan.new_state(log, run_id="r2")
    assert [(t.first_offset, t.last_offset) for t in after.open_transactions] == [(10, 1)]
    assert (after.log_start_offset, after.last_stable_offset) == (10, 27)
    manifest = Manifest(2, 1, "r2", "delete-records", NOW, NOW, partitions=(after,))
    read = manifest_from_json(manifest_to_json(manifest), location="m.json").partitions[0]
    assert [(t.first_offset, t.last_offset) for t in read.open_transactions] == [(10, 1)]
    assert read.last_stable_offset == 27
