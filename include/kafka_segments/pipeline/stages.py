"""The stages of a run, written once: every door (inline, ``--engine spark``, the maintenance DAG) calls these
functions in the order docs/lake.md, "One run, one transaction", gives, handing over through the run's folder
(``request.json``, ``plan.json``, ``manifest.json``, ``staged.json``, ``validation.json``, ``report.json``)
and ``LakeTransaction``. Every stage may be retried: ``prepare`` re-registers the same run, ``execute``
overwrites its files, ``commit`` reads back first."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

from kafka_segments.clock import Clock, wall_clock_ms
from kafka_segments.config import Config
from kafka_segments.errors import LakeError, RunStateError
from kafka_segments.lake.adoption import adopt_objects
from kafka_segments.lake.codec import manifest_to_json
from kafka_segments.lake.gc_report import GcReport
from kafka_segments.lake.history import read_head
from kafka_segments.lake.runs import Outcome, RunRecord, read_outcome
from kafka_segments.lake.staging import build_manifest
from kafka_segments.lake.transaction import LakeTransaction, RunOutcome
from kafka_segments.offsets.lake_source import CONSUMER_OFFSETS_TOPIC
from kafka_segments.offsets.snapshot_codec import snapshot_to_json
from kafka_segments.pipeline.engines.base import Engine
from kafka_segments.pipeline.offsets_input import OffsetsChoice, ResolvedOffsets, resolve_offsets
from kafka_segments.pipeline.planning import ALL_PARTITIONS, Selection
from kafka_segments.pipeline.run_files import (
    INPUT_MANIFEST,
    OFFSETS,
    PLAN,
    REPORT,
    REQUEST,
    STAGED,
    STAGED_FORMAT_VERSION,
    VALIDATION,
    RunRequest,
    read_request,
    read_run_json,
    read_run_json_or_none,
    read_run_offsets,
    run_file_key,
    write_run_file,
)
from kafka_segments.state import Manifest
from kafka_segments.storage.base import ObjectStore

if TYPE_CHECKING:
    from kafka_segments.pipeline.run_changes import RunChanges
    from kafka_segments.pipeline.run_result import RunResult

__all__ = [
    "INPUT_MANIFEST",
    "OFFSETS",
    "PLAN",
    "REPORT",
    "REQUEST",
    "STAGED",
    "VALIDATION",
    "CommitOutcome",
    "RunRequest",
    "StagedRun",
    "ValidationGateError",
    "commit_staged",
    "execute_run",
    "finish_run",
    "prepare_run",
    "read_request",
    "read_run_json",
    "read_run_offsets",
    "reject_run",
    "snapshot_offsets",
]

VIEW_RUN_ID = "offsets-view"
"""The run id of the throwaway adoption that lets the ``lake`` offsets source see uploaded segments."""


class ValidationGateError(LakeError):
    """The run's staged output has no successful validation, so it is not committed."""


def snapshot_offsets(
    store: ObjectStore,
    choice: OffsetsChoice,
    *,
    now_ms: int,
    dry_run: bool,
    topics: Sequence[str] | None = None,
) -> ResolvedOffsets | None:
    """The consumer offsets of ``now`` (see ``offsets_input``): pinned for ``now`` unless a dry run.

    The ``lake`` source reads ``__consumer_offsets`` as the run will see it, uploaded segments included: the
    same view the inline engine passes after its adoption (only that topic's objects are listed and read)."""
    view = partial(_offsets_topic_view, store)
    return resolve_offsets(store, choice, now_ms=now_ms, dry_run=dry_run, topics=topics, lake_view=view)


def _offsets_topic_view(store: ObjectStore) -> Manifest | None:
    """The head with ``__consumer_offsets``' uploaded segments adopted (read only; ``None``: no head and
    nothing to adopt). Other partitions keep their committed state (absent from the listing, they count as
    quarantined in this throwaway adoption, which leaves them as they are)."""
    base = read_head(store)
    run = RunRecord(VIEW_RUN_ID, "view", None if base is None else base.version, 0, 0)
    listing = list(store.list(CONSUMER_OFFSETS_TOPIC + "-"))
    adoption = adopt_objects(store, base=base, run=run, listing=listing)
    if base is None and not adoption.partitions:
        return None
    return build_manifest(run, base=base, partitions=adoption.partitions)


