"""A staged manifest rewritten to break one retention rule (still a valid manifest) is caught by the
expectation named after that rule: validation fails, the run is rejected, ``commit_staged`` refuses, the head
manifest and the segments stay as they were, and a later commit's gc sweeps what the rejected run staged."""

from __future__ import annotations

import pickle
from collections.abc import Callable
from pathlib import Path

import pytest
from kafka_segments.config import Config
from kafka_segments.errors import RunStateError
from kafka_segments.lake import stage_segment
from kafka_segments.lake.gc import collect_garbage
from kafka_segments.lake.history import head_version, read_head
from kafka_segments.lake.run_folder import read_outcome, read_run, run_file_key
from kafka_segments.lake.runs import Outcome
from kafka_segments.pipeline.stages import VALIDATION, commit_staged, read_run_json
from kafka_segments.state import Manifest
from kafka_segments.storage import LocalStore, ObjectStore
from kit import FakeClock, make_segment
from manifest_files import format_1_commits
from segment_quality import ValidationFailedError, validate_run

from quality.helpers import (
    QUIET,
    TP,
    four_pass_config,
    four_pass_lake,
    four_pass_yaml,
    input_segments,
    partition_of,
    retired_entry,
    rewrite_staged,
    stage,
    with_partition,
    with_reason,
    with_retired,
)

pytestmark = pytest.mark.quality

FAR_FUTURE_MS = 4_000_000_000_000
"""gc compares the objects' real last-modified times with its ``now``."""

Edit = Callable[[ObjectStore, str, Manifest], Manifest]


def _staged_run(store: ObjectStore, tmp_path: Path, clock: FakeClock, *, config: Config | None = None) -> str:
    snapshot = four_pass_lake(store, tmp_path, clock)
    return stage(store, config or four_pass_config(), clock, snapshot=snapshot)


def _corrupt_and_validate(store: ObjectStore, run_id: str, edit: Edit) -> ValidationFailedError:
    """Rewrite the staged manifest, validate, and check that nothing was committed; return the failure."""
    head = read_head(store)
    rewrite_staged(store, run_id, lambda manifest: edit(store, run_id, manifest))
    with pytest.raises(ValidationFailedError) as caught:
        validate_run(store, run_id, config=four_pass_config())
    error = caught.value
    ended = read_outcome(store, run_id)
    assert ended is not None
    assert ended.outcome is Outcome.ABORTED
    assert ended.reason is not None
    assert ended.reason.startswith("validation failed:")
    with pytest.raises(RunStateError, match="aborted: validation failed"):
        commit_staged(store, run_id)
    assert read_head(store) == head
    assert all(store.head(segment.key).size == segment.size for segment in input_segments(store, run_id))
    document = read_run_json(store, run_id, VALIDATION)
    assert document["success"] is False
    assert store.head(document["data_docs"]).size > 0
    assert error.report is not None
    assert error.location.endswith(run_file_key(run_id, VALIDATION))
    return error


def _caught(error: ValidationFailedError) -> set[str]:
    assert error.report is not None
    for invariant in error.report.failed_invariants:
        assert invariant in str(error)
    return set(error.report.failed_invariants)


def test_new_log_start_offset_beyond_the_log_end_offset_is_caught(
    local_store: LocalStore, tmp_path: Path, clock: FakeClock
) -> None:
    run_id = _staged_run(local_store, tmp_path, clock)

    def beyond_the_end(_store: ObjectStore, _run_id: str, manifest: Manifest) -> Manifest:
        return with_partition(manifest, TP, log_start_offset=40, log_end_offset=40)

    error = _corrupt_and_validate(local_store, run_id, beyond_the_end)

    assert _caught(error) == {"log-start-offset-within-log", "log-end-offset-unchanged"}
    failed = {outcome.invariant: outcome for _suite, outcome in error.report.failed} if error.report else {}
    rows = failed["log-start-offset-within-log"].result["unexpected_rows"]
    assert rows == [{"topic": "t", "partition": 0, "log_end_offset": 30, "new_log_start_offset": 40}]


