"""The commit protocol on both backends: one create-if-absent PUT of ``base + 1``, conflicts, lost responses,
unknown outcomes, zombies, and the idempotent steps after the commit."""

from __future__ import annotations

import dataclasses
import hashlib
import pickle

import pytest
from kafka_segments.errors import (
    CommitConflictError,
    CommitStateUnknownError,
    ConditionalWriteConflictError,
    ObjectNotFoundError,
    RunStateError,
    StoreAccessError,
    TransientStoreError,
)
from kafka_segments.lake import (
    Manifest,
    PartitionState,
    abort_run,
    begin_run,
    build_manifest,
    commit_run,
    read_head,
    resolve_commit,
    retire,
    stage_manifest,
    stage_segment,
)
from kafka_segments.lake import commit as commit_module
from kafka_segments.lake import scan as scan_module
from kafka_segments.lake.checkpoint_files import checkpoint_file_contents, checkpoint_files_match
from kafka_segments.lake.commit import REMOVED_VERSION, commit_manifest
from kafka_segments.lake.history import head_version, manifest_versions, read_manifest
from kafka_segments.lake.layout import (
    CHECKPOINT_KEYS,
    LOG_START_OFFSET_CHECKPOINT_KEY,
    manifest_key,
    segment_key,
    staged_manifest_key,
)
from kafka_segments.lake.run_folder import read_outcome, read_run
from kafka_segments.lake.runs import Outcome
from kafka_segments.segment.files import FileKind
from kafka_segments.storage import LocalStore, ObjectStore
from kafka_segments.topic_partition import TopicPartition
from kit import FakeClock, make_segment, record_local_hashes

from lake.commit_child import TP, stage_appending_run
from lake.faults import AFTER, Call, FaultyStore

pytestmark = pytest.mark.lake


def _committed_base(store: ObjectStore, clock: FakeClock, versions: int = 1) -> Manifest:
    """Commit ``versions`` appending runs; return the head."""
    for _ in range(versions):
        run, _ = stage_appending_run(store, clock=clock)
        commit_run(store, run.run_id, clock=clock)
        clock.advance(1000)
    head = read_head(store)
    assert head is not None
    return head


def _is_manifest_put(key: str) -> bool:
    return key.startswith("_kafka_segments/manifests/")


# ------------------------------------------------------------------------------------------------- happy path


def test_begin_stage_commit(store: ObjectStore, clock: FakeClock) -> None:
    run, base = begin_run(store, now_ms=clock() - 5000, operation="append", clock=clock)
    assert (base, run.base_version, run.commit_version) == (None, None, 1)
    files = make_segment(0)
    entry = stage_segment(
        store,
        run,
        topic_partition=TP,
        base_offset=0,
        files={FileKind.LOG: files.log, FileKind.INDEX: files.offset_index},
        clock=clock,
    )
    assert entry.key == segment_key(TP, 0, run_id=run.run_id)
    assert (entry.base_offset, entry.last_offset, entry.record_count, entry.size) == (0, 5, 6, len(files.log))
    assert store.get(segment_key(TP, 0, FileKind.INDEX, run_id=run.run_id)) == files.offset_index
    state = PartitionState(TP, 0, entry.next_offset, (entry,), run_id=run.run_id)
    stage_manifest(store, run, build_manifest(run, base=base, partitions=[state]))
    assert read_head(store) is None  # nothing is visible before the commit
    clock.advance(250)

    committed = commit_run(store, run.run_id, clock=clock)

    assert committed.version == 1
    assert committed.parent_version is None
    assert (committed.committed_at_ms, committed.now_ms) == (clock(), clock() - 5250)
    assert committed.partitions == (state,)
    assert read_head(store) == committed
    assert manifest_versions(store) == [1]
    outcome = read_outcome(store, run.run_id)
    assert outcome is not None
    assert (outcome.outcome, outcome.version, outcome.finished_at_ms) == (Outcome.COMMITTED, 1, clock())
    assert resolve_commit(store, run.run_id).committed
    assert resolve_commit(store, run.run_id).taken_by == run.run_id
    assert checkpoint_files_match(store, committed)


