"""Recovery on both backends: a run that committed but did not finish, a superseded run, an abandoned run
that gets fenced (and not before), a run still in progress, stale checkpoint files, a garbage head, and a
second recover that changes nothing."""

from __future__ import annotations

import json

import pytest
from kafka_segments.errors import ManifestFormatError, RunStateError, UnsupportedFormatVersionError
from kafka_segments.lake import commit_manifest, commit_run
from kafka_segments.lake.checkpoint_files import checkpoint_files_match
from kafka_segments.lake.gc import collect_garbage
from kafka_segments.lake.history import manifest_versions
from kafka_segments.lake.layout import CHECKPOINT_KEYS, manifest_key, run_record_key
from kafka_segments.lake.recover import RecoverAction, recover
from kafka_segments.lake.run_folder import read_outcome
from kafka_segments.lake.runs import Outcome
from kafka_segments.storage import ObjectStore
from kit import FakeClock

from lake.adoption_helpers import CountingStore
from lake.gc_helpers import append, commit, head_of, keys, run_keys, stage, start, write

pytestmark = pytest.mark.lake

ABANDON_MS = 3_600_000


def snapshot(store: ObjectStore) -> dict[str, str]:
    """Key -> etag of every object: what a no-op must leave unchanged."""
    return {meta.key: meta.etag for meta in store.list()}


def staged_run(store: ObjectStore, clock: FakeClock) -> str:
    """A run on the head that wrote a segment and staged its manifest, then stopped. Returns its id."""
    run, base = start(store, clock)
    live = list(base.partitions[0].segments) if base is not None else []
    offset = live[-1].next_offset if live else 0
    stage(store, run, base, [*live, write(store, clock, run, offset)])
    return run.run_id


def test_finished_run_that_committed_before_its_checkpoint_files_and_outcome(
    store: ObjectStore, clock: FakeClock
) -> None:
    append(store, clock)
    run, base = start(store, clock)
    assert base is not None
    manifest = stage(
        store, run, base, [*base.partitions[0].segments, write(store, clock, run, 6)], cleaner_checkpoint=6
    )
    commit_manifest(store, manifest)  # the commit PUT, then a crash
    assert not checkpoint_files_match(store, head_of(store))

    report = recover(store, clock=clock)

    assert [(r.run_id, r.action) for r in report.runs] == [(run.run_id, RecoverAction.FINISHED)]
    assert "committed version 2" in report.runs[0].detail
    outcome = read_outcome(store, run.run_id)
    assert outcome is not None
    assert (outcome.outcome, outcome.version) == (Outcome.COMMITTED, 2)
    assert checkpoint_files_match(store, head_of(store))
    assert run_keys(store, run.run_id)  # its objects are live: nothing swept


def test_discarded_run_superseded_by_another_commit(store: ObjectStore, clock: FakeClock) -> None:
    append(store, clock)
    loser = staged_run(store, clock)
    winner, base = start(store, clock)
    assert base is not None
    head = commit(store, clock, winner, base, [*base.partitions[0].segments, write(store, clock, winner, 6)])
    orphans = run_keys(store, loser)

    report = recover(store, clock=clock)

    assert [(r.run_id, r.action) for r in report.runs] == [(loser, RecoverAction.DISCARDED)]
    assert f"superseded by version 2 of run {winner.run_id}" in report.runs[0].detail
    assert set(report.runs[0].deleted_keys) == orphans
    assert run_keys(store, loser) == set()
    assert head.live_keys() <= keys(store)
    outcome = read_outcome(store, loser)
    assert outcome is not None
    assert outcome.outcome is Outcome.ABORTED
    assert "superseded by version 2" in outcome.reason


def test_discarded_run_whose_taken_version_was_removed_by_gc(store: ObjectStore, clock: FakeClock) -> None:
    append(store, clock)
    loser = staged_run(store, clock)
    append(store, clock)
    append(store, clock)
    collect_garbage(store, now_ms=clock(), dry_run=False, retain_manifests=1, orphan_min_age_ms=10**12)
    assert manifest_versions(store) == [3]

    report = recover(store, abandon_after_ms=0, clock=clock)

    assert [(r.run_id, r.action) for r in report.runs] == [(loser, RecoverAction.DISCARDED)]
    assert "removed by gc" in report.runs[0].detail
    assert report.fence_versions == ()
    assert run_keys(store, loser) == set()
    assert manifest_versions(store) == [3]


def test_fenced_after_abandon_after_ms_and_not_before(store: ObjectStore, clock: FakeClock) -> None:
    first = append(store, clock)
    abandoned = staged_run(store, clock)
    clock.advance(ABANDON_MS - 1)
    before = snapshot(store)

    early = recover(store, abandon_after_ms=ABANDON_MS, clock=clock)

    assert [(r.run_id, r.action) for r in early.runs] == [(abandoned, RecoverAction.IN_PROGRESS)]
    assert snapshot(store) == before

    clock.advance(1)
    report = recover(store, abandon_after_ms=ABANDON_MS, clock=clock)

    assert [(r.run_id, r.action) for r in report.runs] == [(abandoned, RecoverAction.FENCED)]
    assert report.fence_versions == (2,) == (report.runs[0].fence_version,)
    fence = head_of(store)
    assert (fence.version, fence.operation) == (2, "fence")
    assert fence.partitions == first.partitions
    assert fence.now_ms == first.now_ms
    assert run_keys(store, abandoned) == set()
    assert set(report.runs[0].deleted_keys) == {key for key in before if f"-{abandoned}." in key}
    with pytest.raises(RunStateError, match="aborted"):
        commit_run(store, abandoned, clock=clock)
    assert checkpoint_files_match(store, fence)