def prepare_run(
    store: ObjectStore,
    *,
    now_ms: int,
    offsets: ResolvedOffsets | None,
    dry_run: bool,
    selection: Selection = ALL_PARTITIONS,
    labels: Mapping[str, str] | None = None,
    run_id: str | None = None,
    clock: Clock = wall_clock_ms,
) -> RunRequest:
    """Register the run on the current head and record what it is asked to do (``request.json``), with the
    offsets snapshot it uses (``offsets.json``: a dry run's snapshot is stored nowhere else).

    Preparing an already prepared run id again returns its stored request (a retried task)."""
    if run_id is not None:
        existing = read_run_json_or_none(store, run_id, REQUEST)
        if existing is not None:
            return RunRequest.from_dict(existing)
    txn = LakeTransaction.begin(
        store, now_ms=now_ms, operation="run", dry_run=dry_run, run_id=run_id, clock=clock
    )
    request = RunRequest(
        run_id=txn.run_id,
        now_ms=txn.now_ms,
        base_version=txn.run.base_version,
        dry_run=txn.dry_run,
        topics=selection.topics,
        partitions=selection.partitions,
        offsets_snapshot_id=None if offsets is None else offsets.snapshot_id,
        offsets_origin=None if offsets is None else offsets.origin,
        offsets_note="" if offsets is None else offsets.note,
        labels=dict(labels or {}),
    )
    if offsets is not None:
        txn.write_bytes(OFFSETS, snapshot_to_json(offsets.snapshot))
    txn.write_file(REQUEST, request.to_dict())
    return request


@dataclass(frozen=True, slots=True)
class StagedRun:
    """What ``execute_run`` staged."""

    request: RunRequest
    result: RunResult
    changed: bool
    """Whether a new manifest was staged (something to commit)."""
    engine: str


def execute_run(
    store: ObjectStore,
    config: Config,
    run_id: str,
    *,
    engine: Engine | None = None,
    clock: Clock = wall_clock_ms,
) -> StagedRun:
    """Adopt, compact, plan and stage the run's new state (nothing visible to readers).

    The compaction rounds write their output segments under the run's own names (a dry run too: its
    validation checks them; they are swept with the run's other objects).

    Args:
        engine: where reads, compaction rounds and per-topic planning run (default: this process).

    Raises:
        RunStateError: the run is not prepared, or already has an outcome.
    """
    # The stage that compacts: its engine and planning load the compiled kernels (numba), which the
    # other stages (and so the DAG's other tasks) never import.
    from kafka_segments.pipeline.engines.inline import InlineEngine
    from kafka_segments.pipeline.run_changes import plan_changes
    from kafka_segments.pipeline.run_result import RunResult

    request = read_request(store, run_id)
    txn = LakeTransaction.resume(store, run_id, clock=clock)
    if txn.ended() is not None:
        raise RunStateError(
            f"run {run_id!r} has already ended", location=store.location(run_file_key(run_id, ""))
        )
    engine = InlineEngine(store) if engine is None else engine
    adoption = txn.adopt(reader=engine.reader(txn.run))
    offsets = read_run_offsets(store, request)
    changes = plan_changes(
        adoption,
        config,
        run=txn.run,
        engine=engine,
        snapshot=None if offsets is None else offsets.snapshot,
        selection=request.selection,
    )
    txn.write_bytes(INPUT_MANIFEST, manifest_to_json(txn.proposed(adoption.partitions)))
    txn.write_file(PLAN, plan_document(txn.run, changes, offsets))
    changed = txn.stage(changes.partitions, retired=changes.retired)
    result = RunResult(
        run_id,
        request.now_ms,
        request.dry_run,
        txn.run.base_version,
        None,
        offsets,
        adoption,
        changes.plan,
        compaction=changes.compaction,
        previous_now_ms=None if txn.base is None else txn.base.now_ms,
    )
    staged = StagedRun(request, result, changed, engine.name)
    txn.write_file(STAGED, _staged_document(staged))
    return staged


def plan_document(run: RunRecord, changes: RunChanges, offsets: ResolvedOffsets | None) -> dict[str, object]:
    """``plan.json``: what the run plans, with the snapshot it used."""
    from kafka_segments.pipeline.report import plan_to_dict

    return {
        "run_id": run.run_id,
        "now_ms": run.now_ms,
        "base_version": run.base_version,
        "offsets_snapshot": None if offsets is None else offsets.snapshot_id,
        "compaction": changes.compaction.to_dict(),
        "plan": plan_to_dict(changes.plan),
    }


