"""Staged runs (``pipeline.stages``): the stages an orchestrator calls hand over through the run
folder, give the inline run's result, and commit only a validated, non-dry run."""

from __future__ import annotations

from pathlib import Path

import pytest
from kafka_segments.demo import EmbeddedS3
from kafka_segments.errors import RunStateError
from kafka_segments.lake.history import head_version
from kafka_segments.lake.run_folder import read_outcome, write_run_json
from kafka_segments.lake.runs import Outcome, Selection
from kafka_segments.offsets.snapshot_codec import load_snapshot_file
from kafka_segments.offsets.snapshot_store import pin_snapshot, store_snapshot
from kafka_segments.pipeline.engines import ClusterEngine
from kafka_segments.pipeline.offsets_input import OffsetsChoice
from kafka_segments.pipeline.report import render_report
from kafka_segments.pipeline.stages import (
    VALIDATION,
    ValidationGateError,
    commit_staged,
    execute_run,
    finish_run,
    prepare_run,
    read_run_json,
    reject_run,
    snapshot_offsets,
)
from kafka_segments.storage import LocalStore, ObjectStore, S3Store
from kafka_segments.topic_partition import TopicPartition
from kit import FakeClock, ThreadRunner, upload_segment
from unit.coordinator_records import (
    CoordinatorLog,
    consumer_subscription,
    group_metadata_key,
    group_metadata_value,
    member,
    offset_commit_key,
    offset_commit_value,
)

from lake.retention_helpers import (
    TP,
    bases,
    config,
    group,
    partition,
    run,
    topic_yaml,
    upload_fifteen_records,
    write_snapshot,
)

pytestmark = pytest.mark.lake

NOW = 1_000_000
CONSUMED = topic_yaml(retention_commitoffset_enable=True, retention_commitoffset_ms=0)


def _validated(store: ObjectStore, run_id: str, *, success: bool = True) -> None:
    write_run_json(store, run_id, VALIDATION, {"run_id": run_id, "success": success, "suites": []})


def _stage(
    store: ObjectStore,
    yaml_text: str,
    clock: FakeClock,
    *,
    dry_run: bool = False,
    offsets_file: Path | None = None,
    runner: ThreadRunner | None = None,
    lake: str | None = None,
) -> str:
    choice = OffsetsChoice(file=None if offsets_file is None else str(offsets_file))
    offsets = snapshot_offsets(store, choice, now_ms=NOW, dry_run=dry_run)
    request = prepare_run(store, now_ms=NOW, offsets=offsets, dry_run=dry_run, clock=clock)
    engine = None if runner is None or lake is None else ClusterEngine(runner, lake)
    execute_run(store, config(yaml_text), request.run_id, engine=engine, clock=clock)
    return request.run_id


def test_staged_run_commits_what_the_inline_run_commits(
    store: ObjectStore, tmp_path: Path, clock: FakeClock
) -> None:
    upload_fifteen_records(store, segment_ts=[10, 20, 30])
    other = LocalStore(tmp_path / "inline")
    upload_fifteen_records(other, segment_ts=[10, 20, 30])
    yaml_text = topic_yaml(retention_ms=NOW - 25)
    inline = run(other, config(yaml_text), now_ms=NOW, clock=clock)

    run_id = _stage(store, yaml_text, clock)
    _validated(store, run_id)
    outcome = commit_staged(store, run_id, clock=clock)

    assert outcome.outcome == "committed"
    assert outcome.version == inline.committed_version
    assert bases(store) == bases(other) == [10]
    assert partition(store).log_start_offset == partition(other).log_start_offset == 10
    report = finish_run(store, run_id)
    assert report["outcome"] == "committed"
    assert report["plan"]["totals"]["by_reason"] == {
        "retention.ms": {"segments": 2, "bytes": report["plan"]["totals"]["bytes_deleted"]}
    }
    assert "committed version 1" in render_report(report)


