"""A round's ``CleanerStats`` count as Kafka's cleaner counts (``Cleaner.cleanInto``, ``filterTo``).

``filterTo`` adds every batch's bytes to ``bytesRead`` but counts a record in ``messagesRead`` only inside the
record loop, which it skips for a batch the batch-retention check deletes whole (``BatchRetention.DELETE``:
aborted data that is not its active producer's last batch, an abort marker whose horizon has passed). A batch
kept as an empty header (``RETAIN_EMPTY``) is read record by record, its records discarded one by one.
``messages_dropped`` is ``messages_read - messages_written``. The product's own counts (aborted records
removed) still count every record of an aborted batch.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest
from kafka_segments.compaction.rewrite import BatchAction, RoundResult, clean_round
from kafka_segments.compaction.stats import CleanerStats, PhaseTimes
from kafka_segments.config.model import TopicConfig
from unit.compaction_helpers import DAY, NOW, LogBuilder
from unit.retention_helpers import topic_config

pytestmark = pytest.mark.unit

EXPIRED = topic_config(cleanup_policy="compact", producer_id_expiration_ms=1)
"""Producers expire 1 ms after their last batch: no batch is kept as its producer's last."""
ACTIVE = topic_config(cleanup_policy="compact", producer_id_expiration_ms=2**63 - 1)


def _round(log: LogBuilder, *, first_dirty: int, config: TopicConfig, now: int) -> RoundResult:
    segments = log.segments()
    result = clean_round(
        segments, first_dirty=first_dirty, end_offset=segments[-1].base_offset, config=config, now_ms=now
    )
    log.apply(result)
    return result


def _aborted_transaction() -> LogBuilder:
    """[0] k1 | [1-2] aborted transaction of producer 7 | [3] its abort marker | [4] k4 || [5]"""
    log = LogBuilder()
    log.rec(1, 1)
    log.txn(7, [2, 3])
    log.abort(7)
    log.rec(4, 4)
    log.roll()
    log.rec(5, 5)
    return log


def _aborted_batch_deleted_whole() -> RoundResult:
    """Producer 7 has expired: its aborted batch is deleted unread (``DELETE``, ``ABORTED_DATA``)."""
    return _round(_aborted_transaction(), first_dirty=0, config=EXPIRED, now=NOW + 2)


def _aborted_last_batch_of_an_active_producer() -> RoundResult:
    """Producer 7 is active: its aborted batch is kept as an empty header, its records read."""
    return _round(_aborted_transaction(), first_dirty=0, config=ACTIVE, now=NOW)


def _expired_abort_marker_deleted_whole() -> RoundResult:
    """[0] abort marker of a transaction without data | [1] k1 || [2] k2: the first round stamps the marker's
    horizon; the second, a day later over [2, 4), deletes it unread (``EXPIRED_MARKER``)."""
    log = LogBuilder()
    log.abort(9)
    log.rec(1, 1)
    log.roll()
    log.rec(2, 2)
    _round(log, first_dirty=0, config=EXPIRED, now=NOW + 2)
    log.rec(3, 3)
    log.roll()
    log.rec(4, 4)
    return _round(log, first_dirty=2, config=EXPIRED, now=NOW + 2 + DAY)


def _superseded_records_dropped_one_by_one() -> RoundResult:
    """[0] k1 | [1] k1 || [2]: [0] goes (no record left) after its record was read (``DELETE_EMPTY``)."""
    log = LogBuilder()
    log.rec(1, 1)
    log.rec(1, 2)
    log.roll()
    log.rec(2, 2)
    return _round(log, first_dirty=0, config=EXPIRED, now=NOW)


@dataclass(frozen=True)
class Counted:
    messages_read: int
    messages_written: int
    batches_deleted: int
    aborted_records_removed: int


@pytest.mark.parametrize(
    ("scenario", "counted"),
    [
        pytest.param(_aborted_batch_deleted_whole, Counted(3, 3, 1, 2), id="aborted_batch_deleted_whole"),
        pytest.param(
            _aborted_last_batch_of_an_active_producer,
            Counted(5, 3, 0, 2),
            id="aborted_last_batch_of_an_active_producer_is_read",
        ),
        pytest.param(
            _expired_abort_marker_deleted_whole, Counted(3, 3, 1, 0), id="expired_abort_marker_deleted_whole"
        ),
        pytest.param(
            _superseded_records_dropped_one_by_one,
            Counted(2, 1, 1, 0),
            id="batch_emptied_by_its_records_is_read",
        ),
    ],
)
def test_records_of_a_batch_deleted_whole_are_not_counted_as_read(
    scenario: Callable[[], RoundResult], counted: Counted
) -> None:
    result = scenario()
    bytes_read = result.batches.total("bytes_read")
    stats = CleanerStats.of(
        result,
        bytes_read=bytes_read,
        map_bytes_read=0,
        map_keys=result.map_keys,
        bytes_written=0,
        segments_written=0,
        segments_kept=0,
        times=PhaseTimes(),
    )

    assert (
        stats.messages_read,
        stats.messages_written,
        stats.batches_deleted,
        stats.aborted_records_removed,
    ) == (
        counted.messages_read,
        counted.messages_written,
        counted.batches_deleted,
        counted.aborted_records_removed,
    )
    assert stats.messages_dropped == counted.messages_read - counted.messages_written
    deleted = [o for o in result.batches if o.action is BatchAction.DELETED]
    assert all(o.bytes_read > 0 for o in deleted)  # a deleted batch's bytes are still read
    assert bytes_read == sum(o.bytes_read for o in result.batches)
