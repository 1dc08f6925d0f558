"""The expectation suites, declared as data: every invariant is one GX expectation over raw columns of
``kafka_segments.pipeline.quality_frames`` (no GX import here; ``gx_runtime`` turns them into GX objects).

Suites and the Kafka rules they check (KAFKA-SEMANTICS §2 and Part L; Kafka's ``UnifiedLog`` in
``storage/src/main/java/org/apache/kafka/storage/internals/log/UnifiedLog.java``):

``retention.partitions`` (one row per partition)
    the log start offset only moves forward (``maybeIncrementLogStartOffset``) and never past the high
    watermark, which is the log end offset in the lake (it throws ``OffsetOutOfRangeException`` beyond it);
    deletion never moves the log end; the deleted segments are a prefix of the log (``deletableSegments``
    stops at the first segment that is not deletable) and lie wholly below the new log start offset
    (``deleteSegments`` moves it to the base of the segment after the last deleted one); segments and bytes
    reconcile (before = kept + retired; retention never adds a segment); a partition the run did not plan
    (outside the selection, or quarantined) is left as it was.

``retention.deletions`` (one row per retired segment)
    each retired segment was a live segment of the input, retired once, for one of the four passes, and
    that pass runs for the topic and allows it: ``log-start-offset`` — the next segment starts at or below
    the log start offset (``deleteLogStartOffsetBreachedSegments``; never the last segment);
    ``retention.bytes`` — the log after the segment is still at least retention.bytes
    (``deleteRetentionSizeBreachedSegments``); ``consumed`` (KIP-68, Part L) — last offset below M and older
    than retention.commitoffset.ms; ``retention.ms`` — largest timestamp below ``now - retention.ms``
    (``deleteRetentionMsBreachedSegments``, strict). An empty last segment is never deleted
    (``deletableSegments``).

``compaction`` — its invariants (cleanable range, keys retained, tombstone horizon, …) come with the
compaction issue: add its ``SuiteSpec``\\ s to ``COMPACTION_SUITES`` (with the frames they need in
``quality_frames``); ``suite_specs()`` already runs whatever is listed there.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from kafka_segments.pipeline.quality_frames import DELETION_COLUMNS, PARTITION_COLUMNS, ColumnKind

PARTITIONS = "partitions"
DELETIONS = "deletions"
EITHER_MISSING = "either_value_is_missing"
REASONS = ("log-start-offset", "retention.bytes", "consumed", "retention.ms")


@dataclass(frozen=True, slots=True)
class When:
    """A row condition: ``column == value``, ``column != value`` or ``column is null`` (``op="null"``)."""

    column: str
    op: str
    value: str | int | None = None


@dataclass(frozen=True, slots=True)
class Invariant:
    """One expectation: a GX expectation class (``great_expectations.expectations``) with its arguments."""

    name: str
    rule: str
    """What Kafka does and where (shown in Data Docs and in failure messages)."""
    expectation: str
    kwargs: Mapping[str, object]
    when: When | None = None

    def columns(self) -> tuple[str, ...]:
        """Every column the expectation reads."""
        names = [str(v) for k, v in self.kwargs.items() if k in {"column", "column_A", "column_B"}]
        listed = self.kwargs.get("column_list")
        if isinstance(listed, list | tuple):
            names.extend(str(name) for name in listed)
        if self.when is not None:
            names.append(self.when.column)
        return tuple(names)


@dataclass(frozen=True, slots=True)
class SuiteSpec:
    """A suite over one frame of ``QualityFrames`` (``partitions`` or ``deletions``)."""

    name: str
    frame: str
    invariants: tuple[Invariant, ...]
    index_columns: tuple[str, ...] = field(default=("topic", "partition"))
    """Columns that name a failing row in the results."""


def _pair(
    name: str, rule: str, a: str, b: str, *, strict: bool = False, when: When | None = None
) -> Invariant:
    """``a > b`` (``strict``) or ``a >= b`` on every row where both are known."""
    kwargs = {"column_A": a, "column_B": b, "or_equal": not strict, "ignore_row_if": EITHER_MISSING}
    return Invariant(name, rule, "ExpectColumnPairValuesAToBeGreaterThanB", kwargs, when)


def _equal(name: str, rule: str, a: str, b: str, *, when: When | None = None) -> Invariant:
    kwargs = {"column_A": a, "column_B": b, "ignore_row_if": EITHER_MISSING}
    return Invariant(name, rule, "ExpectColumnPairValuesToBeEqual", kwargs, when)


def _known(name: str, rule: str, column: str, *, when: When | None = None) -> Invariant:
    return Invariant(name, rule, "ExpectColumnValuesToNotBeNull", {"column": column}, when)


def _reason(value: str) -> When:
    return When("reason", "==", value)


UNPLANNED = When("plan_status", "!=", "planned")

RETENTION_PARTITIONS = SuiteSpec(
    "retention.partitions",
    PARTITIONS,
    (
        Invariant(
            "one-row-per-partition",
            "each partition appears once",
            "ExpectCompoundColumnsToBeUnique",
            {"column_list": ["topic", "partition"]},
        ),
        _known("partition-in-input", "a staged partition existed in the run's input", "old_log_start_offset"),
        _known("partition-in-staged-state", "no partition disappears", "new_log_start_offset"),
        _pair(
            "log-start-offset-never-decreases",
            "UnifiedLog.maybeIncrementLogStartOffset only ever increases the log start offset",
            "new_log_start_offset",
            "old_log_start_offset",
        ),
        _pair(
            "log-start-offset-within-log",
            "the new log start offset is at most the high watermark = log end offset "
            "(maybeIncrementLogStartOffset: OffsetOutOfRangeException beyond it)",
            "log_end_offset",
            "new_log_start_offset",
        ),
        _equal(
            "log-end-offset-unchanged",
            "deleting segments never moves the log end offset",
            "new_log_end_offset",
            "log_end_offset",
        ),
        _pair(
            "deleted-segments-form-a-prefix",
            "UnifiedLog.deletableSegments stops at the first segment that is not deletable: every "
            "deleted segment ends at or before the first kept one",
            "min_kept_base_offset",
            "max_retired_next_offset",
        ),
        _pair(
            "deleted-offsets-below-new-log-start-offset",
            "UnifiedLog.deleteSegments moves the log start offset to the base of the segment after the "
            "last deleted one",
            "new_log_start_offset",
            "max_retired_next_offset",
        ),
        _equal(
            "segment-counts-reconcile",
            "segments before = segments kept + segments retired (nothing vanishes unreported)",
            "segments_before",
            "segments_kept_plus_retired",
        ),
        _equal(
            "byte-counts-reconcile",
            "bytes before = bytes kept + bytes retired",
            "bytes_before",
            "bytes_kept_plus_retired",
        ),
        Invariant(
            "retention-adds-no-segment",
            "deletion retention only removes segments",
            "ExpectColumnValuesToBeBetween",
            {"column": "segments_added", "min_value": 0, "max_value": 0},
        ),
        Invariant(
            "unplanned-partition-keeps-its-segments",
            "a partition outside the selection or quarantined is left alone",
            "ExpectColumnValuesToBeBetween",
            {"column": "segments_retired", "min_value": 0, "max_value": 0},
            UNPLANNED,
        ),
        _equal(
            "unplanned-partition-keeps-its-log-start-offset",
            "a partition outside the selection or quarantined is left alone",
            "new_log_start_offset",
            "old_log_start_offset",
            when=UNPLANNED,
        ),
    ),
)

RETENTION_DELETIONS = SuiteSpec(
    "retention.deletions",
    DELETIONS,
    (
        Invariant(
            "retired-once", "a segment is retired once", "ExpectColumnValuesToBeUnique", {"column": "key"}
        ),
        Invariant(
            "known-deletion-reason",
            "every deletion names its pass (UnifiedLog.deleteOldSegments' passes plus KIP-68's)",
            "ExpectColumnValuesToBeInSet",
            {"column": "reason", "value_set": list(REASONS)},
        ),
        _known("retired-segment-was-live", "only a live segment of the input can be deleted", "base_offset"),
        Invariant(
            "empty-last-segment-never-deleted",
            "UnifiedLog.deletableSegments never returns a last segment that is empty",
            "ExpectColumnValuesToBeBetween",
            {"column": "size", "min_value": 1},
            When("following_base_offset", "null"),
        ),
        _known(
            "log-start-offset-pass-runs",
            "deleteOldSegments runs the log-start-offset pass for every policy (not for compacted topics "
            "while log.cleaner.enable is false)",
            "log_start_offset_bound",
            when=_reason("log-start-offset"),
        ),
        _known(
            "log-start-offset-deletion-has-a-next-segment",
            "deleteLogStartOffsetBreachedSegments needs a next segment: never the last one",
            "following_base_offset",
            when=_reason("log-start-offset"),
        ),
        _pair(
            "log-start-offset-deletion-below-log-start-offset",
            "deleteLogStartOffsetBreachedSegments: the next segment's base <= the log start offset",
            "log_start_offset_bound",
            "following_base_offset",
            when=_reason("log-start-offset"),
        ),
        _known(
            "retention-bytes-pass-runs",
            "deleteRetentionSizeBreachedSegments runs with cleanup.policy delete and retention.bytes >= 0",
            "retention_bytes",
            when=_reason("retention.bytes"),
        ),
        _pair(
            "retention-bytes-deletion-leaves-retention-bytes",
            "deleteRetentionSizeBreachedSegments deletes a segment only while diff - size >= 0: the log "
            "after it is still at least retention.bytes",
            "bytes_after_segment",
            "retention_bytes",
            when=_reason("retention.bytes"),
        ),
        _known(
            "consumed-pass-runs",
            "KIP-68 consumed retention runs with cleanup.policy delete and retention.commitoffset.enable",
            "consumed_limit_timestamp_ms",
            when=_reason("consumed"),
        ),
        _known(
            "consumed-deletion-has-a-bound",
            "consumed retention deletes only with a min committed offset M",
            "consumed_bound",
            when=_reason("consumed"),
        ),
        _pair(
            "consumed-deletion-below-min-committed-offset",
            "KIP-68: a segment goes only when its last offset < M (every record consumed by every group)",
            "consumed_bound",
            "last_offset",
            strict=True,
            when=_reason("consumed"),
        ),
        _pair(
            "consumed-deletion-older-than-commitoffset-ms",
            "KIP-68: now - largestTimestamp > retention.commitoffset.ms",
            "consumed_limit_timestamp_ms",
            "largest_timestamp_ms",
            strict=True,
            when=_reason("consumed"),
        ),
        _known(
            "retention-ms-pass-runs",
            "deleteRetentionMsBreachedSegments runs with cleanup.policy delete and retention.ms >= 0",
            "limit_timestamp_ms",
            when=_reason("retention.ms"),
        ),
        _pair(
            "retention-ms-deletion-older-than-limit",
            "deleteRetentionMsBreachedSegments: now - largestTimestamp > retention.ms (strict); a future "
            "timestamp never expires",
            "limit_timestamp_ms",
            "largest_timestamp_ms",
            strict=True,
            when=_reason("retention.ms"),
        ),
    ),
    index_columns=("topic", "partition", "key"),
)

RETENTION_SUITES = (RETENTION_PARTITIONS, RETENTION_DELETIONS)

COMPACTION_SUITES: tuple[SuiteSpec, ...] = ()
"""The compaction suite arrives with the compaction issue (e.g. ``compaction.segments`` over a frame of
rewritten segments: cleaned range below the active segment and the last stable offset, one record per key
kept, tombstones kept until their delete horizon). Nothing is checked for compaction yet."""

FRAME_COLUMNS: Mapping[str, Mapping[str, ColumnKind]] = MappingProxyType(
    {PARTITIONS: PARTITION_COLUMNS, DELETIONS: DELETION_COLUMNS}
)


def suite_specs() -> tuple[SuiteSpec, ...]:
    """Every suite a staged run is validated with, in order."""
    return (*RETENTION_SUITES, *COMPACTION_SUITES)
