"""Kafka's retention scenarios (UnifiedLogTest; the offset expiry of ``OffsetExpirationConditionImplTest``
and ``ClassicGroupTest``) through the whole ``run`` path —
recover → adopt → snapshot → plan → commit → gc — on a local lake and on S3 (moto over HTTP)."""

from __future__ import annotations

from pathlib import Path

import pytest
from kafka_segments.lake.history import manifest_versions, read_head
from kafka_segments.pipeline.delete_records_run import delete_records
from kafka_segments.pipeline.report import plan_to_dict
from kafka_segments.retention.delete_records import DeleteRecordsErrorCode, DeleteRecordsRequest
from kafka_segments.storage import ObjectStore
from kafka_segments.topic_partition import TopicPartition
from kit import T0, FakeClock, keys_outside_run

from lake.read_helpers import iter_visible_records
from lake.retention_helpers import (
    TP,
    bases,
    config,
    group,
    partition,
    record_size,
    run,
    topic_yaml,
    upload_fifteen_records,
    upload_log_start_checkpoint,
    write_snapshot,
)

pytestmark = pytest.mark.lake

DAY = 86_400_000


@pytest.mark.parametrize(
    ("records", "left"),
    [
        pytest.param(10, [5, 10], id="kafka_E1_shouldDeleteSizeBasedSegments"),
        pytest.param(15, [0, 5, 10], id="kafka_E1_shouldNotDeleteSizeBasedSegmentsWhenUnderRetentionSize"),
    ],
)
def test_kafka_e1_size_retention(store: ObjectStore, clock: FakeClock, records: int, left: list[int]) -> None:
    upload_fifteen_records(store, ts=T0)
    cfg = config(topic_yaml(retention_bytes=records * record_size()))

    result = run(store, cfg, now_ms=T0, clock=clock)

    assert bases(store) == left
    plan = result.plan.partition(TP)
    assert plan is not None
    assert {d.reason.value for d in plan.deletions} <= {"retention.bytes"}
    assert partition(store).log_start_offset == left[0]


def test_kafka_e2_time_retention_deletes_every_segment_and_keeps_the_log_end(
    store: ObjectStore, clock: FakeClock
) -> None:
    upload_fifteen_records(store, ts=10)
    result = run(store, config(topic_yaml(retention_ms=10_000)), now_ms=T0, clock=clock)

    state = partition(store)
    assert state.segments == ()
    assert (state.log_start_offset, state.log_end_offset) == (15, 15)
    head = read_head(store)
    assert head is not None
    assert sorted(r.reason for r in head.retired) == ["retention.ms"] * 3
    assert result.committed_version == head.version


def test_kafka_e2_nothing_ready_to_be_deleted(store: ObjectStore, clock: FakeClock) -> None:
    upload_fifteen_records(store, ts=T0)
    result = run(store, config(topic_yaml(retention_ms=10_000_000)), now_ms=T0, clock=clock)
    assert bases(store) == [0, 5, 10]
    plan = result.plan.partition(TP)
    assert plan is not None
    assert not plan.changed


@pytest.mark.parametrize(
    ("policy", "left"),
    [
        pytest.param(
            "compact", [0, 5, 10], id="kafka_E3_shouldNotDeleteSegmentsWhenPolicyDoesNotIncludeDelete"
        ),
        pytest.param("compact,delete", [], id="kafka_E3_shouldDeleteSegmentsReadyToBeDeleted_compact_delete"),
    ],
)
def test_kafka_e3_policy(store: ObjectStore, clock: FakeClock, policy: str, left: list[int]) -> None:
    """Kafka's test has no cleaner running: a dirty ratio of 1.0 keeps compaction out of it here too."""
    upload_fifteen_records(store, ts=10, keyed=True)
    yaml = topic_yaml(cleanup_policy=policy, retention_ms=10_000, min_cleanable_dirty_ratio=1.0)
    run(store, config(yaml), now_ms=T0, clock=clock)
    assert bases(store) == left


