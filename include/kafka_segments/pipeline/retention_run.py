"""``kafka-segments run --engine inline``: recover → adopt → snapshot → compact → plan → apply → commit → gc.

Every rule uses the run's logical ``now``; the same lake, configuration, snapshot and ``now`` give the same
result, and a second run with the same ``now`` finds nothing left to do. A dry run reads exactly what a real
run reads and writes nothing (no recovery, no snapshot stored, no run registered).

Compacted topics get their cleaning rounds first and the deletion passes then run over what the rounds left
(``run_changes``); the rounds' output segments are written under the run's own object names before the
commit, so a run that never commits leaves nothing a reader sees (its objects are swept later).

Deletion is logical: the committed manifest drops the segments and moves the log start offsets; the objects
stay, listed as retired with the topic's ``file.delete.delay.ms``, until ``gc`` deletes them.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field

from kafka_segments.config import Config
from kafka_segments.errors import KafkaSegmentsError
from kafka_segments.lake.adoption import AdoptionResult, adopt_objects
from kafka_segments.lake.commit import abort_run, begin_run, build_manifest, commit_run, stage_manifest
from kafka_segments.lake.gc import GcReport, collect_garbage
from kafka_segments.lake.history import head_version, read_head
from kafka_segments.lake.manifest import Manifest
from kafka_segments.lake.recover import RecoverReport, recover
from kafka_segments.lake.runs import Clock, RunRecord, wall_clock_ms
from kafka_segments.pipeline.compaction_stage import CompactionResult
from kafka_segments.pipeline.offsets_input import OffsetsChoice, ResolvedOffsets, resolve_offsets
from kafka_segments.pipeline.planning import Selection
from kafka_segments.pipeline.run_changes import RunChanges, plan_changes
from kafka_segments.pipeline.run_files import write_run_file
from kafka_segments.retention.plan import RetentionPlan
from kafka_segments.storage.base import ObjectStore

DRY_RUN_ID = "dry-run"


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


@dataclass(frozen=True, slots=True)
class RunResult:
    """Everything a run did, for the reports."""

    run_id: str
    now_ms: int
    dry_run: bool
    base_version: int | None
    committed_version: int | None
    offsets: ResolvedOffsets | None
    adoption: AdoptionResult
    plan: RetentionPlan
    recovered: RecoverReport | None = None
    gc: GcReport | None = None
    note: str = ""
    compaction: CompactionResult = field(default_factory=CompactionResult)

    @property
    def outcome(self) -> str:
        if self.dry_run:
            return "dry run"
        return "committed" if self.committed_version is not None else "nothing to change"


def run_retention(
    store: ObjectStore, config: Config, options: RunOptions, *, clock: Clock = wall_clock_ms
) -> RunResult:
    """One retention run over the lake.

    Raises:
        CommitConflictError: another run committed first; nothing of this run is visible, run again.
        CommitStateUnknownError: the commit's outcome is unknown; ``recover`` (or the next run) settles it.
        SnapshotFormatError, ConfigError, ObjectStoreError, ManifestFormatError: bad input or a failing
            store; nothing changed.
    """
    if not options.dry_run:
        options.step("recover: settling interrupted runs")
    recovered = None if options.dry_run else recover(store, clock=clock)
    run, base = _begin(store, options, clock=clock)
    try:
        options.step(f"adopt: listing the lake and reading new segments (base version {run.base_version})")
        adoption = adopt_objects(store, base=base, run=run)
        options.step("offsets: resolving the consumer-offset snapshot")
        offsets = resolve_offsets(
            store,
            options.offsets,
            now_ms=options.now_ms,
            dry_run=options.dry_run,
            topics=options.topics,
            lake_view=lambda: build_manifest(run, base=base, partitions=adoption.partitions),
        )
        options.step(f"compact and plan: {len(adoption.partitions)} partition(s)")
        changes = plan_changes(
            adoption,
            config,
            run=run,
            store=store,
            snapshot=None if offsets is None else offsets.snapshot,
            selection=Selection(topics=options.topics),
            write=not options.dry_run,
        )
    except Exception as exc:
        if not options.dry_run:
            with contextlib.suppress(KafkaSegmentsError):
                abort_run(store, run.run_id, reason=f"run failed before its commit: {exc}", clock=clock)
        raise
    plan = changes.plan
    if options.dry_run:
        return RunResult(
            run.run_id,
            options.now_ms,
            True,
            run.base_version,
            None,
            offsets,
            adoption,
            plan,
            compaction=changes.compaction,
        )
    # From here on a failure is left to ``recover``: aborting could contradict a commit whose outcome is
    # unknown, and a run that never committed is fenced and swept like any interrupted run.
    options.step("commit: staging and committing the new state")
    committed = _commit(store, run, base, adoption, changes, offsets, clock=clock)
    if options.gc:
        options.step("gc: deleting retired objects whose file.delete.delay.ms has passed")
    gc = collect_garbage(store, dry_run=False, clock=clock) if options.gc else None
    version = None if committed is None else committed.version
    result = RunResult(
        run.run_id,
        options.now_ms,
        False,
        run.base_version,
        version,
        offsets,
        adoption,
        plan,
        recovered,
        gc,
        compaction=changes.compaction,
    )
    if committed is not None:
        from kafka_segments.pipeline.report import run_to_dict

        write_run_file(store, run.run_id, "report.json", run_to_dict(result))
    return result


def _begin(store: ObjectStore, options: RunOptions, *, clock: Clock) -> tuple[RunRecord, Manifest | None]:
    if not options.dry_run:
        return begin_run(store, now_ms=options.now_ms, operation="run", clock=clock)
    base = read_head(store)
    run = RunRecord(
        DRY_RUN_ID, "run", head_version(store) if base is None else base.version, clock(), options.now_ms
    )
    return run, base


def _commit(
    store: ObjectStore,
    run: RunRecord,
    base: Manifest | None,
    adoption: AdoptionResult,
    changes: RunChanges,
    offsets: ResolvedOffsets | None,
    *,
    clock: Clock,
) -> Manifest | None:
    """Stage and commit the new state (or abort the run when nothing changes)."""
    if not changes.changed_from(adoption):
        abort_run(store, run.run_id, reason="nothing to change", clock=clock)
        return None
    manifest = build_manifest(
        run,
        base=base,
        partitions=changes.partitions,
        newly_retired=changes.retired,
        present_keys=adoption.present_keys,
    )
    write_run_file(store, run.run_id, "plan.json", plan_document(run, changes, offsets))
    stage_manifest(store, run, manifest)
    return commit_run(store, run.run_id, clock=clock)


def plan_document(run: RunRecord, changes: RunChanges, offsets: ResolvedOffsets | None) -> dict[str, object]:
    from kafka_segments.pipeline.report import plan_to_dict

    return {
        "run_id": run.run_id,
        "now_ms": run.now_ms,
        "base_version": run.base_version,
        "offsets_snapshot": None if offsets is None else offsets.snapshot_id,
        "compaction": changes.compaction.to_dict(),
        "plan": plan_to_dict(changes.plan),
    }