def test_log_start_offset_moving_backwards_is_caught(
    local_store: LocalStore, tmp_path: Path, clock: FakeClock
) -> None:
    run_id = _staged_run(local_store, tmp_path, clock)

    def backwards(_store: ObjectStore, _run_id: str, manifest: Manifest) -> Manifest:
        return with_partition(manifest, TP, log_start_offset=3)  # below the old log start offset 5

    error = _corrupt_and_validate(local_store, run_id, backwards)

    assert _caught(error) == {
        "log-start-offset-never-decreases",
        "deleted-offsets-below-new-log-start-offset",
    }
    copy = pickle.loads(pickle.dumps(error))  # errors cross process boundaries (task runners, Airflow)
    assert (str(copy), copy.report) == (str(error), error.report)


def test_deleting_past_a_kept_segment_is_caught_as_not_a_prefix(
    local_store: LocalStore, tmp_path: Path, clock: FakeClock
) -> None:
    run_id = _staged_run(local_store, tmp_path, clock)

    def keep_the_middle(store: ObjectStore, run_id: str, manifest: Manifest) -> Manifest:
        segments = input_segments(store, run_id)  # retired [0-4] [5-9] [10-14] [15-19]; kept [20-24] [25-29]
        middle = segments[2]
        kept = (middle, *partition_of(manifest).segments)
        retired = [
            r for r in manifest.retired if r.key != middle.key and r.retired_in_version == manifest.version
        ]
        return with_retired(with_partition(manifest, TP, segments=kept), retired)

    error = _corrupt_and_validate(local_store, run_id, keep_the_middle)

    assert _caught(error) == {"deleted-segments-form-a-prefix"}


def test_a_consumed_deletion_past_the_min_committed_offset_is_caught(
    local_store: LocalStore, tmp_path: Path, clock: FakeClock
) -> None:
    run_id = _staged_run(local_store, tmp_path, clock)

    def consumed_too_far(store: ObjectStore, run_id: str, manifest: Manifest) -> Manifest:
        return with_reason(manifest, input_segments(store, run_id)[3].key, "consumed")  # [15-19], M = 15

    error = _corrupt_and_validate(local_store, run_id, consumed_too_far)

    assert _caught(error) == {"consumed-deletion-below-min-committed-offset"}


def test_a_retention_ms_deletion_newer_than_the_limit_is_caught(
    local_store: LocalStore, tmp_path: Path, clock: FakeClock
) -> None:
    run_id = _staged_run(local_store, tmp_path, clock)

    def too_new(store: ObjectStore, run_id: str, manifest: Manifest) -> Manifest:
        newer = input_segments(store, run_id)[4]  # [20-24] at NOW: not older than retention.ms
        mine = [r for r in manifest.retired if r.retired_in_version == manifest.version]
        retired = [*mine, retired_entry(store, run_id, newer, "retention.ms")]
        state = partition_of(manifest)
        return with_retired(
            with_partition(manifest, TP, segments=state.segments[1:], log_start_offset=25), retired
        )

    error = _corrupt_and_validate(local_store, run_id, too_new)

    assert _caught(error) == {"retention-ms-deletion-older-than-limit"}


def test_a_retention_bytes_deletion_below_retention_bytes_is_caught(
    local_store: LocalStore, tmp_path: Path, clock: FakeClock
) -> None:
    run_id = _staged_run(local_store, tmp_path, clock)

    def bytes_too_far(store: ObjectStore, run_id: str, manifest: Manifest) -> Manifest:
        return with_reason(
            manifest, input_segments(store, run_id)[2].key, "retention.bytes"
        )  # 15r left < 20r

    error = _corrupt_and_validate(local_store, run_id, bytes_too_far)

    assert _caught(error) == {"retention-bytes-deletion-leaves-retention-bytes"}


def test_a_log_start_offset_deletion_above_the_log_start_offset_is_caught(
    local_store: LocalStore, tmp_path: Path, clock: FakeClock
) -> None:
    run_id = _staged_run(local_store, tmp_path, clock)

    def above_log_start(store: ObjectStore, run_id: str, manifest: Manifest) -> Manifest:
        return with_reason(
            manifest, input_segments(store, run_id)[1].key, "log-start-offset"
        )  # next base 10 > 5

    error = _corrupt_and_validate(local_store, run_id, above_log_start)

    assert _caught(error) == {"log-start-offset-deletion-below-log-start-offset"}


