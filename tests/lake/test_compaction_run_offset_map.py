"""A run with ``log.cleaner.dedupe.buffer.size`` set: the round ends where Kafka's offset map fills, the
checkpoint says so, and the next run goes on from there (``compaction.map_fill``)."""

from __future__ import annotations

import pytest
from kafka_segments.storage import LocalStore
from unit.compaction_helpers import NOW

from lake.compaction_run_helpers import LakeLog, compact_config, compaction_of, read_lake, run_at

pytestmark = pytest.mark.lake

SMALLEST_BUFFER = 1024 * 1024 + 1
"""The smallest dedupe buffer a broker accepts (more than 1 MiB per thread): 43690 slots, 39321 keys."""


def test_a_full_map_ends_the_round_early_and_the_next_run_goes_on(local_store: LocalStore) -> None:
    lake = LakeLog.of()
    log = lake.log
    for start in range(0, 40_000, 1000):  # 40000 distinct keys, 1000 a batch
        log.records([(k, k) for k in range(start, start + 1000)])
    log.roll()
    log.records([(k, k) for k in range(100)])  # 40000-40099: keys 0-99 again
    log.roll()
    log.rec("active", 0)
    lake.sync(local_store)
    bounded = compact_config(broker={"log.cleaner.dedupe.buffer.size": SMALLEST_BUFFER})

    first = compaction_of(run_at(local_store, bounded, NOW + 1_000))
    # the 39322nd distinct key (offset 39321, mid-batch) finds the map full: nothing of segment 2 is mapped
    assert (first.first_uncleanable_offset, first.end_offset, first.checkpoint_after) == (
        40_100,
        39_321,
        39_321,
    )
    assert read_lake(local_store).offsets[:2] == [0, 1]

    second = compaction_of(run_at(local_store, bounded, NOW + 2_000))
    assert (second.first_dirty_offset, second.checkpoint_after) == (39_321, 40_100)
    assert read_lake(local_store).offsets[:2] == [100, 101]  # keys 0-99 superseded in segment 2
