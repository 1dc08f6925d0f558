"""The rows the validation suites check: a staged run's output as plain column data (no pandas, no GX).

``quality_frames(store, run_id, config=...)`` reads the run's folder and returns two tables as
``column name -> values``:

* ``partitions``: one row per partition of the run's input or staged state;
* ``deletions``: one row per segment this run retires (the staged manifest's retired entries of this run's
  version), with the segment as the input state described it.

The rows are built from the run's files, **independently of the plan's own claims where possible**: the
"before" state is ``input-manifest.json`` (the adopted state the plan ran on), the "after" state is the staged
``manifest.json``, the retired segments and their reasons come from the staged manifest, and the rule limits
come from the configuration and the run's logical ``now``. Only KIP-68's M (``consumed_bound``) and whether a
partition was planned are taken from ``plan.json``.

Each acceptance invariant is then one expectation over raw columns (see ``segment_quality.suites``). The
Kafka rules behind the columns (``UnifiedLog.deleteOldSegments`` / ``deletableSegments`` and the
``deleteLogStartOffsetBreachedSegments``, ``deleteRetentionSizeBreachedSegments`` and
``deleteRetentionMsBreachedSegments`` predicates, plus this project's KIP-68 pass; see
``kafka_segments.retention.rules``):

* a pass that does not run for the topic (``cleanup.policy`` without ``delete``, ``retention.ms`` or
  ``retention.bytes`` negative, consumed retention disabled) has its limit column ``None``: a deletion with
  that reason is then not allowed at all;
* ``log-start-offset``: the next segment starts at or below the log start offset;
* ``retention.bytes``: what is left of the log after the segment (every later segment) is still at least
  ``retention.bytes`` (Kafka's ``diff - segment.size >= 0`` walk);
* ``consumed``: the segment's last offset is below M and
  ``now - largestTimestamp > retention.commitoffset.ms``;
* ``retention.ms``: ``now - largestTimestamp > retention.ms`` (strict), i.e. the largest timestamp is below
  ``now - retention.ms``.

A run that staged no manifest (nothing changed) gives frames with zero rows and ``staged`` false.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from types import MappingProxyType
from typing import Any

from kafka_segments.config import Config, TopicConfig
from kafka_segments.errors import LakeError, ObjectNotFoundError, RunStateError
from kafka_segments.lake.codec import manifest_from_json
from kafka_segments.lake.history import location_of
from kafka_segments.lake.layout import staged_manifest_key
from kafka_segments.lake.manifest import Manifest, PartitionState, RetiredObject, SegmentEntry
from kafka_segments.pipeline.run_files import (
    INPUT_MANIFEST,
    PLAN,
    STAGED,
    read_request,
    read_run_json,
    run_file_key,
)
from kafka_segments.retention.rules import DeletionReason, last_offset_of, passes_for
from kafka_segments.storage.base import ObjectStore
from kafka_segments.topic_partition import TopicPartition


class ColumnKind(Enum):
    """What a column holds (``None`` is allowed in every column: "not known" or "does not apply")."""

    INT = "int"
    STR = "str"
    BOOL = "bool"


_INT, _STR, _BOOL = ColumnKind.INT, ColumnKind.STR, ColumnKind.BOOL

PARTITION_COLUMNS: Mapping[str, ColumnKind] = MappingProxyType(
    {
        "topic": _STR,
        "partition": _INT,
        "plan_status": _STR,  # planned | skipped (quarantined) | not-planned (outside the run's selection)
        "old_log_start_offset": _INT,  # input state
        "new_log_start_offset": _INT,  # staged state
        "log_end_offset": _INT,  # input state (retention never moves the log end)
        "new_log_end_offset": _INT,  # staged state
        "segments_before": _INT,
        "segments_after": _INT,
        "segments_retired": _INT,  # this run's retired entries of the partition
        "segments_added": _INT,  # staged live segments the input did not have
        "segments_kept_plus_retired": _INT,  # segments_after + segments_retired
        "bytes_before": _INT,
        "bytes_after": _INT,
        "bytes_retired": _INT,  # sizes of the retired segments as the input described them
        "bytes_kept_plus_retired": _INT,
        "min_kept_base_offset": _INT,  # None when no segment is left
        "max_retired_next_offset": _INT,  # None when nothing is retired
        "retired_is_prefix": _BOOL,  # informative (Data Docs readers); the suite compares the raw offsets
        "consumed_bound": _INT,  # KIP-68's M from plan.json (None: does not apply, -1: unreadable groups)
    }
)

DELETION_COLUMNS: Mapping[str, ColumnKind] = MappingProxyType(
    {
        "topic": _STR,
        "partition": _INT,
        "key": _STR,
        "reason": _STR,  # the pass: log-start-offset | retention.bytes | consumed | retention.ms
        "position": _INT,  # index of the segment in the input's live list (None: not an input segment)
        "base_offset": _INT,
        "last_offset": _INT,  # the last offset it could hold (empty segment: before the next one's base)
        "next_offset": _INT,
        "size": _INT,
        "largest_timestamp_ms": _INT,  # Kafka's LogSegment.largestTimestamp (max batch timestamp, else mtime)
        "following_base_offset": _INT,  # the next input segment's base (None for the last segment)
        "bytes_after_segment": _INT,  # sum of the sizes of every later input segment
        "old_log_start_offset": _INT,
        "new_log_start_offset": _INT,
        "log_end_offset": _INT,
        "now_ms": _INT,
        "log_start_offset_bound": _INT,  # old log start offset when the log-start-offset pass runs, else None
        "retention_bytes": _INT,  # when the retention.bytes pass runs (retention.bytes >= 0), else None
        "consumed_bound": _INT,  # M (plan.json)
        "consumed_limit_timestamp_ms": _INT,  # now - retention.commitoffset.ms when the consumed pass runs
        "limit_timestamp_ms": _INT,  # now - retention.ms when the retention.ms pass runs, else None
    }
)

PLANNED, SKIPPED, NOT_PLANNED = "planned", "skipped", "not-planned"

Row = dict[str, object]


class QualityInputError(LakeError):
    """The run's files contradict each other (e.g. ``staged.json`` says something changed but no manifest
    was staged): there is nothing consistent to validate."""


@dataclass(frozen=True, slots=True)
class QualityFrames:
    """A staged run's output as two tables (``column name -> values``, same length per table)."""

    partitions: Mapping[str, Sequence[object]]
    """One row per planned partition (``PARTITION_COLUMNS``)."""
    deletions: Mapping[str, Sequence[object]]
    """One row per segment this run retires (``DELETION_COLUMNS``)."""
    staged: bool = True
    """False when the run staged no manifest (nothing to change): both tables are empty."""

    @property
    def partition_rows(self) -> int:
        return len(self.partitions["topic"])

    @property
    def deletion_rows(self) -> int:
        return len(self.deletions["topic"])