def test_commit_refuses_a_run_without_a_successful_validation(store: ObjectStore, clock: FakeClock) -> None:
    upload_fifteen_records(store, segment_ts=[10, 20, 30])
    run_id = _stage(store, topic_yaml(retention_ms=NOW - 25), clock)

    with pytest.raises(ValidationGateError, match="no validation result"):
        commit_staged(store, run_id, clock=clock)
    _validated(store, run_id, success=False)
    with pytest.raises(ValidationGateError, match="failed validation"):
        commit_staged(store, run_id, clock=clock)

    assert head_version(store) is None
    assert read_outcome(store, run_id) is None


def test_a_rejected_run_never_commits(store: ObjectStore, clock: FakeClock) -> None:
    upload_fifteen_records(store, segment_ts=[10, 20, 30])
    run_id = _stage(store, topic_yaml(retention_ms=NOW - 25), clock)
    reject_run(store, run_id, reason="validation failed: expect_x", clock=clock)
    _validated(store, run_id)

    with pytest.raises(RunStateError, match="aborted: validation failed"):
        commit_staged(store, run_id, clock=clock)
    assert head_version(store) is None
    assert finish_run(store, run_id)["outcome"] == "validation failed: expect_x"


def test_dry_run_stages_and_validates_but_commits_nothing(store: ObjectStore, clock: FakeClock) -> None:
    upload_fifteen_records(store, segment_ts=[10, 20, 30])
    run_id = _stage(store, topic_yaml(retention_ms=NOW - 25), clock, dry_run=True)
    _validated(store, run_id)

    assert commit_staged(store, run_id, clock=clock).outcome == "dry run"
    assert commit_staged(store, run_id, clock=clock).outcome == "dry run"  # a retried task
    assert head_version(store) is None
    ended = read_outcome(store, run_id)
    assert ended is not None
    assert ended.outcome is Outcome.ABORTED
    report = finish_run(store, run_id)
    assert report["outcome"] == "dry run"
    assert report["plan"]["totals"]["segments_deleted"] == 2
    assert render_report(report).startswith("dry run at now=")


def test_a_second_run_at_the_same_now_has_nothing_to_change(store: ObjectStore, clock: FakeClock) -> None:
    upload_fifteen_records(store, segment_ts=[10, 20, 30])
    yaml_text = topic_yaml(retention_ms=NOW - 25)
    first = _stage(store, yaml_text, clock)
    _validated(store, first)
    commit_staged(store, first, clock=clock)

    second = _stage(store, yaml_text, clock)
    assert read_run_json(store, second, "staged.json")["changed"] is False
    _validated(store, second)
    assert commit_staged(store, second, clock=clock).outcome == "nothing to change"
    assert head_version(store) == 1
    assert finish_run(store, second)["outcome"] == "nothing to change"


def test_prepare_again_with_the_same_run_id_returns_the_stored_request(
    store: ObjectStore, clock: FakeClock
) -> None:
    upload_fifteen_records(store)
    selection = Selection(topics=("t",), partitions=(TP,))
    first = prepare_run(
        store, now_ms=NOW, offsets=None, dry_run=False, selection=selection, labels={"k": "v"}, clock=clock
    )
    again = prepare_run(store, now_ms=NOW + 1, offsets=None, dry_run=True, run_id=first.run_id, clock=clock)
    assert again == first
    assert again.selection == selection
    assert again.labels == {"k": "v"}


def test_selection_plans_only_the_chosen_partitions(store: ObjectStore, clock: FakeClock) -> None:
    other = TopicPartition("t", 1)
    upload_fifteen_records(store, segment_ts=[10, 20, 30])
    upload_fifteen_records(store, segment_ts=[10, 20, 30], tp=other)
    request = prepare_run(
        store, now_ms=NOW, offsets=None, dry_run=False, selection=Selection(partitions=(other,)), clock=clock
    )
    execute_run(store, config(topic_yaml(retention_ms=NOW - 25)), request.run_id, clock=clock)
    _validated(store, request.run_id)
    commit_staged(store, request.run_id, clock=clock)
    assert bases(store, other) == [10]
    assert bases(store, TP) == [0, 5, 10]  # adopted, not planned


