"""``LakeTransaction``: one object owns a run from registration to its ``RunOutcome``; an exception before the
commit aborts it and leaves nothing visible; a dry run goes through every step and never commits."""

from __future__ import annotations

import pytest
from kafka_segments.errors import RunStateError
from kafka_segments.lake.history import head_version, manifest_versions, read_head
from kafka_segments.lake.recover import RecoverAction, recover
from kafka_segments.lake.run_folder import read_outcome, read_run
from kafka_segments.lake.runs import Outcome, RunOutcome
from kafka_segments.lake.transaction import LakeTransaction
from kafka_segments.storage import ObjectStore
from kit import FakeClock, keys_outside_run

from lake.retention_helpers import upload_fifteen_records

pytestmark = pytest.mark.lake

NOW = 1_000_000


def _adopt_and_stage(txn: LakeTransaction) -> bool:
    adoption = txn.adopt()
    return txn.stage(adoption.partitions)


def _stage_then_fail(txn: LakeTransaction) -> None:
    with txn:
        _adopt_and_stage(txn)
        raise ValueError("boom")


def test_a_change_commits_once_and_a_second_commit_reports_the_same(
    store: ObjectStore, clock: FakeClock
) -> None:
    upload_fifteen_records(store)
    txn = LakeTransaction.begin(store, now_ms=NOW, operation="run", clock=clock)

    assert _adopt_and_stage(txn) is True
    assert txn.commit() is RunOutcome.COMMITTED
    assert txn.commit() is RunOutcome.COMMITTED  # idempotent
    assert txn.committed_version == head_version(store) == 1
    resumed = LakeTransaction.resume(store, txn.run_id, clock=clock)
    assert resumed.commit() is RunOutcome.COMMITTED
    assert resumed.committed_version == 1


def test_nothing_to_change_commits_nothing(store: ObjectStore, clock: FakeClock) -> None:
    upload_fifteen_records(store)
    first = LakeTransaction.begin(store, now_ms=NOW, operation="run", clock=clock)
    _adopt_and_stage(first)
    first.commit()

    second = LakeTransaction.begin(store, now_ms=NOW, operation="run", clock=clock)
    assert _adopt_and_stage(second) is False
    assert second.commit() is RunOutcome.NOTHING_TO_CHANGE
    assert manifest_versions(store) == [1]
    ended = read_outcome(store, second.run_id)
    assert ended is not None
    assert ended.outcome is Outcome.ABORTED


def test_a_dry_run_stages_everything_and_never_commits(store: ObjectStore, clock: FakeClock) -> None:
    upload_fifteen_records(store)
    keys = sorted(meta.key for meta in store.list())
    txn = LakeTransaction.begin(store, now_ms=NOW, operation="run", dry_run=True, clock=clock)

    assert read_run(store, txn.run_id).dry_run is True
    assert _adopt_and_stage(txn) is True  # a commit would change the lake …
    assert txn.commit() is RunOutcome.DRY_RUN  # … and the dry run does not
    assert LakeTransaction.resume(store, txn.run_id, clock=clock).commit() is RunOutcome.DRY_RUN
    assert head_version(store) is None
    assert keys_outside_run(store, txn.run_id) == keys


def test_a_rejected_validation_commits_nothing_and_records_the_reason(
    store: ObjectStore, clock: FakeClock
) -> None:
    upload_fifteen_records(store)
    txn = LakeTransaction.begin(store, now_ms=NOW, operation="run", clock=clock)
    _adopt_and_stage(txn)
    seen: list[str] = []

    def refuse(checked: LakeTransaction) -> str:
        seen.append(checked.run_id)
        return "validation failed: expect_x"

    assert txn.commit(validation=refuse) is RunOutcome.REJECTED
    assert seen == [txn.run_id]
    assert head_version(store) is None
    ended = read_outcome(store, txn.run_id)
    assert ended is not None
    assert ended.reason == "validation failed: expect_x"
    with pytest.raises(RunStateError, match="was aborted: validation failed"):
        LakeTransaction.resume(store, txn.run_id, clock=clock).commit()


def test_a_run_that_loses_the_race_reports_lost_and_names_the_winner(
    store: ObjectStore, clock: FakeClock
) -> None:
    upload_fifteen_records(store)
    loser = LakeTransaction.begin(store, now_ms=NOW, operation="run", clock=clock)
    winner = LakeTransaction.begin(store, now_ms=NOW, operation="run", clock=clock)
    _adopt_and_stage(loser)
    _adopt_and_stage(winner)

    assert winner.commit() is RunOutcome.COMMITTED
    assert loser.commit() is RunOutcome.LOST
    assert loser.lost_to is not None
    assert winner.run_id in str(loser.lost_to)
    head = read_head(store)
    assert head is not None
    assert head.run_id == winner.run_id


def test_an_exception_before_the_commit_aborts_and_leaves_nothing_visible(
    store: ObjectStore, clock: FakeClock
) -> None:
    upload_fifteen_records(store)
    txn = LakeTransaction.begin(store, now_ms=NOW, operation="run", clock=clock)

    with pytest.raises(ValueError, match="boom"):
        _stage_then_fail(txn)

    assert head_version(store) is None
    ended = read_outcome(store, txn.run_id)
    assert ended is not None
    assert ended.outcome is Outcome.ABORTED
    assert "run failed before its commit: boom" in ended.reason


def test_recover_never_fences_an_abandoned_dry_run(store: ObjectStore, clock: FakeClock) -> None:
    """A fence is a commit: a dry run that died is discarded (its objects swept), never fenced."""
    upload_fifteen_records(store)
    txn = LakeTransaction.begin(store, now_ms=NOW, operation="run", dry_run=True, clock=clock)
    _adopt_and_stage(txn)  # and then the process dies
    clock.advance(2 * 3_600_000)

    report = recover(store, clock=clock)

    assert [run.action for run in report.runs] == [RecoverAction.DISCARDED]
    assert report.fence_versions == ()
    assert head_version(store) is None