@dataclass(frozen=True, slots=True)
class TopicLimits:
    """The limits the deletion passes apply to one topic at ``now`` (``None``: the pass does not run)."""

    log_start_offset_pass: bool
    retention_bytes: int | None
    consumed_limit_timestamp_ms: int | None
    limit_timestamp_ms: int | None

    @classmethod
    def of(cls, config: TopicConfig, *, now_ms: int) -> TopicLimits:
        """Kafka's policy dispatch (``passes_for``) and each pass's own "does nothing" condition."""
        passes = passes_for(config)
        return cls(
            log_start_offset_pass=DeletionReason.LOG_START_OFFSET in passes,
            retention_bytes=config.retention_bytes
            if DeletionReason.RETENTION_BYTES in passes and config.retention_bytes >= 0
            else None,
            consumed_limit_timestamp_ms=now_ms - config.consumed_retention_ms
            if DeletionReason.CONSUMED in passes and config.consumed_retention_enabled
            else None,
            limit_timestamp_ms=now_ms - config.retention_ms
            if DeletionReason.RETENTION_MS in passes and config.retention_ms >= 0
            else None,
        )


@dataclass(frozen=True, slots=True)
class PlanEntry:
    """What ``plan.json`` says about one partition (only these two facts are taken from the plan)."""

    status: str
    consumed_bound: int | None