def test_kafka_e4_log_start_offset_breach_on_a_compacted_topic(store: ObjectStore, clock: FakeClock) -> None:
    """shouldDeleteStartOffsetBreachedSegmentsWhenPolicyDoesNotIncludeDelete: the log start offset comes from
    a copied log directory's checkpoint; the run removes the segment wholly below it."""
    upload_fifteen_records(store, ts=T0, keyed=True)
    upload_log_start_checkpoint(store, 5)

    run(store, config(topic_yaml(cleanup_policy="compact")), now_ms=T0, clock=clock)

    assert bases(store) == [5, 10]
    assert partition(store).log_start_offset == 5


@pytest.mark.parametrize(
    ("offset", "left", "log_start"),
    [
        pytest.param(1, [0, 5, 10], 1, id="kafka_E4_testLogDeletionAfterDeleteRecords_1"),
        pytest.param(6, [5, 10], 6, id="kafka_E4_testLogDeletionAfterDeleteRecords_6"),
        pytest.param(
            15, [10], 15, id="kafka_E4_testLogDeletionAfterDeleteRecords_15_keeps_the_active_segment"
        ),
        pytest.param(-1, [10], 15, id="minus_one_is_the_high_watermark"),
    ],
)
def test_kafka_e4_delete_records_then_log_start_offset_breach(
    store: ObjectStore, clock: FakeClock, offset: int, left: list[int], log_start: int
) -> None:
    upload_fifteen_records(store, ts=T0)
    cfg = config(topic_yaml())

    outcome = delete_records(store, [DeleteRecordsRequest(TP, offset)], config=cfg, now_ms=T0, clock=clock)

    assert [r.low_watermark for r in outcome.results] == [log_start]
    assert bases(store) == left
    assert partition(store).log_start_offset == log_start
    visible = [record.offset for record in iter_visible_records(store, partition(store))]
    assert visible == list(range(log_start, 15))


def test_delete_records_errors_affect_only_their_partition(store: ObjectStore, clock: FakeClock) -> None:
    upload_fifteen_records(store, ts=T0)
    requests = [
        DeleteRecordsRequest(TP, 16),
        DeleteRecordsRequest(TopicPartition("t", 1), 3),
        DeleteRecordsRequest(TP, -2),
    ]
    outcome = delete_records(store, requests, config=config(topic_yaml()), now_ms=T0, clock=clock)
    assert [r.error for r in outcome.results] == [
        DeleteRecordsErrorCode.OFFSET_OUT_OF_RANGE,
        DeleteRecordsErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        DeleteRecordsErrorCode.OFFSET_OUT_OF_RANGE,
    ]
    assert bases(store) == [0, 5, 10]


def test_delete_records_is_a_policy_violation_on_a_compact_only_topic(
    store: ObjectStore, clock: FakeClock
) -> None:
    upload_fifteen_records(store, ts=T0, keyed=True)
    cfg = config(topic_yaml(cleanup_policy="compact"))
    outcome = delete_records(store, [DeleteRecordsRequest(TP, 5)], config=cfg, now_ms=T0, clock=clock)
    assert [r.error for r in outcome.results] == [DeleteRecordsErrorCode.POLICY_VIOLATION]
    assert partition(store).log_start_offset == 0


