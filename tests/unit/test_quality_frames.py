"""``quality_frames``: the columns the validation suites read, from the run's files (no GX, no pandas)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pytest
from kafka_segments.config import Config, parse_config
from kafka_segments.errors import RunStateError
from kafka_segments.lake.layout import staged_manifest_key
from kafka_segments.lake.run_folder import write_run_json
from kafka_segments.state import Manifest, PartitionState, RetiredObject, SegmentEntry, SegmentOrigin
from kafka_segments.storage import LocalStore
from kafka_segments.topic_partition import TopicPartition
from kit import FakeClock
from lake.retention_helpers import record_size
from manifest_files import format_1_commits
from quality.helpers import NOW, QUIET, four_pass_config, four_pass_lake, stage
from segment_quality.staged.compaction import log_changes
from segment_quality.staged.frames import (
    DELETION_COLUMNS,
    NOT_PLANNED,
    PARTITION_COLUMNS,
    PLANNED,
    SKIPPED,
    PlanEntry,
    QualityInputError,
    TopicLimits,
    quality_frames,
)
from segment_quality.staged.retention import Row, retention_rows

pytestmark = pytest.mark.unit

R = record_size() * 5
"""The size of one segment of the four-pass lake (five single-record batches)."""


def build_rows(
    before: Manifest,
    after: Manifest,
    plan: Mapping[TopicPartition, PlanEntry],
    *,
    config: Config,
    now_ms: int,
) -> tuple[list[Row], list[Row]]:
    """The partition and deletion rows of ``before`` (input state) -> ``after`` (staged manifest)."""
    return retention_rows(log_changes(before, after, {}, {}), plan, config=config, now_ms=now_ms)


def _segment(
    tp: TopicPartition, base: int, last: int | None, *, size: int = 100, ts: int = 10
) -> SegmentEntry:
    return SegmentEntry(
        key=f"{tp.dir_name}/{base:020d}.log",
        base_offset=base,
        last_offset=last,
        size=size,
        sha256="0" * 64,
        etag="e",
        record_count=0 if last is None else last - base + 1,
        batch_count=1,
        max_timestamp_ms=ts,
        first_batch_max_timestamp_ms=ts,
        last_modified_ms=ts,
        origin=SegmentOrigin.ADOPTED,
        run_id="r0",
    )


def _manifest(version: int, *states: PartitionState, retired: tuple[RetiredObject, ...] = ()) -> Manifest:
    return Manifest(version, version - 1 or None, "r1", "run", 0, NOW, tuple(states), retired)


def _retired(segment: SegmentEntry, tp: TopicPartition, reason: str, *, version: int = 2) -> RetiredObject:
    return RetiredObject(segment.key, tp, version, 0, 60_000, reason)


def _config(text: str) -> Config:
    return parse_config(text, source="test.yaml")


def test_a_four_pass_run_gives_one_row_per_partition_and_per_retired_segment(
    tmp_path: Path, clock: FakeClock
) -> None:
    store = LocalStore(tmp_path / "lake")
    with format_1_commits():  # a format 1 base: the run reads t-1 too (format 2 would leave it unread)
        snapshot = four_pass_lake(store, tmp_path, clock)
    run_id = stage(store, four_pass_config(), clock, snapshot=snapshot)

    frames = quality_frames(store, run_id, config=four_pass_config())

    assert frames.staged
    assert set(frames.partitions) == set(PARTITION_COLUMNS)
    assert set(frames.deletions) == set(DELETION_COLUMNS)
    assert (frames.partition_rows, frames.deletion_rows) == (2, 4)
    t0 = {name: values[0] for name, values in frames.partitions.items()}
    assert t0 == {
        "topic": "t",
        "partition": 0,
        "plan_status": PLANNED,
        "old_log_start_offset": 5,
        "new_log_start_offset": 20,
        "log_end_offset": 30,
        "new_log_end_offset": 30,
        "segments_before": 6,
        "segments_after": 2,
        "segments_retired": 4,
        "segments_added": 0,
        "segments_kept_plus_retired": 6,
        "bytes_before": 6 * R,
        "bytes_after": 2 * R,
        "bytes_retired": 4 * R,
        "bytes_kept_plus_retired": 6 * R,
        "min_kept_base_offset": 20,
        "max_retired_next_offset": 20,
        "retired_is_prefix": True,
        "consumed_bound": 15,
    }
    assert frames.partitions["partition"][1] == QUIET.partition
    assert frames.partitions["segments_retired"][1] == 0
    assert frames.partitions["consumed_bound"][1] == 0  # the group has no offset there: pinned to the start
    deletions = frames.deletions
    assert deletions["reason"] == ("log-start-offset", "retention.bytes", "consumed", "retention.ms")
    assert deletions["position"] == (0, 1, 2, 3)
    assert deletions["last_offset"] == (4, 9, 14, 19)
    assert deletions["following_base_offset"] == (5, 10, 15, 20)
    assert deletions["bytes_after_segment"] == (5 * R, 4 * R, 3 * R, 2 * R)
    assert set(deletions["log_start_offset_bound"]) == {5}
    assert set(deletions["retention_bytes"]) == {4 * R}
    assert set(deletions["consumed_bound"]) == {15}
    assert set(deletions["consumed_limit_timestamp_ms"]) == {NOW}  # retention.commitoffset.ms = 0
    assert set(deletions["limit_timestamp_ms"]) == {25}  # now - retention.ms = NOW - (NOW - 25)
    assert set(deletions["largest_timestamp_ms"]) == {10}


def test_a_run_that_staged_nothing_gives_empty_frames(tmp_path: Path, clock: FakeClock) -> None:
    from kafka_segments.lake.adopt_run import adopt
    from quality.helpers import upload_partition

    store = LocalStore(tmp_path / "lake")
    upload_partition(store, QUIET, (NOW, NOW))
    adopt(store, now_ms=NOW, clock=clock)
    run_id = stage(store, Config.default(), clock)

    frames = quality_frames(store, run_id, config=Config.default())

    assert not frames.staged
    assert (frames.partition_rows, frames.deletion_rows) == (0, 0)
    assert set(frames.deletions) == set(DELETION_COLUMNS)


def test_a_staged_manifest_that_vanished_is_an_input_error(tmp_path: Path, clock: FakeClock) -> None:
    store = LocalStore(tmp_path / "lake")
    snapshot = four_pass_lake(store, tmp_path, clock)
    run_id = stage(store, four_pass_config(), clock, snapshot=snapshot)
    store.delete(staged_manifest_key(run_id))

    with pytest.raises(QualityInputError, match="staged no manifest"):
        quality_frames(store, run_id, config=four_pass_config())


def test_a_run_that_was_not_executed_is_a_run_state_error(tmp_path: Path) -> None:
    store = LocalStore(tmp_path / "lake")
    write_run_json(store, "r1", "request.json", {"run_id": "r1", "now_ms": NOW, "dry_run": False})

    with pytest.raises(RunStateError, match=r"has no staged\.json"):
        quality_frames(store, "r1", config=Config.default())


def test_limits_are_none_for_passes_the_topic_does_not_run() -> None:
    compact = _config("topics:\n  t:\n    cleanup.policy: compact\n")
    no_cleaner = _config("broker:\n  log.cleaner.enable: false\ntopics:\n  t:\n    cleanup.policy: compact\n")
    unlimited = _config("topics:\n  t:\n    retention.ms: -1\n    retention.bytes: -1\n")
    consumed = _config(
        "topics:\n  t:\n    retention.ms: 1000\n    retention.bytes: 7\n"
        "    retention.commitoffset.enable: true\n    retention.commitoffset.ms: 400\n"
    )

    assert TopicLimits.of(compact.for_topic("t"), now_ms=NOW) == TopicLimits(True, None, None, None)
    assert TopicLimits.of(no_cleaner.for_topic("t"), now_ms=NOW) == TopicLimits(False, None, None, None)
    assert TopicLimits.of(unlimited.for_topic("t"), now_ms=NOW) == TopicLimits(True, None, None, None)
    assert TopicLimits.of(consumed.for_topic("t"), now_ms=NOW) == TopicLimits(True, 7, NOW - 400, NOW - 1000)


def test_a_retired_key_that_was_not_live_has_no_segment_columns() -> None:
    tp = TopicPartition("t", 0)
    live = (_segment(tp, 0, 9), _segment(tp, 10, 19))
    stranger = _segment(tp, 50, 59)
    before = _manifest(1, PartitionState(tp, 0, 20, live))
    after = _manifest(
        2, PartitionState(tp, 10, 20, live[1:]), retired=(_retired(stranger, tp, "retention.ms"),)
    )

    partitions, deletions = build_rows(before, after, {}, config=Config.default(), now_ms=NOW)

    assert [row["key"] for row in deletions] == [stranger.key]
    assert deletions[0]["position"] is None
    assert deletions[0]["base_offset"] is None
    assert deletions[0]["largest_timestamp_ms"] is None
    assert partitions[0]["plan_status"] == NOT_PLANNED
    assert partitions[0]["bytes_retired"] == 0
    assert partitions[0]["max_retired_next_offset"] is None
    assert partitions[0]["segments_kept_plus_retired"] == 2
    assert partitions[0]["retired_is_prefix"] is False


def test_only_this_runs_retired_entries_are_rows_and_they_come_in_log_order() -> None:
    tp = TopicPartition("t", 0)
    live = tuple(_segment(tp, base, base + 9) for base in (0, 10, 20, 30))
    older = _retired(_segment(tp, 0, 0), tp, "retention.ms", version=1)  # carried from an earlier commit
    mine = (_retired(live[2], tp, "retention.ms"), _retired(live[0], tp, "log-start-offset"))
    before = _manifest(1, PartitionState(tp, 5, 40, live))
    after = _manifest(2, PartitionState(tp, 10, 40, (live[1], live[3])), retired=(older, *mine))
    plan = {tp: PlanEntry(SKIPPED, None)}

    partitions, deletions = build_rows(before, after, plan, config=Config.default(), now_ms=NOW)

    assert [row["base_offset"] for row in deletions] == [0, 20]
    assert [row["position"] for row in deletions] == [0, 2]
    assert partitions[0]["plan_status"] == SKIPPED
    assert partitions[0]["retired_is_prefix"] is False
    assert partitions[0]["max_retired_next_offset"] == 30
    assert partitions[0]["min_kept_base_offset"] == 10


def test_an_empty_segment_holds_offsets_up_to_the_next_segments_base() -> None:
    tp = TopicPartition("t", 0)
    empty, last = _segment(tp, 10, None, size=0, ts=-1), _segment(tp, 15, 19)
    live = (_segment(tp, 0, 9), empty, last)
    before = _manifest(1, PartitionState(tp, 0, 20, live))
    retired = tuple(_retired(s, tp, "consumed") for s in live[:2])
    after = _manifest(2, PartitionState(tp, 15, 20, (last,)), retired=retired)

    _partitions, deletions = build_rows(before, after, {}, config=Config.default(), now_ms=NOW)

    assert [row["last_offset"] for row in deletions] == [9, 14]  # Kafka's upper bound: the next base
    assert [row["next_offset"] for row in deletions] == [10, 10]
    assert deletions[1]["largest_timestamp_ms"] == -1  # no batch timestamp and mtime -1 in this fixture


def test_a_partition_missing_from_either_state_has_none_on_that_side() -> None:
    tp, gone = TopicPartition("t", 0), TopicPartition("t", 1)
    before = _manifest(1, PartitionState(tp, 0, 10, (_segment(tp, 0, 9),)), PartitionState(gone, 0, 0, ()))
    after = _manifest(2, PartitionState(tp, 0, 10, before.partitions[0].segments))

    partitions, _deletions = build_rows(before, after, {}, config=Config.default(), now_ms=NOW)

    assert partitions[1]["partition"] == 1
    assert partitions[1]["new_log_start_offset"] is None
    assert partitions[1]["segments_after"] is None
    assert partitions[1]["segments_kept_plus_retired"] is None


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()