def _staged_document(staged: StagedRun) -> dict[str, Any]:
    from kafka_segments.pipeline.report import run_to_dict

    report = run_to_dict(staged.result)
    report["outcome"] = "staged" if staged.changed else RunOutcome.NOTHING_TO_CHANGE.value
    report["engine"] = staged.engine
    report["labels"] = dict(staged.request.labels)
    return {
        "format_version": STAGED_FORMAT_VERSION,
        "run_id": staged.request.run_id,
        "changed": staged.changed,
        "report": report,
    }


@dataclass(frozen=True, slots=True)
class CommitOutcome:
    run_id: str
    outcome: RunOutcome
    version: int | None


def commit_staged(
    store: ObjectStore, run_id: str, *, require_validation: bool = True, clock: Clock = wall_clock_ms
) -> CommitOutcome:
    """Commit what ``execute_run`` staged (one conditional PUT), or end the run without a commit
    (``LakeTransaction.commit``). Idempotent: a run that already ended reports how.

    Raises:
        ValidationGateError: ``require_validation`` and the staged output has no successful validation.
        CommitConflictError: another run committed first (re-plan from the new head).
        CommitStateUnknownError: the commit's outcome could not be read back (call again or ``recover``).
        RunStateError: the run was not executed, or was aborted (e.g. its validation failed).
    """
    read_run_json(store, run_id, STAGED)  # executed?
    txn = LakeTransaction.resume(store, run_id, clock=clock)
    if txn.ended() is None and require_validation:
        _check_validation(store, run_id)
    outcome = txn.commit()
    if outcome is RunOutcome.LOST and txn.lost_to is not None:
        raise txn.lost_to
    return CommitOutcome(run_id, outcome, txn.committed_version)


def reject_run(store: ObjectStore, run_id: str, *, reason: str, clock: Clock = wall_clock_ms) -> None:
    """End the run without a commit (its validation failed); its staged objects are swept later."""
    txn = LakeTransaction.resume(store, run_id, clock=clock)
    if txn.ended() is None:
        txn.abort(reason)


def _check_validation(store: ObjectStore, run_id: str) -> None:
    location = store.location(run_file_key(run_id, VALIDATION))
    document = read_run_json_or_none(store, run_id, VALIDATION)
    if document is None:
        raise ValidationGateError(
            f"run {run_id!r} has no validation result: validate its staged output before committing",
            location=location,
        )
    if document.get("run_id") != run_id or document.get("success") is not True:
        raise ValidationGateError(
            f"run {run_id!r} failed validation; nothing is committed (see its validation result)",
            location=location,
        )


def finish_run(
    store: ObjectStore, run_id: str, *, gc: GcReport | Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """The run's report (``report.json``): the staged report with the outcome, the committed version, the
    validation summary and gc (the report, or its ``to_dict()`` as an orchestrator passes it between tasks).
    Returns the document."""
    staged = read_run_json(store, run_id, STAGED)
    report: dict[str, Any] = dict(staged["report"])
    ended = read_outcome(store, run_id)
    if ended is None:
        report["outcome"] = "not committed"
    elif ended.outcome is Outcome.COMMITTED:
        report["outcome"] = RunOutcome.COMMITTED.value
        report["committed_version"] = ended.version
    else:
        report["outcome"] = RunOutcome.DRY_RUN.value if report.get("dry_run") else ended.reason or "aborted"
    validation = read_run_json_or_none(store, run_id, VALIDATION)
    report["validation"] = None if validation is None else _validation_summary(validation)
    report["gc"] = None if gc is None else dict(gc) if isinstance(gc, Mapping) else gc.to_dict()
    report["report_key"] = run_file_key(run_id, REPORT)
    write_run_file(store, run_id, REPORT, report)
    return report


def _validation_summary(document: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "success": document.get("success"),
        "suites": [
            {"name": suite.get("name"), "success": suite.get("success")}
            for suite in document.get("suites", [])
        ],
        "data_docs": document.get("data_docs"),
        "page": document.get("page"),
        "key": run_file_key(str(document.get("run_id")), VALIDATION),
    }