def test_kafka_f1_offset_expiry_decides_consumed_retention(
    store: ObjectStore, clock: FakeClock, tmp_path: Path
) -> None:
    """An offset expires when now − commit timestamp >= offsets.retention (note >=): a standalone consumer
    lagging at offset 2 holds consumed retention back until the very millisecond its offset expires."""
    upload_fifteen_records(store, ts=T0 - 2 * DAY)
    retention_ms = 10_080 * 60_000
    committed_at = T0 - retention_ms + 1
    snap = write_snapshot(
        tmp_path / "offsets.json",
        [
            group("live", [(0, 15, T0)], subscribed=["t"]),
            group("solo", [(0, 2, committed_at)], state="Empty", protocol_type=None),
        ],
        taken_at_ms=T0,
    )
    cfg = config(topic_yaml(retention_commitoffset_enable=True, retention_commitoffset_ms=DAY))

    held = run(store, cfg, now_ms=T0, clock=clock, offsets_file=snap)
    plan = held.plan.partition(TP)
    assert plan is not None
    assert plan.holder is not None
    assert plan.holder.group_id == "solo"
    assert plan.holder.expires_at_ms == T0 + 1
    assert bases(store) == [0, 5, 10]

    run(store, cfg, now_ms=T0 + 1, clock=clock, offsets_file=snap)
    assert bases(store) == []
    assert partition(store).log_start_offset == 15


def test_second_run_with_the_same_now_changes_nothing(store: ObjectStore, clock: FakeClock) -> None:
    upload_fifteen_records(store, ts=10)
    cfg = config(topic_yaml(retention_ms=10_000))
    first = run(store, cfg, now_ms=T0, clock=clock)
    versions = manifest_versions(store)

    second = run(store, cfg, now_ms=T0, clock=clock)

    assert first.committed_version is not None
    assert second.committed_version is None
    assert manifest_versions(store) == versions


def test_dry_run_reports_the_same_plan_and_changes_nothing(
    store: ObjectStore, clock: FakeClock, tmp_path: Path
) -> None:
    upload_fifteen_records(store, ts=10)
    cfg = config(topic_yaml(retention_ms=10_000))
    snap = write_snapshot(tmp_path / "o.json", [group("g", [(0, 3, T0)], subscribed=["t"])], taken_at_ms=T0)
    keys_before = sorted(meta.key for meta in store.list())

    dry = run(store, cfg, now_ms=T0, clock=clock, offsets_file=snap, dry_run=True)

    assert keys_outside_run(store, dry.run_id) == keys_before  # writes only under its own run's names
    real = run(store, cfg, now_ms=T0, clock=clock, offsets_file=snap)
    assert plan_to_dict(dry.plan) == plan_to_dict(real.plan)  # the same plan (only run ids differ)
    assert plan_to_dict(dry.plan)["totals"]["segments_deleted"] == 3


def test_a_rerun_of_the_same_logical_time_uses_the_pinned_snapshot(
    store: ObjectStore, clock: FakeClock, tmp_path: Path
) -> None:
    upload_fifteen_records(store, ts=T0 - 2 * DAY)
    cfg = config(topic_yaml(retention_commitoffset_enable=True, retention_commitoffset_ms=DAY))
    snap = write_snapshot(tmp_path / "o.json", [group("g", [(0, 7, T0)], subscribed=["t"])], taken_at_ms=T0)
    first = run(store, cfg, now_ms=T0, clock=clock, offsets_file=snap)
    assert first.offsets is not None
    assert bases(store) == [5, 10]

    rerun = run(store, cfg, now_ms=T0, clock=clock)

    assert rerun.offsets is not None
    assert rerun.offsets.origin == "pinned"
    assert rerun.offsets.snapshot_id == first.offsets.snapshot_id
    assert rerun.committed_version is None


def test_a_quarantined_partition_is_left_alone_and_reported(store: ObjectStore, clock: FakeClock) -> None:
    upload_fifteen_records(store, ts=10)
    cfg = config(topic_yaml(retention_ms=10_000))
    run(store, cfg, now_ms=20, clock=clock)  # adopts; nothing is old enough yet
    store.put("t-0/00000000000000000020.log", b"\x00" * 30)  # a damaged upload after the log end

    result = run(store, cfg, now_ms=T0, clock=clock)

    plan = result.plan.partition(TP)
    assert plan is not None
    assert plan.skipped is not None
    assert "quarantined" in plan.skipped
    assert result.committed_version is None
    assert bases(store) == [0, 5, 10]
