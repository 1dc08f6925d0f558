"""``kafka-segments run --engine inline``: every stage of a run (``pipeline.stages``), in order, in this
process. The same lake, configuration, snapshot and ``now`` give the same result; a dry run ends as
``RunOutcome.DRY_RUN`` (docs/lake.md, "Dry runs"). Deletion is logical: retired objects stay until ``gc``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from kafka_segments.clock import Clock, wall_clock_ms
from kafka_segments.config import Config
from kafka_segments.lake.recover import recover
from kafka_segments.lake.transaction import LakeTransaction
from kafka_segments.pipeline.engines.inline import InlineEngine
from kafka_segments.pipeline.offsets_input import OffsetsChoice
from kafka_segments.pipeline.planning import Selection
from kafka_segments.pipeline.run_gc import collect_run_garbage
from kafka_segments.pipeline.run_result import RunResult
from kafka_segments.pipeline.stages import (
    commit_staged,
    execute_run,
    finish_run,
    prepare_run,
    snapshot_offsets,
)
from kafka_segments.storage.base import ObjectStore

__all__ = ["RunOptions", "RunResult", "run_retention"]


@dataclass(frozen=True, slots=True)
class RunOptions:
    now_ms: int
    offsets: OffsetsChoice = field(default_factory=OffsetsChoice)
    topics: tuple[str, ...] | None = None
    """Plan only these topics (adoption still covers the whole lake)."""
    dry_run: bool = False
    gc: bool = True
    """Collect garbage after the commit (objects whose ``file.delete.delay.ms`` has passed)."""
    progress: Callable[[str], None] | None = field(default=None, compare=False)
    """Called with a short line as each step starts (the CLI prints them on stderr)."""

    def step(self, message: str) -> None:
        if self.progress is not None:
            self.progress(message)


def run_retention(
    store: ObjectStore, config: Config, options: RunOptions, *, clock: Clock = wall_clock_ms
) -> RunResult:
    """One run over the lake, every stage in this process.

    Raises:
        CommitConflictError: another run committed first; nothing of this run is visible, run again.
        CommitStateUnknownError: the commit's outcome is unknown; ``recover`` (or the next run) settles it.
        SnapshotFormatError, ConfigError, ObjectStoreError, ManifestFormatError: bad input or a failing
            store; nothing changed.
    """
    dry_run = options.dry_run
    recovered = None
    if not dry_run:
        options.step("recover: settling interrupted runs")
        recovered = recover(store, clock=clock)
    options.step("offsets: resolving the consumer-offset snapshot")
    offsets = snapshot_offsets(
        store, options.offsets, now_ms=options.now_ms, dry_run=dry_run, topics=options.topics
    )
    request = prepare_run(
        store,
        now_ms=options.now_ms,
        offsets=offsets,
        dry_run=dry_run,
        selection=Selection(topics=options.topics),
        labels={"engine": "inline"},
        clock=clock,
    )
    options.step(f"adopt: listing the lake and reading new segments (base version {request.base_version})")
    options.step(f"compact and plan: run {request.run_id}")
    with LakeTransaction.resume(store, request.run_id, clock=clock):  # a failure before the commit aborts
        staged = execute_run(store, config, request.run_id, engine=InlineEngine(store), clock=clock)
    # From here on a failure is left to ``recover``: aborting could contradict a commit whose outcome is
    # unknown, and a run that never committed is fenced and swept like any interrupted run.
    committing = "commit: staging and committing the new state"
    options.step("commit: a dry run commits nothing" if dry_run else committing)
    ended = commit_staged(store, request.run_id, require_validation=False, clock=clock)
    gc = None
    if options.gc and not dry_run:
        options.step("gc: deleting retired objects whose file.delete.delay.ms has passed")
        gc = collect_run_garbage(store, config, dry_run=False, clock=clock)
    finish_run(store, request.run_id, gc=gc)
    result = staged.result
    return RunResult(
        result.run_id,
        result.now_ms,
        result.dry_run,
        result.base_version,
        ended.version,
        result.offsets,
        result.adoption,
        result.plan,
        recovered,
        gc,
        compaction=result.compaction,
        ended=ended.outcome,
        previous_now_ms=result.previous_now_ms,
    )
