"""Garbage collection on both backends: retired objects after their delay, held by retained manifests,
orphans of runs that can no longer commit, manifest retention, dry runs, idempotence and failed deletes."""

from __future__ import annotations

import json

import pytest
from kafka_segments.errors import CommitConflictError, ManifestFormatError
from kafka_segments.lake import commit_run
from kafka_segments.lake.gc import collect_garbage
from kafka_segments.lake.gc_report import GcReport
from kafka_segments.lake.history import manifest_versions, read_manifest
from kafka_segments.lake.layout import (
    CHECKPOINT_KEYS,
    index_keys,
    manifest_key,
    run_record_key,
    segment_key,
    staged_manifest_key,
)
from kafka_segments.segment.files import FileKind
from kafka_segments.storage import ObjectStore
from kit import FakeClock, make_segment, upload_segment

from lake.gc_helpers import (
    DELAY_MS,
    TP,
    FailingDeletes,
    adopt,
    append,
    commit,
    head_of,
    keys,
    mtimes,
    run_keys,
    stage,
    start,
    write,
)

pytestmark = pytest.mark.lake

HOUR_MS = 3_600_000
FAR_FUTURE_MS = 4_000_000_000_000  # 2096


def gc(
    store: ObjectStore, now_ms: int, *, retain_manifests: int = 10, orphan_min_age_ms: int = HOUR_MS
) -> GcReport:
    """A real (not dry) gc pass at ``now_ms``."""
    return collect_garbage(
        store,
        now_ms=now_ms,
        dry_run=False,
        retain_manifests=retain_manifests,
        orphan_min_age_ms=orphan_min_age_ms,
    )


def lost_run(store: ObjectStore, clock: FakeClock) -> str:
    """Two runs build on the head; the first commits, the second loses. Returns the loser's run id."""
    (winner, base), (loser, same_base) = start(store, clock), start(store, clock)
    live = list(base.partitions[0].segments) if base is not None else []
    offset = live[-1].next_offset if live else 0
    commit(store, clock, winner, base, [*live, write(store, clock, winner, offset)])
    stage(store, loser, same_base, [*live, write(store, clock, loser, offset)])
    with pytest.raises(CommitConflictError):
        commit_run(store, loser.run_id, clock=clock)
    return loser.run_id


def test_retired_object_is_deleted_only_after_its_delay_with_its_index_siblings(
    store: ObjectStore, clock: FakeClock
) -> None:
    run, base = start(store, clock)
    plain, written = adopt(store, clock, run, 0), write(store, clock, run, 6)
    commit(store, clock, run, base, [plain, written])
    clock.advance(1000)
    head = append(store, clock, retire_oldest=2)
    retired_at = head.committed_at_ms
    doomed = {plain.key, *index_keys(plain.key), written.key, *index_keys(written.key)} - {
        index_keys(plain.key)[2],  # Kafka writes no .txnindex without an aborted transaction
        index_keys(written.key)[2],
    }
    assert doomed <= keys(store)

    early = gc(store, retired_at + DELAY_MS - 1, retain_manifests=1)

    assert {item.key for item in early.waiting} == {plain.key, written.key}
    assert {item.delete_after_ms for item in early.waiting} == {retired_at + DELAY_MS}
    assert early.deleted == ()
    assert doomed <= keys(store)

    due = gc(store, retired_at + DELAY_MS, retain_manifests=1)

    assert [(item.key, item.reason, item.retired_in_version) for item in due.deleted] == [
        (plain.key, "retention.ms", 2),
        (written.key, "retention.ms", 2),
    ]
    assert set(due.deleted_keys) == doomed
    assert not doomed & keys(store)
    assert head.partitions[0].segments[0].key in keys(store)


def test_retired_object_live_in_a_retained_manifest_is_held_until_that_manifest_leaves_retention(
    store: ObjectStore, clock: FakeClock
) -> None:
    first = append(store, clock)
    old = first.partitions[0].segments[0].key
    append(store, clock, retire_oldest=1)
    clock.advance(DELAY_MS)

    held = gc(store, clock(), retain_manifests=2)

    assert [(item.key, item.held_by_version) for item in held.held] == [(old, 1)]
    assert held.deleted == ()
    assert held.deleted_manifests == ()
    assert old in keys(store)
    assert "live in version 1" in held.to_text()

    append(store, clock)  # version 3: version 1 leaves a retention of 2
    released = gc(store, clock(), retain_manifests=2)

    assert [item.key for item in released.deleted] == [old]
    assert released.deleted_manifests == (1,)
    assert old not in keys(store)
    assert manifest_versions(store) == [2, 3]


