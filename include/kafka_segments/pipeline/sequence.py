"""The stage order of a run and what a dry run does at each stage, in one table (``RUN_STAGES``), and the one
function that walks it (``run_stages``). The inline and Spark doors call ``run_stages`` with their own
``Door`` (how to execute and how to validate); the maintenance DAG has one task per stage, in this order,
and asks ``RUN_STAGES`` what its task does in a dry run (docs/architecture.md, "A run")."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Protocol

from kafka_segments.clock import Clock, wall_clock_ms
from kafka_segments.config import Config
from kafka_segments.errors import KafkaSegmentsError
from kafka_segments.lake.recover import RecoverReport, recover
from kafka_segments.lake.runs import RunOutcome, RunRecord, Selection
from kafka_segments.pipeline.offsets_input import OffsetsChoice
from kafka_segments.pipeline.run_gc import collect_run_garbage
from kafka_segments.pipeline.stages import (
    CommitOutcome,
    commit_staged,
    finish_run,
    prepare_run,
    reject_run,
    snapshot_offsets,
)
from kafka_segments.pipeline.tables_stage import TablesOutcome, TablesSync, sync_after_commit
from kafka_segments.storage.base import ObjectStore

if TYPE_CHECKING:
    from kafka_segments.lake.gc_report import GcReport


class Stage(StrEnum):
    """The stages of a run, in order (the value is the maintenance DAG's task id)."""

    RECOVER = "recover"
    SNAPSHOT = "snapshot_offsets"
    PREPARE = "prepare"
    EXECUTE = "spark_retention"
    VALIDATE = "validate"
    COMMIT = "commit"
    TABLES = "tables"
    GC = "gc"
    REPORT = "report"


class InDryRun(StrEnum):
    """What a stage does in a dry run."""

    RUNS = "runs"
    SKIPPED = "skipped"
    REPORTS_ONLY = "reports only"


RUN_STAGES: Mapping[Stage, InDryRun] = MappingProxyType(
    {
        Stage.RECOVER: InDryRun.SKIPPED,  # fencing an interrupted run would commit
        Stage.SNAPSHOT: InDryRun.RUNS,  # not pinned in the lake: kept in the run's folder only
        Stage.PREPARE: InDryRun.RUNS,
        Stage.EXECUTE: InDryRun.RUNS,  # its segments are written under the run's names, swept later
        Stage.VALIDATE: InDryRun.RUNS,
        Stage.COMMIT: InDryRun.REPORTS_ONLY,  # the run ends as "dry run"; nothing is committed
        Stage.TABLES: InDryRun.SKIPPED,  # a dry run syncs nothing (the tables follow commits only)
        Stage.GC: InDryRun.REPORTS_ONLY,  # lists what it would delete
        Stage.REPORT: InDryRun.RUNS,
    }
)
"""Every door runs these stages in this order (the maintenance DAG: one task each, named by the stage's
value), and does in a dry run what this says: the one rule of what a dry run skips."""


def runs(stage: Stage, *, dry_run: bool) -> bool:
    """Whether ``stage`` runs at all (a dry run skips some)."""
    return not dry_run or RUN_STAGES[stage] is not InDryRun.SKIPPED


Progress = Callable[[str], None]


@dataclass(frozen=True, slots=True)
class RunOptions:
    """What a run from the command line (or a library call) is asked to do."""

    now_ms: int
    offsets: OffsetsChoice = field(default_factory=OffsetsChoice)
    topics: tuple[str, ...] | None = None
    """Plan only these topics (adoption still covers the whole lake)."""
    dry_run: bool = False
    gc: bool = True
    """Collect garbage after the commit (objects whose ``file.delete.delay.ms`` has passed)."""
    labels: Mapping[str, str] = field(default_factory=dict)
    """Where the run came from; reported, never interpreted."""
    full_listing: bool = False
    """List the whole lake, not each partition's tail (format 2: ``lake.tail_listing``)."""
    progress: Progress | None = field(default=None, compare=False)
    """Called with a short line as each step starts (the CLI prints them on stderr)."""
    tables: TablesSync | None = field(default=None, compare=False)
    """The ``tables`` stage's sync (``kafka_segments.tables.run_stage``); ``None``: the stage does nothing."""

    def step(self, message: str) -> None:
        if self.progress is not None:
            self.progress(message)


class StageFailedError(KafkaSegmentsError):
    """A door's execute or validate stage failed: the run ends uncommitted, as ``outcome``."""

    def __init__(self, reason: str, *, outcome: RunOutcome) -> None:
        super().__init__(reason)
        self.reason = reason
        self.outcome = outcome


class Door(Protocol):
    """How one door executes and validates a prepared run; every other stage is ``run_stages``'."""

    requires_validation: bool
    """Whether the commit needs the run's validation result (the Great Expectations gate)."""

    def execute(self, store: ObjectStore, config: Config, record: RunRecord, options: RunOptions) -> None:
        """Adopt, compact, plan and stage. Raises ``StageFailedError`` to end the run uncommitted."""
        ...

    def validate(self, store: ObjectStore, record: RunRecord, options: RunOptions) -> None:
        """Check the staged output. Raises ``StageFailedError`` to end the run uncommitted."""
        ...


@dataclass(frozen=True, slots=True)
class FinishedRun:
    """What ``run_stages`` did: the run, its report and, when a stage failed, why."""

    record: RunRecord
    report: dict[str, Any] | None
    """``report.json`` (``None``: the run failed before it staged anything to report)."""
    recovered: RecoverReport | None = None
    ended: CommitOutcome | None = None
    gc: GcReport | None = None
    failure: str | None = None
    tables: TablesOutcome | None = None
    """What the ``tables`` stage did (``None``: it did not run, or no table is enabled)."""


def run_stages(
    store: ObjectStore, config: Config, options: RunOptions, door: Door, *, clock: Clock = wall_clock_ms
) -> FinishedRun:
    """Every stage of one run, in ``RUN_STAGES``' order, with its dry-run rule.

    Raises:
        CommitConflictError: another run committed first; nothing of this run is visible, run again.
        CommitStateUnknownError: the commit's outcome is unknown; ``recover`` (or the next run) settles it.
        SnapshotFormatError, ConfigError, ObjectStoreError, ManifestFormatError: bad input or a failing
            store; nothing changed.
    """
    dry_run = options.dry_run
    recovered = None
    if runs(Stage.RECOVER, dry_run=dry_run):
        options.step("recover: settling interrupted runs")
        recovered = recover(store, clock=clock)
    options.step("offsets: resolving the consumer-offset snapshot")
    offsets = snapshot_offsets(
        store, options.offsets, now_ms=options.now_ms, dry_run=dry_run, topics=options.topics
    )
    record = prepare_run(
        store,
        now_ms=options.now_ms,
        offsets=offsets,
        dry_run=dry_run,
        selection=Selection(topics=options.topics),
        labels=options.labels,
        full_listing=options.full_listing,
        clock=clock,
    )
    options.step(f"prepare: run {record.run_id} on version {record.base_version}")
    try:
        door.execute(store, config, record, options)
    except StageFailedError as failed:
        _end(store, record, failed, clock=clock)
        return FinishedRun(record, None, recovered, failure=failed.reason)
    try:
        door.validate(store, record, options)
    except StageFailedError as failed:
        _end(store, record, failed, clock=clock)
        report = finish_run(store, record.run_id)
        return FinishedRun(record, report, recovered, failure=failed.reason)
    # From here on a failure is left to ``recover``: aborting could contradict a commit whose outcome is
    # unknown, and a run that never committed is fenced and swept like any interrupted run.
    options.step(
        "commit: a dry run commits nothing" if dry_run else "commit: staging and committing the new state"
    )
    ended = commit_staged(store, record.run_id, require_validation=door.requires_validation, clock=clock)
    options.step(f"commit: {ended.outcome}")
    tables = _sync_tables(store, config, options, version=ended.version)
    gc = None
    if options.gc and runs(Stage.GC, dry_run=dry_run):
        doing = "listing (a dry run deletes nothing)" if dry_run else "deleting"
        options.step(f"gc: {doing} retired objects whose file.delete.delay.ms has passed")
        gc = collect_run_garbage(store, config, dry_run=dry_run, full=options.full_listing, clock=clock)
    report = finish_run(store, record.run_id, gc=gc, tables=tables)
    return FinishedRun(record, report, recovered, ended, gc, tables=tables)


def _sync_tables(
    store: ObjectStore, config: Config, options: RunOptions, *, version: int | None
) -> TablesOutcome | None:
    """The ``tables`` stage: the caller's sync, after the commit (a dry run syncs nothing)."""
    if options.tables is None or not runs(Stage.TABLES, dry_run=options.dry_run):
        return None
    options.step("tables: bringing the enabled topics' tables to the lake's head")
    outcome = sync_after_commit(options.tables, store, config, version=version)
    for line in () if outcome is None else outcome.lines:
        options.step(line if line.startswith("tables:") else f"tables: {line}")
    return outcome


def _end(store: ObjectStore, record: RunRecord, failed: StageFailedError, *, clock: Clock) -> None:
    """End a run that will not commit (recorded with the reason; its staged objects are swept later)."""
    with contextlib.suppress(KafkaSegmentsError):
        reject_run(store, record.run_id, reason=failed.reason, outcome=failed.outcome, clock=clock)