def test_commit_run_is_idempotent(store: ObjectStore, clock: FakeClock) -> None:
    run, _ = stage_appending_run(store, clock=clock)
    committed = commit_run(store, run.run_id, clock=clock)
    faulty = FaultyStore(store)
    clock.advance(1000)

    assert commit_run(faulty, run.run_id, clock=clock) == committed
    assert commit_run(faulty, run.run_id, clock=clock) == committed

    assert manifest_versions(store) == [1]
    assert not faulty.calls_to("put", _is_manifest_put)


def test_each_commit_builds_on_the_previous_version(store: ObjectStore, clock: FakeClock) -> None:
    head = _committed_base(store, clock, versions=3)
    assert manifest_versions(store) == [1, 2, 3]
    assert [read_manifest(store, v).parent_version for v in (1, 2, 3)] == [None, 1, 2]
    state = head.partition(TP)
    assert state is not None
    assert [s.base_offset for s in state.segments] == [0, 6, 12]
    assert state.log_end_offset == 18


# -------------------------------------------------------------------------------------------------- conflicts


def test_conflict_when_another_run_took_the_version(store: ObjectStore, clock: FakeClock) -> None:
    _committed_base(store, clock)
    loser, loser_manifest = stage_appending_run(store, clock=clock)
    winner, _ = stage_appending_run(store, clock=clock)
    won = commit_run(store, winner.run_id, clock=clock)

    with pytest.raises(CommitConflictError, match=f"lost: version 2 was committed by run '{winner.run_id}'"):
        commit_run(store, loser.run_id, clock=clock)

    assert read_head(store) == won
    assert manifest_versions(store) == [1, 2]
    loser_segment = loser_manifest.partitions[0].segments[-1].key
    assert loser_segment not in won.live_keys()
    outcome = read_outcome(store, loser.run_id)
    assert outcome is not None
    assert outcome.outcome is Outcome.ABORTED
    assert winner.run_id in outcome.reason
    resolution = resolve_commit(store, loser.run_id)
    assert (resolution.version, resolution.committed, resolution.taken_by) == (2, False, winner.run_id)


def test_conflict_when_another_run_wins_between_the_checks_and_the_put(
    store: ObjectStore, clock: FakeClock
) -> None:
    """The loser passed every check; its create-if-absent PUT finds the version taken."""
    _committed_base(store, clock)
    loser, _ = stage_appending_run(store, clock=clock)
    winner, _ = stage_appending_run(store, clock=clock)
    faulty = FaultyStore(store)

    def winner_commits_first(_: Call) -> None:
        commit_run(store, winner.run_id, clock=clock)

    faulty.fail("put", key=manifest_key(2), error=winner_commits_first)

    with pytest.raises(CommitConflictError, match=f"version 2 was committed by run '{winner.run_id}' first"):
        commit_run(faulty, loser.run_id, clock=clock)

    head = read_head(store)
    assert head is not None
    assert head.run_id == winner.run_id
    outcome = read_outcome(store, loser.run_id)
    assert outcome is not None
    assert outcome.outcome is Outcome.ABORTED


def test_conflict_when_the_head_moved_past_the_base(store: ObjectStore, clock: FakeClock) -> None:
    _committed_base(store, clock)
    stale, _ = stage_appending_run(store, clock=clock)
    _committed_base(store, clock, versions=2)

    with pytest.raises(CommitConflictError, match="version 2 was committed by run"):
        commit_run(store, stale.run_id, clock=clock)
    assert manifest_versions(store) == [1, 2, 3]