def test_plain_name_objects_that_are_not_retired_are_never_deleted(
    store: ObjectStore, clock: FakeClock
) -> None:
    append(store, clock)
    waiting_for_adoption = upload_segment(store, TP, make_segment(100))
    stray_index = segment_key(TP, 500, FileKind.INDEX)
    store.put(stray_index, b"\0" * 8)
    store.put("orders-0/notes.txt", b"not a segment")
    store.put("README", b"not a segment either")
    before = keys(store)
    assert waiting_for_adoption in before
    assert set(CHECKPOINT_KEYS) <= before

    report = gc(store, FAR_FUTURE_MS, retain_manifests=1, orphan_min_age_ms=0)

    assert report.deleted_keys == ()
    assert keys(store) == before


def test_orphans_of_a_run_that_lost_a_commit_conflict_are_swept_after_min_age_not_before(
    store: ObjectStore, clock: FakeClock
) -> None:
    append(store, clock)
    loser = lost_run(store, clock)
    orphans = run_keys(store, loser)
    assert len(orphans) == 3
    written = mtimes(store, orphans)
    first_written, last_written = written[0], written[-1]

    young = gc(store, first_written + HOUR_MS - 1, orphan_min_age_ms=HOUR_MS)

    assert {item.key for item in young.orphans_left} == orphans
    assert all("ms old" in item.why for item in young.orphans_left)
    assert young.swept == ()
    assert run_keys(store, loser) == orphans

    old = gc(store, last_written + HOUR_MS, orphan_min_age_ms=HOUR_MS)

    assert {item.key for item in old.swept} == orphans
    assert {item.run_id for item in old.swept} == {loser}
    assert all("lost: version 2 was committed by run" in item.why for item in old.swept)
    assert run_keys(store, loser) == set()
    assert run_record_key(loser) in keys(store)
    assert staged_manifest_key(loser) in keys(store)


def test_objects_of_a_run_in_progress_are_never_swept(store: ObjectStore, clock: FakeClock) -> None:
    append(store, clock)
    run, _ = start(store, clock)
    write(store, clock, run, head_of(store).partitions[0].log_end_offset)
    pending = run_keys(store, run.run_id)

    report = gc(store, FAR_FUTURE_MS, orphan_min_age_ms=0)

    assert report.swept == ()
    assert {item.key for item in report.orphans_left} == pending
    assert all("in progress" in item.why for item in report.orphans_left)
    assert run_keys(store, run.run_id) == pending


def test_objects_of_a_run_without_record_are_swept_only_after_min_age(
    store: ObjectStore, clock: FakeClock
) -> None:
    append(store, clock)
    ghost = segment_key(TP, 6, FileKind.LOG, run_id="ghost-run")
    store.put(ghost, make_segment(6).log)
    written_at = store.head(ghost).last_modified_ms

    young = gc(store, written_at + HOUR_MS - 1, orphan_min_age_ms=HOUR_MS)
    assert [item.key for item in young.orphans_left] == [ghost]
    assert ghost in keys(store)

    old = gc(store, written_at + HOUR_MS, orphan_min_age_ms=HOUR_MS)
    assert [(item.key, item.why) for item in old.swept] == [(ghost, "run ghost-run has no run record")]
    assert ghost not in keys(store)


def test_manifest_retention_keeps_the_newest_versions_and_never_the_head(
    store: ObjectStore, clock: FakeClock
) -> None:
    for _ in range(5):
        append(store, clock)

    three = gc(store, clock(), retain_manifests=3)
    assert three.retained_versions == (3, 4, 5)
    assert three.deleted_manifests == (1, 2)
    assert manifest_versions(store) == [3, 4, 5]

    none = gc(store, clock(), retain_manifests=0)
    assert none.deleted_manifests == (3, 4)
    assert manifest_versions(store) == [5]
    assert head_of(store).version == 5


def _messy_lake(store: ObjectStore, clock: FakeClock) -> tuple[str, str]:
    """A due retired segment, a lost run's orphans and old manifests. Returns (retired key, loser)."""
    first = append(store, clock)
    append(store, clock, retire_oldest=1)
    loser = lost_run(store, clock)
    clock.advance(DELAY_MS)
    return first.partitions[0].segments[0].key, loser