def test_a_task_runner_stages_the_same_manifest_as_the_inline_engine(
    store: ObjectStore, tmp_path: Path, clock: FakeClock, request: pytest.FixtureRequest
) -> None:
    snapshot = write_snapshot(tmp_path / "s.json", [group("g", [(0, 7, NOW)])], taken_at_ms=NOW)
    other = LocalStore(tmp_path / "inline")
    for lake_store in (store, other):
        upload_fifteen_records(lake_store, segment_ts=[10, 20, 30])
    if isinstance(store, S3Store):
        server: EmbeddedS3 = request.getfixturevalue("s3_server")
        monkeypatch = request.getfixturevalue("monkeypatch")
        monkeypatch.setenv("AWS_ENDPOINT_URL", server.endpoint_url)
        lake = f"s3://{store.bucket}/{store.prefix}"
    else:
        lake = str(tmp_path / "lake")
    with_runner = _stage(
        store, CONSUMED, clock, offsets_file=snapshot, runner=ThreadRunner(4, "threads"), lake=lake
    )
    inline = _stage(other, CONSUMED, clock, offsets_file=snapshot)

    staged = read_run_json(store, with_runner, "staged.json")["report"]
    expected = read_run_json(other, inline, "staged.json")["report"]
    assert staged["engine"] == "threads"
    assert expected["engine"] == "inline"
    assert staged["plan"] == expected["plan"]
    assert staged["plan"]["partitions"][0]["deleted"]["consumed"]["segments"] == 1  # M = 7: [0-4] only


def test_a_backfill_uses_the_newest_earlier_pin_and_never_a_source(
    store: ObjectStore, tmp_path: Path, clock: FakeClock
) -> None:
    snapshot = load_snapshot_file(
        write_snapshot(tmp_path / "s.json", [group("g", [(0, 7, 5)])], taken_at_ms=5)
    )
    stored = store_snapshot(store, snapshot)
    pin_snapshot(store, now_ms=500, snapshot_id=stored.snapshot_id, source="file")
    backfill = OffsetsChoice(source="kafka://unreachable:1", earlier_pin=True)

    at_pin = snapshot_offsets(store, backfill, now_ms=500, dry_run=False)
    later = snapshot_offsets(store, backfill, now_ms=NOW, dry_run=False)
    before = snapshot_offsets(store, backfill, now_ms=499, dry_run=False)

    assert at_pin is not None
    assert at_pin.origin == "pinned"
    assert later is not None
    assert later.origin == "pinned-earlier"
    assert later.snapshot_id == stored.snapshot_id
    assert "500" in later.note
    assert before is None


def test_the_lake_offsets_source_sees_uploaded_consumer_offsets_segments(
    store: ObjectStore, clock: FakeClock
) -> None:
    """As the inline run does after its adoption: the snapshot stage reads ``__consumer_offsets`` segments
    uploaded since the last commit (nothing is committed by the snapshot stage itself)."""
    upload_fifteen_records(store, segment_ts=[10, 20, 30])
    log = CoordinatorLog(timestamp=NOW - 60_000)
    log.append(
        (
            group_metadata_key("billing"),
            group_metadata_value(members=[member("m1", subscription=consumer_subscription(["t"]))]),
        )
    )
    log.append((offset_commit_key("billing", "t", 0), offset_commit_value(7, commit_timestamp=NOW - 60_000)))
    upload_segment(store, TopicPartition("__consumer_offsets", 0), log.segment())

    offsets = snapshot_offsets(store, OffsetsChoice(source="lake"), now_ms=NOW, dry_run=False)

    assert offsets is not None
    assert offsets.origin == "taken"
    assert [g.group_id for g in offsets.snapshot.groups] == ["billing"]
    assert head_version(store) is None
    request = prepare_run(store, now_ms=NOW, offsets=offsets, dry_run=False, clock=clock)
    staged = execute_run(store, config(CONSUMED), request.run_id, clock=clock)
    plan = staged.result.plan.partition(TP)
    assert plan is not None
    assert plan.holder is not None
    assert (plan.holder.group_id, plan.holder.committed_offset) == ("billing", 7)