def quality_frames(store: ObjectStore, run_id: str, *, config: Config) -> QualityFrames:
    """The tables of run ``run_id``'s staged output.

    Raises:
        RunStateError: the run was not prepared or not executed (a file of its folder is missing).
        ManifestFormatError: the input or staged manifest is not a valid manifest.
        QualityInputError: ``staged.json`` says a manifest was staged but there is none.
    """
    now_ms = read_request(store, run_id).now_ms
    staged = _staged_manifest(store, run_id)
    changed = read_run_json(store, run_id, STAGED).get("changed") is True
    if staged is None:
        if changed:
            raise QualityInputError(
                f"run {run_id!r}: staged.json says the run changed the lake but it staged no manifest",
                location=location_of(store, staged_manifest_key(run_id)),
            )
        return QualityFrames(_columns([], PARTITION_COLUMNS), _columns([], DELETION_COLUMNS), staged=False)
    before = _input_manifest(store, run_id)
    plan = _plan_entries(read_run_json(store, run_id, PLAN))
    partition_rows, deletion_rows = build_rows(before, staged, plan, config=config, now_ms=now_ms)
    return QualityFrames(
        _columns(partition_rows, PARTITION_COLUMNS), _columns(deletion_rows, DELETION_COLUMNS)
    )


def build_rows(
    before: Manifest,
    after: Manifest,
    plan: Mapping[TopicPartition, PlanEntry],
    *,
    config: Config,
    now_ms: int,
) -> tuple[list[Row], list[Row]]:
    """The partition and deletion rows of ``before`` (input state) → ``after`` (staged manifest)."""
    old, new = before.partition_map(), after.partition_map()
    retired = _retired_by_partition(after)
    limits: dict[str, TopicLimits] = {}
    partition_rows: list[Row] = []
    deletion_rows: list[Row] = []
    for tp in sorted({*old, *new, *retired}, key=lambda tp: (tp.topic, tp.partition)):
        entry = plan.get(tp, PlanEntry(NOT_PLANNED, None))
        mine = retired.get(tp, [])
        partition_rows.append(partition_row(tp, old.get(tp), new.get(tp), mine, entry))
        if tp.topic not in limits:
            limits[tp.topic] = TopicLimits.of(config.for_topic(tp.topic), now_ms=now_ms)
        deletion_rows.extend(
            deletion_row(item, old.get(tp), new.get(tp), entry, limits[tp.topic], now_ms=now_ms)
            for item in _in_log_order(mine, old.get(tp))
        )
    return partition_rows, deletion_rows


def partition_row(
    tp: TopicPartition,
    before: PartitionState | None,
    after: PartitionState | None,
    retired: Sequence[RetiredObject],
    entry: PlanEntry,
) -> Row:
    """One partition: offsets before and after, and how segments and bytes reconcile."""
    input_segments = {s.key: s for s in before.segments} if before is not None else {}
    retired_segments = [input_segments[r.key] for r in retired if r.key in input_segments]
    kept = after.segments if after is not None else ()
    segments_after = len(kept) if after is not None else None
    bytes_after = sum(s.size for s in kept) if after is not None else None
    bytes_retired = sum(s.size for s in retired_segments)
    return {
        "topic": tp.topic,
        "partition": tp.partition,
        "plan_status": entry.status,
        "old_log_start_offset": None if before is None else before.log_start_offset,
        "new_log_start_offset": None if after is None else after.log_start_offset,
        "log_end_offset": None if before is None else before.log_end_offset,
        "new_log_end_offset": None if after is None else after.log_end_offset,
        "segments_before": None if before is None else len(before.segments),
        "segments_after": segments_after,
        "segments_retired": len(retired),
        "segments_added": sum(1 for s in kept if s.key not in input_segments),
        "segments_kept_plus_retired": None if segments_after is None else segments_after + len(retired),
        "bytes_before": None if before is None else before.size_bytes,
        "bytes_after": bytes_after,
        "bytes_retired": bytes_retired,
        "bytes_kept_plus_retired": None if bytes_after is None else bytes_after + bytes_retired,
        "min_kept_base_offset": min((s.base_offset for s in kept), default=None),
        "max_retired_next_offset": max((s.next_offset for s in retired_segments), default=None),
        "retired_is_prefix": _is_prefix(before, {r.key for r in retired}),
        "consumed_bound": entry.consumed_bound,
    }


