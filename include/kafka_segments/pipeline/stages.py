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
from kafka_segments.lake.history import read_head_topic
from kafka_segments.lake.run_folder import (
    INPUT_MANIFEST,
    OFFSETS,
    PLAN,
    REPORT,
    STAGED,
    STAGED_FORMAT_VERSION,
    VALIDATION,
    has_run_file,
    read_run,
    read_run_bytes,
    read_run_json,
    read_run_json_or_none,
    run_file_key,
)
from kafka_segments.lake.runs import ALL_PARTITIONS, RunOutcome, RunRecord, RunRequest, Selection
from kafka_segments.lake.staging import build_manifest
from kafka_segments.lake.transaction import LakeTransaction
from kafka_segments.offsets.lake_source import CONSUMER_OFFSETS_TOPIC
from kafka_segments.offsets.snapshot_codec import snapshot_from_json, snapshot_to_json
from kafka_segments.pipeline.engines.base import Engine
from kafka_segments.pipeline.offsets_input import OffsetsChoice, ResolvedOffsets, resolve_offsets
from kafka_segments.pipeline.run_report_file import finish_run
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
    "STAGED",
    "VALIDATION",
    "CommitOutcome",
    "StagedRun",
    "ValidationGateError",
    "commit_staged",
    "execute_run",
    "finish_run",
    "next_run_offsets",
    "prepare_run",
    "read_prepared_run",
    "read_run_json",
    "read_run_offsets",
    "reject_run",
    "snapshot_offsets",
]

RUN_OPERATION = "run"
"""The operation of a run the stages prepare (``run.json``)."""

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


def next_run_offsets(
    store: ObjectStore, *, now_ms: int, source: str | None = None, file: str | None = None
) -> ResolvedOffsets | None:
    """The offsets a run at ``now_ms`` with that source or file would use: what ``describe`` and the lake view
    show (a dry run's ``snapshot_offsets``; a live cluster is not asked, which the snapshot's note says)."""
    choice = OffsetsChoice(file=file, source=source, ask_live=False)
    return snapshot_offsets(store, choice, now_ms=now_ms, dry_run=True)


def _offsets_topic_view(store: ObjectStore) -> Manifest | None:
    """The head's ``__consumer_offsets`` partitions with their uploaded segments adopted (read only;
    ``None``: no head and nothing to adopt); no other partition is read."""
    base = read_head_topic(store, CONSUMER_OFFSETS_TOPIC)
    run = RunRecord(VIEW_RUN_ID, "view", None if base is None else base.version, 0, 0)
    listing = list(store.list(CONSUMER_OFFSETS_TOPIC + "-"))
    adoption = adopt_objects(store, base=base, run=run, listing=listing)
    if base is None and not adoption.partitions:
        return None
    return build_manifest(run, base=base, partitions=adoption.partitions)


def prepare_run(  # noqa: PLR0913 - the run's request, field by field, keyword-only
    store: ObjectStore,
    *,
    now_ms: int,
    offsets: ResolvedOffsets | None,
    dry_run: bool,
    selection: Selection = ALL_PARTITIONS,
    labels: Mapping[str, str] | None = None,
    full_listing: bool = False,
    run_id: str | None = None,
    clock: Clock = wall_clock_ms,
) -> RunRecord:
    """Register the run on the current head with what it is asked to do (its ``run.json``), and the
    offsets snapshot it uses (``offsets.json``: a dry run's snapshot is stored nowhere else).
    ``full_listing``: its adoption lists the whole lake (``RunRequest.full_listing``).

    Preparing an already prepared run id again returns its stored record (a retried task)."""
    request = RunRequest(
        selection=selection,
        offsets_snapshot_id=None if offsets is None else offsets.snapshot_id,
        offsets_origin=None if offsets is None else offsets.origin,
        offsets_note="" if offsets is None else offsets.note,
        labels=dict(labels or {}),
        full_listing=full_listing,
    )
    txn = LakeTransaction.begin(
        store,
        now_ms=now_ms,
        operation=RUN_OPERATION,
        dry_run=dry_run,
        run_id=run_id,
        request=request,
        clock=clock,
    )
    record = txn.run
    stored = record.request.offsets_origin is None or has_run_file(store, record.run_id, OFFSETS)
    if offsets is not None and not stored:  # a retried task keeps the first one's
        txn.write_bytes(OFFSETS, snapshot_to_json(offsets.snapshot))
    return record


