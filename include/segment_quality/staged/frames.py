"""The rows the validation suites check: a staged run's output as plain column data (no pandas, no GX).

``quality_frames(store, run_id, config=...)`` returns four tables (``staged.columns``) built from the run's
files, **independently of the plan's own claims where possible**: before is ``input-manifest.json``, after
the staged ``manifest.json``, the limits come from the configuration and ``now``. Only KIP-68's M, whether a
partition was planned, and each round's status and end offset come from ``plan.json``. A run that staged no
manifest gives tables with zero rows and ``staged`` false."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kafka_segments.config import Config
from kafka_segments.errors import LakeError, RunStateError
from kafka_segments.lake.run_folder import (
    INPUT_MANIFEST,
    PLAN,
    STAGED,
    STAGED_MANIFEST,
    read_run,
    read_run_json,
    read_run_manifest,
    run_file_key,
)
from kafka_segments.state import Manifest, SegmentEntry
from kafka_segments.storage.base import ObjectStore
from kafka_segments.topic_partition import TopicPartition

from segment_quality.staged.columns import (
    COMPACTION,
    COMPACTION_COLUMNS,
    DELETION_COLUMNS,
    DELETIONS,
    PARTITION_COLUMNS,
    PARTITIONS,
    SEGMENT_COLUMNS,
    SEGMENTS,
    ColumnKind,
)
from segment_quality.staged.compaction import (
    RoundClaim,
    compaction_row,
    log_changes,
    read_retired_output,
    round_claims,
    segment_rows,
)
from segment_quality.staged.retention import (
    NOT_PLANNED,
    PLANNED,
    SKIPPED,
    PlanEntry,
    TopicLimits,
    plan_entry,
    retention_rows,
)

__all__ = [
    "COMPACTION_COLUMNS",
    "DELETION_COLUMNS",
    "NOT_PLANNED",
    "PARTITION_COLUMNS",
    "PLANNED",
    "SEGMENT_COLUMNS",
    "SKIPPED",
    "ColumnKind",
    "PlanEntry",
    "QualityFrames",
    "QualityInputError",
    "TopicLimits",
    "frames_of",
    "quality_frames",
]

Row = dict[str, object]
Columns = Mapping[str, Sequence[object]]


class QualityInputError(LakeError):
    """The run's files contradict each other (e.g. ``staged.json`` says something changed but no manifest
    was staged): there is nothing consistent to validate."""


def _empty(names: Mapping[str, ColumnKind]) -> dict[str, tuple[object, ...]]:
    return dict.fromkeys(names, ())


@dataclass(frozen=True, slots=True)
class QualityFrames:
    """A staged run's output as four tables (``column name -> values``, same length per table)."""

    partitions: Columns
    """One row per partition (``PARTITION_COLUMNS``)."""
    deletions: Columns
    """One row per segment this run retires (``DELETION_COLUMNS``)."""
    staged: bool = True
    """False when the run staged no manifest (nothing to change): every table is empty."""
    compaction: Columns = field(default_factory=lambda: _empty(COMPACTION_COLUMNS))
    """One row per partition, the cleaning round's view (``COMPACTION_COLUMNS``)."""
    segments: Columns = field(default_factory=lambda: _empty(SEGMENT_COLUMNS))
    """One row per segment of a partition the compaction touched (``SEGMENT_COLUMNS``)."""

    @property
    def partition_rows(self) -> int:
        return len(self.partitions["topic"])

    @property
    def deletion_rows(self) -> int:
        return len(self.deletions["topic"])

    def table(self, name: str) -> Columns:
        """The table a suite runs over, by name (``staged.columns.TABLE_COLUMNS``).

        Raises:
            KeyError: no table has that name.
        """
        tables = {
            PARTITIONS: self.partitions,
            DELETIONS: self.deletions,
            COMPACTION: self.compaction,
            SEGMENTS: self.segments,
        }
        return tables[name]


