"""What a run with compaction commits (docs/compaction.md): compact,delete as one round then the deletion
passes in ONE commit, the run folder's plan and report, a partition quarantined by bad data while the others
are cleaned, a dry run that writes nothing, and a rerun at the same ``now`` that finds nothing to change.
On a local lake and on S3 (moto over HTTP) through the ``store`` fixture."""

from __future__ import annotations

import json

import pytest
from kafka_segments.lake.history import manifest_versions
from kafka_segments.lake.run_folder import read_run_json
from kafka_segments.pipeline.compaction.stage import CompactionStatus
from kafka_segments.records import Record, build_batch
from kafka_segments.state import SegmentOrigin
from kafka_segments.storage import ObjectStore
from kafka_segments.topic_partition import TopicPartition
from kit import keys_outside_run
from unit.compaction_helpers import DAY, NOW

from lake.compaction_run_helpers import (
    TP,
    LakeLog,
    cleaned,
    committed,
    compact_config,
    compaction_of,
    latest_version,
    left_unread,
    object_keys,
    read_lake,
    retired_reasons,
    run_at,
    undecodable,
)

pytestmark = pytest.mark.lake


def _old_and_new_segments(store: ObjectStore) -> LakeLog:
    """Segment [0-4]: unique keys 0-4, three days old; segment [5-9]: keys 5, 6, 5, 7, 8 at NOW; an empty
    active segment at 10."""
    lake = LakeLog.of(timestamp=NOW - 3 * DAY)
    for key in range(5):
        lake.log.rec(key, key)
    lake.log.roll()
    lake.log.timestamp = NOW
    for key in (5, 6, 5, 7, 8):
        lake.log.rec(key, lake.log.next_offset)
    lake.log.roll()
    lake.sync(store)
    return lake


def test_compact_delete_cleans_then_deletes_in_one_commit(store: ObjectStore) -> None:
    """cleanup.policy=compact,delete: the round runs first (Kafka's cleaner thread: cleanFilthiestLog), then
    the deletion passes over what it left (deleteOldSegments) — one commit: the manifest version moves by
    exactly one, the retired objects carry both reasons, and plan.json and report.json carry the
    compaction."""
    _old_and_new_segments(store)
    run_at(store, compact_config(min_cleanable_dirty_ratio=1.0), NOW)  # adopts; nothing eligible
    before = latest_version(store)
    cfg = compact_config(cleanup_policy="compact,delete", retention_ms=2 * DAY, internal_segment_bytes=400)

    result = run_at(store, cfg, NOW)  # two groups: [0-4] and [5-9] (each ~350 bytes)

    assert manifest_versions(store)[-1] == before + 1 == result.committed_version
    reasons = retired_reasons(store)
    assert reasons == {
        "t-0/00000000000000000000.log": "retention.ms",
        "t-0/00000000000000000005.log": "compaction",
    }
    state = committed(store)
    assert state.log_start_offset == 5
    assert [s.base_offset for s in state.segments] == [5, 10]
    assert state.segments[0].origin is SegmentOrigin.WRITTEN
    outcome = cleaned(result)
    assert outcome.stats is not None
    assert outcome.stats.segments_kept == 1  # [0-4] unchanged, then deleted
    assert read_lake(store).offsets == [6, 7, 8, 9]
    plan = read_run_json(store, result.run_id, "plan.json")
    assert plan["compaction"] == json.loads(json.dumps(result.compaction.to_dict()))
    report = read_run_json(store, result.run_id, "report.json")
    assert [p["status"] for p in report["compaction"]["partitions"]] == ["cleaned"]