def test_conflict_when_the_head_moved_past_the_base_and_the_version_is_gone(
    store: ObjectStore, clock: FakeClock
) -> None:
    """Garbage collection removed version 2: the run must still not recreate it behind the head."""
    _committed_base(store, clock)
    stale, _ = stage_appending_run(store, clock=clock)
    _committed_base(store, clock, versions=2)
    store.delete(manifest_key(2))

    with pytest.raises(CommitConflictError, match="builds on version 1 but the head is 3"):
        commit_run(store, stale.run_id, clock=clock)

    assert manifest_versions(store) == [1, 3]
    outcome = read_outcome(store, stale.run_id)
    assert outcome is not None
    assert outcome.outcome is Outcome.ABORTED


# ------------------------------------------------------------------------------------------------ run records


def test_a_retried_task_with_the_same_run_id_keeps_its_base(store: ObjectStore, clock: FakeClock) -> None:
    base = _committed_base(store, clock)
    first, first_base = begin_run(
        store, now_ms=clock(), operation="run", run_id="retried-task-1", clock=clock
    )
    _committed_base(store, clock)
    clock.advance(60_000)

    again, again_base = begin_run(
        store, now_ms=clock(), operation="run", run_id="retried-task-1", clock=clock
    )

    assert again == first
    assert again.base_version == 1
    assert again_base == first_base == base
    assert read_run(store, "retried-task-1") == first


def test_a_lost_response_while_registering_is_settled_by_registering_again(
    store: ObjectStore, clock: FakeClock
) -> None:
    faulty = FaultyStore(store)
    faulty.fail("put", key=lambda key: key.endswith("/run.json"), when=AFTER)
    with pytest.raises(TransientStoreError, match="injected fault"):
        begin_run(faulty, now_ms=clock(), operation="run", run_id="flaky-network", clock=clock)
    clock.advance(10)

    run, base = begin_run(faulty, now_ms=clock(), operation="run", run_id="flaky-network", clock=clock)

    assert (run.run_id, run.base_version, base) == ("flaky-network", None, None)
    assert run.started_at_ms == clock() - 10  # the record the lost PUT stored


def test_a_run_id_reused_for_another_operation_is_refused(store: ObjectStore, clock: FakeClock) -> None:
    begin_run(store, now_ms=clock(), operation="run", run_id="task-7", clock=clock)
    with pytest.raises(RunStateError, match="'task-7' is already registered for operation 'run'"):
        begin_run(store, now_ms=clock(), operation="adopt", run_id="task-7", clock=clock)


def test_unknown_run_cannot_commit(store: ObjectStore, clock: FakeClock) -> None:
    with pytest.raises(RunStateError, match="no run 'never-begun' in this lake"):
        commit_run(store, "never-begun", clock=clock)


def test_a_run_without_a_staged_manifest_cannot_commit(store: ObjectStore, clock: FakeClock) -> None:
    run, _ = begin_run(store, now_ms=clock(), operation="run", clock=clock)
    with pytest.raises(RunStateError, match="has no staged manifest"):
        commit_run(store, run.run_id, clock=clock)
    assert head_version(store) is None


def test_a_staged_manifest_must_build_on_the_runs_base(store: ObjectStore, clock: FakeClock) -> None:
    base = _committed_base(store, clock)
    run, _ = begin_run(store, now_ms=clock(), operation="run", clock=clock)
    other, _ = begin_run(store, now_ms=clock(), operation="run", clock=clock)
    with pytest.raises(RunStateError, match="does not build on run"):
        stage_manifest(store, run, build_manifest(other, base=base, partitions=base.partitions))
    with pytest.raises(RunStateError, match="does not build on run"):
        stage_manifest(
            store,
            run,
            dataclasses.replace(build_manifest(run, base=base, partitions=()), parent_version=None),
        )


