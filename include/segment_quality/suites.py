"""The expectation suites, declared as data over raw columns of ``segment_quality.staged.frames`` (no GX
import here; ``gx_runtime`` builds the GX objects); docs/validation.md, "The suites and the Kafka rules",
tables them."""

from __future__ import annotations

from collections.abc import Mapping

from kafka_segments.compaction import COMPACTION_REASON
from kafka_segments.retention.rules import DeletionReason

from segment_quality.compaction_suites import COMPACTION_SUITES
from segment_quality.spec import EITHER_MISSING, Invariant, SuiteSpec, When, equal, known, one_of, pair, zero
from segment_quality.staged.columns import DELETIONS, PARTITIONS, TABLE_COLUMNS, ColumnKind

__all__ = [
    "COMPACTION_SUITES",
    "DELETIONS",
    "EITHER_MISSING",
    "FRAME_COLUMNS",
    "PARTITIONS",
    "REASONS",
    "RETENTION_SUITES",
    "Invariant",
    "SuiteSpec",
    "When",
    "suite_specs",
]

REASONS = tuple(reason.value for reason in DeletionReason)
"""The deletion passes (``UnifiedLog.deleteOldSegments``' three, KIP-68's) as retired entries name them: the
retention rules' own ``DeletionReason``, so a new pass is known here without a copy."""
RETIRE_REASONS = (*REASONS, COMPACTION_REASON)
"""Every reason a run retires a segment for: a deletion pass, or replaced by a cleaning round's output."""