def test_a_corrupt_segment_quarantines_its_partition_and_the_others_are_still_cleaned(
    store: ObjectStore,
) -> None:
    """A round that fails on a partition's data marks it uncleanable for the run (as Kafka's
    ``LogCleanerManager.markPartitionUncleanable``) — it is reported with the object and offset at fault,
    nothing of it changes (no round, no deletion pass, its objects untouched) — while every other partition
    is cleaned in the same commit. A damaged upload (bad CRC) is quarantined earlier, by adoption, with the
    same effect on compaction."""
    good = LakeLog.of(tp=TopicPartition("t", 0))
    bad = LakeLog.of(tp=TopicPartition("t", 1))
    late = LakeLog.of(tp=TopicPartition("t", 2))
    for lake in (good, bad, late):
        lake.log.rec(1, "a")
        lake.log.rec(1, "b")
    bad.log.append(undecodable(build_batch([Record(2, NOW, b"1", b"c")])))
    for lake in (good, bad, late):
        lake.log.roll()
        lake.sync(store)
    cfg = compact_config(cleanup_policy="compact,delete", retention_ms=DAY)

    result = run_at(store, cfg, NOW)

    assert compaction_of(result, good.tp).status is CompactionStatus.CLEANED
    failed = compaction_of(result, bad.tp)
    assert failed.status is CompactionStatus.QUARANTINED
    assert failed.error is not None
    assert "t-1/00000000000000000000.log" in failed.error
    assert "offset 2" in failed.error
    adopted = {s.topic_partition: s for s in result.adoption.partitions}
    assert committed(store, bad.tp) == adopted[bad.tp]
    plan = result.plan.partition(bad.tp)
    assert plan is not None
    assert plan.skipped is not None
    assert "uncleanable" in plan.skipped
    assert result.compaction.to_dict()["totals"]["quarantined"] == 1

    # a later run: the bad partition stays as it is, a damaged upload to another partition is quarantined by
    # adoption, and new dirty data of the good partition is cleaned
    bad_bytes = store.get("t-1/00000000000000000000.log")
    late_state = committed(store, late.tp)
    store.put("t-2/00000000000000000003.log", b"\x00" * 8 + b"\x00\x00\x00\x40" + b"\x02" * 80)
    good.log.rec(1, "d")
    good.log.roll()
    good.sync(store)

    later = run_at(store, cfg, NOW + 1_000)

    assert cleaned(later, good.tp).end_offset == 3
    assert compaction_of(later, bad.tp).status is CompactionStatus.QUARANTINED
    assert later.compaction.partition(late.tp) is None
    assert [q.topic_partition for q in later.adoption.quarantined] == [late.tp]
    assert committed(store, late.tp) == late_state
    assert committed(store, bad.tp) == adopted[bad.tp]
    assert store.get("t-1/00000000000000000000.log") == bad_bytes


def test_a_dry_run_writes_only_its_own_objects_and_reports_the_same_round(store: ObjectStore) -> None:
    """``--dry-run`` computes the same round (same decisions, counts, checkpoint) and writes no object outside
    its own run's names: no manifest, nothing a reader sees (docs/lake.md, "Dry runs")."""
    _old_and_new_segments(store)
    cfg = compact_config()
    keys = sorted(object_keys(store))

    dry = run_at(store, cfg, NOW, dry_run=True)

    assert keys_outside_run(store, dry.run_id) == keys
    assert dry.committed_version is None
    real = run_at(store, cfg, NOW)

    def comparable(result: object) -> dict[str, object]:
        document = compaction_of(result).to_dict()  # type: ignore[arg-type]
        stats = dict(document.pop("stats"))
        stats.pop("times")
        document.pop("segments_written")
        return {**document, "stats": stats}

    assert comparable(dry) == comparable(real)
    assert compaction_of(dry).status is CompactionStatus.CLEANED
    assert committed(store).cleaner_checkpoint == 10


def test_a_second_run_at_the_same_now_changes_nothing(store: ObjectStore) -> None:
    """Idempotence (the run's logical clock): after a round the checkpoint is at the active segment, the dirty
    ratio is 0 and nothing else is due, so a rerun at the same now neither cleans nor commits nor writes
    segments."""
    lake = _old_and_new_segments(store)
    lake.log.txn(3, [1, 2])
    lake.log.abort(3)
    lake.log.tomb(4)
    lake.log.roll()
    lake.sync(store)
    cfg = compact_config(cleanup_policy="compact,delete", retention_ms=7 * DAY)
    first = run_at(store, cfg, NOW)
    assert first.committed_version is not None
    versions = manifest_versions(store)
    segment_keys = {key for key in object_keys(store) if key.startswith("t-0/")}
    view = read_lake(store)

    second = run_at(store, cfg, NOW)

    assert second.committed_version is None
    assert manifest_versions(store) == versions
    assert {key for key in object_keys(store) if key.startswith("t-0/")} == segment_keys
    left_unread(second)  # nothing dirty by its summary (a run over every partition: below the dirty ratio)
    assert read_lake(store) == view
    assert committed(store, TP).cleaner_checkpoint == lake.bases[-1]