def test_fence_on_a_lake_without_a_manifest_commits_an_empty_version_1(
    store: ObjectStore, clock: FakeClock
) -> None:
    abandoned = staged_run(store, clock)
    clock.advance(ABANDON_MS)

    report = recover(store, abandon_after_ms=ABANDON_MS, clock=clock)

    assert [(r.run_id, r.action) for r in report.runs] == [(abandoned, RecoverAction.FENCED)]
    head = head_of(store)
    assert (head.version, head.operation, head.partitions, head.retired) == (1, "fence", (), ())
    assert run_keys(store, abandoned) == set()
    assert report.head_version == 1


def test_in_progress_run_is_left_alone_and_can_still_commit(store: ObjectStore, clock: FakeClock) -> None:
    append(store, clock)
    working = staged_run(store, clock)
    before = snapshot(store)

    report = recover(store, clock=clock)

    assert [(r.run_id, r.action) for r in report.runs] == [(working, RecoverAction.IN_PROGRESS)]
    assert "may still commit version 2" in report.runs[0].detail
    assert not report.changed
    assert snapshot(store) == before
    assert commit_run(store, working, clock=clock).version == 2


def test_settled_runs_cost_no_read_only_their_listing(store: ObjectStore, clock: FakeClock) -> None:
    """Every run starts with recover, and a lake keeps every run's folder: reading each run's outcome would
    cost one request per run the lake has ever had."""
    settled = [append(store, clock).run_id for _ in range(4)]
    working = staged_run(store, clock)
    counting = CountingStore(store)

    report = recover(counting, clock=clock)

    assert [(r.run_id, r.action) for r in report.runs] == [(working, RecoverAction.IN_PROGRESS)]
    assert not {key for key in counting.reads for run_id in settled if f"/{run_id}/" in key}
    assert run_record_key(working) in counting.reads  # the unsettled run is read as before


def test_unreadable_run_record_is_reported_and_left_alone(store: ObjectStore, clock: FakeClock) -> None:
    append(store, clock)
    store.put(run_record_key("broken-run"), b"[]")
    before = snapshot(store)

    report = recover(store, abandon_after_ms=0, clock=clock)

    assert [(r.run_id, r.action) for r in report.runs] == [("broken-run", RecoverAction.UNREADABLE)]
    assert "broken-run/run.json" in report.runs[0].detail
    assert not report.changed
    assert snapshot(store) == before


@pytest.mark.parametrize("damage", ["missing", "stale"])
def test_checkpoint_files_rewritten_when_stale_or_missing(
    store: ObjectStore, clock: FakeClock, damage: str
) -> None:
    run, base = start(store, clock)
    head = commit(store, clock, run, base, [write(store, clock, run, 0)], cleaner_checkpoint=3)
    for key in CHECKPOINT_KEYS:
        if damage == "missing":
            store.delete(key)
        else:
            store.put(key, b"0\n0\n")

    report = recover(store, clock=clock)

    assert report.checkpoint_files_rewritten
    assert report.runs == ()
    assert checkpoint_files_match(store, head)
    assert "rewritten" in report.to_text()
    assert not recover(store, clock=clock).checkpoint_files_rewritten


@pytest.mark.parametrize(
    ("data", "error"),
    [(b"{not json", ManifestFormatError), (b'{"format_version": 99}', UnsupportedFormatVersionError)],
)
def test_garbage_head_manifest_raises_naming_the_object(
    store: ObjectStore, clock: FakeClock, data: bytes, error: type[Exception]
) -> None:
    append(store, clock)
    staged_run(store, clock)
    store.put(manifest_key(2), data)
    before = snapshot(store)

    with pytest.raises(error, match=r"manifests/00000000000000000002\.json"):
        recover(store, abandon_after_ms=0, clock=clock)
    assert snapshot(store) == before


def test_second_recover_changes_nothing(store: ObjectStore, clock: FakeClock) -> None:
    append(store, clock)
    superseded = staged_run(store, clock)
    committed, base = start(store, clock)
    assert base is not None
    commit_manifest(
        store,
        stage(store, committed, base, [*base.partitions[0].segments, write(store, clock, committed, 6)]),
    )
    abandoned = staged_run(store, clock)
    clock.advance(ABANDON_MS)

    first = recover(store, abandon_after_ms=ABANDON_MS, clock=clock)

    assert {r.run_id: r.action for r in first.runs} == {
        superseded: RecoverAction.DISCARDED,
        committed.run_id: RecoverAction.FINISHED,
        abandoned: RecoverAction.FENCED,
    }
    assert first.changed
    assert json.loads(json.dumps(first.to_dict()))["fence_versions"] == [3]
    assert "1 fenced" in first.to_text()
    working = staged_run(store, clock)  # a run on the new head: it may still commit
    after_first = snapshot(store)

    second = recover(store, abandon_after_ms=ABANDON_MS, clock=clock)

    assert [(r.run_id, r.action) for r in second.runs] == [(working, RecoverAction.IN_PROGRESS)]
    assert not second.changed
    assert snapshot(store) == after_first
