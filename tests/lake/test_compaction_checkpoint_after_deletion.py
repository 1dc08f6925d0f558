"""The cleaner checkpoint the deletion passes leave (issue 21 point 2), through the whole run path.

Kafka's ``deleteOldSegments`` (retention, the log start offset) never touches ``cleaner-offset-checkpoint``:
after a round and the deletion passes of the same cleaner iteration the checkpoint is the round's end offset,
even below the new log start offset; without a round it is what it was. A run commits the same, reads such a
checkpoint as the log start offset when it picks the next range, and does not count it as a change: a rerun
at the same ``now`` commits nothing.
"""

from __future__ import annotations

import pytest
from kafka_segments.compaction.range import CheckpointState
from kafka_segments.pipeline.compaction.stage import CompactionStatus
from kafka_segments.storage import LocalStore
from manifest_files import format_1_commits
from unit.compaction_helpers import DAY, NOW

from lake.compaction_run_helpers import (
    TP,
    LakeLog,
    committed,
    compact_config,
    compaction_of,
    run_at,
    upload_cleaner_checkpoint,
)

pytestmark = pytest.mark.lake


def _log(store: LocalStore, *, rolls: tuple[int, ...], young_from: int) -> None:
    """19 single-record batches over 4 keys, a new segment at each offset of ``rolls`` (the last segment is
    the active one); offsets from ``young_from`` on are two days younger than the others."""
    lake = LakeLog.of()
    for offset in range(19):
        if offset in rolls:
            lake.log.roll()
        lake.log.rec(offset % 4, offset, timestamp=NOW + (2 * DAY if offset >= young_from else 0))
    lake.sync(store)


@pytest.mark.parametrize(
    ("rolls", "young_from", "checkpoint", "ratio", "status", "after"),
    [
        pytest.param(
            (9, 18),
            19,
            None,
            0.5,
            CompactionStatus.CLEANED,
            (19, 18),
            id="a_round_then_retention_past_its_end",
        ),
        pytest.param(
            (9,),
            9,
            3,
            0.99,
            CompactionStatus.SKIPPED,
            (9, 3),
            id="retention_past_the_checkpoint_without_a_round",
        ),
    ],
)
def test_the_deletion_passes_leave_the_cleaner_checkpoint_as_it_is(
    local_store: LocalStore,
    rolls: tuple[int, ...],
    young_from: int,
    checkpoint: int | None,
    ratio: float,
    status: CompactionStatus,
    after: tuple[int, int],
) -> None:
    """compact,delete, retention.ms one day, a run two days after the old records: a round (when the dirty
    ratio is above ``ratio``) and retention.ms in one commit; (log start offset, checkpoint) after it. The
    deletion passes leave nothing to clean, so a rerun at the same now has nothing to do: its look resets the
    checkpoint below the log start offset (as Kafka's next look stores it), which alone commits nothing. On
    a lake kept in format 1, whose runs read every partition: a format 2 rerun leaves the partition unread
    (its summary reads the checkpoint as the log start offset: the same state)."""
    _log(local_store, rolls=rolls, young_from=young_from)
    if checkpoint is not None:
        upload_cleaner_checkpoint(local_store, {TP: checkpoint})
    cfg = compact_config(cleanup_policy="compact,delete", retention_ms=DAY, min_cleanable_dirty_ratio=ratio)
    now = NOW + 2 * DAY + 1

    with format_1_commits():
        result = run_at(local_store, cfg, now)

        assert compaction_of(result).status is status
        state = committed(local_store)
        assert (state.log_start_offset, state.cleaner_checkpoint) == after
        rerun = run_at(local_store, cfg, now)
    assert rerun.committed_version is None
    again = compaction_of(rerun)
    assert (again.checkpoint_state, again.first_dirty_offset) == (CheckpointState.BELOW_LOG_START, after[0])
    assert again.checkpoint_after == after[0]
    assert committed(local_store).cleaner_checkpoint == after[1]