def _reason(reason: DeletionReason) -> When:
    return When("reason", "==", reason.value)


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
        known("partition-in-input", "a staged partition existed in the run's input", "old_log_start_offset"),
        known("partition-in-staged-state", "no partition disappears", "new_log_start_offset"),
        pair(
            "log-start-offset-never-decreases",
            "UnifiedLog.maybeIncrementLogStartOffset only ever increases the log start offset",
            "new_log_start_offset",
            "old_log_start_offset",
        ),
        pair(
            "log-start-offset-within-log",
            "the new log start offset is at most the high watermark = log end offset "
            "(maybeIncrementLogStartOffset: OffsetOutOfRangeException beyond it)",
            "log_end_offset",
            "new_log_start_offset",
        ),
        equal(
            "log-end-offset-unchanged",
            "deleting segments never moves the log end offset, and neither does a cleaning round (it never "
            "cleans the active segment: LogCleanerManager.cleanableOffsets)",
            "new_log_end_offset",
            "log_end_offset",
        ),
        pair(
            "deleted-segments-form-a-prefix",
            "UnifiedLog.deletableSegments stops at the first segment that is not deletable: every "
            "segment a deletion pass deleted ends at or before the first kept one (segments a cleaning "
            "round replaced are no deletion)",
            "min_kept_base_offset",
            "max_retired_next_offset",
        ),
        pair(
            "deleted-offsets-below-new-log-start-offset",
            "UnifiedLog.deleteSegments moves the log start offset to the base of the segment after the "
            "last deleted one",
            "new_log_start_offset",
            "max_retired_next_offset",
        ),
        equal(
            "segment-counts-reconcile",
            "segments before = segments after - the cleaning round's output + segments retired (nothing "
            "vanishes unreported)",
            "segments_before",
            "segments_kept_plus_retired",
        ),
        equal(
            "byte-counts-reconcile",
            "bytes before = bytes after - the cleaning round's output + bytes retired",
            "bytes_before",
            "bytes_kept_plus_retired",
        ),
        zero(
            "retention-adds-no-segment",
            "deletion retention only removes segments: a new segment is only ever the output of this run's "
            "cleaning round of a partition the plan says it cleaned",
            "segments_added",
        ),
        zero(
            "unplanned-partition-keeps-its-segments",
            "a partition outside the selection or quarantined is left alone",
            "segments_retired",
            when=UNPLANNED,
        ),
        equal(
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
        one_of(
            "known-deletion-reason",
            "every retired segment names its pass (UnifiedLog.deleteOldSegments' passes plus KIP-68's), or "
            "compaction (replaced by a cleaning round's output: Cleaner.cleanSegments)",
            "reason",
            RETIRE_REASONS,
        ),
        known(
            "retired-segment-was-live",
            "only a live segment can be retired: of the input for compaction, of the log the cleaning "
            "round left for a deletion pass",
            "base_offset",
        ),
        Invariant(
            "empty-last-segment-never-deleted",
            "UnifiedLog.deletableSegments never returns a last segment that is empty",
            "ExpectColumnValuesToBeBetween",
            {"column": "size", "min_value": 1},
            When("following_base_offset", "null"),
        ),
        known(
            "log-start-offset-pass-runs",
            "deleteOldSegments runs the log-start-offset pass for every policy (not for compacted topics "
            "while log.cleaner.enable is false)",
            "log_start_offset_bound",
            when=_reason(DeletionReason.LOG_START_OFFSET),
        ),
        known(
            "log-start-offset-deletion-has-a-next-segment",
            "deleteLogStartOffsetBreachedSegments needs a next segment: never the last one",
            "following_base_offset",
            when=_reason(DeletionReason.LOG_START_OFFSET),
        ),
        pair(
            "log-start-offset-deletion-below-log-start-offset",
            "deleteLogStartOffsetBreachedSegments: the next segment's base <= the log start offset",
            "log_start_offset_bound",
            "following_base_offset",
            when=_reason(DeletionReason.LOG_START_OFFSET),
        ),
        known(
            "retention-bytes-pass-runs",
            "deleteRetentionSizeBreachedSegments runs with cleanup.policy delete and retention.bytes >= 0",
            "retention_bytes",
            when=_reason(DeletionReason.RETENTION_BYTES),
        ),
        pair(
            "retention-bytes-deletion-leaves-retention-bytes",
            "deleteRetentionSizeBreachedSegments deletes a segment only while diff - size >= 0: the log "
            "after it is still at least retention.bytes",
            "bytes_after_segment",
            "retention_bytes",
            when=_reason(DeletionReason.RETENTION_BYTES),
        ),
        known(
            "consumed-pass-runs",
            "KIP-68 consumed retention runs with cleanup.policy delete and retention.commitoffset.enable",
            "consumed_limit_timestamp_ms",
            when=_reason(DeletionReason.CONSUMED),
        ),
        known(
            "consumed-deletion-has-a-bound",
            "consumed retention deletes only with a min committed offset M",
            "consumed_bound",
            when=_reason(DeletionReason.CONSUMED),
        ),
        pair(
            "consumed-deletion-below-min-committed-offset",
            "KIP-68: a segment goes only when its last offset < M (every record consumed by every group)",
            "consumed_bound",
            "last_offset",
            strict=True,
            when=_reason(DeletionReason.CONSUMED),
        ),
        pair(
            "consumed-deletion-older-than-commitoffset-ms",
            "KIP-68: now - largestTimestamp > retention.commitoffset.ms",
            "consumed_limit_timestamp_ms",
            "largest_timestamp_ms",
            strict=True,
            when=_reason(DeletionReason.CONSUMED),
        ),
        known(
            "retention-ms-pass-runs",
            "deleteRetentionMsBreachedSegments runs with cleanup.policy delete and retention.ms >= 0",
            "limit_timestamp_ms",
            when=_reason(DeletionReason.RETENTION_MS),
        ),
        pair(
            "retention-ms-deletion-older-than-limit",
            "deleteRetentionMsBreachedSegments: now - largestTimestamp > retention.ms (strict); a future "
            "timestamp never expires",
            "limit_timestamp_ms",
            "largest_timestamp_ms",
            strict=True,
            when=_reason(DeletionReason.RETENTION_MS),
        ),
    ),
    index_columns=("topic", "partition", "key"),
)

RETENTION_SUITES = (RETENTION_PARTITIONS, RETENTION_DELETIONS)

FRAME_COLUMNS: Mapping[str, Mapping[str, ColumnKind]] = TABLE_COLUMNS
"""The columns of every table a suite may run over."""


def suite_specs() -> tuple[SuiteSpec, ...]:
    """Every suite a staged run is validated with, in order."""
    return (*RETENTION_SUITES, *COMPACTION_SUITES)