@pytest.mark.parametrize("check", ["head", "listing"])
def test_a_staged_manifest_listing_a_missing_object_commits_nothing(
    store: ObjectStore, clock: FakeClock, check: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if check == "listing":  # many new objects are checked with one listing instead of a HEAD each
        monkeypatch.setattr(commit_module, "HEAD_CHECK_LIMIT", 0)
    base = _committed_base(store, clock)
    run, manifest = stage_appending_run(store, clock=clock)
    new_key = manifest.partitions[0].segments[-1].key
    store.delete(new_key)
    faulty = FaultyStore(store)

    with pytest.raises(RunStateError, match=r"1 object\(s\) its manifest lists do not exist: .*\.log"):
        commit_run(faulty, run.run_id, clock=clock)

    assert read_head(store) == base
    assert not faulty.calls_to("put", _is_manifest_put)
    assert resolve_commit(store, run.run_id).taken_by is None


def test_a_staged_log_is_hashed_once(
    store: ObjectStore, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The manifest's sha256 of a written ``.log`` is its bytes' sha256; a local store's etag is that hash, so
    the bytes are hashed once there, by the store (issue 22), and once by the staging elsewhere."""
    run, _ = begin_run(store, now_ms=clock(), operation="run", clock=clock)
    files = make_segment(0, batches=20)
    by_staging: list[int] = []
    sha256_hex = scan_module.sha256_hex
    monkeypatch.setattr(
        scan_module, "sha256_hex", lambda data: by_staging.append(len(data)) or sha256_hex(data)
    )
    by_store = record_local_hashes(monkeypatch)

    entry = stage_segment(store, run, topic_partition=TP, base_offset=0, files={FileKind.LOG: files.log})

    assert entry.sha256 == hashlib.sha256(files.log).hexdigest()
    local = isinstance(store, LocalStore)
    assert entry.etag == (entry.sha256 if local else store.head(entry.key).etag)
    assert [*by_staging, *by_store].count(len(files.log)) == 1
    assert by_staging == ([] if local else [len(files.log)])


def test_staging_a_segment_twice(store: ObjectStore, clock: FakeClock) -> None:
    """A retried task writes the same bytes again: fine. Other bytes under the same key: refused, and the
    object keeps its first bytes."""
    run, _ = begin_run(store, now_ms=clock(), operation="run", clock=clock)
    files = make_segment(0)
    staged = {FileKind.LOG: files.log, FileKind.TIME_INDEX: files.time_index}
    first = stage_segment(store, run, topic_partition=TP, base_offset=0, files=staged, clock=clock)

    assert stage_segment(store, run, topic_partition=TP, base_offset=0, files=staged, clock=clock) == first
    later = {FileKind.LOG: make_segment(100).log}
    faulty = FaultyStore(store)  # a lost response, then the task's retry
    faulty.fail("put", key=lambda key: key.endswith(".log"), when=AFTER)
    with pytest.raises(TransientStoreError):
        stage_segment(faulty, run, topic_partition=TP, base_offset=100, files=later, clock=clock)
    retried = stage_segment(faulty, run, topic_partition=TP, base_offset=100, files=later, clock=clock)
    assert retried.etag == store.head(retried.key).etag

    other = make_segment(0, key_prefix="other")
    with pytest.raises(RunStateError, match="already exists with other bytes; a run never overwrites"):
        stage_segment(
            store, run, topic_partition=TP, base_offset=0, files={FileKind.LOG: other.log}, clock=clock
        )
    assert store.get(first.key) == files.log


# ------------------------------------------------------------------------------------------ faults at the PUT


def test_lost_response_of_the_commit_put_reads_the_commit_back(store: ObjectStore, clock: FakeClock) -> None:
    run, _ = stage_appending_run(store, clock=clock)
    faulty = FaultyStore(store)
    lost = faulty.fail("put", key=manifest_key(1), when=AFTER)

    committed = commit_run(faulty, run.run_id, clock=clock)

    assert lost.fired == 1
    assert committed.run_id == run.run_id
    assert read_head(store) == committed
    assert checkpoint_files_match(store, committed)
    outcome = read_outcome(store, run.run_id)
    assert outcome is not None
    assert outcome.outcome is Outcome.COMMITTED


def test_failed_put_and_failed_read_back_is_state_unknown(store: ObjectStore, clock: FakeClock) -> None:
    base = _committed_base(store, clock)
    run, _ = stage_appending_run(store, clock=clock)
    key = manifest_key(2)
    faulty = FaultyStore(store)

    def put_fails_and_reads_fail_too(_: Call) -> BaseException:
        faulty.fail("get", key=key, nth=None)
        return TransientStoreError("connection reset", location=key)

    faulty.fail("put", key=key, error=put_fails_and_reads_fail_too)

    with pytest.raises(
        CommitStateUnknownError, match=r"failed \(connection reset\) and could not be read back"
    ) as caught:
        commit_run(faulty, run.run_id, clock=clock)

    assert caught.value.retriable
    assert read_head(store) == base
    faulty.clear()
    committed = commit_run(faulty, run.run_id, clock=clock)  # checks first, then commits
    assert committed.version == 2
    assert read_head(store) == committed


def test_lost_response_and_failed_read_back_then_the_retry_finds_the_commit(
    store: ObjectStore, clock: FakeClock
) -> None:
    """The PUT did happen: ``commit_run`` again reads the version back before writing and settles it."""
    run, _ = stage_appending_run(store, clock=clock)
    key = manifest_key(1)
    faulty = FaultyStore(store)

    def response_lost_and_reads_fail(_: Call) -> BaseException:
        faulty.fail("get", key=key, nth=None)
        return TransientStoreError("read timeout", location=key)

    faulty.fail("put", key=key, when=AFTER, error=response_lost_and_reads_fail)
    with pytest.raises(CommitStateUnknownError, match=r"could not be read back"):
        commit_run(faulty, run.run_id, clock=clock)
    faulty.clear()
    puts_before = len(faulty.calls_to("put", key))

    committed = commit_run(faulty, run.run_id, clock=clock)

    assert (committed.version, committed.run_id) == (1, run.run_id)
    assert len(faulty.calls_to("put", key)) == puts_before  # settled by reading, not by writing again
    assert checkpoint_files_match(store, committed)


def test_failed_put_and_version_absent_is_state_unknown(store: ObjectStore, clock: FakeClock) -> None:
    run, _ = stage_appending_run(store, clock=clock)
    faulty = FaultyStore(store)
    faulty.fail("put", key=manifest_key(1))

    with pytest.raises(CommitStateUnknownError, match="the version is not there"):
        commit_run(faulty, run.run_id, clock=clock)

    assert head_version(store) is None
    assert resolve_commit(store, run.run_id).taken_by is None
    assert commit_run(faulty, run.run_id, clock=clock).version == 1


def test_put_refused_by_access_rules_is_raised_as_is(store: ObjectStore, clock: FakeClock) -> None:
    run, _ = stage_appending_run(store, clock=clock)
    faulty = FaultyStore(store)
    denied = StoreAccessError("access denied: AccessDenied (HTTP 403)", location=manifest_key(1))
    faulty.fail("put", key=manifest_key(1), error=denied)

    with pytest.raises(StoreAccessError, match="AccessDenied") as caught:
        commit_run(faulty, run.run_id, clock=clock)

    assert caught.value is denied
    assert head_version(store) is None
    assert read_outcome(store, run.run_id) is None


# -------------------------------------------------------------------------------------------- zombies, aborts


def test_a_zombie_cannot_publish_after_its_version_was_taken(store: ObjectStore, clock: FakeClock) -> None:
    _committed_base(store, clock)
    zombie, zombie_manifest = stage_appending_run(store, clock=clock, run_id="zombie-driver")
    _committed_base(store, clock)  # version 2 by another run while the zombie was away
    head = read_head(store)

    # The zombie comes back as a retried task: same run id, so the same base.
    again, again_base = begin_run(
        store, now_ms=clock(), operation="append", run_id="zombie-driver", clock=clock
    )
    assert again.base_version == 1
    stage_manifest(store, again, zombie_manifest)
    with pytest.raises(CommitConflictError, match="version 2 was committed by run"):
        commit_run(store, zombie.run_id, clock=clock)
    with pytest.raises(RunStateError, match="was aborted"):
        commit_run(store, zombie.run_id, clock=clock)
    # Even the bare commit PUT cannot take a version that exists.
    with pytest.raises(CommitConflictError, match="nothing of run 'zombie-driver' is visible"):
        commit_manifest(store, zombie_manifest)
    # Nor can it build on the new head: its record pins version 1.
    assert again_base is not None
    with pytest.raises(RunStateError, match="does not build on run 'zombie-driver' at version 1"):
        stage_manifest(store, again, dataclasses.replace(zombie_manifest, version=3, parent_version=2))

    assert read_head(store) == head
    assert manifest_versions(store) == [1, 2]


def test_abort_of_a_committed_run_is_refused(store: ObjectStore, clock: FakeClock) -> None:
    run, _ = stage_appending_run(store, clock=clock)
    commit_run(store, run.run_id, clock=clock)
    with pytest.raises(RunStateError, match="already committed version 1"):
        abort_run(store, run.run_id, reason="changed my mind", clock=clock)


def test_an_aborted_run_cannot_commit(store: ObjectStore, clock: FakeClock) -> None:
    run, _ = stage_appending_run(store, clock=clock)
    abort_run(store, run.run_id, reason="validation failed", clock=clock)
    outcome = read_outcome(store, run.run_id)
    assert outcome is not None
    assert (outcome.outcome, outcome.reason) == (Outcome.ABORTED, "validation failed")
    with pytest.raises(RunStateError, match="was aborted: validation failed"):
        commit_run(store, run.run_id, clock=clock)
    assert head_version(store) is None


# ------------------------------------------------------------------------------------------- after the commit


def test_retired_objects_are_stamped_with_the_commit_time(store: ObjectStore, clock: FakeClock) -> None:
    base = _committed_base(store, clock, versions=3)
    first_retiring, first_base = begin_run(store, now_ms=clock(), operation="retention", clock=clock)
    assert first_base == base
    state = base.partitions[0]
    gone = retire(state.segments[0], TP, first_retiring, reason="retention.ms", delete_delay_ms=60_000)
    assert gone.retired_at_ms == 0
    kept = dataclasses.replace(
        state, segments=state.segments[1:], log_start_offset=6, run_id=first_retiring.run_id
    )
    stage_manifest(
        store,
        first_retiring,
        build_manifest(first_retiring, base=base, partitions=[kept], newly_retired=[gone]),
    )
    clock.advance(5_000)

    v4 = commit_run(store, first_retiring.run_id, clock=clock)

    assert v4.retired == (dataclasses.replace(gone, retired_at_ms=clock()),)
    assert v4.retired[0].delete_after_ms == clock() + 60_000
    assert v4.retired[0].retired_in_version == 4

    second, _ = begin_run(store, now_ms=clock(), operation="retention", clock=clock)
    also_gone = retire(kept.segments[0], TP, second, reason="retention.bytes", delete_delay_ms=0)
    rest = dataclasses.replace(kept, segments=kept.segments[1:], log_start_offset=12, run_id=second.run_id)
    stage_manifest(
        store, second, build_manifest(second, base=v4, partitions=[rest], newly_retired=[also_gone])
    )
    clock.advance(7_000)

    v5 = commit_run(store, second.run_id, clock=clock)

    assert v5.retired == (v4.retired[0], dataclasses.replace(also_gone, retired_at_ms=clock()))


def test_retired_objects_already_gone_drop_out(store: ObjectStore, clock: FakeClock) -> None:
    base = _committed_base(store, clock, versions=2)
    run, _ = begin_run(store, now_ms=clock(), operation="retention", clock=clock)
    state = base.partitions[0]
    gone = retire(state.segments[0], TP, run, reason="retention.ms", delete_delay_ms=0)
    kept = dataclasses.replace(state, segments=state.segments[1:], log_start_offset=6, run_id=run.run_id)
    stage_manifest(store, run, build_manifest(run, base=base, partitions=[kept], newly_retired=[gone]))
    v3 = commit_run(store, run.run_id, clock=clock)

    after_gc, _ = begin_run(store, now_ms=clock(), operation="gc", clock=clock)
    manifest = build_manifest(after_gc, base=v3, partitions=v3.partitions, present_keys=set(v3.live_keys()))
    assert manifest.retired == ()
    assert build_manifest(after_gc, base=v3, partitions=v3.partitions).retired == v3.retired


def test_checkpoint_files_follow_the_head(store: ObjectStore, clock: FakeClock) -> None:
    base = _committed_base(store, clock, versions=2)
    run, _ = begin_run(store, now_ms=clock(), operation="delete-records", clock=clock)
    moved = dataclasses.replace(
        base.partitions[0], log_start_offset=3, cleaner_checkpoint=6, run_id=run.run_id
    )
    emptied = PartitionState(TopicPartition("payments", 2), 40, 40, (), run_id=run.run_id)
    stage_manifest(store, run, build_manifest(run, base=base, partitions=[emptied, moved]))

    head = commit_run(store, run.run_id, clock=clock)

    expected = checkpoint_file_contents(head)
    assert {key: store.get(key) for key in CHECKPOINT_KEYS} == expected
    assert expected[LOG_START_OFFSET_CHECKPOINT_KEY] == b"0\n2\norders 0 3\npayments 2 40\n"


def test_a_failed_checkpoint_write_leaves_the_commit_and_a_recommit_finishes_it(
    store: ObjectStore, clock: FakeClock
) -> None:
    _committed_base(store, clock)
    store.delete_many(CHECKPOINT_KEYS)  # so that stale files cannot look current
    run, _ = stage_appending_run(store, clock=clock)
    faulty = FaultyStore(store)
    faulty.fail("put", key=LOG_START_OFFSET_CHECKPOINT_KEY)

    with pytest.raises(TransientStoreError, match="injected fault"):
        commit_run(faulty, run.run_id, clock=clock)

    head = read_head(store)
    assert head is not None
    assert (head.version, head.run_id) == (2, run.run_id)
    assert resolve_commit(store, run.run_id).committed
    assert not checkpoint_files_match(store, head)
    assert read_outcome(store, run.run_id) is None

    assert commit_run(faulty, run.run_id, clock=clock) == head
    assert checkpoint_files_match(store, head)
    outcome = read_outcome(store, run.run_id)
    assert outcome is not None
    assert (outcome.outcome, outcome.version) == (Outcome.COMMITTED, 2)


def test_an_older_commit_finishing_late_does_not_overwrite_newer_checkpoint_files(
    store: ObjectStore, clock: FakeClock
) -> None:
    _committed_base(store, clock)
    late, _ = stage_appending_run(store, clock=clock)
    faulty = FaultyStore(store)
    faulty.fail("put", key=LOG_START_OFFSET_CHECKPOINT_KEY)
    with pytest.raises(TransientStoreError):
        commit_run(faulty, late.run_id, clock=clock)
    newest = _committed_base(store, clock)
    store.put(LOG_START_OFFSET_CHECKPOINT_KEY, b"")

    commit_run(store, late.run_id, clock=clock)

    assert store.get(LOG_START_OFFSET_CHECKPOINT_KEY) == b""  # not rewritten from the older version
    assert newest.version == 3


def test_staged_manifest_and_objects_stay_in_the_run_folder(store: ObjectStore, clock: FakeClock) -> None:
    run, _ = stage_appending_run(store, clock=clock)
    assert store.head(staged_manifest_key(run.run_id)).size > 0
    with pytest.raises(ObjectNotFoundError):
        store.head(manifest_key(1))


# ----------------------------------------------------------------------------------------- the fault injector


def test_faulty_store_fails_before_or_after_the_operation(store: ObjectStore) -> None:
    faulty = FaultyStore(store)
    faulty.fail("put", key="a")
    faulty.fail("put", key="b", when=AFTER, error=StoreAccessError("denied", location="b"))
    with pytest.raises(TransientStoreError, match="injected fault: put failed before"):
        faulty.put("a", b"1")
    with pytest.raises(ObjectNotFoundError):
        store.get("a")  # did not happen
    with pytest.raises(StoreAccessError, match="denied"):
        faulty.put("b", b"2")
    assert store.get("b") == b"2"  # happened, then the call failed
    faulty.put("a", b"1")  # only the first matching call failed
    assert faulty.calls == [Call("put", "a"), Call("put", "b"), Call("put", "a")]


def test_faulty_store_is_an_object_store_and_pickles(store: ObjectStore) -> None:
    faulty = FaultyStore(store)
    faulty.fail("get", key="k", error=StoreAccessError("denied", location="k"))
    assert isinstance(faulty, ObjectStore)
    assert faulty.describe() == store.describe()
    copy = pickle.loads(pickle.dumps(faulty))
    with pytest.raises(StoreAccessError, match="denied"):
        copy.get("k")


def test_faulty_store_counts_matching_calls(store: ObjectStore) -> None:
    faulty = FaultyStore(store)
    for key in ("x.log", "x.index", "y.log"):
        store.put(key, b"data")
    third = faulty.fail("get", key=lambda key: key.endswith(".log"), nth=2)
    every = faulty.fail("delete_many", key="y.log", nth=None)
    assert faulty.get("x.log") == b"data"
    assert faulty.get("x.index") == b"data"
    with pytest.raises(TransientStoreError, match=r"y\.log"):
        faulty.get("y.log")
    for _ in range(2):
        with pytest.raises(TransientStoreError, match=r"y\.log"):
            faulty.delete_many(["x.index", "y.log"])
    faulty.delete_many(["x.index"])
    assert (third.matched, third.fired, every.matched, every.fired) == (2, 1, 2, 2)
    assert [call.key for call in faulty.calls_to("get", lambda key: key.endswith(".log"))] == [
        "x.log",
        "y.log",
    ]
    assert [meta.key for meta in faulty.list()] == ["x.log", "y.log"]
    assert faulty.calls_to("list") == [Call("list", "")]


def test_resolve_commit_after_gc_removed_the_version(store: ObjectStore, clock: FakeClock) -> None:
    winner, _ = stage_appending_run(store, clock=clock)
    loser, _ = stage_appending_run(store, clock=clock)
    commit_run(store, winner.run_id, clock=clock)
    for _ in range(2):
        later, _ = stage_appending_run(store, clock=clock)
        commit_run(store, later.run_id, clock=clock)
    store.delete(manifest_key(1))  # what gc does to a version past retention

    won = resolve_commit(store, winner.run_id)
    lost = resolve_commit(store, loser.run_id)

    assert (won.committed, won.taken_by) == (True, winner.run_id)
    assert (lost.committed, lost.taken_by) == (False, REMOVED_VERSION)
    with pytest.raises(RunStateError, match="already committed"):
        abort_run(store, winner.run_id, reason="late", clock=clock)


def test_a_409_on_the_commit_put_is_retriable_and_not_ambiguous(store: ObjectStore, clock: FakeClock) -> None:
    run, _ = stage_appending_run(store, clock=clock)
    faulty = FaultyStore(store)
    conflict = ConditionalWriteConflictError("409 ConditionalRequestConflict", location=manifest_key(1))
    faulty.fail("put", key=manifest_key(1), error=conflict)

    with pytest.raises(ConditionalWriteConflictError) as caught:
        commit_run(faulty, run.run_id, clock=clock)

    assert caught.value.retriable
    assert head_version(store) is None
    assert commit_run(store, run.run_id, clock=clock).version == 1
