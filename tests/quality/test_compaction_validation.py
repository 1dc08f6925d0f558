"""``validate_run`` on honest runs that compact: Kafka's cleaning rounds (and the deletion passes over what
they leave) pass every suite, and ``commit_staged`` then commits output that both our reader and
kafka-python's read back as Kafka's cleaner leaves it (see ``quality.compaction_lake`` for the log)."""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence

import pytest
from kafka_segments.lake.history import head_version
from kafka_segments.lake.reader import read_segment, resolve_manifest
from kafka_segments.pipeline.stages import commit_staged, read_run_json
from kafka_segments.state import SegmentOrigin
from kafka_segments.storage import LocalStore, ObjectStore
from kafka_segments.topic_partition import TopicPartition
from kit import FakeClock
from lake.read_helpers import iter_visible_records
from segment_quality import validate_run
from segment_quality.staged.frames import quality_frames

from quality.compaction_lake import (
    C0,
    C1,
    CD0,
    CLEANED_KEYS,
    END_OFFSET,
    T0,
    compaction_config,
    staged_compaction_run,
)

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)  # kafka/__init__ imports its admin client
    from kafka.record.memory_records import MemoryRecords

pytestmark = pytest.mark.quality

SUITES = ["retention.partitions", "retention.deletions", "compaction.partitions", "compaction.segments"]


def row_of(table: Mapping[str, Sequence[object]], tp: TopicPartition) -> dict[str, object]:
    """The row of partition ``tp`` in a per-partition table."""
    index = [(t, p) for t, p in zip(table["topic"], table["partition"], strict=True)].index(
        (tp.topic, tp.partition)
    )
    return {name: values[index] for name, values in table.items()}


def _kafka_python_keys(data: bytes) -> list[tuple[str, bytes | None]]:
    keys = []
    for batch in MemoryRecords(data):
        assert batch.validate_crc()
        keys.extend((record.key.decode(), record.value) for record in batch)
    return keys


def test_kafkas_cleaning_rounds_and_the_passes_after_them_pass_every_suite_and_commit(
    store: ObjectStore, clock: FakeClock
) -> None:
    run_id = staged_compaction_run(store, clock)
    statuses = {
        (p["topic"], p["partition"]): p["status"]
        for p in read_run_json(store, run_id, "plan.json")["compaction"]["partitions"]
    }
    # c-1 (nothing dirty by its summary) is left unread: a run over every partition reports it skipped
    assert statuses == {("c", 0): "cleaned", ("cd", 0): "cleaned"}

    report = validate_run(store, run_id, config=compaction_config())

    assert report.success, report.summary()
    assert [suite.name for suite in report.suites] == SUITES
    # c-0, cd-0, t-0 (c-1 unread); 3+3 replaced, 3 deleted; 2 live + 1
    assert [suite.rows for suite in report.suites] == [3, 9, 3, 3]
    assert commit_staged(store, run_id, clock=clock).version == 2
    head = resolve_manifest(store)
    c0 = head.partition(C0)
    assert c0 is not None
    assert [(s.base_offset, s.origin) for s in c0.segments] == [
        (0, SegmentOrigin.WRITTEN),
        (END_OFFSET, SegmentOrigin.ADOPTED),
    ]
    assert (c0.log_start_offset, c0.log_end_offset, c0.cleaner_checkpoint) == (0, 9, END_OFFSET)
    ours = [(r.key.decode(), r.value) for r in iter_visible_records(store, c0) if r.key is not None]
    theirs = [kv for segment in c0.segments for kv in _kafka_python_keys(read_segment(store, segment))]
    assert ours == theirs == CLEANED_KEYS
    cd0 = head.partition(CD0)
    assert cd0 is not None
    assert (cd0.segments, cd0.log_start_offset, cd0.cleaner_checkpoint) == ((), 9, END_OFFSET)
    assert [s.base_offset for s in (head.partition(C1) or c0).segments] == [END_OFFSET]
    assert [s.base_offset for s in (head.partition(T0) or c0).segments] == [5]


def test_the_frames_rebuild_the_log_the_deletion_passes_ran_over(
    local_store: LocalStore, clock: FakeClock
) -> None:
    """``cd-0``: the round's output was deleted again by retention.ms in the same run; the frames describe it
    from its object, as the passes saw it, and reconcile the partition's segments and bytes with it."""
    run_id = staged_compaction_run(local_store, clock)

    frames = quality_frames(local_store, run_id, config=compaction_config())

    row = row_of(frames.partitions, CD0)
    assert (row["segments_before"], row["segments_after"], row["segments_retired"]) == (4, 0, 5)
    assert row["segments_kept_plus_retired"] == 4  # 0 after - 1 written + 5 retired
    assert row["bytes_kept_plus_retired"] == row["bytes_before"]
    assert (row["max_retired_next_offset"], row["retired_is_prefix"]) == (9, True)
    deletions = frames.deletions
    cd = [i for i, topic in enumerate(deletions["topic"]) if topic == "cd"]
    assert [deletions["reason"][i] for i in cd] == ["compaction"] * 3 + ["retention.ms"] * 2
    assert [deletions["position"][i] for i in cd] == [
        0,
        1,
        2,
        0,
        1,
    ]  # input log, then the log after the round
    assert [deletions["next_offset"][i] for i in cd] == [3, 6, 8, 8, 9]
    assert f"-{run_id}.log" in str(deletions["key"][cd[3]])
    compaction = row_of(frames.compaction, CD0)
    assert (compaction["end_offset"], compaction["checkpoint_after"], compaction["round_checkpoint"]) == (
        8,
        8,
        8,
    )
    assert (compaction["records_before_round"], compaction["records_after_round"]) == (8, 5)
    assert frames.segments["live"] == (True, True, False)
    assert frames.segments["replaced_at_base"][2] == "cd-0/00000000000000000000.log"


def test_a_dry_compaction_run_is_validated_like_a_real_one_and_commits_nothing(
    local_store: LocalStore, clock: FakeClock
) -> None:
    run_id = staged_compaction_run(local_store, clock, dry_run=True)

    report = validate_run(local_store, run_id, config=compaction_config())

    assert report.success, report.summary()
    assert [suite.rows for suite in report.suites] == [3, 9, 3, 3]  # c-1 unread (above)
    assert commit_staged(local_store, run_id, clock=clock).outcome == "dry run"
    assert head_version(local_store) == 1