def read_prepared_run(store: ObjectStore, run_id: str) -> RunRecord:
    """The record of a run ``prepare_run`` registered.

    Raises:
        RunStateError: no such run, or the run is another operation's (adopt, delete-records, a fence).
    """
    return _prepared(store, read_run(store, run_id))


def _prepared(store: ObjectStore, record: RunRecord) -> RunRecord:
    if record.operation != RUN_OPERATION:
        raise RunStateError(
            f"run {record.run_id!r} is a {record.operation!r} run, not one prepared by the run's stages",
            location=store.location(run_file_key(record.run_id, "")),
        )
    return record


def read_run_offsets(store: ObjectStore, record: RunRecord) -> ResolvedOffsets | None:
    """The offsets snapshot the run uses (from its folder; ``None``: the run has none).

    Raises:
        RunStateError: the run names a snapshot its folder lacks.
    """
    request = record.request
    if request.offsets_origin is None:
        return None
    data = read_run_bytes(store, record.run_id, OFFSETS)
    snapshot = snapshot_from_json(data, location=store.location(run_file_key(record.run_id, OFFSETS)))
    return ResolvedOffsets(
        snapshot, request.offsets_snapshot_id, request.offsets_origin, request.offsets_note
    )


@dataclass(frozen=True, slots=True)
class StagedRun:
    """What ``execute_run`` staged."""

    record: RunRecord
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
    from kafka_segments.pipeline.run_scope import adopt_in_scope

    txn = LakeTransaction.resume(store, run_id, clock=clock)
    record = _prepared(store, txn.run)
    if txn.ended() is not None:
        raise RunStateError(
            f"run {run_id!r} has already ended", location=store.location(run_file_key(run_id, ""))
        )
    engine = InlineEngine(store) if engine is None else engine
    offsets = read_run_offsets(store, record)
    snapshot = None if offsets is None else offsets.snapshot
    adoption = adopt_in_scope(
        txn,
        config,
        snapshot=snapshot,
        reader=engine.reader(txn.run),
        full_listing=record.request.full_listing,
    )
    # Before the compaction rounds stage anything: gc finds the run's objects there (``lake.gc_listing``).
    txn.write_bytes(INPUT_MANIFEST, manifest_to_json(txn.proposed(adoption.partitions)))
    changes = plan_changes(
        adoption,
        config,
        run=txn.run,
        engine=engine,
        snapshot=None if offsets is None else offsets.snapshot,
        selection=record.selection,
    )
    txn.write_file(PLAN, plan_document(txn.run, changes, offsets))
    changed = txn.stage(changes.partitions, retired=changes.retired)
    result = RunResult(
        run_id=run_id,
        now_ms=record.now_ms,
        dry_run=record.dry_run,
        base_version=record.base_version,
        committed_version=None,
        offsets=offsets,
        adoption=adoption,
        plan=changes.plan,
        compaction=changes.compaction,
        previous_now_ms=None if txn.base is None else txn.base.now_ms,
    )
    staged = StagedRun(record, result, changed, engine.name)
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
    report["labels"] = dict(staged.record.request.labels)
    return {
        "format_version": STAGED_FORMAT_VERSION,
        "run_id": staged.record.run_id,
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


def reject_run(
    store: ObjectStore,
    run_id: str,
    *,
    reason: str,
    outcome: RunOutcome = RunOutcome.REJECTED,
    clock: Clock = wall_clock_ms,
) -> None:
    """End the run without a commit, as ``outcome`` (by default: its validation failed); its staged objects
    are swept later."""
    txn = LakeTransaction.resume(store, run_id, clock=clock)
    if txn.ended() is None:
        txn.abort(reason, outcome=outcome)


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