def test_dry_run_deletes_nothing_and_reports_what_a_real_run_deletes(
    store: ObjectStore, clock: FakeClock
) -> None:
    retired, loser = _messy_lake(store, clock)
    before = keys(store)

    dry = collect_garbage(store, now_ms=FAR_FUTURE_MS, retain_manifests=1, orphan_min_age_ms=0)

    assert dry.dry_run
    assert keys(store) == before
    assert retired in dry.deleted_keys
    assert run_keys(store, loser) <= set(dry.deleted_keys)
    assert manifest_key(1) in dry.deleted_keys
    assert "would delete" in dry.to_text()

    real = gc(store, FAR_FUTURE_MS, retain_manifests=1, orphan_min_age_ms=0)

    assert sorted(real.deleted_keys) == sorted(dry.deleted_keys)
    assert keys(store) == before - set(dry.deleted_keys)
    assert json.loads(json.dumps(real.to_dict()))["deleted_manifests"] == [1, 2]


def test_second_gc_is_a_no_op(store: ObjectStore, clock: FakeClock) -> None:
    retired, _ = _messy_lake(store, clock)
    assert gc(store, FAR_FUTURE_MS, retain_manifests=1, orphan_min_age_ms=0).deleted_keys
    after_first = keys(store)

    second = gc(store, FAR_FUTURE_MS, retain_manifests=1, orphan_min_age_ms=0)

    assert second.deleted_keys == ()
    assert second.already_gone == (retired,)
    assert second.ok
    assert keys(store) == after_first


@pytest.mark.parametrize("named_with_prefix", [False, True])
def test_delete_failure_is_reported_per_key_and_the_rest_is_deleted(
    store: ObjectStore, clock: FakeClock, named_with_prefix: bool
) -> None:
    append(store, clock)
    append(store, clock)
    head = append(store, clock, retire_oldest=2)
    stuck, freed = (retired.key for retired in head.retired)
    loser = lost_run(store, clock)
    stuck_orphan = sorted(run_keys(store, loser))[0]
    kept_index_key = index_keys(stuck)[0]
    failing = FailingDeletes(
        store, [kept_index_key, stuck_orphan], name_prefix="some/prefix/" if named_with_prefix else ""
    )

    report = gc(failing, FAR_FUTURE_MS, retain_manifests=1, orphan_min_age_ms=0)

    failures = {failure.key: failure.error for failure in report.failures}
    assert failures[kept_index_key] == "AccessDenied"
    assert failures[stuck_orphan] == "AccessDenied"
    assert "index objects could not all be deleted" in failures[stuck]
    assert [item.key for item in report.deleted] == [freed]
    assert not report.ok
    assert {stuck, kept_index_key, stuck_orphan} <= keys(store)
    assert freed not in keys(store)
    assert report.deleted_manifests == (1, 2, 3)
    assert "failed" in report.to_text()

    retry = gc(store, FAR_FUTURE_MS, retain_manifests=1, orphan_min_age_ms=0)

    assert set(retry.deleted_keys) >= {stuck, kept_index_key, stuck_orphan}
    assert retry.ok


def test_garbage_head_manifest_is_refused(store: ObjectStore, clock: FakeClock) -> None:
    append(store, clock)
    store.put(manifest_key(2), b"{not json")

    with pytest.raises(ManifestFormatError, match=r"00000000000000000002\.json"):
        gc(store, FAR_FUTURE_MS)


def test_an_old_manifest_that_cannot_be_deleted_keeps_every_object_for_the_next_pass(
    store: ObjectStore, clock: FakeClock
) -> None:
    append(store, clock)
    append(store, clock)
    head = append(store, clock, retire_oldest=2)
    retired = {item.key for item in head.retired}
    failing = FailingDeletes(store, [manifest_key(1)])

    report = gc(failing, FAR_FUTURE_MS, retain_manifests=1, orphan_min_age_ms=0)

    assert not report.ok
    assert report.deleted == ()
    assert 1 not in report.deleted_manifests
    assert report.deleted_manifests
    assert 1 in manifest_versions(store)
    assert retired <= keys(store)  # version 1 still lists them: they stay
    for segment in read_manifest(store, 1).live_segments():
        assert segment.key in keys(store)
    retry = gc(store, FAR_FUTURE_MS, retain_manifests=1, orphan_min_age_ms=0)
    assert retry.ok
    assert retired.isdisjoint(keys(store))
