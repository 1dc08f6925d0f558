"""An open transaction below the log start offset, through adoption and a run on a local lake.

Kafka's log loading forgets an open transaction whose last batch lies in a segment ending at or below the
log start offset (``LogLoader.recoverSegment``, ``ProducerStateManager.truncateAndReload``), so the round
cleans past it; inside that segment the transaction stays and holds the round back (docs/compaction.md,
"The last stable offset"). Adoption records where the transaction's last batch ends (``last_offset``).
"""

from __future__ import annotations

import pytest
from kafka_segments.pipeline.compaction.stage import CompactionStatus
from kafka_segments.storage import LocalStore
from unit.compaction_helpers import NOW

from lake.compaction_run_helpers import (
    TP,
    LakeLog,
    committed,
    compact_config,
    compaction_of,
    run_at,
    upload_log_start_offsets,
)

pytestmark = pytest.mark.lake


def _lake(store: LocalStore, *, log_start: int) -> None:
    """[0, 4]: producer 5's transaction at 0-1 (never ended), then keys 3-5; a gap; [20, 25]; active [26]."""
    lake = LakeLog.of()
    log = lake.log
    log.txn(5, [1, 2])
    for key in (3, 4, 5):
        log.rec(key, key)
    log.roll()
    log.next_offset = 20
    for key in (6, 7, 6, 7, 6, 7):
        log.rec(key, key)
    log.roll()
    log.rec(8, 8)
    lake.sync(store)
    upload_log_start_offsets(store, {TP: log_start})


def test_adoption_records_where_the_open_transaction_ends(local_store: LocalStore) -> None:
    _lake(local_store, log_start=10)
    run_at(local_store, compact_config(min_cleanable_dirty_ratio=0.9), NOW)
    (txn,) = committed(local_store).open_transactions
    assert (txn.producer_id, txn.first_offset, txn.last_offset) == (5, 0, 1)


def test_a_transaction_whose_segment_ends_below_the_log_start_offset_does_not_hold_the_round(
    local_store: LocalStore,
) -> None:
    _lake(local_store, log_start=10)
    result = run_at(local_store, compact_config(), NOW)
    round_ = compaction_of(result)
    assert round_.status is CompactionStatus.CLEANED
    assert committed(local_store).cleaner_checkpoint == 26


def test_a_transaction_in_the_segment_holding_the_log_start_offset_holds_the_round(
    local_store: LocalStore,
) -> None:
    _lake(local_store, log_start=3)
    result = run_at(local_store, compact_config(), NOW)
    assert compaction_of(result).status is not CompactionStatus.CLEANED
    state = committed(local_store)
    assert state.last_stable_offset == 3
    assert state.cleaner_checkpoint in (None, 3)
