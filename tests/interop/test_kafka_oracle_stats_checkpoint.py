"""Against Kafka's own cleaner (``KAFKA_ORACLE``): the round's statistics when a batch is deleted whole, and
the cleaner checkpoint the deletion passes leave (issue 21, points 1 and 2).

Each test builds a log directory with the project's builder, cleans it with Kafka's code and with a run
(``fidelity.sides.side_by_side``, the one oracle harness), and compares the segments (bytes, batch headers,
records), ``cleaner-offset-checkpoint`` and the statistics.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from fidelity.sides import DAY, T0, TP, needs_oracle, side_by_side, write_log_dir
from unit.compaction_helpers import LogBuilder

pytestmark = [pytest.mark.lake, needs_oracle]


def test_an_aborted_batch_deleted_whole_is_counted_as_kafka_counts_it(
    tmp_path: Path,
) -> None:
    """Producer 7's aborted batch [1-2] is not its last batch of an active producer (7 expired a day ago):
    ``filterTo`` deletes it unread: its bytes are read, its 2 records are not (messages read 7, not 9)."""
    log = LogBuilder(timestamp=T0)
    log.rec(1, 1)
    log.txn(7, [2, 3])
    log.abort(7)
    log.records([(4, 4), (1, 5)])
    log.txn(8, [6])
    log.commit(8)
    log.rec(9, 9)
    log.roll()
    log.rec(10, 10)
    log_dir = write_log_dir(tmp_path / "in", log.chunks)

    seen = side_by_side(log_dir, tmp_path, now=T0 + 2 * DAY, props={"cleanup.policy": "compact"})

    stats, kafka = seen.compaction["stats"], seen.kafka["stats"]
    assert (stats["messages_read"], stats["messages_written"]) == (kafka["messages_read"], 6)
    assert kafka["messages_read"] == 7
    assert stats["messages_dropped"] == kafka["messages_read"] - kafka["messages_written"]
    assert (stats["bytes_read"], stats["bytes_written"]) == (kafka["bytes_read"], kafka["bytes_written"])
    assert seen.compaction["end_offset"] == seen.kafka["end_offset"]
    assert seen.exported_segments == seen.kafka_segments
    assert seen.exported_cleaner_checkpoint == seen.kafka_cleaner_checkpoint == {TP: 9}


def test_a_round_then_retention_past_its_end_leaves_the_checkpoint_at_the_round_end(
    tmp_path: Path,
) -> None:
    """compact,delete: the round ends at the active segment (18); retention.ms then deletes every segment,
    the active one too, and the log start offset becomes 19: Kafka's checkpoint stays 18."""
    log = LogBuilder(timestamp=T0)
    for offset in range(19):
        if offset in (9, 18):
            log.roll()
        log.rec(offset % 4, offset)
    log_dir = write_log_dir(tmp_path / "in", log.chunks)
    topic = {"cleanup.policy": "compact,delete", "retention.ms": str(DAY)}

    seen = side_by_side(log_dir, tmp_path, now=T0 + 2 * DAY, props=topic)

    assert (seen.kafka["end_offset"], seen.kafka["after"]["log_start_offset"]) == (18, 19)
    assert seen.compaction["end_offset"] == 18
    assert seen.exported_cleaner_checkpoint == seen.kafka_cleaner_checkpoint == {TP: 18}
    assert seen.exported_segments == seen.kafka_segments


def test_the_log_start_offset_moving_past_the_checkpoint_without_a_round_leaves_it(
    tmp_path: Path,
) -> None:
    """compact,delete, checkpoint 3, no round (dirty ratio below 0.99): retention.ms deletes the old segment
    [0-5], the log start offset becomes 6; Kafka's checkpoint stays 3."""
    log = LogBuilder(timestamp=T0)
    for offset in range(6):
        log.rec(offset % 2, offset)
    log.roll()
    for offset in range(6, 12):
        log.rec(offset % 2, offset, timestamp=T0 + 2 * DAY)
    log.roll()
    log.rec(0, 12, timestamp=T0 + 2 * DAY)
    log_dir = write_log_dir(tmp_path / "in", log.chunks, cleaner_checkpoint=3)
    topic = {
        "cleanup.policy": "compact,delete",
        "retention.ms": str(DAY),
        "min.cleanable.dirty.ratio": "0.99",
    }

    seen = side_by_side(log_dir, tmp_path, now=T0 + 2 * DAY + 1, props=topic)

    assert (seen.kafka["eligible"], seen.kafka["after"]["log_start_offset"]) == (False, 6)
    assert seen.compaction["status"] == "skipped"
    assert seen.exported_cleaner_checkpoint == seen.kafka_cleaner_checkpoint == {TP: 3}
    assert seen.exported_segments == seen.kafka_segments
