"""The one stage order (``pipeline.sequence``): ``run_stages`` walks ``RUN_STAGES`` with a door's execute and
validate, a dry run skips what the table says, and a failing door stage ends the run as the door says."""

from __future__ import annotations

import pytest
from kafka_segments.config import Config
from kafka_segments.lake.history import head_version
from kafka_segments.lake.run_folder import VALIDATION, read_outcome, write_run_json
from kafka_segments.lake.runs import RunOutcome, RunRecord
from kafka_segments.pipeline.sequence import (
    RUN_STAGES,
    InDryRun,
    RunOptions,
    Stage,
    StageFailedError,
    run_stages,
    runs,
)
from kafka_segments.pipeline.stages import execute_run
from kafka_segments.storage import ObjectStore
from kit import FakeClock

from lake.retention_helpers import config, topic_yaml, upload_fifteen_records

pytestmark = pytest.mark.lake

NOW = 1_000_000


class RecordingDoor:
    """Executes inline and writes a validation result, recording the stages it is asked for."""

    requires_validation = True

    def __init__(self, clock: FakeClock, *, fail: Stage | None = None) -> None:
        self.calls: list[str] = []
        self._clock = clock
        self._fail = fail

    def execute(self, store: ObjectStore, config: Config, record: RunRecord, options: RunOptions) -> None:
        self.calls.append("execute")
        if self._fail is Stage.EXECUTE:
            raise StageFailedError("the job failed", outcome=RunOutcome.ABORTED)
        execute_run(store, config, record.run_id, clock=self._clock)

    def validate(self, store: ObjectStore, record: RunRecord, options: RunOptions) -> None:
        self.calls.append("validate")
        if self._fail is Stage.VALIDATE:
            raise StageFailedError("validation failed: expect_x", outcome=RunOutcome.REJECTED)
        write_run_json(store, record.run_id, VALIDATION, {"run_id": record.run_id, "success": True})


def test_the_table_is_the_stage_order_and_the_dry_run_rule() -> None:
    assert list(RUN_STAGES) == list(Stage)
    assert [stage for stage in Stage if not runs(stage, dry_run=True)] == [Stage.RECOVER, Stage.TABLES]
    assert all(runs(stage, dry_run=False) for stage in Stage)
    assert {RUN_STAGES[Stage.COMMIT], RUN_STAGES[Stage.GC]} == {InDryRun.REPORTS_ONLY}


@pytest.mark.parametrize("dry_run", [False, True])
def test_run_stages_walks_the_table(store: ObjectStore, clock: FakeClock, dry_run: bool) -> None:
    upload_fifteen_records(store, segment_ts=[10, 20, 30])
    door = RecordingDoor(clock)
    steps: list[str] = []
    options = RunOptions(now_ms=NOW, dry_run=dry_run, progress=steps.append)
    finished = run_stages(store, config(topic_yaml(retention_ms=NOW - 25)), options, door, clock=clock)

    assert door.calls == ["execute", "validate"]
    heads = [step.split(":")[0] for step in steps]
    expected = ["offsets", "prepare", "commit", "commit", "gc"]
    assert heads == (expected if dry_run else ["recover", *expected])
    assert (finished.recovered is None) is dry_run
    assert finished.ended is not None
    assert finished.ended.outcome is (RunOutcome.DRY_RUN if dry_run else RunOutcome.COMMITTED)
    assert finished.gc is not None
    assert finished.gc.dry_run is dry_run
    assert finished.report is not None
    assert finished.report["outcome"] == finished.ended.outcome.value
    assert head_version(store) == (None if dry_run else 1)


@pytest.mark.parametrize(
    ("stage", "outcome", "reported"),
    [(Stage.EXECUTE, RunOutcome.ABORTED, False), (Stage.VALIDATE, RunOutcome.REJECTED, True)],
)
def test_a_failing_door_stage_ends_the_run_uncommitted(
    store: ObjectStore, clock: FakeClock, stage: Stage, outcome: RunOutcome, reported: bool
) -> None:
    upload_fifteen_records(store, segment_ts=[10, 20, 30])
    door = RecordingDoor(clock, fail=stage)
    options = RunOptions(now_ms=NOW)
    finished = run_stages(store, config(topic_yaml(retention_ms=NOW - 25)), options, door, clock=clock)

    assert finished.failure is not None
    assert (finished.report is not None) is reported
    assert finished.ended is None
    ended = read_outcome(store, finished.record.run_id)
    assert ended is not None
    assert (ended.run_outcome, ended.reason) == (outcome, finished.failure)
    assert head_version(store) is None
