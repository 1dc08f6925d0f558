"""Aborted transactions below the log start offset: Kafka's cleaner does not see them.

``UnifiedLog.collectAbortedTransactions`` searches the transaction indexes from the log start offset
(``TransactionIndex.collectAbortedTxns`` keeps entries whose ``lastOffset`` is at least it), so a transaction
whose ABORT marker lies below the log start offset is unknown to the round, and its records are cleaned as
committed ones. Found by the differential suite (docs/fidelity.md).
"""

from __future__ import annotations

import pytest
from kafka_segments.compaction.rewrite import clean_round
from kafka_segments.compaction.source import from_log_start
from kafka_segments.segment.txn_index import AbortedTxn
from unit.compaction_helpers import NOW, LogBuilder, headers_of, keys_of
from unit.retention_helpers import topic_config

pytestmark = pytest.mark.unit

CONFIG = topic_config(cleanup_policy="compact", producer_id_expiration_ms=2**63 - 1)


def _log() -> LogBuilder:
    """Offsets 0-1: producer 7's transaction (key 1), 2: its ABORT marker, 3: key 2; 4: the active segment."""
    log = LogBuilder()
    log.txn(7, [1, 1])
    log.abort(7)
    log.rec(2, 2)
    log.roll()
    log.rec(3, 3)
    return log


def _cleaned(log: LogBuilder, log_start_offset: int | None) -> list[bytes]:
    """The segments' bytes after a round over [0, 4)."""
    result = clean_round(
        log.segments(),
        first_dirty=0,
        end_offset=4,
        config=CONFIG,
        now_ms=NOW,
        log_start_offset=log_start_offset,
    )
    return [segment.data for segment in result.segments]


def _kept_keys(log_start_offset: int | None) -> list[int]:
    return keys_of(_cleaned(_log(), log_start_offset))


def test_an_abort_marker_at_or_above_the_log_start_offset_removes_the_transaction() -> None:
    assert _kept_keys(0) == [2]
    assert _kept_keys(2) == [2]


def test_an_abort_marker_below_the_log_start_offset_is_not_seen_and_the_records_stay() -> None:
    assert _kept_keys(3) == [1, 2]


def test_without_a_log_start_offset_every_abort_is_seen() -> None:
    assert _kept_keys(None) == [2]


def test_from_log_start_drops_only_entries_whose_marker_is_below_it() -> None:
    below, at = AbortedTxn(7, 0, 2, 0), AbortedTxn(8, 1, 3, 1)
    assert from_log_start([[below, at], []], 3) == ((at,), ())


def _producer_log() -> LogBuilder:
    """Offset 0: producer 9's only batch (key 1), 1: key 2; then key 1 again at 2, key 3 at 3; 4: active."""
    log = LogBuilder()
    log.rec(1, 1, producer_id=9)
    log.rec(2, 2)
    log.roll()
    log.rec(1, 10)
    log.rec(3, 3)
    log.roll()
    log.rec(4, 4)
    return log


def _producer_batches(log_start_offset: int | None) -> list[tuple[int, int]]:
    """(base offset, record count) of producer 9's batches after a round over [0, 4)."""
    headers = headers_of(_cleaned(_producer_log(), log_start_offset))
    return [(h.base_offset, h.records_count) for h in headers if h.producer_id == 9]


def test_a_producer_only_in_a_segment_ending_at_or_below_the_log_start_offset_is_not_active() -> None:
    """Kafka's load replays producer state only from the first segment ending above the log start offset
    (``LogLoader.recoverSegment``, ``ProducerStateManager.truncateAndReload``): producer 9 is unknown, so its
    emptied batch is not kept as its last; while it is known, the empty batch stays."""
    assert _producer_batches(2) == []
    assert _producer_batches(1) == [(0, 0)]
    assert _producer_batches(None) == [(0, 0)]