def deletion_row(
    retired: RetiredObject,
    before: PartitionState | None,
    after: PartitionState | None,
    entry: PlanEntry,
    limits: TopicLimits,
    *,
    now_ms: int,
) -> Row:
    """One retired segment, described by the input state (segment columns ``None`` if it was not live)."""
    segments = before.segments if before is not None else ()
    position = next((i for i, s in enumerate(segments) if s.key == retired.key), None)
    old_lso = None if before is None else before.log_start_offset
    return {
        "topic": retired.topic_partition.topic,
        "partition": retired.topic_partition.partition,
        "key": retired.key,
        "reason": retired.reason,
        "position": position,
        **_segment_columns(segments, position),
        "old_log_start_offset": old_lso,
        "new_log_start_offset": None if after is None else after.log_start_offset,
        "log_end_offset": None if before is None else before.log_end_offset,
        "now_ms": now_ms,
        "log_start_offset_bound": old_lso if limits.log_start_offset_pass else None,
        "retention_bytes": limits.retention_bytes,
        "consumed_bound": entry.consumed_bound,
        "consumed_limit_timestamp_ms": limits.consumed_limit_timestamp_ms,
        "limit_timestamp_ms": limits.limit_timestamp_ms,
    }


def _segment_columns(segments: Sequence[SegmentEntry], position: int | None) -> Row:
    names = (
        "base_offset",
        "last_offset",
        "next_offset",
        "size",
        "largest_timestamp_ms",
        "following_base_offset",
        "bytes_after_segment",
    )
    if position is None:
        return dict.fromkeys(names)
    segment = segments[position]
    following = segments[position + 1] if position + 1 < len(segments) else None
    return {
        "base_offset": segment.base_offset,
        "last_offset": last_offset_of(segment, following),
        "next_offset": segment.next_offset,
        "size": segment.size,
        "largest_timestamp_ms": segment.largest_timestamp_ms,
        "following_base_offset": None if following is None else following.base_offset,
        "bytes_after_segment": sum(s.size for s in segments[position + 1 :]),
    }


def _is_prefix(before: PartitionState | None, retired_keys: set[str]) -> bool:
    if before is None:
        return not retired_keys
    prefix = {s.key for s in before.segments[: len(retired_keys)]}
    return prefix == retired_keys


def _retired_by_partition(after: Manifest) -> dict[TopicPartition, list[RetiredObject]]:
    """The retired entries this run adds: stamped with the version the staged manifest would become."""
    grouped: dict[TopicPartition, list[RetiredObject]] = {}
    for item in after.retired:
        if item.retired_in_version == after.version:
            grouped.setdefault(item.topic_partition, []).append(item)
    return grouped


def _in_log_order(retired: Sequence[RetiredObject], before: PartitionState | None) -> list[RetiredObject]:
    """Oldest segment first; entries that were no live input segment last, by key."""
    positions = {s.key: i for i, s in enumerate(before.segments)} if before is not None else {}
    unknown = len(positions)
    return sorted(retired, key=lambda item: (positions.get(item.key, unknown), item.key))


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
    key = run_file_key(run_id, INPUT_MANIFEST)
    manifest = _manifest_or_none(store, key)
    if manifest is None:
        raise RunStateError(
            f"run {run_id!r} has no {INPUT_MANIFEST} (has the execute stage run?)",
            location=location_of(store, key),
        )
    return manifest


def _staged_manifest(store: ObjectStore, run_id: str) -> Manifest | None:
    return _manifest_or_none(store, staged_manifest_key(run_id))


def _manifest_or_none(store: ObjectStore, key: str) -> Manifest | None:
    try:
        data = store.get(key)
    except ObjectNotFoundError:
        return None
    return manifest_from_json(data, location=location_of(store, key))