def test_a_segment_vanishing_without_being_retired_is_caught_as_counts_that_do_not_reconcile(
    store: ObjectStore, tmp_path: Path, clock: FakeClock
) -> None:
    run_id = _staged_run(store, tmp_path, clock)

    def vanish(_store: ObjectStore, _run_id: str, manifest: Manifest) -> Manifest:
        return with_partition(manifest, TP, segments=partition_of(manifest).segments[1:])  # [20-24] just gone

    error = _corrupt_and_validate(store, run_id, vanish)

    assert _caught(error) == {"segment-counts-reconcile", "byte-counts-reconcile"}


def test_a_deletion_in_a_partition_the_run_did_not_plan_is_caught(
    local_store: LocalStore, tmp_path: Path, clock: FakeClock
) -> None:
    from kafka_segments.lake.runs import Selection

    with format_1_commits():  # a format 1 base: the run reads (and stages) the partition it did not select
        snapshot = four_pass_lake(local_store, tmp_path, clock)
    run_id = stage(
        local_store, four_pass_config(), clock, snapshot=snapshot, selection=Selection(partitions=(TP,))
    )

    def outside_the_selection(store: ObjectStore, run_id: str, manifest: Manifest) -> Manifest:
        first = input_segments(store, run_id, QUIET)[0]
        mine = [r for r in manifest.retired if r.retired_in_version == manifest.version]
        retired = [*mine, retired_entry(store, run_id, first, "log-start-offset", QUIET)]
        quiet = partition_of(manifest, QUIET)
        edited = with_partition(manifest, QUIET, segments=quiet.segments[1:], log_start_offset=5)
        return with_retired(edited, retired)

    error = _corrupt_and_validate(local_store, run_id, outside_the_selection)

    assert {
        "unplanned-partition-keeps-its-segments",
        "unplanned-partition-keeps-its-log-start-offset",
    } <= _caught(error)


def test_a_rejected_runs_staged_objects_are_swept_after_a_later_commit(
    store: ObjectStore, tmp_path: Path, clock: FakeClock
) -> None:
    run_id = _staged_run(store, tmp_path, clock)
    written = stage_segment(
        store,
        read_run(store, run_id),
        topic_partition=TP,
        base_offset=30,
        files=make_segment(30).by_kind(),
        clock=clock,
    )

    def add_a_segment(_store: ObjectStore, _run_id: str, manifest: Manifest) -> Manifest:
        state = partition_of(manifest)
        return with_partition(
            manifest, TP, segments=(*state.segments, written), log_end_offset=written.next_offset
        )

    error = _corrupt_and_validate(store, run_id, add_a_segment)

    assert {"retention-adds-no-segment", "log-end-offset-unchanged"} <= _caught(error)
    staged_objects = {meta.key for meta in store.list("t-0/") if f"-{run_id}." in meta.key}
    assert written.key in staged_objects
    assert head_version(store) == 1

    later = stage(store, four_pass_config(), clock)  # no snapshot: retention.ms takes [10-14] instead
    validate_run(store, later, config=four_pass_config())
    assert commit_staged(store, later, clock=clock).version == 2
    report = collect_garbage(store, now_ms=FAR_FUTURE_MS, dry_run=False, orphan_min_age_ms=0)

    assert {item.key for item in report.swept} == staged_objects
    assert not {meta.key for meta in store.list("t-0/") if f"-{run_id}." in meta.key}


def test_cli_exits_1_with_one_line_naming_the_failed_expectations(
    local_store: LocalStore, tmp_path: Path, clock: FakeClock, capsys: pytest.CaptureFixture[str]
) -> None:
    from segment_quality.cli import main

    run_id = _staged_run(local_store, tmp_path, clock)
    rewrite_staged(local_store, run_id, lambda manifest: with_partition(manifest, TP, log_start_offset=3))
    config_file = tmp_path / "config.yaml"
    config_file.write_text(four_pass_yaml())

    code = main(
        ["validate", "--lake", str(local_store.root), "--run-id", run_id, "--config", str(config_file)]
    )

    out, err = capsys.readouterr()
    assert code == 1
    assert out == ""
    assert err.count("\n") == 1
    assert err.startswith("python -m segment_quality validate: ")
    assert "retention.partitions/log-start-offset-never-decreases" in err
    assert "data-docs/index.html" in err
    assert head_version(local_store) == 1