def quality_frames(store: ObjectStore, run_id: str, *, config: Config) -> QualityFrames:
    """The tables of run ``run_id``'s staged output.

    Raises:
        RunStateError: the run was not prepared or not executed (a file of its folder is missing).
        ManifestFormatError: the input or staged manifest is not a valid manifest.
        QualityInputError: ``staged.json`` says a manifest was staged but there is none.
        ObjectStoreError: the store could not be read.
    """
    changed = read_run_json(store, run_id, STAGED).get("changed") is True  # executed?
    now_ms = read_run(store, run_id).now_ms
    staged = _staged_manifest(store, run_id)
    if staged is None:
        if changed:
            raise QualityInputError(
                f"run {run_id!r}: staged.json says the run changed the lake but it staged no manifest",
                location=store.location(run_file_key(run_id, STAGED_MANIFEST)),
            )
        return QualityFrames(_empty(PARTITION_COLUMNS), _empty(DELETION_COLUMNS), staged=False)
    before = _input_manifest(store, run_id)
    document = read_run_json(store, run_id, PLAN)
    return frames_of(
        before,
        staged,
        _plan_entries(document),
        config=config,
        now_ms=now_ms,
        claims=round_claims(document),
        written=read_retired_output(store, before, staged),
    )


def frames_of(
    before: Manifest,
    after: Manifest,
    plan: Mapping[TopicPartition, PlanEntry],
    *,
    config: Config,
    now_ms: int,
    claims: Mapping[TopicPartition, RoundClaim] | None = None,
    written: Mapping[str, SegmentEntry] | None = None,
) -> QualityFrames:
    """The tables of ``before`` (input state) -> ``after`` (staged manifest).

    Args:
        plan: each partition's plan status and M (``plan.json``'s retention plan).
        claims: each partition's round status and end offset (``plan.json``'s compaction section).
        written: entries of this run's output segments a pass retired again (``read_retired_output``).
    """
    changes = log_changes(before, after, claims or {}, written or {})
    partition_rows, deletion_rows = retention_rows(changes, plan, config=config, now_ms=now_ms)
    compaction = [
        compaction_row(change, config, plan_status=plan_entry(plan, change.topic_partition).status)
        for change in changes
    ]
    segments = [row for change in changes for row in segment_rows(change)]
    return QualityFrames(
        _columns(partition_rows, PARTITION_COLUMNS),
        _columns(deletion_rows, DELETION_COLUMNS),
        compaction=_columns(compaction, COMPACTION_COLUMNS),
        segments=_columns(segments, SEGMENT_COLUMNS),
    )


def _columns(rows: Sequence[Row], names: Mapping[str, ColumnKind]) -> dict[str, tuple[object, ...]]:
    return {name: tuple(row[name] for row in rows) for name in names}


def _plan_entries(document: Mapping[str, Any]) -> dict[TopicPartition, PlanEntry]:
    """Each planned partition's status and M from ``plan.json`` (``plan_to_dict``'s per-partition form)."""
    plan = document.get("plan")
    partitions = plan.get("partitions", []) if isinstance(plan, Mapping) else []
    entries: dict[TopicPartition, PlanEntry] = {}
    for item in partitions:
        consumed = item.get("consumed") or {}
        bound = consumed.get("min_committed_offset")
        status = SKIPPED if item.get("skipped") is not None else PLANNED
        tp = TopicPartition(str(item["topic"]), int(item["partition"]))
        entries[tp] = PlanEntry(status, None if bound is None else int(bound))
    return entries


def _input_manifest(store: ObjectStore, run_id: str) -> Manifest:
    manifest = read_run_manifest(store, run_id, INPUT_MANIFEST)
    if manifest is None:
        raise RunStateError(
            f"run {run_id!r} has no {INPUT_MANIFEST} (has the execute stage run?)",
            location=store.location(run_file_key(run_id, INPUT_MANIFEST)),
        )
    return manifest


def _staged_manifest(store: ObjectStore, run_id: str) -> Manifest | None:
    return read_run_manifest(store, run_id, STAGED_MANIFEST)
