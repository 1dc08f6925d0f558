"""``kafka-segments run --engine inline``: the stages of a run (``pipeline.sequence``) with every stage in
this process. The same lake, configuration, snapshot and ``now`` give the same result; a dry run ends as
``RunOutcome.DRY_RUN`` (docs/lake.md, "Dry runs"). Deletion is logical: retired objects stay until ``gc``."""

from __future__ import annotations

import dataclasses

from kafka_segments.clock import Clock, wall_clock_ms
from kafka_segments.config import Config
from kafka_segments.lake.runs import RunRecord
from kafka_segments.lake.transaction import LakeTransaction
from kafka_segments.pipeline.engines.inline import InlineEngine
from kafka_segments.pipeline.run_result import RunResult
from kafka_segments.pipeline.sequence import RunOptions, run_stages
from kafka_segments.pipeline.stages import StagedRun, execute_run
from kafka_segments.storage.base import ObjectStore

__all__ = ["RunOptions", "RunResult", "run_retention"]


class InlineDoor:
    """Executes in this process (``InlineEngine``); validation is the Great Expectations gate of the
    staged doors only, so the commit does not wait for a validation result."""

    requires_validation = False

    def __init__(self, *, clock: Clock) -> None:
        self._clock = clock
        self.staged: StagedRun | None = None

    def execute(self, store: ObjectStore, config: Config, record: RunRecord, options: RunOptions) -> None:
        options.step(f"adopt: listing the lake and reading new segments (base version {record.base_version})")
        options.step(f"compact and plan: run {record.run_id}")
        with LakeTransaction.resume(store, record.run_id, clock=self._clock):  # a failure aborts the run
            self.staged = execute_run(
                store, config, record.run_id, engine=InlineEngine(store), clock=self._clock
            )

    def validate(self, store: ObjectStore, record: RunRecord, options: RunOptions) -> None:
        """Nothing to do: the inline door commits what it staged."""


def run_retention(
    store: ObjectStore, config: Config, options: RunOptions, *, clock: Clock = wall_clock_ms
) -> RunResult:
    """One run over the lake, every stage in this process (``sequence.run_stages``).

    Raises:
        CommitConflictError: another run committed first; nothing of this run is visible, run again.
        CommitStateUnknownError: the commit's outcome is unknown; ``recover`` (or the next run) settles it.
        SnapshotFormatError, ConfigError, ObjectStoreError, ManifestFormatError: bad input or a failing
            store; nothing changed.
    """
    options = dataclasses.replace(options, labels={"engine": "inline", **options.labels})
    door = InlineDoor(clock=clock)
    finished = run_stages(store, config, options, door, clock=clock)
    if door.staged is None or finished.ended is None:  # the inline door fails only by raising
        raise RuntimeError("the inline door ended without staging")  # pragma: no cover
    return dataclasses.replace(
        door.staged.result,
        committed_version=finished.ended.version,
        recovered=finished.recovered,
        gc=finished.gc,
        tables=finished.tables,
        ended=finished.ended.outcome,
    )
